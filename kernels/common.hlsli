// Shared by every dmlgrad kernel. Compiled by glslc's HLSL front end (cmake/hlsl_kernels.cmake), which has
// traps: every resource needs [[vk::binding(i, 0)]]; no int64_t, no float16_t; sizes come in push constants,
// a Params struct defined in the kernel's interface header (kernels/interface/, shared with the host) and
// declared `DMLGRAD_PARAMS(Params);
// compiles without a word into a uniform buffer at binding 0 (lavapipe happens to run it, NVIDIA does not).
// tests/gpu/kernel_interface_test.cpp checks every compiled kernel for that, and the block against the struct.
//
// Data stays as raw bits: 8- and 16-bit elements packed in 32-bit words, fp16 tested on its bits, 64-bit
// integers as uint2 (x = low word, y = high word). Floats are compared on their bit patterns (the rule of
// src/core/float_order.h), so denormal flushing cannot change a result and CPU and GPU agree bit for bit.
#ifndef DMLGRAD_COMMON_HLSLI
#define DMLGRAD_COMMON_HLSLI
#include "interface/prelude.h"

#ifndef WORKGROUP_SIZE
#error "the build passes -DWORKGROUP_SIZE"
#endif

// One source, two targets. Vulkan (glslc, SPIR-V): push constants and structured buffers at [[vk::binding]].
// Direct3D 12 (vkd3d-compiler, DXBC, -DDMLGRAD_D3D12=1): vkd3d refuses structured-buffer stores and
// ConstantBuffer<T>, so the parameter block is a cbuffer at b0 (root constants) and buffers are typed
// (Buffer<T> at t<slot>, RWBuffer<T> at u<slot>, T a uint vector: the host's views use R32[G32[B32A32]]_UINT).
#ifndef DMLGRAD_D3D12
#define DMLGRAD_D3D12 0
#endif
#if DMLGRAD_D3D12
#define DMLGRAD_PARAMS(Type) cbuffer ParamsBlock : register(b0) { Type pc; }
#define DMLGRAD_SRV(Type, name, slot) Buffer<Type> name : register(t##slot)
#define DMLGRAD_UAV(Type, name, slot) RWBuffer<Type> name : register(u##slot)
#define DMLGRAD_CBV(Type, name, slot) cbuffer name##_block : register(b##slot) { Type name; }
#else
// Not a bare `[[vk::push_constant]] Type pc`: glslang makes that a uniform buffer at binding 0.
#define DMLGRAD_PARAMS(Type) [[vk::push_constant]] ConstantBuffer<Type> pc
#define DMLGRAD_SRV(Type, name, slot) [[vk::binding(slot, 0)]] StructuredBuffer<Type> name
#define DMLGRAD_UAV(Type, name, slot) [[vk::binding(slot, 0)]] RWStructuredBuffer<Type> name
#define DMLGRAD_CBV(Type, name, slot) [[vk::binding(slot, 0)]] ConstantBuffer<Type> name
#endif

// vkd3d's HLSL compiler lacks firstbithigh/firstbitlow; on D3D12 they are these (uint arguments only).
#if DMLGRAD_D3D12
// Written out, not as an [unroll] loop: vkd3d 1.17's loop unrolling reads freed instructions in some callers
// (resample's exact adds crashed it: "clone_instr: unreachable code", then out of memory).
uint dmlgrad_firstbithigh(uint v) {
    if (v == 0u) return 0xFFFFFFFFu;
    uint n = 0u;
    if (v >= 0x10000u) { v >>= 16; n += 16u; }
    if (v >= 0x100u) { v >>= 8; n += 8u; }
    if (v >= 0x10u) { v >>= 4; n += 4u; }
    if (v >= 0x4u) { v >>= 2; n += 2u; }
    if (v >= 0x2u) n += 1u;
    return n;
}
uint dmlgrad_firstbitlow(uint v) { return dmlgrad_firstbithigh(v & (0u - v)); }
#define firstbithigh dmlgrad_firstbithigh
#define firstbitlow dmlgrad_firstbitlow
#endif

