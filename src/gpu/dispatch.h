#pragma once
// What an operator asks of the GPU, independent of the API: which compiled kernel, which windows of which
// buffers to bind, which push constants, how many workgroups, in which order. The dispatch files
// (src/gpu/ops/*_dispatch.cpp) build a GpuProgram from a plan; the Vulkan backend (src/gpu/vulkan/backend.cpp)
// allocates the buffers, records the steps, times and repeats them. A D3D12 backend could run the same programs.
// Each kernel's push constants and layout constants are defined once, in kernels/interface/<kernel>.h, which
// both the kernel and its dispatch file include.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/integer.h"
#include "gpu/gpu_api.h"
#include "ops/plan.h"

namespace dmlgrad {

// The device limits a program must respect (queried from the device, possibly lowered by tests), and the API
// that runs it: the kernel choice takes the fastest family that this API can run.
struct DeviceLimits {
    uint64_t max_binding_bytes = 0;  // the largest range of one storage-buffer binding; a multiple of offset_alignment
    uint64_t offset_alignment = 16;  // binding offsets are multiples of this (a power of two, at least 16)
    uint32_t max_groups_x = 65535;   // workgroups per dispatch along x
    GpuApi api = GpuApi::vulkan;
    bool shader_int64 = true;        // Vulkan: kernels may use 64-bit integers (the slice spans kernel's divisions)
    uint32_t thread_loop_limit = 0;  // loop iterations a kernel thread may run; 0: no limit (gpu/thread_loops.h)
};

// Device buffers hold whole uint4s (at least one), so kernels read and write 16 bytes at a time with no tail
// case; the bytes past the tensor are never read back.
inline uint64_t padded_bytes(uint64_t bytes) { return bytes == 0 ? 16 : ceil_div<uint64_t>(bytes, 16) * 16; }

inline uint64_t align_down(uint64_t v, uint64_t a) { return v / a * a; }

// An H100's limits (bindings of 4 GiB - 1 byte, 16-byte offsets, 2^31 - 1 workgroups), under which --explain names
// the kernel a plan takes without a device. A device with smaller bindings may split the run or choose otherwise.
inline constexpr DeviceLimits kTypicalLimits{(uint64_t(1) << 32) - 16, 16, (uint32_t(1) << 31) - 1};

// A range of one of the run's buffers, bound to one binding. Slots: the run's inputs in Backend::run's order
// (X, dY or dY alone), then the output, then the program's constant buffers, then its scratch buffer if any.
struct BufferWindow {
    uint32_t slot = 0;
    uint64_t offset = 0;  // multiple of DeviceLimits::offset_alignment
    uint64_t range = 0;   // at most DeviceLimits::max_binding_bytes
    bool operator==(const BufferWindow&) const = default;
};

struct DispatchStep {
    std::vector<BufferWindow> bindings;  // binding i of the kernel
    std::vector<uint32_t> push;          // the words of the kernel's Params (push_words below)
    uint32_t groups = 0;                 // workgroups along x
    bool barrier_before = false;         // wait for earlier steps' writes (they touch the same bytes)
};

// How a binding is declared in the kernel: RWStructuredBuffer / StructuredBuffer (storage), or ConstantBuffer
// (uniform: small parameter blocks read by every thread alike, e.g. per-axis geometry; cached like push constants).
enum class BindingType : uint8_t { storage, uniform };

struct GpuProgram {
    std::string kernel;  // a name in the kernel registry
    uint32_t binding_count = 0;
    std::vector<BindingType> binding_types;        // per binding; empty: all storage
    uint32_t push_bytes = 0;                       // the same for every step
    std::vector<std::vector<uint32_t>> constants;  // small read-only buffers (slots after the output), bindable
                                                   // as storage or uniform buffers
    uint64_t scratch_bytes = 0;                    // a device buffer the steps write and read (a multiple of 16;
                                                   // 0: none), its contents undefined before the first step
    std::vector<DispatchStep> steps;               // one execution of the operator, in order
};

// The program for `plan`. Throws RuntimeFailure for an operator that has no GPU kernel yet, or a plan whose threads
// could loop past limits.thread_loop_limit (gpu/thread_loops.h).
GpuProgram build_program(const Plan& plan, const DeviceLimits& limits);

// Checks what every backend relies on, before anything is allocated (src/gpu/program_validation.cpp): a compiled
// kernel; per step, push constants of push_bytes and binding_count bindings; 1 to max_groups_x workgroups; windows
// of a slot that exists (the plan's inputs, its output, the program's constants, its scratch buffer), aligned, of 1
// byte to one binding, within their buffer (padded_bytes of it); uniform bindings only of constants. Throws
// std::logic_error naming the kernel, step and rule (a bug of a dispatch file, not the user's).
void validate(const GpuProgram& program, const DeviceLimits& limits, const Plan& plan);

GpuProgram build_relu_grad_program(const ReluGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_clip_grad_program(const ClipGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_slice_grad_program(const SliceGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_maxpool_grad_program(const MaxPoolGradPlan& plan, const DeviceLimits& limits);
GpuProgram build_resample_grad_program(const ResampleGradPlan& plan, const DeviceLimits& limits);

// ---- helpers for dispatch files ----

// "f32", "i8", ... (core/dtype.h's short name): the suffix of per-dtype kernel variants.
std::string dtype_suffix(DType type);

// log2 of v where v is a power of two, else kernels::NO_SHIFT (the kernels divide then): a size's shift for the
// kernels' index arithmetic.
uint32_t log2_or_none(uint64_t v);

// [0, padded) cut into windows (offset, range) that each fit one binding.
std::vector<std::pair<uint64_t, uint64_t>> split_windows(uint64_t padded, const DeviceLimits& limits);

// Push constants: every kernel's are a struct of 32-bit scalars (kernels/interface/prelude.h) whose first field
// is `base`, the dispatch's first thread. Vulkan guarantees 128 bytes of them.
inline constexpr uint32_t kMaxPushConstantBytes = 128;

template <class Params>
constexpr uint32_t push_bytes() {
    static_assert(std::is_trivially_copyable_v<Params> && std::is_standard_layout_v<Params>);
    static_assert(sizeof(Params) % 4 == 0 && sizeof(Params) <= kMaxPushConstantBytes);
    static_assert(offsetof(Params, base) == 0, "the first push constant is the dispatch's first thread");
    return uint32_t(sizeof(Params));
}

template <class Params>
std::vector<uint32_t> push_words(const Params& params) {
    std::vector<uint32_t> words(push_bytes<Params>() / 4);
    std::memcpy(words.data(), &params, sizeof(Params));
    return words;
}

// The Params a step pushes (for tests and checks).
template <class Params>
Params pushed_params(const DispatchStep& step) {
    Params params{};
    if (step.push.size() * 4 != push_bytes<Params>()) throw std::logic_error("push constants of another kernel");
    std::memcpy(&params, step.push.data(), sizeof(Params));
    return params;
}

// Appends the dispatches that run threads [first, first + count) of a window: as many steps as
// limits.max_groups_x requires, each pushing `push` (the words of a Params) with its base set to its first thread.
// Only the first gets barrier_before.
void append_dispatches(GpuProgram& program, const std::vector<BufferWindow>& bindings, std::vector<uint32_t> push,
                       uint64_t first, uint64_t count, const DeviceLimits& limits, bool barrier_before = false);

template <class Params>
void append_dispatches(GpuProgram& program, const std::vector<BufferWindow>& bindings, const Params& params,
                       uint64_t first, uint64_t count, const DeviceLimits& limits, bool barrier_before = false) {
    if (program.push_bytes != push_bytes<Params>()) throw std::logic_error("program.push_bytes is not sizeof(Params)");
    append_dispatches(program, bindings, push_words(params), first, count, limits, barrier_before);
}

// Element-wise operators with inputs X, dY and output dX of `bytes` each, one uint4 per thread: `params` with
// base and count (uint4s of the window) set per window.
template <class Params>
GpuProgram elementwise_program(std::string kernel, uint64_t bytes, Params params, const DeviceLimits& limits) {
    GpuProgram program;
    program.kernel = std::move(kernel);
    program.binding_count = 3;
    program.push_bytes = push_bytes<Params>();
    // The same window of X, dY and dX per step: element i of each lies at the same byte offset.
    for (auto [offset, range] : split_windows(padded_bytes(bytes), limits)) {
        params.count = uint32_t(range / 16);
        append_dispatches(program, {{0, offset, range}, {1, offset, range}, {2, offset, range}}, params, 0, range / 16,
                          limits);
    }
    return program;
}

}  // namespace dmlgrad
