// The subset of C++ and HLSL in which kernels/interface/*.h are written, so that one definition of each kernel's
// interface is compiled by both the kernel (glslc's HLSL front end) and the host (src/gpu/ops/*_dispatch.cpp):
//  - push constants: a struct of 32-bit scalars (uint, int, float), declared in the kernel as
//    `[[vk::push_constant]] ConstantBuffer<Params> pc;` (see common.hlsli). Scalars only: HLSL pads vectors that
//    would straddle 16 bytes and every array element to 16 bytes, C++ does not. Its first field is `base`, the
//    dispatch's first thread (append_dispatches). tests/gpu/kernel_interface_test.cpp checks each compiled
//    kernel's block against sizeof(Params);
//  - limits and layouts: DMLGRAD_CONST uint NAME = value; (`static const` in HLSL, `inline constexpr` in C++).
// In C++ each header's names live in namespace dmlgrad::kernels::<kernel> (DMLGRAD_INTERFACE_BEGIN), in HLSL at
// global scope.
#ifndef DMLGRAD_KERNEL_INTERFACE_PRELUDE_H
#define DMLGRAD_KERNEL_INTERFACE_PRELUDE_H

#ifdef __cplusplus
#include <cstdint>
namespace dmlgrad::kernels {
typedef uint32_t uint;
}
#define DMLGRAD_CONST inline constexpr
#define DMLGRAD_INTERFACE_BEGIN(kernel) namespace dmlgrad::kernels::kernel {
#define DMLGRAD_INTERFACE_END }
#else
#define DMLGRAD_CONST static const
#define DMLGRAD_INTERFACE_BEGIN(kernel)
#define DMLGRAD_INTERFACE_END
#endif

// Shared by every kernel.
#ifdef __cplusplus
namespace dmlgrad::kernels {
#endif
// A divisor's log2 where it is not a power of two: common.hlsli's div_by then divides.
DMLGRAD_CONST uint NO_SHIFT = 0xFFFFFFFFu;
#ifdef __cplusplus
}  // namespace dmlgrad::kernels
#endif

#endif  // DMLGRAD_KERNEL_INTERFACE_PRELUDE_H