// value / divisor by the host's magic (src/gpu/ops/division_magic.h): one high multiplication where a division takes
// about 18 instructions (H100). On D3D12 a division: cs_5_0 has no 64-bit integers.
uint div_magic(uint value, uint divisor, uint magic) {
#if DMLGRAD_D3D12
    return value / divisor;
#else
    uint64_t wide = value;  // (glslang: declared, not constructed)
    wide *= magic;
    uint t = uint(wide >> 32);
    uint q = (t + ((value - t) >> 1)) >> firstbithigh(divisor - 1u);
    return divisor == 1u ? value : q;
#endif
}

// Element types (the build passes -DDTYPE=DT_F32 and so on).
#define DT_F16 1
#define DT_F32 2
#define DT_F64 3
#define DT_I8 4
#define DT_I16 5
#define DT_I32 6
#define DT_I64 7
#define DT_U8 8
#define DT_U16 9
#define DT_U32 10
#define DT_U64 11

#ifdef DTYPE
#if DTYPE == DT_I8 || DTYPE == DT_U8
#define LANE_BITS 8
#elif DTYPE == DT_F16 || DTYPE == DT_I16 || DTYPE == DT_U16
#define LANE_BITS 16
#elif DTYPE == DT_F32 || DTYPE == DT_I32 || DTYPE == DT_U32
#define LANE_BITS 32
#elif DTYPE == DT_F64 || DTYPE == DT_I64 || DTYPE == DT_U64
#define LANE_BITS 64
#else
#error "unknown DTYPE"
#endif
#endif

// Lanes of 8, 16 or 32 bits within one 32-bit word.
#if defined(LANE_BITS) && LANE_BITS < 64
#define LANES_PER_WORD (32 / LANE_BITS)
#if LANE_BITS == 32
#define LANE_MASK 0xFFFFFFFFu
#else
#define LANE_MASK ((1u << LANE_BITS) - 1u)
#endif

uint lane_get(uint word, uint lane) { return (word >> (lane * LANE_BITS)) & LANE_MASK; }
uint lane_field(uint lane) { return LANE_MASK << (lane * LANE_BITS); }

// A signed key whose order is the element order: floats by sign-magnitude (-0 == +0), signed integers sign
// extended, unsigned ones shifted into the signed range. The host computes bound keys with the same rule.
int lane_key(uint v) {
#if DTYPE == DT_F32
    int magnitude = int(v & 0x7FFFFFFFu);
    return (v & 0x80000000u) != 0 ? -magnitude : magnitude;
#elif DTYPE == DT_F16
    int magnitude = int(v & 0x7FFFu);
    return (v & 0x8000u) != 0 ? -magnitude : magnitude;
#elif DTYPE == DT_I32
    return int(v);
#elif DTYPE == DT_I16
    return int(v << 16) >> 16;
#elif DTYPE == DT_I8
    return int(v << 24) >> 24;
#elif DTYPE == DT_U32
    return int(v ^ 0x80000000u);
#else  // u16, u8: already non-negative as int
    return int(v);
#endif
}

bool lane_is_nan(uint v) {
#if DTYPE == DT_F32
    return (v & 0x7FFFFFFFu) > 0x7F800000u;
#elif DTYPE == DT_F16
    return (v & 0x7FFFu) > 0x7C00u;
#else
    return false;
#endif
}
#endif

// 64-bit integers: key = (high word as int, biased for unsigned; low word unsigned), compared exactly.
#if defined(LANE_BITS) && LANE_BITS == 64
uint2 key64(uint2 v) {
#if DTYPE == DT_U64
    return uint2(v.x, v.y ^ 0x80000000u);
#else
    return v;
#endif
}
bool less64(uint2 a, uint2 b) {  // a < b on keys: signed high words, then unsigned low words
    return int(a.y) < int(b.y) || (a.y == b.y && a.x < b.x);
}
#endif

// Integer division by a divisor known to the host; power-of-two divisors (shift != NO_SHIFT) take a shift.
// An if, not ?: -- glslang evaluates both sides of ?:, so the ~20-instruction division would always run.
uint div_by(uint value, uint divisor, uint shift) {
    if (shift != NO_SHIFT) return value >> shift;
    return value / divisor;
}

#endif  // DMLGRAD_COMMON_HLSLI
