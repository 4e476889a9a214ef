// Resample grad on the GPU: kernels/resample_grad*.hlsl gather over tap tables built from the plan
// (resample_geometry.h): fp16 one 32-bit word of dX (two neighbours) per thread, f32 four elements per thread,
// or strips of rows where dX is one chunk (the thread mappings of interface/resample_grad.h). Nearest plans in one
// chunk that resample outer axes only, of rows read from several dY rows each, take kernels/resample_grad_rows.hlsl
// (fits_rows, fits_shifted_rows: float32) after the fp16 blocks, then nearest plans of tiny planes or of short rows,
// and large linear plans of small planes whose rows read several dY rows, kernels/resample_grad_planes.hlsl
// (fits_planes). Variants per mode
// (nearest, linear), dtype (f32, f16) and mapping, and strips for one-tap plans and for linear f32 plans of at most
// MAX_FIXED_TAPS taps per list (fixed_taps). Nearest fp16 with integer factors takes
// kernels/resample_grad_block.hlsl instead, nearest plans in one chunk whose dX rows read one dY row at most, of at
// most LINE_MOST_TAPS taps an element (or, the bounds, any), kernels/resample_grad_lines.hlsl (fits_lines), and
// nearest plans and linear fp16 plans in one chunk that the strips or runs would not make with their fast code
// (fits_walk) kernels/resample_grad_walk.hlsl, linear plans of at most one tap an index its SPARSE variants
// (fits_sparse_walk).
// Linear f32 plans whose rows read their own dY row, where axis 3's tap tables are a large share of the bytes, take
// kernels/resample_grad_fractions.hlsl (fits_fractions), and small f32 plans that the strips (linear) or the runs
// (nearest) would make element after element an element a thread (fits_elements, the runs' ONE_ELEMENT variant).
// Identity plans take the nearest kernels whatever their mode (kernel_mode).
// The families are tried in kFamilies' order (resample_grad_kernels.h).
//
// Splitting for the per-binding limit: when dX or dY exceeds one binding, dX is cut into box-shaped chunks
// (resample_geometry.h) and each pass binds the dX window it writes and the dY window its taps reach (an
// interval of dY, as the taps are monotonic). In fp16 a chunk boundary may fall inside a 32-bit word: the passes
// run in order with a barrier, and the kernel keeps the half of such a word that its pass does not own.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/ops/chunk.h"
#include "gpu/ops/resample_fractions.h"
#include "gpu/ops/resample_geometry.h"
#include "gpu/ops/resample_grad_kernels.h"
#include "gpu/ops/resample_planes.h"
#include "interface/resample_grad.h"

namespace dmlgrad {
namespace {

namespace kernel = kernels::resample_grad;
using resample_gpu::Family;
using resample_gpu::Variant;

// A size's shift in the 8 bits Params::shifts has for it.
uint32_t shift8(uint64_t v) {
    const uint32_t shift = log2_or_none(v);
    return shift == kernels::NO_SHIFT ? kernel::NO_SHIFT_8 : shift;
}

// The lines' tables: TABLE_ONE (read by set_opaque_zero), the row's column words where view axis 3 is not an
// identity, the row table where view axes 0-2 are not all identities; and where each starts (Params::columns,
// row_starts).
struct LinesTables {
    std::vector<uint32_t> words{std::bit_cast<uint32_t>(1.0f)};
    uint32_t columns = kernel::IDENTITY_AXIS;
    uint32_t row_starts = kernel::NO_ROW_TABLE;
};

// Whether every axis of the view is an identity: the plan is a copy, the view one row.
bool is_copy(const resample_gpu::View& view) {
    return std::all_of(view.begin(), view.end(), [](const resample_gpu::Axis& a) { return a.identity; });
}

// A copy whose one row the one-tap lines take (its columns below LINE_FIRST_MASK: the kernel makes an identity
// axis' column words from the column), a uint4 a thread, bits moved as they are.
bool lines_copy(const resample_gpu::View& view) { return is_copy(view) && view[3].dx <= kernel::LINE_FIRST_MASK; }

// The mode the kernels make a plan in: nearest for a copy that the nearest kernels take (the lines; fp16 past them,
// the blocks), whatever the plan's. A linear identity's elements each sum one term of weight 1 from +0, (1 * 1) * v,
// which is +0 + v, a nearest element's sum, bit for bit; the linear kernels made such copies at 17-18% of the bound
// (H200, round 1 of nearest35: 20261204/107, fp16 32x16632137, walk 2858.2 us, the blocks 1274.6; 20261224/53,
// float32 9762967, one-tap strips 103.9, the lines 23.8). A float32 copy past LINE_FIRST_MASK keeps the plan's mode
// (the nearest kernel there, the walk, was not measured on it).
InterpolationMode kernel_mode(const resample_gpu::View& view, const ResampleGradPlan& plan) {
    const bool nearest_copy = is_copy(view) && (plan.dtype == DType::f16 || lines_copy(view));
    return nearest_copy ? InterpolationMode::nearest : plan.mode;
}

// What the families read of a plan: its view, kernel mode and sizes, and the tap tables and dX chunks, each made on
// first use (the tables first: a table too large for one binding is reported before a chunk error).
class Prepared {
public:
    Prepared(const ResampleGradPlan& plan, const DeviceLimits& limits)
        : plan(plan),
          limits(limits),
          view(resample_gpu::make_view(plan)),
          mode(kernel_mode(view, plan)),
          element(dtype_size(plan.dtype)),
          dx_count(element_count(plan.dx_shape)),
          dy_count(element_count(plan.dy_shape)),
          dx_padded(padded_bytes(dx_count * element)),
          dy_padded(padded_bytes(dy_count * element)) {}

    const ResampleGradPlan& plan;
    const DeviceLimits& limits;
    const resample_gpu::View view;
    const InterpolationMode mode;  // kernel_mode's: the plan's, read through here only
    const uint64_t element, dx_count, dy_count, dx_padded, dy_padded;
    std::optional<LinesTables> lines;  // lines_tables(p, taps)'s, made once for the lines' fit and program
    std::optional<std::optional<std::vector<uint32_t>>> fractions;  // fraction_tables(p)'s, made once

    // The tap tables and each table axis's word offset in them. Throws RuntimeFailure where they exceed a binding.
    const std::vector<uint32_t>& tables() {
        if (!tables_) {
            tables_ = resample_gpu::tap_tables(view, mode, table_offsets_);
            const uint64_t bytes = padded_bytes(4 * tables_->size());
            if (bytes > limits.max_binding_bytes)
                throw RuntimeFailure(
                    fmt::format("resample-grad on the GPU: the tap tables take {} bytes, more than one "
                                "binding of this device holds ({}); run it with --cpu",
                                bytes, limits.max_binding_bytes));
        }
        return *tables_;
    }
    const std::array<uint32_t, 4>& table_offsets() { return tables(), table_offsets_; }

