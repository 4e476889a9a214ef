// Slice grad on the GPU, by one of five kernels, all a bit copy with variants by element size (_b8, _b16, _b32,
// _b64), each dX element taking its dY element or 0:
//  - slice_grad_walk_lines_* (kernels/slice_grad_walk.hlsl, LINES=1): rows shorter than 64 bytes, not whole uint4s,
//    dY bound whole, that fold with outer axes into lines sharing their column windows (lines_folded; a long outer
//    axis stepping by m > 1 first split into periods of m and the phase, one copied whole into blocks of rows,
//    with_lines_split), walked as the walk below walks rows: in the walk's place (there rows shorter than 256 bytes
//    too, walk_lines), and in the spans' where those would rewrite more than 7/20 of the fill on 16-bit elements or
//    wider in lines of 512 bytes or more. Its slice_grad_walk_lines_gaps_* variant where many uint4s hold no reached
//    column (gaps_pay); its slice_grad_walk_lines_words_b8 variant (Vulkan) for 8-bit lines whose dY bytes lie close
//    (line_words). It and the walk below may walk only the stretches of dX that a few reached outer coordinates make,
//    with zeros dispatched over the rest (reached_stretches_pay, stretches_beat_spans).
//  - slice_grad_spans_* (kernels/slice_grad_spans.hlsl): slices whose dY rows' spans cost at most 3/2 of a fill of
//    dX (1/8 where the kernel below would be the element kernel or the rows kernel on long rows; see spans_pay)
//    while dY and dX fit one binding each; a fill of zeros at the copy ceiling, then a thread per uint4 of each dY
//    row's span, or per span where neighbouring spans lie close (span_uint4s_per_thread; the kernels below decide
//    each zero uint4 by arithmetic). Its slice_grad_spans_regions_* variant (Vulkan) where spans are short and
//    sparse: the fill and the spans region by region, in one step (regions_pay); slice_grad_spans_regions_rows_*
//    with a thread a span where spans lie close (region_rows_pay). Where a row's reached elements lie far apart, the
//    same slice as rows of one element (as_unit_rows).
//  - slice_grad_walk_* (kernels/slice_grad_walk.hlsl): rows that are not whole uint4s while dY fits one binding
//    (but for one axis, or two with step-1 rows, long ones); each thread walks
//    uint4s a workgroup apart, stepping the row's coordinates instead of dividing, with a table per group of
//    outer axes saying which rows the slice reaches (slice_geometry.h's walk_levels).
//  - slice_grad_rows_* (kernels/slice_grad.hlsl, ROWS=1; Vulkan): rows of whole uint4s (but 16-bit and wider rows
//    of one uint4 that fold into lines: the lines walk, short_rows_fold), a workgroup working out each row's
//    outer-axis arithmetic once, in groupshared memory, for ROWS_UINT4S_PER_THREAD uint4s a thread.
//  - slice_grad_b* (kernels/slice_grad.hlsl): one uint4 per thread; dY larger than a binding, long rows of one
//    axis or two with step 1 (little arithmetic per uint4), and rows of whole uint4s on D3D12. Where rows of at
//    least a uint4 are not whole uint4s and end in many warps (row_ends_inside_uint4s), its slice_grad_rowends_*
//    variant (ROW_ENDS=1), whose fast path also takes the uint4s in which a row ends.
//
// Every rule below sees the plan with an innermost axis copied whole folded into wider elements
// (slice_geometry.h's with_wide_elements); the plain walk's, also one stepping by +1 (walk_program_of_runs).
//
// Splitting for the per-binding limit:
//  - dY fits one binding (always on the H100; on lavapipe up to 128 MiB): dY is bound whole and dX is cut into
//    plain windows, like the element-wise operators (walk and rows kernels).
//  - dY larger: dX is cut into box-shaped chunks (slice_geometry.h) whose dY span is no longer than the chunk,
//    and each pass binds the dY window it reads. A chunk boundary may fall inside a uint4: the passes run in
//    order with a barrier, and the kernel keeps the elements of such a uint4 that its pass does not own.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/kernel_registry.h"
#include "gpu/ops/chunk.h"
#include "gpu/ops/division_magic.h"
#include "gpu/ops/slice_geometry.h"
#include "interface/slice_grad.h"
#include "interface/slice_grad_spans.h"
#include "interface/slice_grad_walk.h"

