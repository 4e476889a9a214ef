// Resample grad on the GPU: kernels/resample_grad.hlsl gathers over tap tables built from the plan
// (resample_geometry.h): fp16 one 32-bit word of dX (two neighbours) per thread, f32 four elements per thread,
// or strips of rows where dX is one chunk (the thread mappings of interface/resample_grad.h). Variants per mode
// (nearest, linear), dtype (f32, f16) and mapping, and strips for one-tap plans and for linear f32 plans of at most
// MAX_FIXED_TAPS taps per list (fixed_taps). Nearest fp16 with integer factors
// takes kernels/resample_grad_block.hlsl instead (block_program).
//
// Splitting for the per-binding limit: when dX or dY exceeds one binding, dX is cut into box-shaped chunks
// (resample_geometry.h) and each pass binds the dX window it writes and the dY window its taps reach (an
// interval of dY, as the taps are monotonic). In fp16 a chunk boundary may fall inside a 32-bit word: the passes
// run in order with a barrier, and the kernel keeps the half of such a word that its pass does not own.
#include <fmt/format.h>
#include <optional>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/ops/chunk.h"
#include "gpu/ops/resample_geometry.h"
#include "interface/resample_grad.h"

namespace dmlgrad {
namespace {

namespace kernel = kernels::resample_grad;

// A size's shift in the 8 bits Params::shifts has for it.
uint32_t shift8(uint64_t v) {
    const uint32_t shift = log2_or_none(v);
    return shift == kernels::NO_SHIFT ? kernel::NO_SHIFT_8 : shift;
}

// The push constants that every chunk shares: the view's shape and the tables.
kernel::Params shape_params(const resample_gpu::View& view, const std::array<uint32_t, 4>& table_offsets) {
    kernel::Params p{};
    p.dx_size1 = uint32_t(view[1].dx);
    p.dx_size2 = uint32_t(view[2].dx);
    p.dx_size3 = uint32_t(view[3].dx);
    p.shifts = shift8(view[1].dx) | shift8(view[2].dx) << 8 | shift8(view[3].dx) << 16;
    p.dy_size1 = uint32_t(view[1].dy);
    p.dy_size2 = uint32_t(view[2].dy);
    p.dy_size3 = uint32_t(view[3].dy);
    p.table0 = table_offsets[0];
    p.table1 = table_offsets[1];
    p.table2 = table_offsets[2];
    p.table3 = table_offsets[3];
    return p;
}

// Threads for dX elements [begin, end) in runs: fp16 one per word, f32 RUN_THREADS per run of RUN_ELEMENTS.
uint64_t thread_count(uint64_t begin, uint64_t end, bool half) {
    if (half) return ceil_div<uint64_t>(end, 2) - begin / 2;
    return ceil_div<uint64_t>(end - begin, kernel::RUN_ELEMENTS) * kernel::RUN_THREADS;
}

// Nearest fp16 with integer factors (resample_geometry.h's block_factors), both tensors in one binding each: the
// block kernel, BLOCK_ELEMENTS dX elements a thread, no tables.
std::optional<GpuProgram> block_program(const ResampleGradPlan& plan, const resample_gpu::View& view, uint64_t dx_count,
                                        uint64_t dy_count, const DeviceLimits& limits) {
    if (plan.dtype != DType::f16 || plan.mode != InterpolationMode::nearest) return std::nullopt;
    const uint64_t dx_bytes = padded_bytes(2 * dx_count), dy_bytes = padded_bytes(2 * dy_count);
    if (dx_bytes > limits.max_binding_bytes || dy_bytes > limits.max_binding_bytes) return std::nullopt;
    const auto block = resample_gpu::block_factors(view, kernel::BLOCK_MAX_COLUMNS);
    if (!block) return std::nullopt;

    GpuProgram program;
    program.kernel = fmt::format("resample_grad_block_x{}_f16", block->columns);
    program.binding_count = 2;
    program.push_bytes = push_bytes<kernel::BlockParams>();
    kernel::BlockParams params{};
    const uint64_t threads = ceil_div<uint64_t>(dx_count, kernel::BLOCK_ELEMENTS);
    params.count = uint32_t(threads);
    params.total = uint32_t(dx_count);
    params.dx_width = uint32_t(view[3].dx);
    params.width_shift = log2_or_none(view[3].dx);
    params.dy_width = uint32_t(view[3].dy);
    params.rows = block->rows;
    params.aligned = view[3].dx % kernel::BLOCK_ELEMENTS == 0 ? 1 : 0;
    append_dispatches(program, {{0, 0, dy_bytes}, {1, 0, dx_bytes}}, params, 0, threads, limits);
    return program;
}

// Linear f32 whose lists of view axes 2 and 3 have 2 to MAX_FIXED_TAPS taps: the strips' fixed-tap variants (TAPS),
// whose steps run without testing a list's length; 0 where none applies.
uint32_t fixed_taps(const ResampleGradPlan& plan, const resample_gpu::View& view) {
    if (plan.dtype != DType::f32 || plan.mode != InterpolationMode::linear) return 0;
    const uint64_t taps = resample_gpu::inner_taps(view);
    return taps >= 2 && taps <= kernel::MAX_FIXED_TAPS ? uint32_t(taps) : 0;
}

// Strips (the kernel's run_strip) where dX is one chunk: fp16 rows of an even length (a thread makes one word of
// STRIP_ROWS rows); f32 rows shorter than a run, one-tap plans and fixed-tap plans (one column of STRIP_ROWS rows;
// other longer rows take runs, which share a row's taps: faster where each step tests a list's length, as the
// fixed-tap runs were slower, linear 2x 976 us against 699 on the H100).
bool takes_strips(const resample_gpu::View& view, bool half, bool one_tap, uint32_t taps, size_t chunks) {
    if (chunks != 1) return false;
    return half ? view[3].dx % 2 == 0 : view[3].dx < kernel::RUN_ELEMENTS || one_tap || taps != 0;
}

// The strips variant's name after "resample_grad_<mode>_<dtype>".
std::string strips_suffix(bool one_tap, uint32_t taps) {
    if (one_tap) return "_strips_one_tap";
    return taps != 0 ? fmt::format("_strips_taps{}", taps) : "_strips";
}

void append_strips(GpuProgram& program, const resample_gpu::View& view, kernel::Params params, bool half,
                   const std::vector<BufferWindow>& bindings, const DeviceLimits& limits) {
    const uint64_t groups = ceil_div<uint64_t>(view[2].dx, kernel::STRIP_ROWS);
    const uint64_t threads = view[0].dx * view[1].dx * groups * (view[3].dx / (half ? 2 : 1));
    if (threads > UINT32_MAX) throw RuntimeFailure("resample-grad on the GPU: too many threads");
    params.strip_groups = uint32_t(groups);
    params.shifts |= shift8(groups) << 24;
    params.count = uint32_t(threads);
    params.elem_begin = 0;
    params.elem_end = params.total;
    append_dispatches(program, bindings, params, 0, threads, limits);
}

}  // namespace

GpuProgram build_resample_grad_program(const ResampleGradPlan& plan, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t dx_count = element_count(plan.dx_shape), dy_count = element_count(plan.dy_shape);
    if (dx_count > UINT32_MAX || dy_count > UINT32_MAX)
        throw RuntimeFailure("resample-grad on the GPU: a tensor has more than 2^32 - 1 elements");

    const resample_gpu::View view = resample_gpu::make_view(plan);
    if (auto program = block_program(plan, view, dx_count, dy_count, limits)) return std::move(*program);
    const std::string variant =
        fmt::format("{}_{}", plan.mode == InterpolationMode::linear ? "linear" : "nearest", dtype_suffix(plan.dtype));
    std::array<uint32_t, 4> table_offsets{};
    std::vector<uint32_t> tables = resample_gpu::tap_tables(view, plan.mode, table_offsets);
    const uint64_t table_bytes = padded_bytes(4 * tables.size());
    if (table_bytes > limits.max_binding_bytes)
        throw RuntimeFailure(
            fmt::format("resample-grad on the GPU: the tap tables take {} bytes, more than one "
                        "binding of this device holds ({}); run it with --cpu",
                        table_bytes, limits.max_binding_bytes));

    const uint64_t dx_padded = padded_bytes(dx_count * element), dy_padded = padded_bytes(dy_count * element);
    std::vector<Chunk> chunks;
    if (dx_padded <= limits.max_binding_bytes && dy_padded <= limits.max_binding_bytes)
        chunks.push_back({0, dx_count, true, 0, dy_count - 1});
    else
        chunks = resample_gpu::chunks(view, chunk_capacity(element, limits));

    const bool half = plan.dtype == DType::f16;
    const bool one_tap = resample_gpu::one_tap(view);
    const uint32_t taps = fixed_taps(plan, view);
    const bool strips = takes_strips(view, half, one_tap, taps, chunks.size());
    GpuProgram program;
    program.kernel = "resample_grad_" + variant + (strips ? strips_suffix(one_tap, taps) : "");
    program.binding_count = 3;
    program.push_bytes = push_bytes<kernel::Params>();
    program.constants.push_back(std::move(tables));
    const BufferWindow table_window{2, 0, table_bytes};

    kernel::Params params = shape_params(view, table_offsets);
    params.total = uint32_t(dx_count);
    params.tiny_limit = resample_gpu::tiny_limit(view, plan.mode, plan.dtype);
    if (strips) {
        append_strips(program, view, params, half, {{0, 0, dy_padded}, {1, 0, dx_padded}, table_window}, limits);
        return program;
    }
    for (const Chunk& c : chunks) {
        const uint64_t dx_offset = align_down(c.begin * element, limits.offset_alignment);
        const BufferWindow dx{1, dx_offset, std::min(padded_bytes(c.end * element), dx_padded) - dx_offset};
        const BufferWindow dy = chunk_dy_window(0, c, element, dy_padded, limits);
        const uint64_t threads = thread_count(c.begin, c.end, half);
        params.count = uint32_t(threads);
        params.elem_begin = uint32_t(c.begin);
        params.elem_end = uint32_t(c.end);
        params.dx_origin = uint32_t(dx_offset / element);
        params.dy_origin = uint32_t(dy.offset / element);
        // fp16: a word shared with the previous chunk is read-modify-written; wait for that chunk's write.
        const bool shares_word = half && c.begin % 2 != 0;
        append_dispatches(program, {dy, dx, table_window}, params, 0, threads, limits, shares_word);
    }
    return program;
}

}  // namespace dmlgrad
