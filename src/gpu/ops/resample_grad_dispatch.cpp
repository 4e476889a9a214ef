// Resample grad on the GPU: kernels/resample_grad.hlsl gathers over tap tables built from the plan
// (resample_geometry.h), two dX elements per thread: fp16 neighbours (one 32-bit word), f32 elements 32 apart
// in runs of 64. Variants per mode (nearest, linear) and dtype (f32, f16).
//
// Splitting for the per-binding limit: when dX or dY exceeds one binding, dX is cut into box-shaped chunks
// (resample_geometry.h) and each pass binds the dX window it writes and the dY window its taps reach (an
// interval of dY, as the taps are monotonic). In fp16 a chunk boundary may fall inside a 32-bit word: the passes
// run in order with a barrier, and the kernel keeps the half of such a word that its pass does not own.
#include <bit>
#include <fmt/format.h>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/ops/resample_geometry.h"

namespace dmlgrad {
namespace {

uint32_t log2_or_ff(uint64_t v) { return std::has_single_bit(v) ? uint32_t(std::countr_zero(v)) : 0xFFu; }

}  // namespace

GpuProgram build_resample_grad_program(const ResampleGradPlan& plan, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t dx_count = element_count(plan.dx_shape), dy_count = element_count(plan.dy_shape);
    if (dx_count > UINT32_MAX || dy_count > UINT32_MAX)
        throw RuntimeFailure("resample-grad on the GPU: a tensor has more than 2^32 - 1 elements");

    const resample_gpu::View view = resample_gpu::make_view(plan);
    const std::string variant =
        fmt::format("{}_{}", plan.mode == InterpolationMode::linear ? "linear" : "nearest", dtype_suffix(plan.dtype));
    std::array<uint32_t, 4> table_offsets{};
    std::vector<uint32_t> tables = resample_gpu::tap_tables(view, plan.mode, table_offsets);
    const uint64_t table_bytes = padded_bytes(4 * tables.size());
    if (table_bytes > limits.max_binding_bytes)
        throw RuntimeFailure(fmt::format("resample-grad on the GPU: the tap tables take {} bytes, more than one "
                                         "binding of this device holds ({}); run it with --cpu",
                                         table_bytes, limits.max_binding_bytes));

    const uint64_t dx_padded = padded_bytes(dx_count * element), dy_padded = padded_bytes(dy_count * element);
    std::vector<resample_gpu::Chunk> chunks;
    if (dx_padded <= limits.max_binding_bytes && dy_padded <= limits.max_binding_bytes) {
        chunks.push_back({0, dx_count, true, 0, dy_count - 1});
    } else {
        // Room for a chunk plus the alignment slack on both ends of its windows.
        const uint64_t slack = 2 * limits.offset_alignment + 32;
        if (limits.max_binding_bytes <= slack + element) throw std::logic_error("resample-grad: binding limit too small");
        chunks = resample_gpu::chunks(view, (limits.max_binding_bytes - slack) / element);
    }

    GpuProgram program;
    program.kernel = "resample_grad_" + variant;
    program.binding_count = 3;
    program.push_bytes = 19 * 4;
    program.constants.push_back(std::move(tables));
    const BufferWindow table_window{2, 0, table_bytes};

    // Push constants after the per-chunk words (see Params in the kernel).
    const std::vector<uint32_t> shape_words = {
        uint32_t(view[1].dx), uint32_t(view[2].dx), uint32_t(view[3].dx),
        log2_or_ff(view[1].dx) | log2_or_ff(view[2].dx) << 8 | log2_or_ff(view[3].dx) << 16,
        uint32_t(view[1].dy), uint32_t(view[2].dy), uint32_t(view[3].dy),
        table_offsets[0], table_offsets[1], table_offsets[2], table_offsets[3]};
    const uint32_t tiny = resample_gpu::tiny_limit(view, plan.mode, plan.dtype);

    const bool half = plan.dtype == DType::f16;
    for (const resample_gpu::Chunk& c : chunks) {
        const uint64_t dx_offset = align_down(c.begin * element, limits.offset_alignment);
        const BufferWindow dx{1, dx_offset, std::min(padded_bytes(c.end * element), dx_padded) - dx_offset};
        BufferWindow dy{0, 0, 16};  // a chunk that reads nothing still binds something valid
        if (c.reads_dy) {
            dy.offset = align_down(c.dy_first * element, limits.offset_alignment);
            dy.range = std::min(padded_bytes((c.dy_last + 1) * element), dy_padded) - dy.offset;
        }
        // fp16: one thread per word; f32: 32 threads per run of 128 elements.
        const uint64_t threads = half ? (c.end + 1) / 2 - c.begin / 2 : (c.end - c.begin + 127) / 128 * 32;
        std::vector<uint32_t> push = {0,
                                      uint32_t(threads),
                                      uint32_t(c.begin),
                                      uint32_t(c.end),
                                      uint32_t(dx_count),
                                      uint32_t(dx_offset / element),
                                      uint32_t(dy.offset / element),
                                      tiny};
        push.insert(push.end(), shape_words.begin(), shape_words.end());
        // fp16: a word shared with the previous chunk is read-modify-written; wait for that chunk's write.
        const bool shares_word = half && c.begin % 2 != 0;
        append_dispatches(program, {dy, dx, table_window}, push, 0, threads, limits, shares_word);
    }
    return program;
}

}  // namespace dmlgrad
