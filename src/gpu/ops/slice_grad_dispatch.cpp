// Slice grad on the GPU: kernels/slice_grad.hlsl gathers, one uint4 of dX per thread, each element taking its
// dY element or 0. Variants by element size (a bit copy): slice_grad_b8, _b16, _b32, _b64, each also in the rows
// layout (slice_grad_rows_b8, ...), where a workgroup works out each row's outer-axis arithmetic once instead of
// per uint4. The rows layout needs every dX row (the innermost axis) to be whole uint4s and dY bound whole.
// Rows of other lengths take the lines kernel (slice_grad_lines_b8, ..., kernels/slice_grad_lines.hlsl): a few
// threads per row, each paying the row's outer-axis arithmetic once for several uint4s (lines_fit below).
//
// Splitting for the per-binding limit:
//  - dY fits one binding (always on the H100; on lavapipe up to 128 MiB): dY is bound whole and dX is cut into
//    plain windows, like the element-wise operators.
//  - dY larger: dX is cut into box-shaped chunks (slice_geometry.h) whose dY span is no longer than the chunk,
//    and each pass binds the dY window it reads. A chunk boundary may fall inside a uint4: the passes run in
//    order with a barrier, and the kernel keeps the elements of such a uint4 that its pass does not own.
#include <cstring>
#include <stdexcept>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/ops/chunk.h"
#include "gpu/ops/slice_geometry.h"
#include "interface/slice_grad.h"
#include "interface/slice_grad_lines.h"

namespace dmlgrad {
namespace {

namespace kernel = kernels::slice_grad;

// The kernel's geometry buffer: a kernel::Axis per axis, innermost first, padded to MAX_RANK axes.
std::vector<uint32_t> geometry_words(const std::vector<SliceAxis>& axes) {
    static_assert(sizeof(kernel::Axis) == 16 * kernel::AXIS_UINT4S);
    std::vector<uint32_t> words(kernel::MAX_RANK * sizeof(kernel::Axis) / 4, 0);
    uint64_t dy_stride = 1;
    for (size_t i = 0; i < axes.size(); ++i) {
        const SliceAxis& ax = axes[axes.size() - 1 - i];
        const uint64_t stride = uint64_t(ax.stride < 0 ? -ax.stride : ax.stride);
        const kernel::Axis k{
            uint32_t(ax.dx),  log2_or_none(uint64_t(ax.dx)), uint32_t(ax.start), ax.stride < 0 ? 1u : 0u,
            uint32_t(stride), log2_or_none(stride),          uint32_t(ax.dy),    uint32_t(dy_stride)};
        std::memcpy(&words[i * sizeof(k) / 4], &k, sizeof(k));
        dy_stride *= uint64_t(ax.dy);
    }
    return words;
}

// Every axis quantity is below dX's element count, which must fit the kernel's 32-bit fields.
void check_fits_kernel(const SliceGradPlan& plan, uint64_t dx_count) {
    if (dx_count > UINT32_MAX) throw RuntimeFailure("slice-grad on the GPU: dX has more than 2^32 - 1 elements");
    const std::vector<SliceAxis>& axes = plan.gather_axes;
    if (axes.empty()) throw std::logic_error("slice-grad: a plan without gather_axes (make it with plan_slice_grad)");
    if (axes.size() > kernel::MAX_RANK) throw std::logic_error("slice-grad: rank above the kernel's MAX_RANK");
    for (const auto& ax : axes) {
        const uint64_t stride = uint64_t(ax.stride < 0 ? -ax.stride : ax.stride);
        if (uint64_t(ax.dx) > UINT32_MAX || uint64_t(ax.start) > UINT32_MAX || stride > UINT32_MAX)
            throw std::logic_error("slice-grad: axis beyond 32 bits");
    }
}

// dY bound whole: dX cut into plain windows, like the element-wise operators; `per_thread` uint4s a thread.
void append_windows(GpuProgram& program, kernel::Params params, const BufferWindow& geometry, uint64_t dy_padded,
                    uint64_t dx_padded, uint64_t per_thread, const DeviceLimits& limits) {
    const BufferWindow dy{0, 0, dy_padded};
    params.elem_begin = 0;
    params.elem_end = params.total;
    params.dy_origin = 0;
    for (auto [offset, range] : split_windows(dx_padded, limits)) {
        params.count = uint32_t(range / 16);
        params.window_vec4 = uint32_t(offset / 16);
        append_dispatches(program, {dy, {1, offset, range}, geometry}, params, 0, ceil_div(range / 16, per_thread),
                          limits);
    }
}

// dY larger than a binding: box-shaped chunks of dX, each pass binding the dY window it reads.
void append_chunks(GpuProgram& program, kernel::Params params, const BufferWindow& geometry, const SliceGradPlan& plan,
                   uint64_t dy_padded, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype), per_vec4 = 16 / element;
    uint64_t previous_end = 0;
    for (const Chunk& c : slice_gpu::chunks(plan.gather_axes, chunk_capacity(element, limits))) {
        const uint64_t v0 = c.begin / per_vec4, v1 = ceil_div(c.end, per_vec4);
        const uint64_t dx_offset = align_down(16 * v0, limits.offset_alignment);
        const BufferWindow dx{1, dx_offset, 16 * v1 - dx_offset};
        const BufferWindow dy = chunk_dy_window(0, c, element, dy_padded, limits);
        params.count = uint32_t(v1 - dx_offset / 16);
        params.window_vec4 = uint32_t(dx_offset / 16);
        params.elem_begin = uint32_t(c.begin);
        params.elem_end = uint32_t(c.end);
        params.dy_origin = uint32_t(dy.offset / element);
        // A uint4 shared with the previous chunk is read-modify-written: wait for that chunk's write.
        const bool shares = c.begin > 0 && ceil_div(previous_end, per_vec4) > v0;
        append_dispatches(program, {dy, dx, geometry}, params, v0 - dx_offset / 16, v1 - v0, limits, shares);
        previous_end = c.end;
    }
}

// Whether the lines kernel can take this slice: dY and dX bound whole, rows at least two uint4s long (a uint4 then
// reaches at most into the next row) and a slice that reaches something. Steps the element kernel handles a word at
// a time rather than element by element stay with it: 1 along the rows (runs of dY), and 2 for 8- and 16-bit
// elements (every other element spread from whole words).
bool lines_fit(const SliceGradPlan& plan, uint64_t dy_padded, uint64_t dx_padded, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype), dy_count = element_count(plan.dy_shape);
    const SliceAxis& inner = plan.gather_axes.back();
    const bool whole = dy_padded <= limits.max_binding_bytes && dx_padded <= limits.max_binding_bytes;
    const bool no_wrap = element_count(plan.dx_shape) <= UINT32_MAX - 16;  // u * ELEMS past the end stays 32-bit
    const bool word_wise = inner.stride == 1 || (inner.stride == 2 && element <= 2);
    return whole && no_wrap && dy_count > 0 && uint64_t(inner.dx) * element >= 32 && !word_wise;
}

