// Slice grad on the GPU: kernels/slice_grad.hlsl gathers, one uint4 of dX per thread, each element taking its
// dY element or 0. Variants by element size only (a bit copy): slice_grad_b8, _b16, _b32, _b64.
//
// Splitting for the per-binding limit:
//  - dY fits one binding (always on the H100; on lavapipe up to 128 MiB): dY is bound whole and dX is cut into
//    plain windows, like the element-wise operators.
//  - dY larger: dX is cut into box-shaped chunks (slice_geometry.h) whose dY span is no longer than the chunk,
//    and each pass binds the dY window it reads. A chunk boundary may fall inside a uint4: the passes run in
//    order with a barrier, and the kernel keeps the elements of such a uint4 that its pass does not own.
#include <bit>
#include <stdexcept>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/ops/slice_geometry.h"

namespace dmlgrad {
namespace {

uint32_t log2_or_none(uint64_t v) { return std::has_single_bit(v) ? uint32_t(std::countr_zero(v)) : 0xFFFFFFFFu; }

// The kernel's geometry buffer: per axis, innermost first, two uint4s (see kernels/slice_grad.hlsl).
std::vector<uint32_t> geometry_words(const std::vector<slice_gpu::Axis>& axes) {
    std::vector<uint32_t> words;
    uint64_t dy_stride = 1;
    for (size_t a = axes.size(); a-- > 0;) {
        const slice_gpu::Axis& ax = axes[a];
        const uint64_t stride = uint64_t(ax.stride < 0 ? -ax.stride : ax.stride);
        words.insert(words.end(), {uint32_t(ax.dx), log2_or_none(ax.dx), uint32_t(ax.start), ax.stride < 0 ? 1u : 0u,
                                   uint32_t(stride), log2_or_none(stride), uint32_t(ax.dy), uint32_t(dy_stride)});
        dy_stride *= ax.dy;
    }
    words.resize(8 * 8, 0);  // the kernel's uniform block holds 8 axes
    return words;
}

}  // namespace

GpuProgram build_slice_grad_program(const SliceGradPlan& plan, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t per_vec4 = 16 / element;
    const uint64_t dx_count = element_count(plan.dx_shape), dy_count = element_count(plan.dy_shape);
    if (dx_count > UINT32_MAX) throw RuntimeFailure("slice-grad on the GPU: dX has more than 2^32 - 1 elements");

    const std::vector<slice_gpu::Axis> axes = slice_gpu::simplify(plan);
    if (axes.size() > 8) throw std::logic_error("slice-grad: rank above 8");
    for (const auto& ax : axes)  // every axis quantity below dX's element count: 32-bit in the kernel
        if (ax.dx > UINT32_MAX || ax.start > UINT32_MAX || uint64_t(ax.stride < 0 ? -ax.stride : ax.stride) > UINT32_MAX)
            throw std::logic_error("slice-grad: axis beyond 32 bits");

    GpuProgram program;
    program.kernel = "slice_grad_b" + std::to_string(8 * element);
    program.binding_count = 3;
    program.binding_types = {BindingType::storage, BindingType::storage, BindingType::uniform};
    program.push_bytes = 8 * 4;
    program.constants.push_back(geometry_words(axes));
    const BufferWindow geometry{2, 0, padded_bytes(4 * program.constants[0].size())};
    const uint64_t dy_padded = padded_bytes(dy_count * element), dx_padded = padded_bytes(dx_count * element);
    const auto rank = uint32_t(axes.size());

    if (dy_padded <= limits.max_binding_bytes) {
        const BufferWindow dy{0, 0, dy_padded};
        for (auto [offset, range] : split_windows(dx_padded, limits)) {
            const std::vector<uint32_t> push = {0, uint32_t(range / 16), uint32_t(offset / 16), 0,
                                                uint32_t(dx_count), uint32_t(dx_count), 0, rank};
            append_dispatches(program, {dy, {1, offset, range}, geometry}, push, 0, range / 16, limits);
        }
        return program;
    }

    // Room for the chunk plus the alignment slack on both ends of its windows.
    const uint64_t slack = 2 * limits.offset_alignment + 32;
    if (limits.max_binding_bytes <= slack + element) throw std::logic_error("slice-grad: binding limit too small");
    const uint64_t max_elements = (limits.max_binding_bytes - slack) / element;
    uint64_t previous_end = 0;
    for (const slice_gpu::Chunk& c : slice_gpu::chunks(axes, max_elements)) {
        const uint64_t v0 = c.begin / per_vec4, v1 = (c.end + per_vec4 - 1) / per_vec4;
        const uint64_t dx_offset = align_down(16 * v0, limits.offset_alignment);
        const BufferWindow dx{1, dx_offset, 16 * v1 - dx_offset};
        BufferWindow dy{0, 0, 16};  // a chunk that reads nothing still binds something valid
        if (c.reads_dy) {
            dy.offset = align_down(c.dy_first * element, limits.offset_alignment);
            dy.range = std::min(padded_bytes((c.dy_last + 1) * element), dy_padded) - dy.offset;
        }
        const std::vector<uint32_t> push = {0, uint32_t(v1 - dx_offset / 16), uint32_t(dx_offset / 16),
                                            uint32_t(c.begin), uint32_t(c.end), uint32_t(dx_count),
                                            uint32_t(dy.offset / element), rank};
        // A uint4 shared with the previous chunk is read-modify-written: wait for that chunk's write.
        const bool shares = c.begin > 0 && (previous_end + per_vec4 - 1) / per_vec4 > v0;
        append_dispatches(program, {dy, dx, geometry}, push, v0 - dx_offset / 16, v1 - v0, limits, shares);
        previous_end = c.end;
    }
    return program;
}

}  // namespace dmlgrad