namespace dmlgrad {
namespace {

namespace kernel = kernels::slice_grad;

// An axis' step without its sign: the distance in dX between the coordinates it reaches.
uint64_t step_size(const SliceAxis& ax) { return uint64_t(ax.stride < 0 ? -ax.stride : ax.stride); }

// The row length (in uint4s) from which the element kernel keeps slices of one or two axes (see below).
constexpr uint64_t kElementRowMinUint4s = 16;

// The kernel's geometry buffer: a kernel::Axis per axis, innermost first, padded to MAX_RANK axes.
std::vector<uint32_t> geometry_words(const std::vector<SliceAxis>& axes) {
    static_assert(sizeof(kernel::Axis) == 16 * kernel::AXIS_UINT4S);
    std::vector<uint32_t> words(kernel::MAX_RANK * sizeof(kernel::Axis) / 4, 0);
    uint64_t dy_stride = 1;
    for (size_t i = 0; i < axes.size(); ++i) {
        const SliceAxis& ax = axes[axes.size() - 1 - i];
        const uint64_t stride = step_size(ax);
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
        const uint64_t stride = step_size(ax);
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

// The walk kernel (kernels/slice_grad_walk.hlsl): dY bound whole and dX's index arithmetic within 32 bits (the
// last uint4's elements included). Any geometry; bound as dX windows like the element-wise operators.
bool walk_fits(uint64_t dx_count, bool dy_whole) { return dy_whole && dx_count <= UINT32_MAX - 16; }

// The walk kernel's geometry buffer: an Axis per level, then (step digit, table or ARITHMETIC, 0, 0) per level,
// innermost first.
std::vector<uint32_t> walk_geometry_words(const slice_gpu::WalkLevels& levels, const std::vector<uint64_t>& digits) {
    std::vector<uint32_t> words = geometry_words(levels.levels);
    const size_t rank = levels.levels.size(), walk_words = kernel::MAX_RANK * sizeof(kernel::Axis) / 4;
    words.resize(walk_words + 4 * kernel::MAX_RANK, 0);
    for (size_t i = 0; i < rank; ++i) {
        const uint32_t table = levels.table_at[rank - 1 - i];
        words[walk_words + 4 * i] = uint32_t(digits[rank - 1 - i]);
        words[walk_words + 4 * i + 1] = table == slice_gpu::kNoTable ? kernels::slice_grad_walk::ARITHMETIC : table;
    }
    return words;
}

// The lines walk (kernels/slice_grad_lines.hlsli): innermost rows shorter than kLineMinBytes are folded with the axes
// outside them into lines of at least that many bytes, and of at most TABLE_MAX_ENTRIES columns (the column table;
// a line must hold a uint4, so that a uint4 touches two lines at most). 0 where no axis folds.
constexpr uint64_t kLineMinBytes = 64;
// In the plain walk's place, rows shorter than this fold into lines too (at least this long): a row test per row
// and a segment loop per row a uint4 touches cost more than the lines' column windows (H200, docs/PERFORMANCE.md).
constexpr uint64_t kWalkLineMinBytes = 256;
constexpr uint64_t kLineLevelTableMax = uint64_t(1) << 21;
// Where the spans would take the slice, the lines walk only on 16-bit elements and wider in lines of at least this
// many bytes (H100: 1.2-1.7x faster on lines of 658-21892 bytes, 1.3-1.5x slower on 190 and 364; int8 lines of 667
// bytes 1.9x slower: a column load per byte; docs/PERFORMANCE.md).
constexpr uint64_t kLineOverSpansMinBytes = 512;

// The walk's tables: at most MAX_RANK of at most this many entries each fill one binding.
uint64_t walk_table_max(const DeviceLimits& limits) {
    return std::min<uint64_t>(kernels::slice_grad_walk::TABLE_MAX_ENTRIES,
                              limits.max_binding_bytes / 4 / kernel::MAX_RANK);
}

// The bytes of a line of the `folded` innermost gather axes.
uint64_t line_bytes(const SliceGradPlan& plan, size_t folded) {
    uint64_t columns = 1;
    for (size_t a = plan.gather_axes.size() - folded; a < plan.gather_axes.size(); ++a)
        columns *= uint64_t(plan.gather_axes[a].dx);
    return columns * dtype_size(plan.dtype);
}

// The most columns a line may have: the walk's tables' and, for its column windows (a uint4 for every 4 elements of a
// uint4, per column), one binding.
uint64_t line_columns_max(const DeviceLimits& limits, uint64_t per_vec4) {
    const uint64_t window_bytes = 16 * ceil_div(per_vec4, uint64_t(4));
    return std::min(walk_table_max(limits), align_down(limits.max_binding_bytes / window_bytes, per_vec4));
}

size_t lines_folded(const SliceGradPlan& plan, const DeviceLimits& limits, uint64_t min_bytes = kLineMinBytes) {
    const std::vector<SliceAxis>& axes = plan.gather_axes;
    const uint64_t element = dtype_size(plan.dtype), row = uint64_t(axes.back().dx);
    if (row * element >= min_bytes) return 0;
    const size_t folded = slice_gpu::line_axes(axes, min_bytes / element, line_columns_max(limits, 16 / element));
    return folded > 1 && line_bytes(plan, folded) >= 16 ? folded : 0;
}

// In the plain walk's place: rows shorter than kWalkLineMinBytes folded into lines of at least that many bytes, or,
// where nothing folds, rows of 16-bit elements and wider, a uint4 long or more, each a line of its own (H200:
// 20261210/35 f32 rows of 31 474.2 -> 274.7 us, /16 f16 rows of 30 105.5 -> 79.6, 20261224/81 u16 rows of 10 42.2
// -> 28.2; int8 lines pay a column's work per byte, and int8 rows of their own were not measured). Rows of 32/64-bit
// elements stepping by more than 1, which the walk gathers element by element, are lines of their own at any length
// (H200: 20261232/21's u32 rows of 94 at step -2 397.2 -> 290.7 us, 20261201/17's f64 rows of 59 at step -3 294.5 ->
// 219.2, 20261224/19's i32 rows of 219 at step 3 33.1 -> 26.8). 0: the plain walk.
size_t walk_lines(const SliceGradPlan& plan, const DeviceLimits& limits) {
    const size_t folded = lines_folded(plan, limits, kWalkLineMinBytes);
    const uint64_t element = dtype_size(plan.dtype), row = uint64_t(plan.gather_axes.back().dx);
    const bool short_row = row * element < kWalkLineMinBytes;
    const bool by_element = element >= 4 && step_size(plan.gather_axes.back()) > 1;
    const bool own_lines = element >= 2 && row * element >= 16 && (short_row || by_element) &&
                           row <= line_columns_max(limits, 16 / element);
    return folded > 0 ? folded : own_lines ? 1 : 0;
}

// Rows that fold with nothing, the axis outside them too long for a column table and stepping by m > 1: that axis
// split into its periods of m coordinates and the phase within one (slice_geometry.h's split_by_step), so that the
// rows fold with the phases into lines (f16 rows of 5 at every 4th of 99509475: lines of 20 halves, 5 of them
// reached; H100 1880 -> 1043 us, where the walk tested 2-3 rows a uint4). The split is exact on the outermost axis or
// where m divides its size. Where that axis is copied whole (axes copied whole outside the rows merge into one,
// simplified_axes) and the rows are shorter than kBlockRowsBelowBytes (wider elements' rows of a uint4 and more are
// lines of their own, walk_lines), it splits into blocks of the fewest rows that make a line of kWalkLineMinBytes,
// on an axis inside another the fewest that divide its size (H200, blocks44, against the plain walk: uint8
// `[:, :, :5:3]` of 1571164x31x11, lines of 24 rows, 846.5 -> 597.2 us; fp16 `[:, 1:4]` of 8000000x5 171.4 -> 77.1;
// int8 rows of 9-23 bytes 0.45-0.95x; int8 rows of 43 bytes, 2 of them reached, 154.5 -> 168.0). The plan as it is
// elsewhere.
constexpr uint64_t kBlockRowsBelowBytes = 32;
std::optional<std::vector<SliceAxis>> lines_split_axes(const std::vector<SliceAxis>& axes, uint64_t element,
                                                       uint64_t max_columns) {
    const size_t a = axes.size() - 2;
    const SliceAxis& outer = axes[a];
    const int64_t m = int64_t(step_size(outer));
    if (m >= 2) return a == 0 || outer.dx % m == 0 ? std::optional(slice_gpu::split_by_step(axes, a)) : std::nullopt;
    const uint64_t row = uint64_t(axes.back().dx);
    const uint64_t below = element > 1 ? 16 : kBlockRowsBelowBytes;  // 16-bit and wider from 16 bytes: walk_lines
    if (!copied_whole(outer) || row * element >= below) return std::nullopt;
    const uint64_t least = ceil_div(kWalkLineMinBytes, row * element);
    for (uint64_t n = least; n * row <= max_columns && n < uint64_t(outer.dx); ++n)
        if (a == 0 || uint64_t(outer.dx) % n == 0) return slice_gpu::split_into_blocks(axes, a, int64_t(n));
    return std::nullopt;
}

SliceGradPlan with_lines_split(const SliceGradPlan& plan, const DeviceLimits& limits) {
    if (plan.gather_axes.size() < 2 || lines_folded(plan, limits) > 0) return plan;
    const uint64_t element = dtype_size(plan.dtype);
    const std::optional<std::vector<SliceAxis>> axes =
        lines_split_axes(plan.gather_axes, element, line_columns_max(limits, 16 / element));
    if (!axes) return plan;
    SliceGradPlan split = plan;
    split.gather_axes = *axes;
    return lines_folded(split, limits) > 0 ? split : plan;
}

// Whether the lines walk looks a uint4's columns up in a gap table first (slice_grad_walk_lines_gaps_*,
// kernels/slice_grad_lines.hlsli; its own variant: the check in the lines kernel cost 3-5% where off): where at
// least 2/5 of its uint4s hold no reached column (a uint4 of a line of D columns starts at a multiple of gcd(D, its
// elements)), each of those then costs one load instead of a line test and a column load per element, and where dX
// has MIN_THREADS uint4s or more (below, a thread's chain of loads, one longer, decides the time). H100: 1.14-1.19x
// faster at 2/5 to 4/5 empty, 1.04-1.05x slower at 1/3 and 3/8, 0.2 us slower on dX of a few KiB.
constexpr uint64_t kEmptyUint4sNum = 2, kEmptyUint4sDen = 5;
bool gaps_pay(const std::vector<uint32_t>& gaps, uint64_t per_vec4, uint64_t dx_vec4s) {
    if (dx_vec4s < kernels::slice_grad_walk::MIN_THREADS) return false;
    const uint64_t step = std::gcd(uint64_t(gaps.size()), per_vec4);
    uint64_t empty = 0;
    for (size_t c = 0; c < gaps.size(); c += step) empty += gaps[c] >= per_vec4 ? 1 : 0;
    return kEmptyUint4sDen * empty >= kEmptyUint4sNum * (gaps.size() / step);
}

// The column windows of slice_grad_walk_lines_words_b8 (Vulkan), which reads each line's dY bytes as words, for
// 8-bit lines without a gap table where every window's reached columns lie within 8 dY elements in each line it
// touches (slice_geometry.h's column_words); else none. The plain lines kernel pays a dY load, its address and its
// byte's extraction per element of a uint4 (16 for 8-bit elements) wherever a warp's lanes reach different columns;
// this one three word loads a line and a shift per element (H200: 20261208/38 303.6 -> 271.2 us, /25 198.9 ->
// 186.0, 20261224/38 40.5 -> 36.3; as one 64-bit shift a byte, level with that).
std::vector<uint32_t> line_words(uint64_t element, bool gap_table, const DeviceLimits& limits,
                                 const std::vector<uint32_t>& columns) {
    if (element != 1 || gap_table || limits.api != GpuApi::vulkan) return {};
    return slice_gpu::column_words(columns, kernels::slice_grad_walk::NOT_REACHED);
}

// The stretches walk (reached_stretches_pay below): dX bound whole, the stretches (bytes of dX) widened to whole
// uint4s and to whole runs of a thread's uint4s (a dispatch's first thread starts one), neighbours merged.
std::vector<slice_gpu::Stretch> stretch_uint4s(const std::vector<slice_gpu::Stretch>& bytes, uint64_t per_thread,
                                               uint64_t dx_vec4s) {
    std::vector<slice_gpu::Stretch> uint4s;
    for (const slice_gpu::Stretch& s : bytes) {
        const uint64_t begin = align_down(s.begin / 16, per_thread);
        const uint64_t end = std::min(dx_vec4s, ceil_div(ceil_div(s.end, uint64_t(16)), per_thread) * per_thread);
        if (!uint4s.empty() && begin <= uint4s.back().end)
            uint4s.back().end = std::max(uint4s.back().end, end);
        else
            uint4s.push_back({begin, end});
    }
    return uint4s;
}

// The walk's dispatches over the stretches of `walked` (uint4s), and zeros over the rest of dX, bound whole.
void append_stretch_dispatches(GpuProgram& program, std::vector<BufferWindow> bindings,
                               kernels::slice_grad_walk::WalkParams params,
                               const std::vector<slice_gpu::Stretch>& walked, uint64_t dx_vec4s, uint64_t group,
                               const DeviceLimits& limits) {
    bindings[1] = {1, 0, dx_vec4s * 16};
    params.window_vec4 = 0;
    const uint64_t per_thread = params.per_thread;
    uint64_t done = 0;  // uint4s dispatched so far, a multiple of per_thread
    const auto append_to = [&](uint64_t end, bool zeros) {
        if (end <= done) return;
        params.count = uint32_t(end);
        params.zeros = zeros ? 1 : 0;
        append_dispatches(program, bindings, params, done / per_thread,
                          ceil_div(end - done, group * per_thread) * group, limits);
        done = end;
    };
    for (const slice_gpu::Stretch& s : walked) {
        append_to(s.begin, true);
        append_to(s.end, false);
    }
    append_to(dx_vec4s, true);
}

// `folded` innermost axes made lines (0: the plain walk, a level per row); where `stretches` (bytes of dX) are given,
// only those walked (reached_stretches_pay).
GpuProgram walk_program(const SliceGradPlan& plan, uint64_t dy_padded, uint64_t dx_padded, const DeviceLimits& limits,
                        size_t folded, const std::vector<slice_gpu::Stretch>& stretches = {}) {
    namespace walk = kernels::slice_grad_walk;
    const uint64_t element = dtype_size(plan.dtype), per_vec4 = 16 / element;
    // The levels' tables and the column table fit one binding. The lines' levels take tables of up to
    // kLineLevelTableMax entries: a level tested by arithmetic costs a division per line where its step is not a
    // power of two.
    const uint64_t table_max =
        folded > 0 ? std::min<uint64_t>(kLineLevelTableMax, limits.max_binding_bytes / 4 / kernel::MAX_RANK)
                   : walk_table_max(limits);
    const slice_gpu::Lines lines = folded > 0 ? slice_gpu::lines(plan.gather_axes, folded, walk::NOT_REACHED)
                                              : slice_gpu::Lines{plan.gather_axes, {}};
    slice_gpu::WalkLevels levels = slice_gpu::walk_levels(lines.axes, table_max, walk::NOT_REACHED);
    walk::WalkParams params{};
    std::vector<uint32_t> windows;
    bool gap_table = false, words_kernel = false;
    if (folded > 0) {
        params.column_stride = uint32_t(ceil_div(lines.columns.size(), per_vec4));
        windows = slice_gpu::column_windows(lines.columns, per_vec4, walk::NOT_REACHED);
        const std::vector<uint32_t> gaps = slice_gpu::column_gaps(lines.columns, walk::NOT_REACHED, uint32_t(per_vec4));
        gap_table = gaps_pay(gaps, per_vec4, dx_padded / 16);
        if (gap_table) {
            params.gaps = uint32_t(levels.tables.size());
            const std::vector<uint32_t> phased_gaps = slice_gpu::phased(gaps, per_vec4, uint32_t(per_vec4));
            levels.tables.insert(levels.tables.end(), phased_gaps.begin(), phased_gaps.end());
        }
        std::vector<uint32_t> words = line_words(element, gap_table, limits, lines.columns);
        words_kernel = !words.empty();
        if (words_kernel) windows = std::move(words);
    }
    GpuProgram program;
    program.kernel = std::string(folded == 0    ? "slice_grad_walk_b"
                                 : words_kernel ? "slice_grad_walk_lines_words_b"
                                 : !gap_table   ? "slice_grad_walk_lines_b"
                                                : "slice_grad_walk_lines_gaps_b") +
                     std::to_string(8 * element);
    program.binding_count = folded > 0 ? 5 : 4;
    program.binding_types = {BindingType::storage, BindingType::storage, BindingType::uniform, BindingType::storage};
    program.binding_types.resize(program.binding_count, BindingType::storage);
    program.push_bytes = push_bytes<walk::WalkParams>();

    // A thread's uint4s lie a workgroup apart: its coordinates step by a workgroup's elements.
    const uint64_t group = find_kernel(program.kernel).workgroup_size;
    program.constants = {walk_geometry_words(levels, slice_gpu::step_digits(levels.levels, group * per_vec4)),
                         levels.tables.empty() ? std::vector<uint32_t>{0} : levels.tables};
    std::vector<BufferWindow> bindings = {{0, 0, dy_padded},
                                          {1, 0, 0},
                                          {2, 0, padded_bytes(4 * program.constants[0].size())},
                                          {3, 0, padded_bytes(4 * program.constants[1].size())}};
    if (folded > 0) {
        program.constants.push_back(windows);
        bindings.push_back({4, 0, padded_bytes(4 * windows.size())});
    }

    const SliceAxis& inner = plan.gather_axes.back();
    const uint64_t dx_count = element_count(plan.dx_shape), dx_vec4s = dx_padded / 16;
    params.total = uint32_t(dx_count);
    params.rank = uint32_t(levels.levels.size());
    params.per_thread = uint32_t(std::clamp<uint64_t>(dx_vec4s / walk::MIN_THREADS, 1, walk::MAX_UINT4S_PER_THREAD));
    params.inner_low = uint32_t(inner.stride > 0 ? inner.start : inner.start + inner.stride * (inner.dy - 1));
    const uint64_t per_group = group * params.per_thread;  // a workgroup's uint4s
    if (!stretches.empty()) {
        append_stretch_dispatches(program, bindings, params, stretch_uint4s(stretches, params.per_thread, dx_vec4s),
                                  dx_vec4s, group, limits);
        return program;
    }
    for (auto [offset, range] : split_windows(dx_padded, limits)) {
        params.count = uint32_t(range / 16);
        params.window_vec4 = uint32_t(offset / 16);
        bindings[1] = {1, offset, range};
        append_dispatches(program, bindings, params, 0, ceil_div(range / 16, per_group) * group, limits);
    }
    return program;
}

// Whether the walk's program skips the uint4s of no reached column through its gap table (walk_lines_gaps): the
// points' spans plan, which also writes only the reached elements' uint4s after its fill, took 1.05-1.11x its time
// 1280 bytes apart and 1.07-1.69x 256 bytes apart (H200, points36; 0.73-0.81x 5120 bytes apart against the walk).
bool skips_gaps(const GpuProgram& walk) { return walk.kernel.starts_with("slice_grad_walk_lines_gaps_b"); }

// In the plain walk's place, the innermost axis' runs of neighbouring elements as wider elements where they divide
// into them (slice_geometry.h's with_wide_elements with runs; a row's bytes stay the same): the walk's and the lines'
// work is per element, so an i8 run of 4 costs what one u32 does (20261232/21, i8 `[:, :24:3, ::-1, -4:]` of rows
// of 8: u32 rows of 94 at every other element instead of i8 lines).
GpuProgram walk_program_of_runs(const SliceGradPlan& plan, uint64_t dy_padded, uint64_t dx_padded,
                                const DeviceLimits& limits, const std::vector<slice_gpu::Stretch>& stretches = {}) {
    const SliceGradPlan walked = with_lines_split(slice_gpu::with_wide_elements(plan, true), limits);
    const size_t folded = lines_folded(walked, limits);
    return walk_program(walked, dy_padded, dx_padded, limits, folded > 0 ? folded : walk_lines(walked, limits),
                        stretches);
}

// The spans plan (kernels/slice_grad_spans.hlsl): the innermost coordinates a dY row reaches, lowest and highest.
struct InnerSpan {
    uint64_t low = 0, high = 0;
};

InnerSpan inner_span(const SliceAxis& inner) {
    const uint64_t stride = step_size(inner);
    const uint64_t low = uint64_t(inner.stride > 0 ? inner.start : inner.start + inner.stride * (inner.dy - 1));
    return {low, low + stride * uint64_t(inner.dy - 1)};
}

// The most uint4s a span of `elements` elements touches, whatever its first element's place in its uint4.
uint64_t span_slots(uint64_t elements, uint64_t per_vec4) { return ceil_div(elements - 1, per_vec4) + 1; }

// What the span steps cost after the fill, as a share of the fill's (dX's bytes at the copy ceiling). A span writes
// into 32-byte sectors the fill has already sent to memory, each read back and written again: on the H100 45-60 ps
// a sector, what 160 bytes take at the copy ceiling (docs/PERFORMANCE.md). A span of b bytes of elements of e bytes
// touches 1 + (b - e) / 32 sectors on average. The spans plan takes slices whose span cost is at most 3/2 of the
// fill's: there it measured 1.2-1.6x faster than the walk (cost 0.14-1.36), and 4-18% slower above (1.75, 1.81).
// 1/8 where the element kernel or the rows kernel spread their arithmetic over long rows and run near the bound.
// Spans of rows copied whole (runs of dY, one load a word) measured 38 ps a sector on 1215/5, about 112 bytes' time.
constexpr uint64_t kSectorBytes = 32, kSectorCost = 160, kWholeRowSectorCost = 112;
struct SpansShare {
    uint64_t num, den;
};
constexpr SpansShare kSpansShare{3, 2}, kSpansShareNearBound{1, 8}, kSpansShareBelowLines{7, 20};

// 32 times the sectors the span steps touch, times each one's cost in bytes (the fill's cost of that many bytes).
uint64_t span_steps_cost(const SliceGradPlan& plan) {
    const SliceAxis& inner = plan.gather_axes.back();
    const InnerSpan span = inner_span(inner);
    const uint64_t dy_rows = element_count(plan.dy_shape) / uint64_t(inner.dy);
    return dy_rows * (kSectorBytes + (span.high - span.low) * dtype_size(plan.dtype)) *
           (copied_whole(inner) ? kWholeRowSectorCost : kSectorCost);
}

// The spans plan when its span steps cost at most `limit` of its fill, dY and dX bound whole (a span thread may write
// anywhere in dX), the index arithmetic within 32 bits and, on Vulkan, 64-bit integers (its divisions' products).
bool spans_pay(const SliceGradPlan& plan, uint64_t dy_padded, uint64_t dx_padded, const DeviceLimits& limits,
               SpansShare limit) {
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t dx_count = element_count(plan.dx_shape), dy_count = element_count(plan.dy_shape);
    if (dy_count == 0 || dx_count > UINT32_MAX - 16) return false;
    if (limits.api == GpuApi::vulkan && !limits.shader_int64) return false;
    if (dy_padded > limits.max_binding_bytes || dx_padded > limits.max_binding_bytes) return false;
    const SliceAxis& inner = plan.gather_axes.back();
    const InnerSpan span = inner_span(inner);
    const uint64_t dy_rows = dy_count / uint64_t(inner.dy);
    // The span threads (the last workgroup's included) are numbered in 32 bits.
    if (dy_rows * span_slots(span.high - span.low + 1, 16 / element) > UINT32_MAX / 2) return false;
    // Against 32 times dX's bytes.
    return limit.den * span_steps_cost(plan) <= limit.num * kSectorBytes * dx_count * element;
}

// The spans plan of a slice whose reached elements lie far apart along the innermost axis, as rows of one element (a
// unit innermost axis appended, the rows' axis the next level), so each reached element is a span of its own uint4
// and the uint4s between them, which hold nothing of dY, are not written again after the fill. Taken where the
// elements are of kUnitRowsLeastElementBytes or more, kUnitRowsLeastStepBytes or more apart, in a dX of
// kUnitRowsLeastDxBytes or more. H200 (docs/PERFORMANCE.md, points36), against the rows kernel and the walk: fp32
// and fp64 0.73-0.95x the time 680-10240 bytes apart in 64-384 MiB (20261236/72, a point every other row of 340
// bytes: 62.6 -> 49.9 us); 8- and 16-bit elements 0.80-1.36x (a uint4 then holds 8-16 elements for the region step
// to work out), 16-bit ones 1.03-1.24x below 2560 bytes apart; a 33 MiB dX 1.08x (20261235/592: the fixed cost);
// elements 48-152 bytes apart 1.08-1.16x (20261236/149, /588). Lines the walk takes with its gap table keep it
// (skips_gaps); a slice the spans plan takes as it is keeps that. None elsewhere.
constexpr uint64_t kUnitRowsLeastElementBytes = 4, kUnitRowsLeastStepBytes = 512, kUnitRowsLeastDxBytes = 48 << 20;

std::optional<SliceGradPlan> as_unit_rows(const SliceGradPlan& plan) {
    const SliceAxis& inner = plan.gather_axes.back();
    const uint64_t element = dtype_size(plan.dtype);
    if (inner.dy < 2 || element < kUnitRowsLeastElementBytes || step_size(inner) * element < kUnitRowsLeastStepBytes ||
        element_count(plan.dx_shape) * element < kUnitRowsLeastDxBytes || plan.gather_axes.size() >= kernel::MAX_RANK)
        return std::nullopt;
    SliceGradPlan rows = plan;
    rows.gather_axes.push_back(SliceAxis{});  // the shapes' element counts, all the spans plan reads of them, stay
    return rows;
}

// A span step's uint4s per thread, so that a dY row's placement (a division per outer level) is made once for them:
// up to kSpanUint4sPerThread where the spans have uint4s enough to keep MIN_THREADS threads busy, and only where
// one thread then takes a whole span and the spans of neighbouring dY rows lie at most kSpanPitchMaxBytes apart in
// dX (a warp's threads, a row each, then write neighbouring uint4s). H100: 1.2-1.6x faster on spans 16-21 bytes
// apart (int8 rows of 4, 8 and 21), 1.1-1.5x slower 87-621 bytes apart and on long spans in chunks of 4 uint4s,
// whose warps' writes no longer met in sectors (docs/PERFORMANCE.md); else one uint4 a thread.
constexpr uint64_t kSpanUint4sPerThread = 4, kSpanPitchMaxBytes = 32;

// The bytes between the spans of neighbouring reached rows in dX (a plan of two axes or more): a row's bytes times
// the step of the axis outside the rows.
uint64_t span_pitch_bytes(const SliceGradPlan& plan) {
    const std::vector<SliceAxis>& axes = plan.gather_axes;
    return step_size(axes[axes.size() - 2]) * uint64_t(axes.back().dx) * dtype_size(plan.dtype);
}

uint64_t span_uint4s_per_thread(const SliceGradPlan& plan, uint64_t dy_rows, uint64_t slots) {
    if (plan.gather_axes.size() < 2) return 1;
    const uint64_t pitch = span_pitch_bytes(plan);
    const uint64_t most =
        std::clamp<uint64_t>(dy_rows * slots / kernels::slice_grad_walk::MIN_THREADS, 1, kSpanUint4sPerThread);
    return slots <= most && pitch <= kSpanPitchMaxBytes ? slots : 1;
}

// Each level's division_magic of its step, its dY size and its dX size in its walk uint4 (step, table, dY, dX;
// interface/slice_grad_spans.h).
void add_level_magics(std::vector<uint32_t>& words, const std::vector<SliceAxis>& axes) {
    const size_t walk_words = kernel::MAX_RANK * sizeof(kernel::Axis) / 4;
    for (size_t i = 0; i < axes.size(); ++i) {
        const SliceAxis& ax = axes[axes.size() - 1 - i];
        words[walk_words + 4 * i] = division_magic(step_size(ax));
        words[walk_words + 4 * i + 2] = division_magic(uint64_t(ax.dy));
        words[walk_words + 4 * i + 3] = division_magic(uint64_t(ax.dx));
    }
}

// The most reached dX rows among `window` consecutive ones (a plan of two axes or more). At each level outside the
// rows, the window meets at most met = ceil(window / b) + 1 consecutive coordinates (b: the dX rows under one of
// them), on at most ceil(met / size) + 1 runs of the level (size: its dX size): at most met / step reached, and one
// more a run, and no more than the level's dY size a run; each reached one holds the reached rows of the levels
// inside. Each level's bound holds alone: the least of them.
uint64_t reached_rows_within(const std::vector<SliceAxis>& axes, uint64_t window) {
    uint64_t most = window, rows_under = 1, reached_under = 1;
    for (size_t a = axes.size() - 1; a-- > 0;) {
        const SliceAxis& ax = axes[a];
        const uint64_t met = ceil_div(window, rows_under) + 1, runs = ceil_div(met, uint64_t(ax.dx)) + 1;
        const uint64_t reached = std::min({met, met / step_size(ax) + runs, runs * uint64_t(ax.dy)});
        most = std::min(most, reached * reached_under);
        rows_under *= uint64_t(ax.dx);
        reached_under *= uint64_t(ax.dy);
    }
    return most;
}

// The region step (slice_grad_spans_regions_*, Vulkan): a workgroup writes zeros over its region of dX, up to
// kRegionUint4sPerThread uint4s a thread, then the span uint4s in it, so that the zeros they overwrite are still in
// the cache and dX goes to memory once. Taken where the busiest region's threads each write at most
// kRegionItemsPerThreadMax span uint4s (the reached rows among the dX rows a region meets, reached_rows_within, times
// the span's uint4s, over the workgroup's threads) and spans are short: at most kRegionSpanUint4sMax uint4s, or
// kRegionLongSpanUint4s over full regions (dX of kRegionUint4sPerThread uint4s for each of MIN_THREADS threads) of
// rows not copied whole. H200: spans33 measured 1.04-1.34x faster on spans of 2-3 uint4s at 1.6-3.7 uint4s a thread
// (20261216/59 114.6 -> 89.1 us, 20261215/5 712.0 -> 606.4), 1.28-2.39x slower where a thread wrote 16 and 18
// (20261210/25, 20261224/21: a region's threads then work through their uint4s one after another), 1.03-1.16x on
// spans of 8 uint4s and more (20261216/7, /48, 20261215/39, 20261210/72, 20261224/16, /37). spans34: the reached
// rows' bound 1.07-1.13x faster on 2-3 uint4s (20261210/76 85.1 -> 79.8, /139 139.6 -> 123.6, 20261216/136 555.9
// -> 508.3); spans of 4 uint4s 1.08-1.61x faster over full regions (20261216/117 78.2 -> 48.7, 20261215/57 45.1
// -> 34.2, /125 52.1 -> 48.4, 20261216/98 87.4 -> 82.6), but 1.05-1.21x slower over smaller ones (dX of 17-30 MB:
// 20261224/74, 20261215/127, /157, 20261210/138) and on rows copied whole (20261224/139 114.3 -> 125.0, 20261216/119
// 23.9 -> 24.6: there the span step reads runs of dY; docs/PERFORMANCE.md).
constexpr uint64_t kRegionUint4sPerThread = 8, kRegionSpanUint4sMax = 3, kRegionLongSpanUint4s = 4,
                   kRegionItemsPerThreadMax = 5;

// A region's uint4s a thread: as the fill's, up to kRegionUint4sPerThread.
uint64_t region_uint4s_per_thread(uint64_t dx_vec4s) {
    return std::clamp<uint64_t>(dx_vec4s / kernels::slice_grad_walk::MIN_THREADS, 1, kRegionUint4sPerThread);
}

// Whether spans of `slots` uint4s are short enough for the region step (see above).
bool region_spans_short(const SliceGradPlan& plan, uint64_t slots, uint64_t dx_vec4s) {
    if (slots <= kRegionSpanUint4sMax) return true;
    return slots == kRegionLongSpanUint4s && region_uint4s_per_thread(dx_vec4s) == kRegionUint4sPerThread &&
           !copied_whole(plan.gather_axes.back());
}

bool regions_pay(const SliceGradPlan& plan, uint64_t slots, uint64_t dx_vec4s, const DeviceLimits& limits) {
    if (limits.api != GpuApi::vulkan || plan.gather_axes.size() < 2 || !region_spans_short(plan, slots, dx_vec4s))
        return false;
    const uint64_t group = find_kernel("slice_grad_spans_regions_b8").workgroup_size;
    const uint64_t region_elements = 16 * group * region_uint4s_per_thread(dx_vec4s) / dtype_size(plan.dtype);
    const uint64_t rows_met = ceil_div(region_elements, uint64_t(plan.gather_axes.back().dx)) + 1;
    return reached_rows_within(plan.gather_axes, rows_met) * slots <= kRegionItemsPerThreadMax * group;
}

// The region step with a thread a span (slice_grad_spans_regions_rows_*: its row placed once for the span's
// uint4s, and a region that no span meets leaving without its barrier) on elements of at most 32 bits where
// neighbouring reached rows' spans lie at most kRegionRowsPitchMaxBytes apart: a warp's threads, a row each, then
// write neighbouring sectors. H200 (docs/PERFORMANCE.md, slice35): 1.04-1.16x faster 16-87 bytes apart (20261216/136
// 509.1 -> 441.1 us, 20261210/76 80.4 -> 69.3, /82 70.3 -> 63.3, /139 124.1 -> 112.1, 20261216/59 88.9 -> 83.8, /98
// 82.6 -> 79.7, 20261227/21 14.2 -> 13.0, 20261231/25 73.1 -> 69.0), level at 62 (20261216/79) and 108-112
// (20261210/149, 20261216/19); slower 128-556 bytes apart (20261216/6 1.06x, 20261224/132 1.13x, 20261216/117 1.16x:
// a thread writes its span's uint4s one after another, and the warp's stores lie a pitch apart) and on 64-bit rows
// 56 bytes apart (20261227/75 1.11x: a uint4 holds 2 elements, a span 4 uint4s).
constexpr uint64_t kRegionRowsPitchMaxBytes = 96, kRegionRowsElementMaxBytes = 4;

bool region_rows_pay(const SliceGradPlan& plan) {
    return dtype_size(plan.dtype) <= kRegionRowsElementMaxBytes && span_pitch_bytes(plan) <= kRegionRowsPitchMaxBytes;
}

GpuProgram spans_program(const SliceGradPlan& plan, uint64_t dy_padded, uint64_t dx_padded,
                         const DeviceLimits& limits) {
    namespace spans = kernels::slice_grad_spans;
    const uint64_t element = dtype_size(plan.dtype), per_vec4 = 16 / element;
    const std::vector<SliceAxis>& axes = plan.gather_axes;
    const InnerSpan span = inner_span(axes.back());
    const uint64_t dx_vec4s = dx_padded / 16, slots = span_slots(span.high - span.low + 1, per_vec4);
    const bool regions = regions_pay(plan, slots, dx_vec4s, limits);
    GpuProgram program;
    program.kernel = std::string(!regions                ? "slice_grad_spans_b"
                                 : region_rows_pay(plan) ? "slice_grad_spans_regions_rows_b"
                                                         : "slice_grad_spans_regions_b") +
                     std::to_string(8 * element);
    program.binding_count = 4;
    program.binding_types = {BindingType::storage, BindingType::storage, BindingType::uniform, BindingType::storage};
    program.push_bytes = push_bytes<spans::SpansParams>();
    // Every axis a level of its own, tested by arithmetic; nothing walks, so no step digits.
    const slice_gpu::WalkLevels levels{axes, std::vector<uint32_t>(axes.size(), slice_gpu::kNoTable), {}};
    program.constants = {walk_geometry_words(levels, std::vector<uint64_t>(axes.size(), 0)), {0}};
    add_level_magics(program.constants[0], axes);
    const std::vector<BufferWindow> bindings = {
        {0, 0, dy_padded}, {1, 0, dx_padded}, {2, 0, padded_bytes(4 * program.constants[0].size())}, {3, 0, 16}};

    const uint64_t group = find_kernel(program.kernel).workgroup_size;
    spans::SpansParams params{};
    params.total = uint32_t(element_count(plan.dx_shape));
    params.rank = uint32_t(axes.size());
    params.inner_low = uint32_t(span.low);
    params.inner_high = uint32_t(span.high);
    params.step_magic = division_magic(step_size(axes.back()));

    const uint64_t dy_rows = element_count(plan.dy_shape) / uint64_t(axes.back().dy);
    params.count = uint32_t(dx_vec4s);
    if (regions) {
        params.fill = spans::STEP_REGION;
        params.row_threads = uint32_t(slots);
        params.row_magic = division_magic(slots);
        params.per_thread = uint32_t(region_uint4s_per_thread(dx_vec4s));
        append_dispatches(program, bindings, push_words(params), 0,
                          ceil_div(dx_vec4s, group * params.per_thread) * group, limits);
        return program;
    }
    params.fill = spans::STEP_FILL;
    params.per_thread = uint32_t(
        std::clamp<uint64_t>(dx_vec4s / kernels::slice_grad_walk::MIN_THREADS, 1, spans::FILL_UINT4S_PER_THREAD));
    const uint64_t fill_threads = ceil_div(dx_vec4s, group * params.per_thread) * group;
    append_dispatches(program, bindings, push_words(params), 0, fill_threads, limits);

    params.fill = spans::STEP_SPANS;
    const uint64_t row_threads = ceil_div(slots, span_uint4s_per_thread(plan, dy_rows, slots));
    params.row_threads = uint32_t(row_threads);
    params.row_magic = division_magic(row_threads);
    params.per_thread = uint32_t(ceil_div(slots, row_threads));  // the row's uint4s evenly over its threads
    params.count = uint32_t(dy_rows * row_threads);
    append_dispatches(program, bindings, push_words(params), 0, params.count, limits, true);
    return program;
}

// Where the slice reaches dX only in a few stretches (a few coordinates of the outer axes: a batch's item, some
// planes), the walk walks those and writes zeros over the rest without arithmetic, where that costs less than the
// walk of all of dX (which tests every row, reached or not) or the spans plan's span steps after its fill. The
// costs, in bytes at the copy ceiling: the walk kStretchWalkPerFill times the fill's a byte (int8 rows of a few
// elements: ~1 TB/s against the fill's ~4.4, H200), the stretches' dispatches kStretchesFixedBytes (~4 us) and
// kStretchDispatchBytes (~0.5 us) a stretch, the span steps span_steps_cost. H200: [3:5, :, :, 0::3] of 19x19x366631x4
// int8 544.8 -> 209.6 us (from the walk), int16 [5:8, :, :, 1::2] of 24x3x100000x5 64.9 -> 38.2; 20261247/21 (int8 rows
// of 4 at every third in 9 planes of 361) 253.8 -> 177.8 (from the spans), 20261245/38 (56 stretches) 260.5 ->
// 168.8, 20261248/22 141.1 -> 107.2. Kept: 20261238/35's f32 spans of 600 bytes in one plane of 8 (19.3 us on the
// spans, 24.3 on the stretches), 20261236/38's 32 stretches of 325 KB (18.2 on the walk, 21.2), fp16 [61::-4, :,
// 2:] of 64x32768x4's 16 stretches (11.7 on the walk, 13.4).
constexpr uint64_t kStretchesMost = 64, kStretchWalkPerFill = 4;
constexpr uint64_t kStretchesFixedBytes = 16 << 20, kStretchDispatchBytes = 2 << 20;

// Walking the stretches (bytes of dX, none: elsewhere) costs this many bytes more than the spans' fill or the walk's
// zeros would over them.
uint64_t stretches_extra_cost(const std::vector<slice_gpu::Stretch>& stretches) {
    uint64_t walked = 0;
    for (const slice_gpu::Stretch& s : stretches) walked += s.end - s.begin;
    return (kStretchWalkPerFill - 1) * walked + kStretchesFixedBytes + stretches.size() * kStretchDispatchBytes;
}

bool stretches_beat_spans(const SliceGradPlan& plan, const std::vector<slice_gpu::Stretch>& stretches) {
    return !stretches.empty() && stretches_extra_cost(stretches) * kSectorBytes < span_steps_cost(plan);
}

// The stretches of the outer levels that cost least, where they beat the walk of all of dX (bound whole, of
// MIN_THREADS uint4s or more: below, the plans measured there stand), at most kStretchesMost of them: their bytes,
// in dX's order (empty: elsewhere).
std::vector<slice_gpu::Stretch> reached_stretches_pay(const SliceGradPlan& plan, uint64_t dx_padded,
                                                      const DeviceLimits& limits) {
    const std::vector<SliceAxis>& axes = plan.gather_axes;
    const uint64_t element = dtype_size(plan.dtype), dx_bytes = element_count(plan.dx_shape) * element;
    if (dx_padded > limits.max_binding_bytes || dx_padded / 16 < kernels::slice_grad_walk::MIN_THREADS) return {};
    std::vector<slice_gpu::Stretch> cheapest;
    uint64_t least = (kStretchWalkPerFill - 1) * dx_bytes;  // the walk of all of dX, beyond its zeros' cost
    for (size_t levels = 1; levels < axes.size(); ++levels) {
        std::vector<slice_gpu::Stretch> stretches = slice_gpu::reached_stretches(axes, levels, kStretchesMost);
        if (stretches.empty()) break;  // deeper levels reach more tuples still
        for (slice_gpu::Stretch& s : stretches) s = {s.begin * element, s.end * element};
        const uint64_t cost = stretches_extra_cost(stretches);
        if (cost < least) {
            cheapest = std::move(stretches);
            least = cost;
        }
    }
    return cheapest;
}

// Rows of one uint4 of 16-bit elements and wider that fold into lines: the lines walk takes them in the rows
// kernel's place, which works out a row's outer-axis arithmetic (a division a level) for every uint4, where the lines
// test a line with a table load a level. H200: 20261236/18, int64 rows of one uint4, 76.4 -> 53.9 us; but int16 rows
// of two uint4s (20261203/134) 14.5 -> 21.6 us, so rows of two and three keep the rows kernel (docs/PERFORMANCE.md,
// slice36; 8-bit lines pay a column's work per byte, as in walk_lines).
bool short_rows_fold(const SliceGradPlan& plan, const DeviceLimits& limits) {
    const uint64_t element = dtype_size(plan.dtype);
    return element >= 2 && uint64_t(plan.gather_axes.back().dx) * element == 16 && lines_folded(plan, limits) > 0;
}

// Whether rows at least a uint4 long end inside uint4s of dX (rows that are not whole uint4s, more than one of them)
// often enough for the element kernel's slice_grad_rowends_* variant, which takes those uint4s on its fast path. The
// plain variant takes them element by element (about a fast uint4's work an element), in one warp of 32 / (a row's
// uint4s); its smaller code ran 2-8% faster on one-axis slices (H100) and 0.78-0.98x the rowends variant's time on
// rows of 1488 uint4s and more (H200, docs/PERFORMANCE.md, rowends43: int64 rows of 46757 uint4s 118.4 -> 99.0 us).
// So rows of kPlainRowUint4sPerElement uint4s per element of a uint4 and more take the plain variant (their ends add
// at most an eighth to its work); shorter ones the rowends variant (uint32 rows of 360 uint4s: 4.7 us there, 5.0 on
// the plain one).
constexpr uint64_t kPlainRowUint4sPerElement = 256;
bool row_ends_inside_uint4s(const SliceGradPlan& plan) {
    const uint64_t per_vec4 = 16 / dtype_size(plan.dtype), row = uint64_t(plan.gather_axes.back().dx);
    const bool rows_end_often = row / per_vec4 < kPlainRowUint4sPerElement * per_vec4;
    return plan.gather_axes.size() > 1 && row % per_vec4 != 0 && row >= per_vec4 && rows_end_often;
}

}  // namespace

GpuProgram build_slice_grad_program(const SliceGradPlan& sliced, const DeviceLimits& limits) {
    const SliceGradPlan plan = slice_gpu::with_wide_elements(sliced);
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t dx_count = element_count(plan.dx_shape), dy_count = element_count(plan.dy_shape);
    check_fits_kernel(plan, dx_count);
    const std::vector<SliceAxis>& axes = plan.gather_axes;

    const uint64_t dy_padded = padded_bytes(dy_count * element), dx_padded = padded_bytes(dx_count * element);
    const bool dy_whole = dy_padded <= limits.max_binding_bytes;
    const bool whole_uint4_rows = dx_count > 0 && uint64_t(axes.back().dx) % (16 / element) == 0;
    // The rows kernels share their plans through groupshared arrays, which vkd3d-compiler 1.17 cannot compile for
    // Direct3D 12 at any index (kernels/README.md).
    const bool rows = dy_whole && whole_uint4_rows && limits.api == GpuApi::vulkan;
    // Rows of whole uint4s keep the rows kernel on Vulkan and the element kernel on D3D12: the walk ran 1.15-1.55x
    // slower than the rows kernel there, the element kernel 1.03-1.10x (H100, docs/PERFORMANCE.md). One axis, or two
    // with step-1 rows (runs of dY), of at least 16 uint4s: the element kernel pays one or two divisions a uint4 and
    // its whole-uint4 path covers every uint4 (its rowends variant: one in which a row ends too); it was 5-15%
    // faster than the walk on long rows (with step 2 on two axes, 1.7x slower). The walk takes the rest.
    const bool long_rows = uint64_t(axes.back().dx) * element >= 16 * kElementRowMinUint4s;
    const bool element_cheap = long_rows && (axes.size() == 1 || (axes.size() == 2 && axes.back().stride == 1));
    // Those two spread their arithmetic over long rows and run near the bound: the spans plan must rewrite less.
    const SpansShare limit = element_cheap || (rows && long_rows) ? kSpansShareNearBound : kSpansShare;
    const bool walks = !whole_uint4_rows && walk_fits(dx_count, dy_whole);
    const SliceGradPlan walked = walks ? with_lines_split(plan, limits) : plan;
    const size_t folded = walks ? lines_folded(walked, limits) : 0;
    // The stretches a few reached outer coordinates make, where walking them beats walking all of dX (and, below,
    // where it beats the plain spans kernel's span steps too): reached_stretches_pay, stretches_beat_spans.
    const std::vector<slice_gpu::Stretch> stretches =
        walks ? reached_stretches_pay(plan, dx_padded, limits) : std::vector<slice_gpu::Stretch>{};
    const bool lines_over_spans = folded > 0 && element >= 2 && line_bytes(walked, folded) >= kLineOverSpansMinBytes;
    if (lines_over_spans && !spans_pay(plan, dy_padded, dx_padded, limits, kSpansShareBelowLines))
        return walk_program(walked, dy_padded, dx_padded, limits, folded, stretches);
    if (spans_pay(plan, dy_padded, dx_padded, limits, limit)) {
        GpuProgram spans = spans_program(plan, dy_padded, dx_padded, limits);
        if (spans.kernel.starts_with("slice_grad_spans_b") && stretches_beat_spans(plan, stretches))
            return walk_program_of_runs(plan, dy_padded, dx_padded, limits, stretches);
        return spans;
    }
    std::optional<SliceGradPlan> points = as_unit_rows(plan);
    if (points && !spans_pay(*points, dy_padded, dx_padded, limits, limit)) points.reset();
    if (walks && !element_cheap) {
        GpuProgram walk = walk_program_of_runs(plan, dy_padded, dx_padded, limits, stretches);
        return points && !skips_gaps(walk) ? spans_program(*points, dy_padded, dx_padded, limits) : walk;
    }
    if (points) return spans_program(*points, dy_padded, dx_padded, limits);
    if (rows && walk_fits(dx_count, dy_whole) && short_rows_fold(plan, limits))
        return walk_program_of_runs(plan, dy_padded, dx_padded, limits);

    GpuProgram program;
    program.kernel = std::string(rows                           ? "slice_grad_rows_b"
                                 : row_ends_inside_uint4s(plan) ? "slice_grad_rowends_b"
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
    if (!dy_whole) {
        append_chunks(program, params, geometry, plan, dy_padded, limits);
        return program;
    }
    const uint64_t per_thread = rows ? kernel::ROWS_UINT4S_PER_THREAD : 1;
    append_windows(program, params, geometry, dy_padded, dx_padded, per_thread, limits);
    return program;
}

}  // namespace dmlgrad