// The lines kernel: 2^lane_shift threads per dX row, about UINT4S_PER_THREAD uint4s each.
void append_lines(GpuProgram& program, const SliceGradPlan& plan, const BufferWindow& geometry, uint64_t dy_padded,
                  uint64_t dx_padded, const DeviceLimits& limits) {
    namespace lines = kernels::slice_grad_lines;
    const SliceAxis& inner = plan.gather_axes.back();
    const uint64_t dx_count = element_count(plan.dx_shape),
                   row_uint4s = uint64_t(inner.dx) * dtype_size(plan.dtype) / 16;
    uint32_t lane_shift = 0;
    while ((uint64_t(2) << lane_shift) * lines::UINT4S_PER_THREAD <= row_uint4s) ++lane_shift;
    const uint64_t rows = dx_count / uint64_t(inner.dx);  // rows << lane_shift <= dX's uint4s / UINT4S_PER_THREAD
    lines::LinesParams params{};
    params.rows = uint32_t(rows);
    params.lane_shift = lane_shift;
    params.rank = uint32_t(plan.gather_axes.size());
    const int64_t stride = inner.stride, last = inner.dy - 1;  // the lowest coordinate reached: first or last
    params.inner_low = uint32_t(stride > 0 ? inner.start : inner.start + stride * last);
    program.push_bytes = push_bytes<lines::LinesParams>();
    append_dispatches(program, {{0, 0, dy_padded}, {1, 0, dx_padded}, geometry}, params, 0, rows << lane_shift, limits);
}

}  // namespace

GpuProgram build_slice_grad_program(const SliceGradPlan& plan, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t dx_count = element_count(plan.dx_shape), dy_count = element_count(plan.dy_shape);
    check_fits_kernel(plan, dx_count);
    const std::vector<SliceAxis>& axes = plan.gather_axes;

    const uint64_t dy_padded = padded_bytes(dy_count * element), dx_padded = padded_bytes(dx_count * element);
    const bool dy_whole = dy_padded <= limits.max_binding_bytes;
    const bool whole_uint4_rows = dx_count > 0 && uint64_t(axes.back().dx) % (16 / element) == 0;
    // The rows kernels share their plans through groupshared arrays, which vkd3d-compiler 1.17 cannot compile for
    // Direct3D 12 at any index (kernels/README.md).
    const bool rows_compiled = limits.api == GpuApi::vulkan;
    const bool rows = dy_whole && whole_uint4_rows && rows_compiled;
    // Rows of whole uint4s (every bench row) keep the rows kernel, and on D3D12 the element kernel: the lines
    // kernel has not been timed against them yet.
    const bool lines = !whole_uint4_rows && lines_fit(plan, dy_padded, dx_padded, limits);
    GpuProgram program;
    program.kernel = std::string(rows    ? "slice_grad_rows_b"
                                 : lines ? "slice_grad_lines_b"
                                         : "slice_grad_b") +
                     std::to_string(8 * element);
    program.binding_count = 3;
    program.binding_types = {BindingType::storage, BindingType::storage, BindingType::uniform};
    program.push_bytes = push_bytes<kernel::Params>();
    program.constants.push_back(geometry_words(axes));
    const BufferWindow geometry{2, 0, padded_bytes(4 * program.constants[0].size())};
    kernel::Params params{};
    params.total = uint32_t(dx_count);
    params.rank = uint32_t(axes.size());

    if (lines) {
        append_lines(program, plan, geometry, dy_padded, dx_padded, limits);
        return program;
    }
    if (!dy_whole) {
        append_chunks(program, params, geometry, plan, dy_padded, limits);
        return program;
    }
    const bool narrow = element * 8 <= kernel::ROWS_NARROW_MAX_BITS;
    const uint64_t per_thread = !rows    ? 1
                                : narrow ? kernel::ROWS_UINT4S_PER_THREAD_NARROW
                                         : kernel::ROWS_UINT4S_PER_THREAD_WIDE;
    append_windows(program, params, geometry, dy_padded, dx_padded, per_thread, limits);
    return program;
}

}  // namespace dmlgrad