    // dX whole where dX and dY fit one binding each, else cut into chunks that do.
    const std::vector<Chunk>& chunks() {
        tables();
        if (!chunks_) {
            if (dx_padded <= limits.max_binding_bytes && dy_padded <= limits.max_binding_bytes)
                chunks_ = std::vector<Chunk>{{0, dx_count, true, 0, dy_count - 1}};
            else
                chunks_ = resample_gpu::chunks(view, chunk_capacity(element, limits));
        }
        return *chunks_;
    }

private:
    std::optional<std::vector<uint32_t>> tables_;
    std::array<uint32_t, 4> table_offsets_{};
    std::optional<std::vector<Chunk>> chunks_;
};

// ---- the block kernel (kernels/resample_grad_block.hlsl) ----

// Nearest fp16 with integer factors (resample_geometry.h's block_factors), both tensors in one binding each:
// BLOCK_ELEMENTS dX elements a thread, no tables.
std::optional<resample_gpu::BlockFactors> block_factors(const Prepared& p) {
    if (p.plan.dtype != DType::f16 || p.mode != InterpolationMode::nearest) return std::nullopt;
    if (p.dx_padded > p.limits.max_binding_bytes || p.dy_padded > p.limits.max_binding_bytes) return std::nullopt;
    return resample_gpu::block_factors(p.view, kernel::BLOCK_MAX_COLUMNS);
}

// A copy that the one-tap lines take goes there: they move a uint4 of a row's bits a thread (fp16 NaNs found in the
// thread's words at once), where the block's threads make four halves each from a uint4 load (H200, round 1 of
// nearest35, fp16 copies at 35-39% of the bound on the blocks' whole threads: 20261234/29, 12878329 halves, 35.3 us).
std::optional<Variant> fits_block(Prepared& p) {
    if (lines_copy(p.view)) return std::nullopt;
    const auto block = block_factors(p);
    if (!block) return std::nullopt;
    return Variant{Family::block, p.mode, p.plan.dtype, block->columns};
}

// Rows of whole threads (BLOCK_ALIGNED), or one dX row that reads one dY row, of blocks of 1-2 columns, at any
// length (a 1-D block, or a copy past the lines: make_view merges an identity into one row): a thread's elements then
// never cross a row's end and its uint4 of dY lies within dY's padding (blocks of 3-4 columns read a second uint4,
// past the padding at the end of a row that is not whole threads). Such a row took element after element, a uint4
// load a half (H200, round 1 of nearest35, 20261234/29, an fp16 identity of 12878329 halves: 50.1 -> 35.6 us,
// PyTorch 68.4). Else, one column a block, rows of
// an even length (BLOCK_EVEN_ROWS): a thread's elements in one row are then two words of each dY row, which the kernel
// loads as words where it made element after element (H200, 20261232/48, 4x on rows of 357230 halves: 81.6 us,
// PyTorch 74.6).
uint32_t block_alignment(const Prepared& p, const resample_gpu::BlockFactors& block) {
    const uint64_t dx_width = p.view[3].dx;
    const bool one_row = p.dx_count == dx_width && block.rows == 1 && block.columns <= 2;
    if (dx_width % kernel::BLOCK_ELEMENTS == 0 || one_row) return kernel::BLOCK_ALIGNED;
    return block.columns == 1 && dx_width % 2 == 0 ? kernel::BLOCK_EVEN_ROWS : 0;
}

GpuProgram block_program(Prepared& p, const Variant& variant) {
    const resample_gpu::BlockFactors block = block_factors(p).value();
    GpuProgram program;
    program.kernel = resample_gpu::kernel_name(variant);
    program.binding_count = 2;
    program.push_bytes = push_bytes<kernel::BlockParams>();
    kernel::BlockParams params{};
    const uint64_t threads = ceil_div<uint64_t>(p.dx_count, kernel::BLOCK_ELEMENTS);
    params.count = uint32_t(threads);
    params.total = uint32_t(p.dx_count);
    params.dx_width = uint32_t(p.view[3].dx);
    params.width_shift = log2_or_none(p.view[3].dx);
    params.dy_width = uint32_t(p.view[3].dy);
    params.rows = block.rows;
    params.aligned = block_alignment(p, block);
    append_dispatches(program, {{0, 0, p.dy_padded}, {1, 0, p.dx_padded}}, params, 0, threads, p.limits);
    return program;
}

// ---- the gather kernels (kernels/resample_grad.hlsl, _strips_f32.hlsl, _strips_f16.hlsl): runs and strips ----

// The program's kernel, bindings and tables, and the push constants every pass shares: the view's shape and the
// tables' offsets.
GpuProgram tables_program(Prepared& p, const Variant& variant) {
    GpuProgram program;
    program.kernel = resample_gpu::kernel_name(variant);
    program.binding_count = 3;
    program.push_bytes = push_bytes<kernel::Params>();
    program.constants.push_back(p.tables());
    return program;
}

// The program's tap tables (its one constant buffer, binding 2).
BufferWindow table_window(const GpuProgram& program) { return {2, 0, padded_bytes(4 * program.constants[0].size())}; }

// The view's sizes, dX's size and tiny_limit (no table offsets: the kernels of their own tables set those).
kernel::Params size_params(const Prepared& p) {
    const resample_gpu::View& view = p.view;
    kernel::Params params{};
    params.dx_size1 = uint32_t(view[1].dx);
    params.dx_size2 = uint32_t(view[2].dx);
    params.dx_size3 = uint32_t(view[3].dx);
    params.shifts = shift8(view[1].dx) | shift8(view[2].dx) << 8 | shift8(view[3].dx) << 16;
    params.dy_size1 = uint32_t(view[1].dy);
    params.dy_size2 = uint32_t(view[2].dy);
    params.dy_size3 = uint32_t(view[3].dy);
    params.total = uint32_t(p.dx_count);
    params.tiny_limit = resample_gpu::tiny_limit(view, p.mode, p.plan.dtype);
    return params;
}

kernel::Params shape_params(Prepared& p) {
    const std::array<uint32_t, 4>& table_offsets = p.table_offsets();
    kernel::Params params = size_params(p);
    params.table0 = table_offsets[0];
    params.table1 = table_offsets[1];
    params.table2 = table_offsets[2];
    params.table3 = table_offsets[3];
    return params;
}

// The dispatches of `threads` threads over the whole of dX and dY (a kernel for plans in one chunk).
void append_one_chunk(GpuProgram& program, Prepared& p, kernel::Params params, uint64_t threads) {
    params.count = uint32_t(threads);
    params.elem_begin = 0;
    params.elem_end = params.total;
    append_dispatches(program, {{0, 0, p.dy_padded}, {1, 0, p.dx_padded}, table_window(program)}, params, 0, threads,
                      p.limits);
}

// Linear f32 whose lists of view axes 2 and 3 have 2 to MAX_FIXED_TAPS taps: the strips' fixed-tap variants (TAPS),
// whose steps run without testing a list's length; 0 where none applies.
uint32_t fixed_taps(const Prepared& p) {
    if (p.plan.dtype != DType::f32 || p.mode != InterpolationMode::linear) return 0;
    const uint64_t taps = resample_gpu::inner_taps(p.view);
    return taps >= 2 && taps <= kernel::MAX_FIXED_TAPS ? uint32_t(taps) : 0;
}

// Strips (the kernel's run_strip) where dX is one chunk: fp16 rows of an even length (a thread makes one word of
// STRIP_ROWS rows); f32 rows shorter than a run and fixed-tap plans (one column of STRIP_ROWS rows; other longer
// rows take runs, which share a row's taps: faster where each step tests a list's length, as the fixed-tap runs
// were slower, linear 2x 976 us against 699 on the H100).
bool strips_fit(Prepared& p, bool long_f32_rows_fit) {
    if (p.chunks().size() != 1) return false;
    if (p.plan.dtype == DType::f16) return p.view[3].dx % 2 == 0;
    return p.view[3].dx < kernel::RUN_ELEMENTS || long_f32_rows_fit;
}

// One-tap plans (one tap at every index of every axis, such as linear 0.5x), whatever their f32 row length.
std::optional<Variant> fits_one_tap_strips(Prepared& p) {
    if (!resample_gpu::one_tap(p.view) || !strips_fit(p, true)) return std::nullopt;
    return Variant{Family::one_tap_strips, p.mode, p.plan.dtype};
}

// Fixed-tap plans take the strips whatever their f32 row length, but in planes of several rows only: planes of one
// row (a 1-D resample) leave the strips nothing to share between rows (each strip made its one row four times), and
// rows of a run and more take the runs there, four elements a thread (H100, 1-D 0.75x of 2097152: 36.2 -> 19.5 us).
bool runs_beat_the_walk(const Prepared& p);  // with the walk's rule below

std::optional<Variant> fits_strips(Prepared& p) {
    if (runs_beat_the_walk(p)) return std::nullopt;  // the strips' general code would make eight elements in series
    const uint32_t taps = fixed_taps(p);
    if (!strips_fit(p, taps != 0 && p.view[2].dx > 1)) return std::nullopt;
    return Variant{Family::strips, p.mode, p.plan.dtype, 0, taps};
}

GpuProgram strips_program(Prepared& p, const Variant& variant) {
    GpuProgram program = tables_program(p, variant);
    const resample_gpu::View& view = p.view;
    const bool half = p.plan.dtype == DType::f16;
    const uint64_t groups = ceil_div<uint64_t>(view[2].dx, kernel::STRIP_ROWS);
    const uint64_t threads = view[0].dx * view[1].dx * groups * (view[3].dx / (half ? 2 : 1));
    if (threads > UINT32_MAX) throw RuntimeFailure("resample-grad on the GPU: too many threads");
    kernel::Params params = shape_params(p);
    params.strip_groups = uint32_t(groups);
    params.shifts |= shift8(groups) << 24;
    append_one_chunk(program, p, params, threads);
    return program;
}

// ---- the walk (kernels/resample_grad_walk.hlsl) ----

// The most taps on view axis 3 for which f32 rows that are not whole runs take the walk. A warp's loads of one tap
// span 4 x taps times the bytes they use in the walk (four elements a lane), taps times in the runs (an element a
// lane): at 2 taps 8x, within the L1 cache's lead over memory (H100: 128 bytes a clock per SM, about 10x its 3 TB/s);
// beyond, the walk would wait on the L1 where the runs lose only the runs across a row's end.
constexpr uint64_t kWalkMostRowTaps = 2;

// f32 rows of at least this many runs keep the runs, whatever their length: at most one run in as many crosses a
// row's end (and makes its elements one by one, about three runs' work).
constexpr uint64_t kRunsOfALongRow = 8;

// Linear fp16 dX of fewer elements than this takes the word walk where the strips would (but for one-tap plans, whose
// strips share a sum between a word's halves and rows: 1.05x faster there): the strips' threads (dX / 8, a word of
// STRIP_ROWS rows each) stay below 2^17, about half what an H100 holds at once, each summing its rows' taps in
// series; the walk's four times as many threads finish sooner (H200, linear39: dX 139x126 from 460x341 36.7 -> 11.5
// us, 16x64x16x16 42.3 -> 13.6, 4x32x64x64 22.2 -> 19.2, 8x64x40x40 27.4 against 28.5; 8x64x48x48, above it, 32.4
// against 37.9).
constexpr uint64_t kLinearHalfStripsBelow = uint64_t(1) << 20;

// Whether the kernel that takes the plan where the walk does not makes a thread's elements with its fast code: the
// strips (where they fit) on planes of at least STRIP_ROWS rows (a thread makes STRIP_ROWS rows; on fewer, fewer
// elements than a walk's uint4: an identity plan, one row, one float a thread), but not nearest fp16 rows of at most
// kWalkMostRowTaps taps an element on axis 3 (their loads a branch each; the walk's, branch-free and coalesced, ran
// faster: H100, rows of 462 from 277 238 -> 181 us, of 256 from 70 90 -> 67); the f32 runs on rows of whole runs or
// of kRunsOfALongRow runs and more (a run across a row's end makes its elements one by one, each split over the axes
// by divisions) or of more than kWalkMostRowTaps taps (the walk took 1-D 0.33x, 9.5M floats, 56 -> 66 us); both with
// one tap on view axes 0 and 1 (else their general code, element by element).
bool others_make_fast(Prepared& p) {
    const resample_gpu::View& view = p.view;
    if (p.mode == InterpolationMode::linear && p.plan.dtype == DType::f16 && p.dx_count < kLinearHalfStripsBelow &&
        !resample_gpu::one_tap(view))
        return false;
    const bool one_outer_tap = resample_gpu::outer_taps(view) == 1;
    const bool few_row_taps = resample_gpu::row_taps(view) <= kWalkMostRowTaps;
    if (strips_fit(p, resample_gpu::one_tap(view)))
        return one_outer_tap && view[2].dx >= kernel::STRIP_ROWS &&
               !(p.mode == InterpolationMode::nearest && p.plan.dtype == DType::f16 && few_row_taps);
    const bool few_runs_across_rows =
        view[3].dx % kernel::RUN_ELEMENTS == 0 || view[3].dx >= kRunsOfALongRow * kernel::RUN_ELEMENTS;
    return one_outer_tap && p.plan.dtype == DType::f32 && (few_runs_across_rows || !few_row_taps);
}

// Nearest plans, and linear fp16 plans, in one chunk that the strips and the runs would make (in part) element by
// element, or slower than the walk: fp16 rows of an odd length (the strips make whole words of a row) or (nearest) of
// at most kWalkMostRowTaps taps an element on axis 3, several taps on view axes 0 or 1 (the
// strips then make their eight elements one after another), planes of fewer than STRIP_ROWS rows, f32 rows that the
// strips do not take, shorter than kRunsOfALongRow runs and not whole runs (of at most kWalkMostRowTaps taps an
// element on axis 3). A thread makes WALK_BYTES of dX; rows of at least that many elements less one, so that a
// thread's elements lie in at most two rows (the kernel's fast walk; shorter rows keep the strips or runs, but nearest
// fp16's, a word a thread: nearest_short_half_rows). Linear
// float32 keeps its kernels: its runs and fixed-tap strips make whole rows at speed where the fp16 ones cannot.
bool walk_compiled(const Prepared& p) { return p.mode == InterpolationMode::nearest || p.plan.dtype == DType::f16; }

// A uint4 walk thread's elements (WALK_BYTES of dX), the phases of its copy of axis 3's table.
uint32_t uint4_walk_elements(const Prepared& p) { return uint32_t(kernel::WALK_BYTES / p.element); }

// Nearest fp16 rows shorter than a uint4 less one, which the uint4 walk leaves (its fast code needs a thread's eight
// halves in two rows at most), take the word walk whatever dX's size: a word's two halves lie in two rows at most
// from rows of 1 on. The runs made such rows at 4% of the bound where no other kernel took them (H200, 20261246/57:
// rows of 5 halves from 3 in 41000975 rows, whose float32 coordinates past 2^24 read up to 3 dY rows a row: 3534.5
// us, PyTorch 1664.7).
bool nearest_short_half_rows(const Prepared& p) {
    return p.mode == InterpolationMode::nearest && p.plan.dtype == DType::f16 &&
           p.view[3].dx + 1 < uint4_walk_elements(p);
}

// dX of fewer elements than this takes the linear word walk: the uint4 walk's threads (dX / 8) would not fill an
// H100 (132 SMs x 2048 threads), so the time is a thread's, which waits on its eight elements' taps; four times as
// many threads of two halves finish sooner (H100: dX of 85 to 131788 halves 1.4-2.2x faster, 1888 halves of 125
// taps each 65 -> 25 us).
constexpr uint64_t kWordWalkBelow = uint64_t(1) << 21;

// fp16 plans that the walk makes a word a thread: small dX (kWordWalkBelow; nearest too: H200, 20261239/48, 4x down
// on three axes to dX 49x35x19, about 64 taps an element: 49.1 us on the uint4 walk, PyTorch 42.5), or (linear) more
// than kWalkMostRowTaps taps an element on axis 3. A lane's eight halves read 8 x (dY size / dX size) columns of a dY
// row: at 3x, a warp's load of one tap spans 12 cache lines where two halves a lane span 3 (H100, 3x down on rows of
// 1087: 1110 us against 817; dX 17x5x3x17, 4x on four axes: 3809 against 1174). Elsewhere (at most 2 taps on axis 3) a
// uint4 a thread shares its set-up between eight elements: 0-2 taps on rows of 83, 2868 us against 3489.
bool word_walk(const Prepared& p) {
    if (p.plan.dtype != DType::f16) return false;
    if (p.mode != InterpolationMode::linear) return p.dx_count < kWordWalkBelow || nearest_short_half_rows(p);
    return p.dx_count < kWordWalkBelow || resample_gpu::row_taps(p.view) > kWalkMostRowTaps;
}

// Small linear fp16 dX whose rows read more than this many dY rows keeps the runs (two elements a thread in series,
// each over its own loops), which beat the word walk's steps there (H100: dX 17x5x3x17, 4x on four axes, 1064 us
// against 1174).
constexpr uint64_t kWordWalkMostDyRows = 16;

bool runs_beat_the_walk(const Prepared& p) {
    return p.mode == InterpolationMode::linear && p.plan.dtype == DType::f16 && p.dx_count < kWordWalkBelow &&
           resample_gpu::dy_rows_of_a_row(p.view) > kWordWalkMostDyRows;
}

// The uint4 walk's tables carry axis 3's phased copy too (walk_program): they must still fit one binding.
bool phased_tables_fit(Prepared& p) {
    const uint64_t words = p.tables().size() + resample_gpu::phased_words(p.view, p.mode, uint4_walk_elements(p));
    return padded_bytes(4 * words) <= p.limits.max_binding_bytes;
}

// Nearest fp16 word walks of small dX (kWordWalkBelow) take AHEAD_STEPS steps a pass, each step's loads before the
// adds: a thread's elements there wait on their taps' loads one after another (H200, ahead43: nearest 4x4x4 down to
// 1855 halves, 64 taps an element, 46.2 -> 38.0 us, PyTorch 41.2; 8x8x8 down to 125 halves 228.0 -> 192.7). The word
// walks of large dX (rows shorter than a uint4) took 1.04-1.54x as long so, the uint4 and linear walks 1.1-1.7x
// (docs/PERFORMANCE.md): those keep a step a pass.
uint32_t steps_ahead(const Prepared& p, bool words) {
    const bool small_nearest_words = words && p.mode == InterpolationMode::nearest && p.dx_count < kWordWalkBelow;
    return small_nearest_words ? kernel::AHEAD_STEPS : 0;
}

std::optional<Variant> fits_walk(Prepared& p) {
    if (!walk_compiled(p) || p.chunks().size() != 1 || runs_beat_the_walk(p)) return std::nullopt;
    if (p.view[3].dx + 1 < uint4_walk_elements(p) && !nearest_short_half_rows(p)) return std::nullopt;
    if (others_make_fast(p)) return std::nullopt;
    const bool words = word_walk(p);
    if (!words && !phased_tables_fit(p)) return std::nullopt;
    return Variant{Family::walk, p.mode, p.plan.dtype, 0, steps_ahead(p, words), words};
}

// ---- the sparse walk (kernels/resample_grad_walk.hlsl, SPARSE) ----

std::optional<Variant> fits_fractions(Prepared& p);  // with the fractions below

// Linear plans in one chunk of at most one tap at every index of every axis and no tap at some (sparse downscales:
// an element has one term or none), whose rows hold a uint4 less one element (the fast walk's two rows at most),
// that the fractions do not take (one-row plans, whose tables they shrink). The strips and runs make each element
// with a set-up of its own (divisions, the taps of every axis) for that one term (H100, align_corners 0.398 x 0.241
// down to dX 256x63x113x83: the strips 752.8 us, the sparse walk 614.1). Plans of exactly one tap everywhere (0.5x
// half-pixel, identities) keep the one-tap strips, whose four rows share a column's tap (and fp16 a word's equal
// taps): the sparse walk took dX 16x64x256x256 at 0.5x from 195 to 220 us (f32) and 168 to 276 (fp16). fp16 keeps
// the word walk where it would take the plan (small dX: the uint4 threads would not fill the GPU).
std::optional<Variant> fits_sparse_walk(Prepared& p) {
    if (p.mode != InterpolationMode::linear || resample_gpu::one_tap(p.view)) return std::nullopt;
    if (std::max(resample_gpu::outer_taps(p.view), resample_gpu::inner_taps(p.view)) > 1) return std::nullopt;
    if (p.view[3].dx + 1 < uint4_walk_elements(p) || word_walk(p)) return std::nullopt;
    if (p.chunks().size() != 1 || !phased_tables_fit(p) || fits_fractions(p)) return std::nullopt;
    return Variant{Family::sparse_walk, p.mode, p.plan.dtype};
}

// The uint4 walk: the tables with axis 3's phased copy (interface/resample_grad.h), which the fast walk reads a
// column's taps (linear: and weights) from.
GpuProgram walk_program(Prepared& p, const Variant& variant) {
    GpuProgram program = tables_program(p, variant);
    const uint64_t elements = variant.words ? kernel::WALK_WORD_ELEMENTS : uint4_walk_elements(p);
    if (!variant.words) resample_gpu::insert_phased_columns(p.view, p.mode, uint32_t(elements), program.constants[0]);
    const uint64_t threads = ceil_div<uint64_t>(p.dx_count, elements);
    append_one_chunk(program, p, shape_params(p), threads);
    return program;
}

// ---- the lines (kernels/resample_grad_lines.hlsl) ----

// Whether column words (LINE_*: a first dY index and a tap count) can hold every column of the view's rows; else the
// lines take them with the bounds (LINE_TAPS 0).
bool words_hold_the_columns(const resample_gpu::View& view) {
    return resample_gpu::row_taps(view) <= kernel::LINE_MOST_COUNT && view[3].dy <= kernel::LINE_FIRST_MASK;
}

// The lines' variant (LINE_TAPS) for the view's rows: up to 2 taps an element, that many; beyond, the most taps of
// the columns but the first and last (at least 3, at most LINE_MOST_TAPS): clamping piles a downscale's spare dY
// columns onto the first or last dX column (8 taps where the others have 4), which the kernel sums in a loop rather
// than making every column load 8. Where a column between has more than LINE_MOST_TAPS, or no column word holds the
// columns (more than LINE_MOST_COUNT taps, or dY rows past LINE_FIRST_MASK: a 1-D plan past 2^27, whose float32
// coordinates give every 16th column 15 to 17 taps and the others none), the bounds (0), whose columns take any
// number of taps in a loop, where the taps cover each dY row in order (line_bounds): the walk made such a plan at
// 12% of the bound (H100, 20261207/105, 211937796 halves: 2441 us, PyTorch 1083), and a 1-D plan past 2^24 of 0 to
// 8 taps a column 0.53x the time of its uint4 walk (H200, 20261250/48, 84752039 halves from 63564029: 669.7 ->
// 353.4 us, PyTorch 483.3).
std::optional<uint32_t> line_taps(const resample_gpu::View& view) {
    const auto bounds = [&view]() -> std::optional<uint32_t> {
        if (!resample_gpu::taps_cover_dy_rows_in_order(view)) return std::nullopt;
        return 0u;
    };
    if (!words_hold_the_columns(view)) return bounds();
    const uint64_t taps = resample_gpu::row_taps(view);
    if (taps <= 2) return uint32_t(taps);
    const uint64_t inner = resample_gpu::inner_column_taps(view);
    if (inner > kernel::LINE_MOST_TAPS) return bounds();
    return uint32_t(std::max<uint64_t>(inner, 3));
}

// A lines thread's elements: fp16 of 4 taps a word (LINE_WORDS: two halves), else a uint4's (WALK_BYTES). A uint4 a
// lane spreads a warp's load of one tap over 16 x taps bytes a lane, a word over 4 x taps (the linear word walk's
// reason). H100: rows of 47 halves from 188 (4 taps), 63.8 -> 57.5 us; rows of 1009 from 3027 (3 taps), 280 -> 321
// us, so 3 taps keep the uint4.
uint32_t line_elements(const Prepared& p, uint32_t taps) {
    const bool words = p.plan.dtype == DType::f16 && taps == kernel::LINE_MOST_TAPS;
    return words ? kernel::WALK_WORD_ELEMENTS : uint4_walk_elements(p);
}

// The tables for the variant of `taps` (line_taps: 0 the bounds).
LinesTables make_lines_tables(const Prepared& p, uint32_t taps) {
    LinesTables t;
    if (!p.view[3].identity) {
        t.columns = uint32_t(t.words.size());
        const std::vector<uint32_t> columns = taps == 0 ? resample_gpu::line_bounds(p.view, line_elements(p, taps))
                                                        : resample_gpu::line_columns(p.view, line_elements(p, taps));
        t.words.insert(t.words.end(), columns.begin(), columns.end());
    }
    if (!resample_gpu::rows_read_their_own_row(p.view)) {
        t.row_starts = uint32_t(t.words.size());
        const std::vector<uint32_t> starts = resample_gpu::line_row_starts(p.view);
        t.words.insert(t.words.end(), starts.begin(), starts.end());
    }
    return t;
}

const LinesTables& lines_tables(Prepared& p, uint32_t taps) {
    if (!p.lines) p.lines = make_lines_tables(p, taps);
    return *p.lines;
}

std::optional<Variant> fits_elements(Prepared& p);  // with the elements below

// f32 plans of the 3-tap lines variant take the lines where the strips or runs would make them with their fast code,
// but where dX is small enough for an element a thread (fits_elements): H200, 2-3 taps an element on rows of 4 to
// 2143, nine stored sweep cases 0.57-0.96x the strips' or runs' time (20261246/56 540.6 -> 309.2 us, 20261237/28
// 265.6 -> 178.4, 20261253/28 60.3 -> 40.2); 1-D plans of a few thousand floats 1.12-1.29x slower than the
// elements; the 4-tap variant 1.37-1.57x slower on three of four (docs/PERFORMANCE.md, lines41).
bool f32_three_taps_pay(Prepared& p, uint32_t taps) {
    return p.plan.dtype == DType::f32 && taps == 3 && !fits_elements(p);
}

// Nearest plans in one chunk whose dX rows each read one dY row at most (view axes 0-2 of at most one tap each:
// identities, or downsampled axes, which the host's row table maps), with at most LINE_MOST_TAPS taps an element:
// every row shares one table of column words, and a thread makes a uint4 of dX across any number of row ends with a
// column word, its loads and a few integer operations an element (no float arithmetic at one tap). The walk took
// these rows with its per-row taps and steps over dY rows (rows of 9 to 72 halves: 20-28% of the bound on the H100).
// Of more than kWalkMostRowTaps taps an element, the lines take the plans that the walk would (the strips and the
// f32 runs, where they make a plan with their fast code, beat the walk there; the lines replace the walk; but f32
// plans of 3 taps, f32_three_taps_pay, take the lines there too), but for small dX (kWordWalkBelow) of more taps
// than a column word's variants: the walk's threads (fp16: a word each, four times as many) beat the bounds' loops
// there (H200, 5x down: one row of 5000 halves 4.9 us against 11.7, of 1000000 14.0 against 16.7; 2000x201 8.6
// against 10.1; f32 3x110 6.2 against 7.3), where the uint4 walk lost to them (64x999x201 halves 116.5 against 91.3).
std::optional<Variant> fits_lines(Prepared& p) {
    if (p.mode != InterpolationMode::nearest || resample_gpu::dy_rows_of_a_row(p.view) > 1) return std::nullopt;
    const std::optional<uint32_t> taps = line_taps(p.view);
    if (!taps || p.chunks().size() != 1) return std::nullopt;
    if ((*taps > kWalkMostRowTaps || *taps == 0) && others_make_fast(p) && !f32_three_taps_pay(p, *taps))
        return std::nullopt;
    if (*taps == 0 && words_hold_the_columns(p.view) && p.dx_count < kWordWalkBelow) return std::nullopt;
    if (padded_bytes(4 * lines_tables(p, *taps).words.size()) > p.limits.max_binding_bytes) return std::nullopt;
    return Variant{
        Family::lines, p.mode, p.plan.dtype, 0, *taps, line_elements(p, *taps) == kernel::WALK_WORD_ELEMENTS};
}

GpuProgram lines_program(Prepared& p, const Variant& variant) {
    GpuProgram program;
    program.kernel = resample_gpu::kernel_name(variant);
    program.binding_count = 3;
    program.push_bytes = push_bytes<kernel::Params>();
    const LinesTables& tables = lines_tables(p, variant.taps);
    kernel::Params params = shape_params(p);
    params.table0 = params.table1 = params.table2 = params.table3 = kernel::IDENTITY_AXIS;  // the lines' own tables
    params.columns = tables.columns;
    params.row_starts = tables.row_starts;
    program.constants.push_back(tables.words);
    append_one_chunk(program, p, params, ceil_div<uint64_t>(p.dx_count, line_elements(p, variant.taps)));
    return program;
}

// ---- the rows (kernels/resample_grad_rows.hlsl) ----

// Nearest plans in one chunk whose view axis 3 is an identity (only outer axes resampled: a dX row and its dY rows
// share their columns), where a dX row reads several dY rows (one at most: the lines): a thread makes a uint4 of dX
// from one uint4 of each dY row. The walk, which loads each element of its uint4 on its own (a warp's load of one
// tap spans four times the bytes it uses), reached 77% of the bound there (H100, 20261224/28: f32 3x3 on the two
// outer axes, rows of 15528, 188.7 us against PyTorch's 173.6; round 1 of nearest31: 148.7). The fp16 blocks come
// first and keep the plans of integer factors (20261208/105, fp16 2x on rows of 65536: 65.0 us, the rows 71.6).
bool fits_any_rows(Prepared& p) {
    const resample_gpu::View& view = p.view;
    if (p.mode != InterpolationMode::nearest || !view[3].identity) return false;
    return resample_gpu::dy_rows_of_a_row(view) >= 2 && p.chunks().size() == 1;
}

// Rows of whole uint4s.
std::optional<Variant> fits_rows(Prepared& p) {
    if (p.view[3].dx % uint4_walk_elements(p) != 0 || !fits_any_rows(p)) return std::nullopt;
    return Variant{Family::rows, p.mode, p.plan.dtype};
}

// Other rows take the shifted rows where they are at least this many warps' uint4s long: a thread whose uint4
// crosses a row's end makes its elements one by one, so at most one warp in as many waits on one.
constexpr uint64_t kShiftedRowWarps = 8;
constexpr uint64_t kWarpLanes = 32;

// float32 rows of any length (kShiftedRowWarps warps' uint4s and more): a thread's terms of a dY row from the two
// uint4s that hold them (H100, round 2 of nearest31: 20261224/161, 4x on rows of 790731, runs 90.4 -> 71.2 us;
// 20261201/142, 2x on rows of 606753, 30.4 -> 27.0). fp16 keeps the kernels it took: its shifted rows were never
// measured faster (tried before the blocks with halves converted in hardware: 20261250/384 406.4 -> 531.8 us).
std::optional<Variant> fits_shifted_rows(Prepared& p) {
    if (p.plan.dtype != DType::f32) return std::nullopt;
    if (p.view[3].dx < kShiftedRowWarps * kWarpLanes * uint4_walk_elements(p) || !fits_any_rows(p)) return std::nullopt;
    return Variant{Family::shifted_rows, p.mode, p.plan.dtype};
}

// A thread a uint4 of dX.
GpuProgram rows_program(Prepared& p, const Variant& variant) {
    GpuProgram program = tables_program(p, variant);
    append_one_chunk(program, p, shape_params(p), ceil_div<uint64_t>(p.dx_count, uint4_walk_elements(p)));
    return program;
}

// ---- the planes (kernels/resample_grad_planes.hlsl) ----

// Planes of rows that the walk does not take up to this many dX and dY elements: their table (a word per dX element
// and at most one per dY element) then stays in the caches.
constexpr uint64_t kShortRowPlaneMostDx = 4096;
constexpr uint64_t kShortRowPlaneMostDy = 16384;

// Nearest plans in one chunk whose resampled axes make planes whose rows read several dY rows (one at most: the
// lines, which beat the planes there: H100, round 1 of nearest32, 20261224/98 float32 rows of 6 from 2 32.8 -> 94.1
// us): a thread makes one dX element (fp16: a word) from its plane's runs. Rows that the walk does not take (shorter
// than its uint4 less one: float32 rows of 1-2, fp16 of 1-6) and, fp16, that the strips do not take (odd: the
// strips make whole words of a row) in planes of up to kShortRowPlaneMostDx dX and kShortRowPlaneMostDy dY
// elements: the runs and strips made those element by element, each with a set-up of its own (H200, round 1 of
// nearest33: 20261231/29, fp16 rows of 5 from 2x2 of 10, runs 1932.4 -> 985.3 us, PyTorch 1038; /28, float32 rows
// of 1 from 3x3 of 3, strips 152.5 -> 74.1, PyTorch 100); fp16 even rows keep the strips but in tiny planes (rows of
// 6 from 12, 1034.8 us against the planes' 1176.2; of 4, 374.9 against 492.7). float32 rows the walk takes only in tiny
// planes, of at most PLANE_MOST_DX dX and PLANE_MOST_DY dY elements, which the strips made a row of one element at a
// time with a strip's set-up (20261227/28, float32 dX 105433x18x1x1 from planes of 2x2: 44.3 -> 14.5 us, PyTorch 39.9;
// fp16 2x2 from 3x3, 27.7 -> 15.1); fp16 rows the walk takes keep it (20261224/99, rows of 11 halves from planes of
// 4x4, walk 31.8 us, planes 34.6). The fp16 blocks come first and keep plans of integer factors (planes before them:
// 2x2 down to 1x1 14.0 -> 16.3 us).
bool planes_fit(const Prepared& p, const resample_gpu::Planes& planes) {
    const bool tiny = planes.dx <= kernel::PLANE_MOST_DX && planes.dy <= kernel::PLANE_MOST_DY;
    if (p.view[3].dx + 1 >= uint4_walk_elements(p)) return p.plan.dtype == DType::f32 && tiny;  // the walk's rows
    const bool strips_rows = p.plan.dtype == DType::f16 && p.view[3].dx % 2 == 0;
    return strips_rows ? tiny : planes.dx <= kShortRowPlaneMostDx && planes.dy <= kShortRowPlaneMostDy;
}

// Linear planes take at most this many terms an element on average: a thread's lanes read their elements' lists a
// uint4's elements apart, so a step's loads spread over a warp's cache lines, and more terms and longer lists meant
// misses (H200, round 1 of linear34: 20261203/31, fp16 2x on rows of 2310, 4 terms an element in lists of about
// 20800 words: strips 402.2 us, the planes 2372.4; 20261232/30, float32 1.5x on rows of 551, 3 terms: 1023.1 against
// 980.2). Plans whose rows read several dY rows, which the other kernels make with loops over them, up to
// kLinearPlaneMostTerms (measured to 2.4: 20261210/111, fp16 1.2x on rows of 3 in planes of 5, runs 122.8 us, the
// planes 29.3); others up to kLinearRowPlaneMostTerms in lists of up to kLinearRowPlaneMostWords (1-D downscales on
// the sparse walk and strips, 1.04-1.58x slower than the planes; 20261231/53, float32 0.6x on rows of 2267, 1.2 terms
// in lists of about 7700 words, the least of them: 41.0 us against 39.0).
constexpr uint64_t kLinearPlaneMostTerms = 3;
constexpr uint64_t kLinearRowPlaneMostTerms = 2;
constexpr uint64_t kLinearRowPlaneMostWords = 8192;

// Linear planes take plans of at least this many threads (a uint4 each), as many as fp16 plans of kWordWalkBelow
// halves have: fewer would not fill the GPU. float32 plans from 2^20 elements, not 2^21 as fp16's (H200, 20261234/30,
// float32 planes of 16 that each gather 4 dY rows, dX of 1.8 M elements: strips_taps4 77.8 us, the planes 11.9,
// PyTorch 51.0; other float32 plans of 2^20 to 2^21 elements level: 20261203/87, 20261207/53 keep their kernels).
constexpr uint64_t kLinearPlaneLeastThreads = kWordWalkBelow / 8;

// Linear plans of kLinearPlaneLeastThreads threads and more (a uint4 a thread: fewer would not fill the GPU) in
// planes of a uint4 less one (a thread's elements in two planes at most) to kShortRowPlaneMostDx dX and
// kShortRowPlaneMostDy dY elements of few terms (above), but not one-tap plans (the one-tap strips share a column's
// tap between rows: fits_sparse_walk): a thread makes its uint4 from its elements' lists, with one division and no
// row taps. The fp16 walk made planes of rows that read several dY rows at 7% of the bound (H200, 20261232/50: rows
// of 51 halves from 12 in planes of 9 rows from 6, 3054.7 us, the planes 1595.9, PyTorch 2476.8), the runs and strips
// such plans element by element (/145, fp16 rows of 5 in planes of 667 rows: 7253.1 against 1743.0).
bool linear_planes_fit(const Prepared& p, const resample_gpu::Planes& planes) {
    if (p.dx_count / uint4_walk_elements(p) < kLinearPlaneLeastThreads || planes.dx + 1 < uint4_walk_elements(p) ||
        resample_gpu::one_tap(p.view))
        return false;
    if (planes.dx > kShortRowPlaneMostDx || planes.dy > kShortRowPlaneMostDy) return false;
    if (resample_gpu::dy_rows_of_a_row(p.view) >= 2) return planes.terms <= kLinearPlaneMostTerms * planes.dx;
    const uint64_t words = planes.dx + 1 + kernel::PLANE_TERM_WORDS * planes.terms;
    return planes.terms <= kLinearRowPlaneMostTerms * planes.dx && words <= kLinearRowPlaneMostWords;
}

// The words of the planes' lists: at most a run an element of dY (nearest), or the terms.
uint64_t plane_list_words(const Prepared& p, const resample_gpu::Planes& planes) {
    if (p.mode == InterpolationMode::nearest) return planes.dy;
    return kernel::PLANE_TERM_WORDS * planes.terms;
}

// The tables with the planes' words in one binding.
bool plane_tables_fit(Prepared& p, const resample_gpu::Planes& planes) {
    const uint64_t words = p.tables().size() + kernel::PLANE_RUN_STARTS + planes.dx + 1 + plane_list_words(p, planes);
    return padded_bytes(4 * words) <= p.limits.max_binding_bytes;
}

std::optional<Variant> fits_planes(Prepared& p) {
    const std::optional<resample_gpu::Planes> planes = resample_gpu::planes_of(p.view);
    if (!planes) return std::nullopt;
    if (p.mode == InterpolationMode::nearest) {
        if (!planes_fit(p, *planes) || resample_gpu::dy_rows_of_a_row(p.view) < 2) return std::nullopt;
    } else if (!linear_planes_fit(p, *planes)) {
        return std::nullopt;
    }
    if (p.chunks().size() != 1 || !plane_tables_fit(p, *planes)) return std::nullopt;
    return Variant{Family::planes, p.mode, p.plan.dtype};
}

// A planes thread's dX elements: linear a uint4's, nearest one (fp16: a word of two).
uint64_t plane_thread_elements(const Prepared& p) {
    if (p.mode == InterpolationMode::linear) return uint4_walk_elements(p);
    return p.plan.dtype == DType::f16 ? 2 : 1;
}

GpuProgram planes_program(Prepared& p, const Variant& variant) {
    GpuProgram program = tables_program(p, variant);
    std::vector<uint32_t>& words = program.constants[0];
    kernel::Params params = shape_params(p);
    params.columns = uint32_t(words.size());
    const resample_gpu::Planes planes = *resample_gpu::planes_of(p.view);
    const std::vector<uint32_t> lists = p.mode == InterpolationMode::nearest
                                            ? resample_gpu::plane_runs(p.view, planes, params.columns)
                                            : resample_gpu::plane_terms(p.view, planes, params.columns);
    words.insert(words.end(), lists.begin(), lists.end());
    append_one_chunk(program, p, params, ceil_div<uint64_t>(p.dx_count, plane_thread_elements(p)));
    return program;
}

// ---- the fractions (kernels/resample_grad_fractions.hlsl) ----

const std::optional<std::vector<uint32_t>>& fraction_tables(Prepared& p) {
    if (!p.fractions) p.fractions = resample_gpu::fraction_tables(p.view);
    return *p.fractions;
}

// The fractions take linear f32 plans whose rows read their own dY row where axis 3's tap tables are at least
// 1 / kFractionsTableShare of the bytes of dX and dY: the other kernels read a column's pair and weights (about 13
// bytes an element at a downsample by 0.6) for every row, from memory where the tables outgrow the caches; a 1-D
// resample (one row) moved three times the bytes of dX and dY (H100, 0.6x of 11M floats: 89.6 us, PyTorch 80.3).
constexpr uint64_t kFractionsTableShare = 4;

std::optional<Variant> fits_fractions(Prepared& p) {
    // dX and dY in one binding each, tested without chunks(), which first requires the tap tables to fit one: the
    // fractions' smaller tables may fit where those do not.
    const bool one_chunk = p.dx_padded <= p.limits.max_binding_bytes && p.dy_padded <= p.limits.max_binding_bytes;
    if (p.mode != InterpolationMode::linear || p.plan.dtype != DType::f32 || !one_chunk) return std::nullopt;
    if (!resample_gpu::rows_read_their_own_row(p.view) || p.view[3].identity) return std::nullopt;
    const uint64_t table_bytes =
        4 * (p.view[3].taps->begin.size() * kernel::TABLE_PAIR_WORDS + p.view[3].taps->weight.size());
    if (kFractionsTableShare * table_bytes < p.dx_padded + p.dy_padded) return std::nullopt;
    const std::optional<std::vector<uint32_t>>& tables = fraction_tables(p);
    if (!tables || padded_bytes(4 * (tables->size() + 1)) > p.limits.max_binding_bytes) return std::nullopt;
    const bool short_ranges = resample_gpu::longest_fraction_range(*tables, p.view[3].dx) <= 2;
    return Variant{Family::fractions, p.mode, p.plan.dtype, 0, short_ranges ? 2u : 4u};
}

// A thread an element; the tables: TABLE_ONE (read by set_opaque_zero), then the bounds and fractions (table3).
GpuProgram fractions_program(Prepared& p, const Variant& variant) {
    GpuProgram program;
    program.kernel = resample_gpu::kernel_name(variant);
    program.binding_count = 3;
    program.push_bytes = push_bytes<kernel::Params>();
    std::vector<uint32_t> words{std::bit_cast<uint32_t>(1.0f)};
    const std::vector<uint32_t>& tables = *fraction_tables(p);
    words.insert(words.end(), tables.begin(), tables.end());
    program.constants.push_back(std::move(words));
    kernel::Params params = size_params(p);
    params.table0 = params.table1 = params.table2 = kernel::IDENTITY_AXIS;
    params.table3 = kernel::TABLE_ONE + 1;
    append_one_chunk(program, p, params, p.dx_count);
    return program;
}

// ---- an element a thread (kernels/resample_grad.hlsl, ONE_ELEMENT) ----

// float32 plans in one chunk of dX below kWordWalkBelow elements (as the fp16 word walk: four elements a thread would
// not fill the GPU, so the time is a thread's chain of taps, a quarter as long an element a thread). Linear: those
// that the strips and runs make with their general code, element after element over every tap: several taps on view
// axes 0 or 1, or more than MAX_FIXED_TAPS on axis 2 or 3 (H100, 3-D 2.5x down to 6784 floats, about 100 taps an
// element: 44.7 us in the strips, PyTorch 76.5). Nearest: those that reach the runs (no strips, lines, walk or
// planes take them) with more than one tap at some index (one-tap plans: a tap an element, no chain to cut): a run
// thread's four elements each sum every tap of their rows (H200, 20261234/47, 3.84 x 3.88 down to dX 53x19x435,
// about 15 taps an element: 22.4 us, PyTorch 26.2).
bool elements_pay(Prepared& p) {
    if (p.mode == InterpolationMode::linear)
        return resample_gpu::outer_taps(p.view) > 1 || resample_gpu::inner_taps(p.view) > kernel::MAX_FIXED_TAPS;
    return !resample_gpu::one_tap(p.view) && !fits_strips(p);
}

std::optional<Variant> fits_elements(Prepared& p) {
    if (p.plan.dtype != DType::f32 || p.dx_count >= kWordWalkBelow) return std::nullopt;
    if (!elements_pay(p) || p.chunks().size() != 1) return std::nullopt;
    return Variant{Family::elements, p.mode, p.plan.dtype};
}

GpuProgram elements_program(Prepared& p, const Variant& variant) {
    GpuProgram program = tables_program(p, variant);
    append_one_chunk(program, p, shape_params(p), p.dx_count);
    return program;
}

std::optional<Variant> fits_runs(Prepared& p) { return Variant{Family::runs, p.mode, p.plan.dtype}; }

// Threads for dX elements [begin, end) in runs: fp16 one per word, f32 RUN_THREADS per run of RUN_ELEMENTS.
uint64_t run_threads(uint64_t begin, uint64_t end, bool half) {
    if (half) return ceil_div<uint64_t>(end, 2) - begin / 2;
    return ceil_div<uint64_t>(end - begin, kernel::RUN_ELEMENTS) * kernel::RUN_THREADS;
}

// A pass per chunk, binding the dX window it writes and the dY window its taps reach.
GpuProgram runs_program(Prepared& p, const Variant& variant) {
    GpuProgram program = tables_program(p, variant);
    const bool half = p.plan.dtype == DType::f16;
    const uint64_t element = p.element;
    kernel::Params params = shape_params(p);
    for (const Chunk& c : p.chunks()) {
        const uint64_t dx_offset = align_down(c.begin * element, p.limits.offset_alignment);
        const BufferWindow dx{1, dx_offset, std::min(padded_bytes(c.end * element), p.dx_padded) - dx_offset};
        const BufferWindow dy = chunk_dy_window(0, c, element, p.dy_padded, p.limits);
        const uint64_t threads = run_threads(c.begin, c.end, half);
        params.count = uint32_t(threads);
        params.elem_begin = uint32_t(c.begin);
        params.elem_end = uint32_t(c.end);
        params.dx_origin = uint32_t(dx_offset / element);
        params.dy_origin = uint32_t(dy.offset / element);
        // fp16: a word shared with the previous chunk is read-modify-written; wait for that chunk's write.
        const bool shares_word = half && c.begin % 2 != 0;
        append_dispatches(program, {dy, dx, table_window(program)}, params, 0, threads, p.limits, shares_word);
    }
    return program;
}

// A family: where it fits (the variant it then runs), its program, its compiled variants and the APIs that run it.
struct FamilyRecord {
    Family family;
    std::optional<Variant> (*fits)(Prepared& p);
    GpuProgram (*program)(Prepared& p, const Variant& variant);
    void (*variants)(std::vector<Variant>& out);
    ApiSet apis;
};

constexpr InterpolationMode kModes[] = {InterpolationMode::nearest, InterpolationMode::linear};

// vkd3d-compiler 1.17 crashes or loops on the one-tap strips (kernels/README.md): on Direct3D 12 one-tap plans
// take the plain strips or runs.
constexpr ApiSet kVulkanOnly{GpuApi::vulkan};

// The chooser's order: the first family that fits wins.
const FamilyRecord kFamilies[] = {
    {Family::block, fits_block, block_program,
     [](std::vector<Variant>& out) {
         for (uint32_t columns = 1; columns <= kernel::BLOCK_MAX_COLUMNS; ++columns)
             out.push_back({Family::block, InterpolationMode::nearest, DType::f16, columns});
     },
     kEveryApi},
    {Family::rows, fits_rows, rows_program,
     [](std::vector<Variant>& out) {
         for (DType dtype : {DType::f32, DType::f16}) out.push_back({Family::rows, InterpolationMode::nearest, dtype});
     },
     kEveryApi},
    // On D3D12 (vkd3d over lavapipe) the shifted rows' sums came out wrong on some rows, whatever form the terms'
    // selects took: D3D12 keeps the kernels that take such plans otherwise.
    {Family::shifted_rows, fits_shifted_rows, rows_program,
     [](std::vector<Variant>& out) {
         out.push_back({Family::shifted_rows, InterpolationMode::nearest, DType::f32});
     },
     kVulkanOnly},
    {Family::planes, fits_planes, planes_program,
     [](std::vector<Variant>& out) {
         for (InterpolationMode mode : kModes)
             for (DType dtype : {DType::f32, DType::f16}) out.push_back({Family::planes, mode, dtype});
     },
     kEveryApi},
    {Family::lines, fits_lines, lines_program,
     [](std::vector<Variant>& out) {
         for (DType dtype : {DType::f32, DType::f16})
             for (uint32_t taps = 0; taps <= kernel::LINE_MOST_TAPS; ++taps)  // 0: the bounds; fp16 4: words
                 out.push_back({Family::lines, InterpolationMode::nearest, dtype, 0, taps,
                                dtype == DType::f16 && taps == kernel::LINE_MOST_TAPS});
     },
     kEveryApi},
    {Family::sparse_walk, fits_sparse_walk, walk_program,
     [](std::vector<Variant>& out) {
         for (DType dtype : {DType::f32, DType::f16})
             out.push_back({Family::sparse_walk, InterpolationMode::linear, dtype});
     },
     kEveryApi},
    {Family::walk, fits_walk, walk_program,
     [](std::vector<Variant>& out) {
         for (DType dtype : {DType::f32, DType::f16}) out.push_back({Family::walk, InterpolationMode::nearest, dtype});
         out.push_back({Family::walk, InterpolationMode::nearest, DType::f16, 0, 0, true});
         out.push_back({Family::walk, InterpolationMode::nearest, DType::f16, 0, kernel::AHEAD_STEPS, true});
         for (bool words : {false, true})
             out.push_back({Family::walk, InterpolationMode::linear, DType::f16, 0, 0, words});
     },
     kEveryApi},
    {Family::fractions, fits_fractions, fractions_program,
     [](std::vector<Variant>& out) {
         for (uint32_t steps : {2u, 4u})
             out.push_back({Family::fractions, InterpolationMode::linear, DType::f32, 0, steps});
     },
     kEveryApi},
    {Family::elements, fits_elements, elements_program,
     [](std::vector<Variant>& out) {
         for (InterpolationMode mode : kModes) out.push_back({Family::elements, mode, DType::f32});
     },
     kEveryApi},
    {Family::one_tap_strips, fits_one_tap_strips, strips_program,
     [](std::vector<Variant>& out) {
         for (InterpolationMode mode : kModes)
             for (DType dtype : {DType::f32, DType::f16}) out.push_back({Family::one_tap_strips, mode, dtype});
     },
     kVulkanOnly},
    {Family::strips, fits_strips, strips_program,
     [](std::vector<Variant>& out) {
         for (InterpolationMode mode : kModes)
             for (DType dtype : {DType::f32, DType::f16}) out.push_back({Family::strips, mode, dtype});
         for (uint32_t taps = 2; taps <= kernel::MAX_FIXED_TAPS; ++taps)
             out.push_back({Family::strips, InterpolationMode::linear, DType::f32, 0, taps});
     },
     kEveryApi},
    {Family::runs, fits_runs, runs_program,
     [](std::vector<Variant>& out) {
         for (InterpolationMode mode : kModes)
             for (DType dtype : {DType::f32, DType::f16}) out.push_back({Family::runs, mode, dtype});
     },
     kEveryApi},
};

}  // namespace

namespace resample_gpu {

std::string kernel_name(const Variant& v) {
    const std::string dtype = dtype_suffix(v.dtype);
    const std::string_view mode = v.mode == InterpolationMode::linear ? "linear" : "nearest";
    switch (v.family) {
        case Family::block: return fmt::format("resample_grad_block_x{}_{}", v.columns, dtype);
        case Family::runs: return fmt::format("resample_grad_{}_{}", mode, dtype);
        case Family::lines:
            if (v.taps == 0) return fmt::format("resample_grad_nearest_{}_lines_bounds", dtype);
            return fmt::format("resample_grad_nearest_{}_lines_taps{}{}", dtype, v.taps, v.words ? "_words" : "");
        case Family::rows: return fmt::format("resample_grad_nearest_{}_rows", dtype);
        case Family::shifted_rows: return fmt::format("resample_grad_nearest_{}_rows_shifted", dtype);
        case Family::planes: return fmt::format("resample_grad_{}_{}_planes", mode, dtype);
        case Family::sparse_walk: return fmt::format("resample_grad_{}_{}_walk_sparse", mode, dtype);
        case Family::walk:
            return fmt::format("resample_grad_{}_{}_walk{}{}", mode, dtype, v.words ? "_words" : "",
                               v.taps != 0 ? "_ahead" : "");
        case Family::elements: return fmt::format("resample_grad_{}_{}_elements", mode, dtype);
        case Family::fractions: return fmt::format("resample_grad_{}_{}_fractions_steps{}", mode, dtype, v.taps);
        case Family::one_tap_strips: return fmt::format("resample_grad_{}_{}_strips_one_tap", mode, dtype);
        case Family::strips: {
            const std::string taps = v.taps != 0 ? fmt::format("_taps{}", v.taps) : "";
            return fmt::format("resample_grad_{}_{}_strips{}", mode, dtype, taps);
        }
    }
    throw std::logic_error("resample-grad: unknown family");
}

std::vector<Variant> compiled_variants() {
    std::vector<Variant> all;
    for (const FamilyRecord& family : kFamilies) family.variants(all);
    return all;
}

ApiSet family_apis(Family family) {
    for (const FamilyRecord& r : kFamilies)
        if (r.family == family) return r.apis;
    throw std::logic_error("resample-grad: a family without a record");
}

}  // namespace resample_gpu

GpuProgram build_resample_grad_program(const ResampleGradPlan& plan, const DeviceLimits& limits) {
    if (element_count(plan.dx_shape) > UINT32_MAX || element_count(plan.dy_shape) > UINT32_MAX)
        throw RuntimeFailure("resample-grad on the GPU: a tensor has more than 2^32 - 1 elements");
    Prepared prepared(plan, limits);
    for (const FamilyRecord& family : kFamilies)
        if (family.apis.has(limits.api))
            if (const std::optional<Variant> variant = family.fits(prepared)) return family.program(prepared, *variant);
    throw RuntimeFailure(fmt::format("resample-grad on the GPU: no kernel for this resample on {}; run it with --cpu",
                                     gpu_api_name(limits.api)));
}

}  // namespace dmlgrad
