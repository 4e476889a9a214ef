#pragma once
// What an operator asks of the GPU, independent of the API: which compiled kernel, which windows of which
// buffers to bind, which push constants, how many workgroups, in which order. The dispatch files
// (src/gpu/ops/*_dispatch.cpp) build a GpuProgram from a plan; the Vulkan backend (src/gpu/vulkan/backend.cpp)
// allocates the buffers, records the steps, times and repeats them. A D3D12 backend could run the same programs.
//
// Adding an operator (max-pool and resample grads are next):
//   1. kernels/<op>.hlsl: #include "common.hlsli"; every resource gets [[vk::binding(i, 0)]]; sizes and offsets in
//      `[[vk::push_constant]] ConstantBuffer<Params> pc;` (exactly so, see common.hlsli) whose first uint is
//      `base` (the dispatch's first thread, see append_dispatches); [numthreads(WORKGROUP_SIZE, 1, 1)]; data as
//      raw bits in uint / uint4; 16-byte access through StructuredBuffer<uint4>. Per-axis tables that every
//      thread reads alike go in a GpuProgram constant buffer bound as BindingType::uniform (ConstantBuffer<T> in
//      HLSL, padded to the declared size): the constant cache serves them (see kernels/slice_grad.hlsl).
//   2. src/gpu/CMakeLists.txt: one dmlgrad_hlsl_kernel(NAME <op>_<variant> SOURCE <op>.hlsl DEFINES ...) per
//      variant (dtype via DTYPE=DT_F32 ...). It is compiled to SPIR-V and embedded in the kernel registry.
//   3. src/gpu/ops/<op>_dispatch.cpp: GpuProgram build_<op>_program(const <Op>Plan&, const DeviceLimits&): pick
//      the variant, fill push constants, split the work within `limits` (split_windows, append_dispatches).
//   4. Declare it below and route the plan to it in build_program (dispatch.cpp).
//   5. tests/gpu/<op>_test.cpp: GPU against the CPU reference over dtypes and shapes, poisoned outputs, and with
//      small DeviceLimits (VulkanOptions::limits_cap) so the split paths run on small tensors.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/plan.h"

namespace dmlgrad {

// The device limits a program must respect (queried from the device, possibly lowered by tests).
struct DeviceLimits {
    uint64_t max_binding_bytes = 0;  // the largest range of one storage-buffer binding; a multiple of offset_alignment
    uint64_t offset_alignment = 16;  // binding offsets are multiples of this (a power of two, at least 16)
    uint32_t max_groups_x = 65535;   // workgroups per dispatch along x
};

// Device buffers hold whole uint4s (at least one), so kernels read and write 16 bytes at a time with no tail
// case; the bytes past the tensor are never read back.
inline uint64_t padded_bytes(uint64_t bytes) { return bytes == 0 ? 16 : (bytes + 15) / 16 * 16; }

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline uint64_t align_down(uint64_t v, uint64_t a) { return v / a * a; }

// A range of one of the run's buffers, bound to one binding. Slots: the run's inputs in Backend::run's order
// (X, dY or dY alone), then the output, then the program's constant buffers.
struct BufferWindow {
    uint32_t slot = 0;
    uint64_t offset = 0;  // multiple of DeviceLimits::offset_alignment
    uint64_t range = 0;   // at most DeviceLimits::max_binding_bytes
    bool operator==(const BufferWindow&) const = default;
};

struct DispatchStep {
    std::vector<BufferWindow> bindings;  // binding i of the kernel
    std::vector<uint32_t> push;          // push constants as 32-bit words
    uint32_t groups = 0;                 // workgroups along x
    bool barrier_before = false;         // wait for earlier steps' writes (they touch the same bytes)
};

// How a binding is declared in the kernel: RWStructuredBuffer / StructuredBuffer (storage), or ConstantBuffer
// (uniform: small parameter blocks read by every thread alike, e.g. per-axis geometry; cached like push constants).
enum class BindingType : uint8_t { storage, uniform };

struct GpuProgram {
    std::string kernel;                              // a name in the kernel registry
    uint32_t binding_count = 0;
    std::vector<BindingType> binding_types;          // per binding; empty: all storage
    uint32_t push_bytes = 0;                         // the same for every step
    std::vector<std::vector<uint32_t>> constants;    // small read-only buffers (slots after the output), bindable
                                                     // as storage or uniform buffers
    std::vector<DispatchStep> steps;                 // one execution of the operator, in order
};

// The program for `plan`. Throws RuntimeFailure for an operator that has no GPU kernel yet.
GpuProgram build_program(const Plan& plan, const DeviceLimits& limits);

GpuProgram build_relu_grad_program(const ReluGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_clip_grad_program(const ClipGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_slice_grad_program(const SliceGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_maxpool_grad_program(const MaxPoolGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_resample_grad_program(const ResampleGradPlan& plan, const DeviceLimits& limits);

// ---- helpers for dispatch files ----

// "f32", "i8", ...: the suffix of per-dtype kernel variants.
std::string dtype_suffix(DType type);

// [0, padded) cut into windows (offset, range) that each fit one binding.
std::vector<std::pair<uint64_t, uint64_t>> split_windows(uint64_t padded, const DeviceLimits& limits);

// Appends the dispatches that run threads [first, first + count) of a window: as many steps as
// limits.max_groups_x requires, each with push[0] set to its first thread. Only the first gets barrier_before.
void append_dispatches(GpuProgram& program, const std::vector<BufferWindow>& bindings, std::vector<uint32_t> push,
                       uint64_t first, uint64_t count, const DeviceLimits& limits, bool barrier_before = false);

// Element-wise operators with inputs X, dY and output dX of `bytes` each, one uint4 per thread. Push
// constants: base, uint4 count of the window, then `extra`.
GpuProgram elementwise_program(std::string kernel, uint64_t bytes, const std::vector<uint32_t>& extra,
                               const DeviceLimits& limits);

}  // namespace dmlgrad
