// Max-pooling grad on the GPU: a deterministic gather (no atomics): each dX element sums the dY of the windows that
// chose it, in increasing dY order (the CPU's order: same bits). X and dY are read from memory about once, dX
// written once. The kernels, by geometry:
//  - maxpool_grad_select_<dtype> (kernels/maxpool_grad_select.hlsl): windows of one tap on every axis (a window of
//    1, whatever the dilation) while dX and dY fit one binding each: dY scattered at the taps, X neither read nor
//    bound;
//  - maxpool_grad_k2s2_<2|3>d_<dtype> (kernels/maxpool_grad_k2s2.hlsl): windows of 2, stride 2, no padding on the
//    rows and columns (2-D) or on every axis (3-D) that tile the input (in = 2 * out), rows of whole thread units:
//    a thread loads a uint4 of each X row of a few windows and stores their dX, the argmax on the bits;
//  - maxpool_grad_cellrows_f32 (kernels/maxpool_grad.hlsl, CELL_ROWS; Vulkan): fp32 windows that do not overlap
//    (span at most the stride on every axis) in cells of 8 rows or more, on rows of X that keep a workgroup's
//    threads busy: a thread per column of a row of windows' cells, the window's best through groupshared memory;
//  - maxpool_grad_cells_<dtype> (kernels/maxpool_grad.hlsl, CELLS): the other windows that do not overlap (span at
//    most the stride on every axis) but for cells of 8 elements a tap or more (sparse_cells: the two-pass kernel): a
//    thread per window writes the window's cell of dX, no groupshared memory;
//  - maxpool_grad_fast[3d|_narrow]_k<K>s<T>_<dtype> (kernels/maxpool_grad_fast.hlsl): 2-D pooling with square
//    windows of 2 or 3, strides 1-3, dilation 1 ("narrow" tiles for rows of up to 32 elements), or ("3d") 3-D
//    pooling with such cube windows: window and stride compiled in, loops unrolled, fixed tiles, several tiles per
//    workgroup (one tile's loads overlap the previous one's work; sizes in kernels/interface/maxpool_grad.h), where
//    a plane fills at least a quarter of its tiles (fills_tiles);
//  - maxpool_grad_walk3d_k3s2p1_<dtype> (kernels/maxpool_grad_walk.hlsl): 3-D pooling with cube windows of 3,
//    stride 2 and start padding 1 on every axis: a workgroup owns a tile of rows and columns of windows and walks
//    through the depth, each thread writing a 2 x 2 x 2 cell of dX (before the fast kernel, which takes the rest),
//    where a plane fills at least a quarter of its tiles;
//  - maxpool_grad_walk3d_k2s1_<dtype> (kernels/maxpool_grad_walk3d_k2.hlsl): 3-D pooling with cube windows of 2,
//    stride 1 and no start padding on every axis, rows shorter than a chunk: a workgroup owns a run of
//    WALK3D_K2_CHUNK elements (fp16 twice that) of a depth slice and walks through the depth (before the fast
//    kernel);
//  - maxpool_grad_walk2d_k3s<T>p1_<dtype> (kernels/maxpool_grad_walk2d.hlsl): 2-D pooling with square windows of
//    3, start padding 1 and stride 2 or 1 (where the walk covers dX: see walk2d_stride): a thread per column of
//    windows (or run of columns) walks down the rows, neighbours' keys and choices through groupshared memory
//    (before the fast kernel);
//  - maxpool_grad_cellwords{_shared,}_f16 (kernels/maxpool_grad.hlsl, CELL_WORDS): fp16 windows that do not overlap
//    where a cell would split a word (odd stride, padding or row length) and the fast kernel does not fit (sparse
//    cells aside, as above): the cell kernel, a word shared by two cells stored whole by the cell of its second
//    half, the first half's window's choice from groupshared memory (_shared: cells of 9 elements or more), or set
//    by halves through atomics;
//  - maxpool_grad_bands_s1_f16 (kernels/maxpool_grad_bands.hlsl): fp16 2-D pooling at stride 1 and dilation 1 with
//    windows of any size (up to BANDS_MOST_WINDOW_W columns) and more than one window row where they have several
//    tap rows, where a workgroup's slots hold whole planes or a band of rows of one plane at least twice its
//    windows' extra rows: keys, row bests, choices and dY in groupshared memory, a thread per dX word summing the
//    windows that chose it;
//  - maxpool_grad_twopass_<dtype> (kernels/maxpool_grad.hlsl): any other geometry (dilation, odd windows, odd
//    sizes, windows of any size): per chunk, threads write each window's chosen element to a scratch buffer of a
//    uint per dY element, then threads sum, per dX element, the dY of the covering windows that chose it (their
//    covers from per-axis tables); a thread per window (or per CHOOSE_ROWS windows of a column, where they share
//    rows of taps: _rows), then per TWOPASS_RUN consecutive elements (TWOPASS_LONG_RUN for fp16 where the columns'
//    windows overlap: _long); or, where a plane has more than TWOPASS_RUN elements a window (_scatter), dX filled with
//    +0 and then a thread per window that sums and stores its chosen element where it is the first window to choose it.
// Every family sees the pooling with its axes of a single tap taken out (the others moved inwards).
//
// Splitting: dX, X and dY are cut into chunks of whole planes (N * C, times the depth for the fast kernel's 2-D
// variants) whose byte ranges fit one binding; each window starts at an aligned offset at or before the chunk and
// the kernel gets the chunk's element offset. For fp16 a chunk starts at an even element, so no 32-bit word of dX is
// shared by two chunks (threads write whole words). A plane (two for fp16 of odd plane size) larger than a binding is
// rejected.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/kernel_registry.h"
#include "gpu/ops/division_magic.h"
#include "gpu/ops/maxpool_grad_kernels.h"
#include "gpu/ops/maxpool_grad_select.h"
#include "interface/maxpool_grad.h"
#include "interface/maxpool_grad_select.h"

namespace dmlgrad {
namespace {

namespace kernel = kernels::maxpool_grad;
using maxpool_gpu::Family;
using maxpool_gpu::Layout;
using maxpool_gpu::Variant;

constexpr uint64_t kWorkgroup = 256;  // the variants' workgroup size (checked against the registry)
constexpr uint64_t kMaxTilesPerBatch = uint64_t(1) << 22;  // keeps thread indices below 2^32
constexpr uint64_t kChosenBytes = 4;                       // the two-pass kernel's choice of a window: a uint

struct AxisGeometry {
    uint64_t size, out, window, stride, pad, dilation;
    uint64_t span_m1() const { return (window - 1) * dilation; }
    // Windows between two that reach the same coordinate (their offsets repeat mod the dilation).
    uint64_t step() const { return dilation / std::gcd(stride, dilation); }
};
using Axes = std::array<AxisGeometry, 3>;  // depth, rows, columns

// Windows of axis `a` reaching coordinates [p0, p1]: [first, last] (empty when first > last).
std::pair<uint64_t, uint64_t> reaching(const AxisGeometry& a, uint64_t p0, uint64_t p1) {
    const uint64_t q0 = p0 + a.pad, q1 = p1 + a.pad;
    const uint64_t first = q0 > a.span_m1() ? ceil_div(q0 - a.span_m1(), a.stride) : 0;
    const uint64_t last = std::min(a.out - 1, q1 / a.stride);
    return {first, last};
}

uint32_t ceil_log2(uint64_t v) { return uint32_t(std::bit_width(v - 1)); }

// The plan's axes; throws RuntimeFailure where the kernels' 32-bit arithmetic does not reach.
Axes checked_axes(const MaxPoolGradPlan& plan) {
    Axes axes;
    for (size_t a = 0; a < 3; ++a) {
        axes[a] = {uint64_t(plan.in[a]),     uint64_t(plan.out[a]),           uint64_t(plan.window[a]),
                   uint64_t(plan.stride[a]), uint64_t(plan.start_padding[a]), uint64_t(plan.dilation[a])};
        // The kernels' coordinate arithmetic is 32-bit, signed where a window starts in the padding.
        const AxisGeometry& g = axes[a];
        const uint64_t limit = uint64_t(1) << 30;
        if (g.size >= limit || g.pad >= limit || g.stride >= limit || g.span_m1() >= limit ||
            (g.out - 1) * g.stride + g.span_m1() >= limit)
            throw RuntimeFailure(
                "maxpool-grad on the GPU: an axis with a size, padding, stride or window of 2^30 "
                "or more; run it with --cpu");
    }
    if (plan.planes * axes[0].size * axes[1].size * axes[2].size > UINT32_MAX ||
        plan.planes * axes[0].out * axes[1].out * axes[2].out > UINT32_MAX)
        throw RuntimeFailure("maxpool-grad on the GPU: a tensor has more than 2^32 - 1 elements");
    return axes;
}

template <class T>
void append_struct(std::vector<uint32_t>& words, const T& value) {
    static_assert(sizeof(T) % 16 == 0, "read by the kernel as uint4s");
    const size_t at = words.size();
    words.resize(at + sizeof(T) / 4);
    std::memcpy(&words[at], &value, sizeof(T));
}

// The two-pass and cell kernels' geometry buffer (interface/maxpool_grad.h), without cover tables.
std::vector<uint32_t> geometry_words(const Axes& axes, uint64_t x_plane, uint64_t dy_plane) {
    static_assert(sizeof(kernel::Axis) == 4 * kernel::AXIS_WORDS && sizeof(kernel::PlaneSizes) == 16);
    std::vector<uint32_t> words;
    for (const AxisGeometry& g : axes) {
        append_struct(words, kernel::Axis{uint32_t(g.size), uint32_t(g.out), uint32_t(g.window), uint32_t(g.stride),
                                          uint32_t(g.pad), uint32_t(g.dilation), uint32_t(g.step()),
                                          uint32_t(g.span_m1()), division_magic(g.size), division_magic(g.out),
                                          division_magic(g.stride), division_magic(g.dilation)});
    }
    const uint64_t row_groups = ceil_div<uint64_t>(axes[1].out, kernel::CHOOSE_ROWS);
    append_struct(words, kernel::PlaneSizes{uint32_t(x_plane), uint32_t(dy_plane), 0, division_magic(row_groups)});
    if (words.size() != kernel::COVER_TABLES_WORD) throw std::logic_error("maxpool-grad: geometry layout");
    return words;
}

// The windows of `a` covering coordinate p (those whose taps land on it): first | count << COVER_COUNT_SHIFT,
// every step-th window from the first.
uint32_t cover_entry(const AxisGeometry& a, uint64_t p) {
    const auto [lo, hi] = reaching(a, p, p);
    for (uint64_t o = lo; o <= hi && o < lo + a.step(); ++o)
        if ((p + a.pad - o * a.stride) % a.dilation == 0)
            return uint32_t(o | ((hi - o) / a.step() + 1) << kernel::COVER_COUNT_SHIFT);
    return uint32_t(lo);
}

// Cover tables spare the two-pass kernel's gather the divisions and loops of each element's covers along the depth
// and rows (its row segments take a range of columns' windows, no table), where those axes' windows fit 16 bits
// and the tables stay within kMaxCoverWords.
constexpr uint64_t kMaxCoverWords = uint64_t(1) << 20;

void append_cover_tables(std::vector<uint32_t>& words, const Axes& axes) {
    const std::span<const AxisGeometry> tabled(axes.data(), 2);  // depth, rows
    uint64_t entries = 0;
    for (const AxisGeometry& a : tabled) {
        if (a.out >= (uint64_t(1) << kernel::COVER_COUNT_SHIFT)) return;
        entries += a.size;
    }
    if (entries > kMaxCoverWords) return;
    words[kernel::PLANE_SIZES_WORD + 2] = uint32_t(words.size());
    for (const AxisGeometry& a : tabled)
        for (uint64_t p = 0; p < a.size; ++p) words.push_back(cover_entry(a, p));
}

// A binding window over the bytes of planes [first, end) of a tensor with `plane_bytes` per plane.
BufferWindow plane_window(uint32_t slot, uint64_t first, uint64_t end, uint64_t plane_bytes, uint64_t total_bytes,
                          const DeviceLimits& limits) {
    const uint64_t offset = align_down(first * plane_bytes, limits.offset_alignment);
    const uint64_t stop = std::min(padded_bytes(end * plane_bytes), padded_bytes(total_bytes));
    return {slot, offset, std::max<uint64_t>(stop - offset, 16)};
}

// ---- the fast kernel (kernels/maxpool_grad_fast.hlsl) ----

// 2-D pooling (depth folded into the planes) on wide or narrow tiles, or 3-D.
enum class FastCase { none, planar, narrow, cube };

// Its cases: a square window of 2 or 3 with dilation 1 and equal strides of 1-3 (variants) on the rows and
// columns, and either the depth untouched (window, stride 1, no padding) or, for windows of 2 at stride 1 only,
// pooled alike (a cube window: the other cubes ran 1.4-2.8x faster on the two-pass kernel on an H100, k2 s1 within
// 10% either way); sizes below 2^16 (16-bit table fields), and fp16 rows of even length (a thread writes the two
// elements of a word, both in its tile).
FastCase fast_case(const Axes& axes, bool half) {
    const AxisGeometry &d = axes[0], &h = axes[1], &w = axes[2];
    if (h.window != w.window || (h.window != 2 && h.window != 3) || h.dilation != 1 || w.dilation != 1 ||
        (half && w.size % 2 != 0))
        return FastCase::none;
    const auto fits_tables = [](const AxisGeometry& a) { return a.size < 65536 && a.out < 65536 && a.pad < 32768; };
    if (w.stride != h.stride || h.stride > 3 || !fits_tables(h) || !fits_tables(w)) return FastCase::none;
    if (d.window == 1 && d.stride == 1 && d.pad == 0 && d.out == d.size)
        return w.size <= kernel::FAST_NARROW_TILE_COLS ? FastCase::narrow : FastCase::planar;
    if (h.window == 2 && h.stride == 1 && d.window == 2 && d.stride == 1 && d.dilation == 1 && fits_tables(d))
        return FastCase::cube;
    return FastCase::none;
}

// A tile's extent along each axis (depth, rows, columns), and the tiles per plane (padded to powers of two).
struct FastTiling {
    std::array<uint64_t, 3> tile{1, 1, kernel::FAST_TILE_COLS};
    std::array<uint64_t, 3> tiles{};
    std::array<uint32_t, 3> tiles_log2{};
};

FastTiling fast_tiling(const Axes& axes, FastCase c) {
    FastTiling t;
    const bool unit_stride = axes[1].stride == 1;
    if (c == FastCase::cube) {
        t.tile[0] = kernel::FAST_TILE_DEPTH_3D;
        t.tile[1] = kernel::FAST_TILE_ROWS_3D;
    } else {
        const bool narrow = c == FastCase::narrow;
        t.tile[1] = (unit_stride ? kernel::FAST_TILE_ROWS_STRIDE_1 : kernel::FAST_TILE_ROWS_STRIDED) << narrow;
        t.tile[2] = narrow ? kernel::FAST_NARROW_TILE_COLS : kernel::FAST_TILE_COLS;
    }
    for (size_t a = 0; a < 3; ++a) {
        const uint64_t size = c == FastCase::cube || a > 0 ? axes[a].size : 1;  // planar: one slice
        t.tiles[a] = ceil_div(size, t.tile[a]);
        t.tiles_log2[a] = ceil_log2(t.tiles[a]);
    }
    return t;
}

uint32_t packed_range(std::pair<uint64_t, uint64_t> r) {
    const uint64_t count = r.first <= r.second ? r.second - r.first + 1 : 0;
    return uint32_t(r.first | count << 16);
}

// Per tile along the axis, the windows reaching it; then per coordinate, the windows covering it.
void append_axis_table(std::vector<uint32_t>& words, const AxisGeometry& a, uint64_t tile, uint64_t tiles) {
    for (uint64_t t = 0; t < tiles; ++t)
        words.push_back(packed_range(reaching(a, t * tile, std::min(a.size, (t + 1) * tile) - 1)));
    for (uint64_t p = 0; p < a.size; ++p) words.push_back(packed_range(reaching(a, p, p)));
}

// The header words the fast and walk kernels share: each axis's sizes and start padding, the planes' sizes.
std::vector<uint32_t> fast_header_words(const Axes& axes, uint64_t x_plane, uint64_t dy_plane) {
    std::vector<uint32_t> words(kernel::FAST_HEADER_WORDS);
    for (size_t a = 0; a < 3; ++a) {
        words[kernel::FAST_WORD_IN_D + a] = uint32_t(axes[a].size);
        words[kernel::FAST_WORD_OUT_D + a] = uint32_t(axes[a].out);
        words[kernel::FAST_WORD_PAD_D + a] = uint32_t(axes[a].pad);
    }
    words[kernel::FAST_WORD_X_PLANE] = uint32_t(x_plane);
    words[kernel::FAST_WORD_DY_PLANE] = uint32_t(dy_plane);
    return words;
}

// The header and the depth, row and column tables; planar pooling as one depth slice pooled by a window of 1.
std::vector<uint32_t> fast_geometry_words(const Axes& axes, FastCase c, const FastTiling& t, uint64_t x_plane,
                                          uint64_t dy_plane) {
    const AxisGeometry depth = c == FastCase::cube ? axes[0] : AxisGeometry{1, 1, 1, 1, 0, 1};
    const Axes ax{depth, axes[1], axes[2]};
    std::vector<uint32_t> words = fast_header_words(ax, x_plane, dy_plane);
    words[kernel::FAST_WORD_GRID_DEPTH_LOG2] = t.tiles_log2[0];
    words[kernel::FAST_WORD_GRID_ROWS_LOG2] = t.tiles_log2[1];
    words[kernel::FAST_WORD_GRID_COLS_LOG2] = t.tiles_log2[2];
    words[kernel::FAST_WORD_GRID_DEPTH] = uint32_t(t.tiles[0]);
    words[kernel::FAST_WORD_GRID_ROWS] = uint32_t(t.tiles[1]);
    words[kernel::FAST_WORD_GRID_COLS] = uint32_t(t.tiles[2]);
    const uint32_t table_word[3] = {kernel::FAST_WORD_DEPTH_TABLE, kernel::FAST_WORD_ROW_TABLE,
                                    kernel::FAST_WORD_COL_TABLE};
    for (size_t a = 0; a < 3; ++a) {
        words[table_word[a]] = uint32_t(words.size());
        append_axis_table(words, ax[a], t.tile[a], t.tiles[a]);
    }
    return words;
}

// ---- the walk kernel (kernels/maxpool_grad_walk.hlsl) ----

// Its case: windows of 3, stride 2, start padding 1, dilation 1 on every axis, cells of 2 covering the input (in
// <= 2 * out: a coordinate past them is read by no window but written by no cell either), sizes within the
// fast kernel's 16-bit limits, and fp16 rows of even length (a thread writes a word per cell row).
bool fits_walk_kernel(const Axes& axes, bool half) {
    for (const AxisGeometry& a : axes)
        if (a.window != 3 || a.stride != 2 || a.pad != 1 || a.dilation != 1 || a.size > 2 * a.out || a.size >= 65536)
            return false;
    return !half || axes[2].size % 2 == 0;
}

// The fast kernel's header (no tables) with the grid of tiles of windows per plane, rows and columns.
std::vector<uint32_t> walk_geometry_words(const Axes& axes, uint64_t x_plane, uint64_t dy_plane) {
    std::vector<uint32_t> words = fast_header_words(axes, x_plane, dy_plane);
    words[kernel::FAST_WORD_GRID_DEPTH] = 1;
    words[kernel::FAST_WORD_GRID_ROWS] = uint32_t(ceil_div<uint64_t>(axes[1].out, kernel::WALK_TILE_ROWS));
    words[kernel::FAST_WORD_GRID_COLS] = uint32_t(ceil_div<uint64_t>(axes[2].out, kernel::WALK_TILE_COLS));
    return words;
}

// The share of their threads that the fast kernel's tiles and the k2 s1 walk's chunks must use at least: planes far
// smaller than a tile leave most of its threads idle. H100: k3 s3 fp16 on planes of 7 x 8 (5% of a narrow tile)
// 8939 us, 1825 on the cell kernel (PyTorch 1529); k3 s2 f32 on 125 x 7 (21%) 286 us, 141 on the two-pass kernel;
// 1/8 left the latter on the tiles.
constexpr uint64_t kFastLeastFill = 4;

// ---- the 3-D k2 s1 walk (kernels/maxpool_grad_walk3d_k2.hlsl) ----

// Its case: windows of 2, stride 1, dilation 1, no start padding and an end padding of 0 or 1 (out <= in: no
// window past the input's last coordinate) on every axis, rows shorter than WALK3D_K2_CHUNK (the kernel's windows
// and keys then fit its slots), fp16 slices of an even size (a thread writes a word), and chunks whose threads are
// at least 1/kFastLeastFill used. H100, 93x33x37 fp32 volumes: the fast kernel's 64 x 4 x 2 tiles used 27 of 64
// columns and computed each window 1.9 times (2550 us; the walk 530).
uint64_t walk3d_k2_chunk(bool half) { return kernel::WALK3D_K2_CHUNK * (half ? 2 : 1); }

bool fits_walk3d_k2(const Axes& axes, bool half) {
    for (const AxisGeometry& a : axes)
        if (a.window != 2 || a.stride != 1 || a.dilation != 1 || a.pad != 0 || a.out > a.size) return false;
    const uint64_t slice = axes[1].size * axes[2].size, chunk = walk3d_k2_chunk(half);
    return axes[2].size < kernel::WALK3D_K2_CHUNK && (!half || slice % 2 == 0) &&
           kFastLeastFill * slice >= ceil_div(slice, chunk) * chunk;
}

// A walk cut along `length` (slices or rows) into segments that workgroups of their own walk: as many as make
// `groups` workgroups a segment reach `target_groups`, none shorter than `min_length`.
struct Segments {
    uint64_t length, count;
};
Segments walk_segments(uint64_t length, uint64_t groups, uint64_t target_groups, uint64_t min_length) {
    const uint64_t wanted = std::clamp<uint64_t>(ceil_div(target_groups, groups), 1, ceil_div(length, min_length));
    const uint64_t segment_length = ceil_div(length, wanted);
    return {segment_length, ceil_div(length, segment_length)};
}

// Segments: where the planes' chunks fill fewer than kWalk3dTargetGroups workgroups, the depth is cut into segments
// of at least kWalk3dMinSegmentSlices slices, each walked by workgroups of their own (a segment starts one step
// early: its first windows' first slice), so that few planes still spread over the GPU. H100: 4096 against 1024
// target groups, 5x83 planes of 93x33x37 (2 segments instead of 1) 555.7 -> 529.8 us, 13x21 planes of 89x12x53 (6
// instead of 2) 216.0 -> 217.5.
constexpr uint64_t kWalk3dTargetGroups = 4096;
constexpr uint64_t kWalk3dMinSegmentSlices = 16;

// The fast kernel's header with the chunks per slice and the segments (interface/maxpool_grad.h).
std::vector<uint32_t> walk3d_k2_geometry_words(const Axes& axes, bool half, uint64_t x_plane, uint64_t dy_plane,
                                               uint64_t planes) {
    std::vector<uint32_t> words = fast_header_words(axes, x_plane, dy_plane);
    words.resize(kernel::WALK3D_K2_HEADER_WORDS);
    const uint64_t chunks = ceil_div<uint64_t>(axes[1].size * axes[2].size, walk3d_k2_chunk(half));
    const Segments segments =
        walk_segments(axes[0].size, planes * chunks, kWalk3dTargetGroups, kWalk3dMinSegmentSlices);
    words[kernel::WALK3D_K2_WORD_CHUNKS] = uint32_t(chunks);
    words[kernel::WALK3D_K2_WORD_SEGMENT_SLICES] = uint32_t(segments.length);
    words[kernel::WALK3D_K2_WORD_SEGMENTS] = uint32_t(segments.count);
    return words;
}

// ---- the 2-D walk kernel (kernels/maxpool_grad_walk2d.hlsl) ----

// Its case: 2-D pooling (the depth untouched, folded into the planes) with square windows of 3, dilation 1 and
// start padding 1 on the rows and columns, and either stride 2 with in <= 2 * out (the cells of 2 x 2 cover the
// input) or stride 1 with out <= in (end padding 0 or 1: no window past the input's last column), on both; fp16
// rows of even length (a thread loads and writes whole words). Returns the stride, or 0 where it does not fit.
uint64_t walk2d_stride(const Axes& axes, bool half) {
    const AxisGeometry &d = axes[0], &h = axes[1], &w = axes[2];
    if (d.window != 1 || d.stride != 1 || d.pad != 0 || d.out != d.size || (half && w.size % 2 != 0)) return 0;
    const auto fits = [&h](const AxisGeometry& a) {
        if (a.window != 3 || a.dilation != 1 || a.pad != 1 || a.stride != h.stride) return false;
        return a.stride == 2 ? a.size <= 2 * a.out : a.stride == 1 && a.out <= a.size;
    };
    return fits(h) && fits(w) ? h.stride : 0;
}

// Thread columns per plane (stride 2: window columns; stride 1: runs of WALK2D_STRIDE_1_COLUMNS X columns, the last
// one shorter where the row is not a multiple) and per workgroup.
uint64_t walk2d_plane_columns(const Axes& axes, uint64_t stride) {
    return stride == 2 ? axes[2].out : ceil_div<uint64_t>(axes[2].size, kernel::WALK2D_STRIDE_1_COLUMNS);
}
uint64_t walk2d_group_columns(uint64_t stride) {
    static_assert(
        kernel::WALK2D_COLUMNS_STRIDE_2 == kWorkgroup - 1 && kernel::WALK2D_COLUMNS_STRIDE_1 == kWorkgroup - 2,
        "one halo thread (stride 2) or two (stride 1) per group");
    return stride == 2 ? kernel::WALK2D_COLUMNS_STRIDE_2 : kernel::WALK2D_COLUMNS_STRIDE_1;
}

// Segments: where a batch's columns fill fewer than kWalk2dTargetGroups workgroups, the rows are cut into segments
// (of at least kWalk2dMinSegmentRows rows), each walked by workgroups of their own, so that small batches still
// spread over the GPU; a segment starts one or two steps early (the rows its first windows share).
constexpr uint64_t kWalk2dTargetGroups = 1024;
constexpr uint64_t kWalk2dMinSegmentRows = 4;

// The fast kernel's header with the segments' rows and count (interface/maxpool_grad.h).
std::vector<uint32_t> walk2d_geometry_words(const Axes& axes, uint64_t stride, uint64_t x_plane, uint64_t dy_plane,
                                            uint64_t groups) {
    std::vector<uint32_t> words = fast_header_words(axes, x_plane, dy_plane);
    words.resize(kernel::WALK2D_HEADER_WORDS);
    const uint64_t rows = stride == 2 ? axes[1].out : axes[1].size;
    const Segments segments = walk_segments(rows, groups, kWalk2dTargetGroups, kWalk2dMinSegmentRows);
    words[kernel::WALK2D_WORD_SEGMENT_ROWS] = uint32_t(segments.length);
    words[kernel::WALK2D_WORD_SEGMENTS] = uint32_t(segments.count);
    return words;
}

// ---- the stride-1 bands (kernels/maxpool_grad_bands.hlsl) ----

// What a workgroup owns: `planes` whole planes (rows = in_h, bands = 1), or a band of `rows` rows of one plane
// (planes = 1, bands per plane).
struct BandShape {
    uint64_t planes = 0, rows = 0, bands = 0;
};

// The windows of `a` (stride 1) that reach coordinates [p0, p1], as a count.
uint64_t reaching_count(const AxisGeometry& a, uint64_t p0, uint64_t p1) {
    const auto [first, last] = reaching(a, p0, p1);
    return last + 1 - first;
}

// Its case: fp16 (H100: fp32 took 1.2-2.2x the two-pass time on every geometry measured, 1536 and 512 slots), 2-D
// pooling (the depth untouched, folded into the planes), stride 1 and dilation 1 on the rows and columns, windows of
// at most BANDS_MOST_WINDOW_W columns, windows of several tap rows only where there are several window rows (a row
// best then serves window_h windows; with one window row each serves one, and 3 x 17 planes pooled by k5 windows
// padded by 1 took 1.09x the two-pass time), and BANDS_SLOTS slots (each of the kernel's arrays) holding a
// workgroup's key rows times max(in_w, out_w) and its windows: whole planes where one fits, else a band of rows at
// least twice the window's extra rows (window_h - 1 above and below, read again by the next band); every group's
// first element even (an even plane, or an even number of them; bands of an even size).
std::optional<BandShape> band_shape(const Axes& axes, bool half) {
    const AxisGeometry &d = axes[0], &h = axes[1], &w = axes[2];
    if (!half || (h.out == 1 && h.window > 1)) return std::nullopt;
    if (d.window != 1 || d.stride != 1 || d.pad != 0 || d.out != d.size) return std::nullopt;
    for (const AxisGeometry* a : {&h, &w})
        if (a->stride != 1 || a->dilation != 1) return std::nullopt;
    if (w.window > kernel::BANDS_MOST_WINDOW_W) return std::nullopt;
    const uint64_t slots = kernel::BANDS_SLOTS, row_slots = std::max(w.size, w.out);
    const uint64_t plane = h.size * w.size;
    // Whole planes: every row is a key row (stride 1: every row is reached), the windows reaching them.
    const uint64_t per_plane = std::max(h.size * row_slots, reaching_count(h, 0, h.size - 1) * w.out);
    uint64_t planes = slots / per_plane;
    if (plane % 2 == 1) planes &= ~uint64_t(1);
    if (planes > 0) return BandShape{planes, h.size, 1};
    // A band of `rows` rows: at most rows + window_h - 1 window rows, and window_h - 1 key rows more.
    const uint64_t extra = h.window - 1;
    if (row_slots * (2 * extra + 1) > slots || w.out * (extra + 1) > slots) return std::nullopt;
    uint64_t rows = std::min(slots / row_slots - 2 * extra, slots / w.out - extra);
    if (w.size % 2 == 1) rows &= ~uint64_t(1);
    if (rows == 0 || rows < 2 * extra || plane % 2 == 1) return std::nullopt;
    return BandShape{1, rows, ceil_div(h.size, rows)};
}

// The fast kernel's header (no tables) with the window and the group's shape (interface/maxpool_grad.h).
std::vector<uint32_t> bands_geometry_words(const Axes& axes, const BandShape& shape, uint64_t x_plane,
                                           uint64_t dy_plane) {
    std::vector<uint32_t> words = fast_header_words(axes, x_plane, dy_plane);
    words.resize(kernel::BANDS_HEADER_WORDS);
    words[kernel::BANDS_WORD_WINDOW_H] = uint32_t(axes[1].window);
    words[kernel::BANDS_WORD_WINDOW_W] = uint32_t(axes[2].window);
    words[kernel::BANDS_WORD_PLANES] = uint32_t(shape.planes);
    words[kernel::BANDS_WORD_ROWS] = uint32_t(shape.rows);
    words[kernel::BANDS_WORD_BANDS] = uint32_t(shape.bands);
    return words;
}

// ---- the k2s2 kernel (kernels/maxpool_grad_k2s2.hlsl) ----

// Its cases: windows of 2, stride 2, no padding, dilation 1 that tile the rows and columns (in = 2 * out), and
// the depth pooled alike (cube) or untouched (planar, folded into the planes); rows of windows of whole thread
// units (K2S2_UNIT_BYTES of each X row), so that every row, plane and chunk origin is whole vectors.
enum class K2s2Case { none, planar, cube };

K2s2Case k2s2_case(const Axes& axes, uint64_t element) {
    const auto tiles = [](const AxisGeometry& a) {
        return a.window == 2 && a.stride == 2 && a.pad == 0 && a.dilation == 1 && a.size == 2 * a.out;
    };
    const uint64_t windows_per_unit = kernel::K2S2_UNIT_BYTES / (2 * element);
    const AxisGeometry& d = axes[0];
    if (!tiles(axes[1]) || !tiles(axes[2]) || axes[2].out % windows_per_unit != 0) return K2s2Case::none;
    if (tiles(d)) return K2s2Case::cube;
    if (d.window == 1 && d.stride == 1 && d.pad == 0 && d.out == d.size) return K2s2Case::planar;
    return K2s2Case::none;
}

// Its geometry buffer: the K2s2Geometry of interface/maxpool_grad.h.
std::vector<uint32_t> k2s2_geometry_words(const Axes& axes, uint64_t element) {
    static_assert(sizeof(kernel::K2s2Geometry) == 16, "read by the kernel as one uint4");
    const uint64_t vector_elements = kernel::K2S2_UNIT_BYTES / element;
    const kernel::K2s2Geometry g{uint32_t(axes[2].out / (vector_elements / 2)), uint32_t(axes[1].out),
                                 uint32_t(axes[2].size / vector_elements),
                                 uint32_t(axes[1].size * axes[2].size / vector_elements)};
    std::vector<uint32_t> words;
    append_struct(words, g);
    return words;
}

// ---- the family table and the chunking ----

// The cell kernel's case (kernels/maxpool_grad.hlsl, CELLS): windows that do not overlap, each axis's span at most
// its stride; for fp16, cells whose columns start and end at even elements (a thread writes whole words): an
// even stride, padding and row length.
bool fits_cell_kernel(const Axes& axes, bool half) {
    for (const AxisGeometry& a : axes)
        if (a.span_m1() + 1 > a.stride) return false;
    const AxisGeometry& w = axes[2];
    return !half || (w.stride % 2 == 0 && w.pad % 2 == 0 && w.size % 2 == 0);
}

// The chosen variant and what it works on: `planes` planes of x_plane X (and dX) elements and dy_plane dY elements
// (the 2-D layouts fold the depth into the planes), in its family's work items.
struct KernelChoice {
    Variant variant;
    std::vector<uint32_t> geometry;
    uint64_t planes = 0, x_plane = 0, dy_plane = 0;
    uint64_t tiles_per_plane = 0;   // fast: of the grid (padded to powers of two); walk: of its grid; walk3d_k2s1:
                                    // chunks times segments; walk2d: thread columns per plane
    uint64_t group_columns = 0;     // walk2d: thread columns per workgroup
    uint64_t windows_per_unit = 1;  // k2s2: dY elements per thread unit
    uint64_t choose_groups = 0;     // twopass: the choose's threads per plane
    BandShape band;                 // bands: a workgroup's planes or band of rows
    bool half = false;
    // The device's largest binding (the selection kernel takes only tensors bound whole).
    uint64_t max_binding_bytes = 0;
};

// The planes a kernel works on; `folded`: the depth is folded into the planes (a 2-D kernel on 5-D tensors, the
// depth untouched).
void set_planes(KernelChoice& k, const Axes& axes, uint64_t planes, bool folded) {
    k.planes = folded ? planes * axes[0].size : planes;
    k.x_plane = (folded ? 1 : axes[0].size) * axes[1].size * axes[2].size;
    k.dy_plane = (folded ? 1 : axes[0].out) * axes[1].out * axes[2].out;
}

// Each take_* fills `k` (its dtype and planes set) and returns true where its family fits.
bool take_k2s2(KernelChoice& k, const Axes& axes, uint64_t planes) {
    const uint64_t element = dtype_size(k.variant.dtype);
    const K2s2Case k2s2 = k2s2_case(axes, element);
    if (k2s2 == K2s2Case::none) return false;
    const bool cube = k2s2 == K2s2Case::cube;
    k.variant.layout = cube ? Layout::cube : Layout::planar;
    set_planes(k, axes, planes, !cube);
    k.geometry = k2s2_geometry_words(axes, element);
    k.windows_per_unit = kernel::K2S2_UNIT_BYTES / (2 * element);
    return true;
}

// A cell's elements (each axis's stride, capped by its size) and its window's taps (each axis's window, so capped).
uint64_t cell_elements(const Axes& axes) {
    uint64_t cell = 1;
    for (const AxisGeometry& a : axes) cell *= std::min(a.stride, a.size);
    return cell;
}

uint64_t window_taps(const Axes& axes) {
    uint64_t taps = 1;
    for (const AxisGeometry& a : axes) taps *= std::min(a.window, a.size);
    return taps;
}

// Cells of kSparseCellLeast elements a window tap or more (strides twice the windows on every axis of a 3-D
// pooling) take the two-pass kernel instead of the cell kernels: a cell thread writes every element of its cell, a
// store an element (fp32) or a word (fp16) in pieces a cell row long, where the two-pass scatter fills dX in whole
// lines and stores the chosen elements alone. H200 (docs/PERFORMANCE.md, maxpool35): 3-D k2 s4 fp16 0.87x the cell
// kernels' time, with dilation 2 0.35x, fp32 0.62x (cells of 64 elements for 8 taps); at 4 elements a tap (2-D k2
// s4, fp16 and fp32) the two-pass kernel took 1.17-1.37x, denser cells 1.3-2.3x.
constexpr uint64_t kSparseCellLeast = 8;

bool sparse_cells(const Axes& axes) { return cell_elements(axes) >= kSparseCellLeast * window_taps(axes); }

bool take_cells(KernelChoice& k, const Axes& axes, uint64_t) {
    if (!fits_cell_kernel(axes, k.half) || sparse_cells(axes)) return false;
    k.geometry = geometry_words(axes, k.x_plane, k.dy_plane);
    return true;
}

// The rows of a cell: the depth's and rows' strides, capped by their sizes.
uint64_t cell_rows(const Axes& axes) {
    return std::min(axes[0].stride, axes[0].size) * std::min(axes[1].stride, axes[1].size);
}

// The cell rows kernel's rows of windows per workgroup (a row of windows: one plane, depth and row): as many as its
// threads cover a column of X each.
uint64_t cellrows_per_group(uint64_t columns) { return kWorkgroup / columns; }

// fp32 cells of kCellRowsLeast rows or more take the cell rows kernel (sparse cells too) where whole rows of windows
// keep at least kCellRowsLeastLanes of a workgroup's threads busy: a thread stores a column of its cell, a row a
// store, its neighbours the next columns. With fewer rows a thread's few loads and stores around the barrier keep
// too little in flight, and with idle threads (rows of 130 columns, or longer rows in runs) the workgroups too little.
// H200 (docs/PERFORMANCE.md, cellrows37): cells of 9-16 rows on rows of 4-83 columns 0.47-0.95x the time of the
// cell kernel or the two-pass scatter; 2-D cells of 8 rows on rows of 130, 3-D of 9 on rows of 300 (runs of a row)
// 1.55-1.9x; cells of 1-4 rows 0.41-3.4x, most slower; fp16 cells 1.0-1.4x.
constexpr uint64_t kCellRowsLeast = 8;
constexpr uint64_t kCellRowsLeastLanes = 192;

bool take_cellrows(KernelChoice& k, const Axes& axes, uint64_t) {
    const uint64_t columns = axes[2].size;
    if (k.half || !fits_cell_kernel(axes, false) || cell_rows(axes) < kCellRowsLeast || columns > kWorkgroup ||
        cellrows_per_group(columns) * columns < kCellRowsLeastLanes)
        return false;
    k.geometry = geometry_words(axes, k.x_plane, k.dy_plane);
    return true;
}

// The cell rows kernel's workgroups for n planes.
uint64_t cellrows_groups(const KernelChoice& k, uint64_t n) {
    const uint64_t out_w = k.geometry[2 * kernel::AXIS_WORDS + 1], columns = k.geometry[2 * kernel::AXIS_WORDS];
    return ceil_div(n * k.dy_plane / out_w, cellrows_per_group(columns));
}

// Windows of one tap on every axis, dX (with a uint4's slack) and dY bound whole, the tables within their limit: dY
// scattered at the taps, X not read (maxpool_grad_select.h).
bool take_select(KernelChoice& k, const Axes& axes, uint64_t planes) {
    for (const AxisGeometry& a : axes)
        if (a.window != 1) return false;
    const uint64_t element = dtype_size(k.variant.dtype), unit = kernels::maxpool_grad_select::SELECT_UNIT_BYTES;
    const uint64_t dx_bytes = planes * k.x_plane * element, dy_bytes = planes * k.dy_plane * element;
    if (padded_bytes(dx_bytes) > k.max_binding_bytes || padded_bytes(dy_bytes) > k.max_binding_bytes ||
        planes * k.x_plane > UINT32_MAX - unit)
        return false;
    std::array<maxpool_gpu::TapAxis, 3> taps;
    for (size_t a = 0; a < 3; ++a) taps[a] = {axes[a].size, axes[a].out, axes[a].stride, axes[a].pad};
    auto words = maxpool_gpu::select_geometry_words(taps, planes);
    if (!words) return false;
    k.geometry = std::move(*words);
    return true;
}

// fp16 windows that do not overlap where a cell would split a word (fp32 cells never split one): the cell kernel.
// Split words are stored whole through groupshared memory where a cell has kSharedWordsLeastCell elements or more
// (H100: 2-D k3 s3, k2 s4 and 3-D k2 s3 cells 0.48-0.93x the time of atomics), by atomics on their halves where
// cells are smaller (3-D k2 s2, 8 elements: 1.70x; 1-D k2 s3, 3 elements: 1.22x).
constexpr uint64_t kSharedWordsLeastCell = 9;

bool take_cellwords(KernelChoice& k, const Axes& axes, uint64_t) {
    if (!k.half || !fits_cell_kernel(axes, false) || sparse_cells(axes)) return false;
    k.geometry = geometry_words(axes, k.x_plane, k.dy_plane);
    k.variant.shared_words = cell_elements(axes) >= kSharedWordsLeastCell;
    return true;
}

bool take_bands(KernelChoice& k, const Axes& axes, uint64_t planes) {
    const std::optional<BandShape> shape = band_shape(axes, k.half);
    if (!shape) return false;
    k.band = *shape;
    set_planes(k, axes, planes, true);
    k.geometry = bands_geometry_words(axes, k.band, k.x_plane, k.dy_plane);
    return true;
}

// Where a plane's windows fill at least 1/kFastLeastFill of its tiles' threads: a plane of 5 x 7 windows left 221 of
// a tile's 256 threads idle through the whole depth walk (H200, fp32 12x5801x28x9x14: 6159 us, the two-pass kernel
// 2117; 8x64x16x7x7 38.2 against 13.6, 32x64x16x14x14 126.3 against 58.5).
bool take_walk3d(KernelChoice& k, const Axes& axes, uint64_t) {
    if (!fits_walk_kernel(axes, k.half)) return false;
    static_assert(kernel::WALK_TILE_ROWS * kernel::WALK_TILE_COLS == kWorkgroup, "a thread per window");
    k.geometry = walk_geometry_words(axes, k.x_plane, k.dy_plane);
    k.tiles_per_plane = uint64_t(k.geometry[kernel::FAST_WORD_GRID_ROWS]) * k.geometry[kernel::FAST_WORD_GRID_COLS];
    return axes[1].out * axes[2].out * kFastLeastFill >= k.tiles_per_plane * kWorkgroup;
}

bool take_walk3d_k2(KernelChoice& k, const Axes& axes, uint64_t planes) {
    if (!fits_walk3d_k2(axes, k.half)) return false;
    k.geometry = walk3d_k2_geometry_words(axes, k.half, k.x_plane, k.dy_plane, planes);
    k.tiles_per_plane =
        uint64_t(k.geometry[kernel::WALK3D_K2_WORD_CHUNKS]) * k.geometry[kernel::WALK3D_K2_WORD_SEGMENTS];
    return true;
}

bool take_walk2d(KernelChoice& k, const Axes& axes, uint64_t planes) {
    const uint64_t stride = walk2d_stride(axes, k.half);
    if (stride == 0) return false;
    k.variant.stride = uint32_t(stride);
    set_planes(k, axes, planes, true);
    k.tiles_per_plane = walk2d_plane_columns(axes, stride);
    k.group_columns = walk2d_group_columns(stride);
    k.geometry = walk2d_geometry_words(axes, stride, k.x_plane, k.dy_plane,
                                       ceil_div(k.planes * k.tiles_per_plane, k.group_columns));
    return true;
}

// Whether a plane fills at least 1 / kFastLeastFill of its tiles.
bool fills_tiles(const Axes& axes, const FastTiling& t, FastCase c) {
    uint64_t plane = 1, tiled = 1;
    for (size_t a = 0; a < 3; ++a) {
        plane *= c == FastCase::cube || a > 0 ? axes[a].size : 1;
        tiled *= t.tiles[a] * t.tile[a];
    }
    return plane * kFastLeastFill >= tiled;
}

bool take_fast(KernelChoice& k, const Axes& axes, uint64_t planes) {
    const FastCase fast = fast_case(axes, k.half);
    if (fast == FastCase::none) return false;
    const FastTiling tiling = fast_tiling(axes, fast);
    if (!fills_tiles(axes, tiling, fast)) return false;
    const bool cube = fast == FastCase::cube;
    k.variant.layout = cube ? Layout::cube : fast == FastCase::narrow ? Layout::narrow : Layout::planar;
    k.variant.window = uint32_t(axes[1].window);
    k.variant.stride = uint32_t(axes[1].stride);
    set_planes(k, axes, planes, !cube);
    k.geometry = fast_geometry_words(axes, fast, tiling, k.x_plane, k.dy_plane);
    k.tiles_per_plane = uint64_t(1) << (tiling.tiles_log2[0] + tiling.tiles_log2[1] + tiling.tiles_log2[2]);
    return true;
}

// An axis of one coordinate and one window that reaches it: a single tap, the same pooling as no window at all.
bool single_tap(const AxisGeometry& a) {
    return a.size == 1 && a.out == 1 && a.pad % a.dilation == 0 && a.pad / a.dilation < a.window;
}

// The axes with the single-tap ones taken out and the others moved inwards, in order (the outer axes become
// untouched ones of one coordinate): the same element and window indices and the same tap order, but every family
// sees the axes that are pooled. An X of 47 x 1 pooled by 3 x 3 windows padded by 1 becomes 1 x 47 pooled by windows
// of 1 x 3: a two-pass gather run of 4 elements is one segment, not four rows of one element; a 3-D k2 s1 pooling
// of a depth of one is 2-D pooling, for the 2-D fast kernel.
Axes without_single_taps(const Axes& axes) {
    const AxisGeometry untouched{1, 1, 1, 1, 0, 1};
    Axes moved{untouched, untouched, untouched};
    size_t next = moved.size();
    for (size_t a = axes.size(); a-- > 0;)
        if (!single_tap(axes[a])) moved[--next] = axes[a];
    return moved;
}

// The two-pass choose's windows per thread along the rows: CHOOSE_ROWS (the variant maxpool_grad_twopass_rows_*)
// where a group of them reads each shared row of taps once at less cost than each window reading its own rows.
// Windows o and o + step (D / gcd(T, D)) are the nearest to share rows, where step * T is within o's span. Every
// tap row of the group lies on one residue mod gcd(T, D) (row o * T - S + k * D), and the thread walks the rows of
// that residue from its first tap row to its last: they must all be taken (k2 s2 d2's odd rows are skipped by the
// walk). A row's search costs its column taps plus about two taps' work for checking and offering it to the
// group's windows; the group is taken where its rows cost no more than the windows' own taps (an earlier bound of
// 3/4 left k4 s2 and k3 s3 d3 one window a thread: grouped they took 0.89-0.92x the time on an H100).
uint64_t rows_per_choose_thread(const Axes& axes) {
    const AxisGeometry &h = axes[1], &w = axes[2];
    const uint64_t group = kernel::CHOOSE_ROWS, row_step = h.dilation / h.step();  // gcd(T, D)
    if (h.out < 2 || h.step() >= group || h.step() * h.stride > h.span_m1()) return 1;
    std::vector<bool> rows(((group - 1) * h.stride + h.span_m1()) / row_step + 1);
    for (uint64_t j = 0; j < group; ++j)
        for (uint64_t k = 0; k < h.window; ++k) rows[(j * h.stride + k * h.dilation) / row_step] = true;
    // A walked row that no window takes (k7 s3 d2: 2 of 22) costs its checks for nothing (k3 s3 d3 groups walking
    // 10 untaken rows of 16 ran 4-8% slower than a thread per window on an H100).
    if (std::find(rows.begin(), rows.end(), false) != rows.end()) return 1;
    const uint64_t grouped = rows.size() * (w.window + 2), one_by_one = group * h.window * w.window;
    return grouped <= one_by_one ? group : 1;
}

// The two-pass gather's elements per thread: TWOPASS_LONG_RUN for fp16 where the columns' windows overlap and have 3
// taps or more (a row segment's column windows, walked once per segment, then serve twice the elements: 0.88-1.01x
// the time on an H100), else TWOPASS_RUN (fp32 runs of 8 took 0.98-1.82x, fp16 windows of 2 columns 1.04x; where
// each element has one column window at most, long runs only halve the threads).
bool gathers_long_runs(const Axes& axes, bool half) {
    const AxisGeometry& w = axes[2];
    return half && w.window >= 3 && w.span_m1() + 1 > w.stride;
}

uint64_t gather_run(const Variant& v) { return v.long_runs ? kernel::TWOPASS_LONG_RUN : kernel::TWOPASS_RUN; }

// The two-pass kernel's second pass by windows (the _scatter variants: a thread per window sums and stores its chosen
// element where it is the first window to choose it, over a fill of +0) instead of by elements, where a plane has more
// X elements a window than a gather thread makes (TWOPASS_RUN): both passes walk the windows covering an element and
// are bound by those walks' latency, so the thread count decides, and there the scatter has more threads. H200,
// fill39 (the fill's stores coalesced): 23 two-pass cases of 3.4 to 9.9 elements a window, the scatter 0.63-0.95x the
// gather's time on 18 of the 19 of more than 4 (the other, 2-D k5 s1 d2 on planes of 7x7, 5.4: 1.08x); at 4 and
// below 0.79-1.14x (docs/PERFORMANCE.md). Before the fill was coalesced the line was 10 (maxpool33).
bool scatters(const KernelChoice& k) { return k.x_plane > kernel::TWOPASS_RUN * k.dy_plane; }

// The scatter's choose by rows only where its threads, a CHOOSE_ROWS windows each, number kRowsLeastThreads or more
// (about two waves of an H200's 132 SMs): each thread's walk is a chain of dependent loads, and fewer threads than
// that leave the GPU idle. H200, the scatter: 160K-250K threads by rows against one window a thread, 3-D k4 s2
// fp32 71.1 -> 61.0 us, k7 s4 fp32 564.4 -> 443.9, k5 s3 fp32 387.4 -> 321.0, fp16 200.4 -> 179.1 (the gather's
// cases were not measured: they keep it).
constexpr uint64_t kRowsLeastThreads = uint64_t(1) << 19;

bool take_twopass(KernelChoice& k, const Axes& pooled, uint64_t planes) {
    k.geometry = geometry_words(pooled, k.x_plane, k.dy_plane);
    k.variant.scatter = scatters(k);
    uint64_t rows = rows_per_choose_thread(pooled);
    if (k.variant.scatter && planes * k.dy_plane / rows < kRowsLeastThreads) rows = 1;
    if (rows > 1) k.variant.window = uint32_t(rows);
    k.variant.long_runs = !k.variant.scatter && gathers_long_runs(pooled, k.half);
    k.choose_groups = k.dy_plane / pooled[1].out * ceil_div(pooled[1].out, rows);
    append_cover_tables(k.geometry, pooled);
    return true;
}

// A family: its name's prefix, where it fits, its work items (of a chunk of n planes) and how many a workgroup
// of kWorkgroup threads takes (kWorkgroup: a thread per item), its compiled variants and the APIs that run it.
struct FamilyRecord {
    Family family;
    std::string_view prefix;
    bool (*take)(KernelChoice& k, const Axes& axes, uint64_t planes);
    uint64_t (*items)(const KernelChoice& k, uint64_t n);
    uint64_t items_per_group;
    std::vector<Variant> (*variants)(DType dtype);
    ApiSet apis;
};

std::vector<Variant> one_variant(Family family, DType dtype) { return {{family, dtype}}; }

// The selection kernel's work items: a uint4 of dX each.
uint64_t select_units(const KernelChoice& k, uint64_t n) {
    return ceil_div(n * k.x_plane * dtype_size(k.variant.dtype),
                    uint64_t(kernels::maxpool_grad_select::SELECT_UNIT_BYTES));
}

// Windows of 2 and 3, strides 1-3, 2-D on wide or narrow tiles, and 3-D for windows of 2 at stride 1; fp32 windows
// that do not overlap always take the cell kernel.
std::vector<Variant> fast_variants(DType dtype) {
    std::vector<Variant> variants;
    for (uint32_t window : {2, 3})
        for (uint32_t stride : {1, 2, 3})
            for (Layout layout : {Layout::planar, Layout::narrow})
                if (dtype != DType::f32 || window > stride)
                    variants.push_back({Family::fast, dtype, layout, window, stride});
    variants.push_back({Family::fast, dtype, Layout::cube, 2, 1});
    return variants;
}

// Where the kernel shares work through groupshared arrays, which vkd3d-compiler 1.17 cannot compile for Direct3D 12
// at any index (kernels/README.md): on D3D12 the next family that fits runs instead.
constexpr ApiSet kVulkanOnly{GpuApi::vulkan};

// The chooser's order: the most specialised family that fits wins (the walk kernels before the fast kernel, which
// also takes their geometries; fp16 cells that split a word, where the fast kernel does not take them, by the word;
// the two-pass kernel takes every geometry).
const FamilyRecord kFamilies[] = {
    {Family::select, "maxpool_grad_select", take_select,  // a thread per uint4 of dX
     select_units, kWorkgroup, [](DType t) { return one_variant(Family::select, t); }, kEveryApi},
    {Family::k2s2, "maxpool_grad_k2s2", take_k2s2,
     [](const KernelChoice& k, uint64_t n) { return n * k.dy_plane / k.windows_per_unit; }, kWorkgroup,
     [](DType t) {
         return std::vector<Variant>{{Family::k2s2, t, Layout::planar}, {Family::k2s2, t, Layout::cube}};
     },
     kEveryApi},
    {Family::cellrows, "maxpool_grad_cellrows", take_cellrows, cellrows_groups, 1,  // a workgroup whole rows of windows
     [](DType t) { return t == DType::f32 ? one_variant(Family::cellrows, t) : std::vector<Variant>{}; }, kVulkanOnly},
    {Family::cells, "maxpool_grad_cells", take_cells, [](const KernelChoice& k, uint64_t n) { return n * k.dy_plane; },
     kWorkgroup, [](DType t) { return one_variant(Family::cells, t); }, kEveryApi},
    {Family::walk3d, "maxpool_grad_walk3d_k3s2p1", take_walk3d,  // a tile of windows walks through the depth
     [](const KernelChoice& k, uint64_t n) { return n * k.tiles_per_plane; }, 1,
     [](DType t) { return one_variant(Family::walk3d, t); }, kVulkanOnly},
    {Family::walk3d_k2s1, "maxpool_grad_walk3d_k2s1", take_walk3d_k2,  // a run of a slice walks through the depth
     [](const KernelChoice& k, uint64_t n) { return n * k.tiles_per_plane; }, 1,
     [](DType t) { return one_variant(Family::walk3d_k2s1, t); }, kVulkanOnly},
    {Family::walk2d, "maxpool_grad_walk2d", take_walk2d,  // groups of columns walk down a segment of rows
     [](const KernelChoice& k, uint64_t n) {
         return ceil_div(n * k.tiles_per_plane, k.group_columns) * k.geometry[kernel::WALK2D_WORD_SEGMENTS];
     },
     1,
     [](DType t) {
         return std::vector<Variant>{{Family::walk2d, t, Layout::planar, 3, 1},
                                     {Family::walk2d, t, Layout::planar, 3, 2}};
     },
     kVulkanOnly},
    {Family::fast, "maxpool_grad_fast", take_fast,
     [](const KernelChoice& k, uint64_t n) { return n * k.tiles_per_plane; }, kernel::FAST_TILES_PER_GROUP,
     fast_variants, kVulkanOnly},
    {Family::cellwords, "maxpool_grad_cellwords", take_cellwords,  // a thread per window, as cells
     [](const KernelChoice& k, uint64_t n) { return n * k.dy_plane; }, kWorkgroup,
     [](DType t) {
         if (t != DType::f16) return std::vector<Variant>{};
         Variant shared{Family::cellwords, t};
         shared.shared_words = true;
         return std::vector<Variant>{{Family::cellwords, t}, shared};
     },
     kVulkanOnly},
    {Family::bands, "maxpool_grad_bands_s1", take_bands,  // a workgroup's planes or band of rows
     [](const KernelChoice& k, uint64_t n) { return ceil_div(n, k.band.planes) * k.band.bands; }, 1,
     [](DType t) { return t == DType::f16 ? one_variant(Family::bands, t) : std::vector<Variant>{}; }, kVulkanOnly},
    {Family::twopass, "maxpool_grad_twopass", take_twopass,  // its gather: a thread per run of elements
     [](const KernelChoice& k, uint64_t n) { return ceil_div<uint64_t>(n * k.x_plane, gather_run(k.variant)); },
     kWorkgroup,
     [](DType t) {
         std::vector<Variant> variants;
         for (bool long_runs : {false, true})  // long runs: fp16 only
             for (uint32_t rows : {0u, uint32_t(kernel::CHOOSE_ROWS)})
                 if (!long_runs || t == DType::f16)
                     variants.push_back({Family::twopass, t, Layout::planar, rows, 0, long_runs});
         for (uint32_t rows : {0u, uint32_t(kernel::CHOOSE_ROWS)})
             variants.push_back({Family::twopass, t, Layout::planar, rows, 0, false, true});
         return variants;
     },
     kEveryApi},
};

const FamilyRecord& record_of(Family family) {
    for (const FamilyRecord& r : kFamilies)
        if (r.family == family) return r;
    throw std::logic_error("maxpool-grad: a family without a record");
}

// The first family that fits and that `api` runs, for the pooling with its single-tap axes taken out: the same
// pooling with fewer pooled axes (a 3-D k2 s1 pooling of a depth of one is 2-D pooling, which the 2-D fast kernel
// takes; its cube tiles would leave half their depth idle).
KernelChoice choose_kernel(const Axes& given, uint64_t planes, DType dtype, const DeviceLimits& limits) {
    const GpuApi api = limits.api;
    const Axes axes = without_single_taps(given);
    for (const FamilyRecord& family : kFamilies) {
        if (!family.apis.has(api)) continue;
        KernelChoice k;
        k.variant = {family.family, dtype};
        k.half = dtype == DType::f16;
        k.max_binding_bytes = limits.max_binding_bytes;
        set_planes(k, axes, planes, false);
        if (family.take(k, axes, planes)) return k;
    }
    throw RuntimeFailure(
        fmt::format("maxpool-grad on the GPU: no kernel for this pooling on {}; run it with --cpu", gpu_api_name(api)));
}

// The families of kernels/maxpool_grad.hlsl, which read the geometry's header from a uniform buffer.
bool binds_header(Family family) {
    return family == Family::twopass || family == Family::cells || family == Family::cellwords ||
           family == Family::cellrows;
}

// Threads that run `items` work items of a family.
uint64_t thread_count(const FamilyRecord& family, uint64_t items) {
    return ceil_div(items, family.items_per_group) * kWorkgroup;
}

// Planes per chunk: all when X and dY fit one binding each, else as many as fit with the alignment slack.
uint64_t planes_per_chunk(const KernelChoice& k, uint64_t element, const DeviceLimits& limits) {
    // Bytes per dY element in one binding: dY's, or the two-pass kernel's choices where larger.
    const uint64_t dy_element = k.variant.family == Family::twopass ? std::max(element, kChosenBytes) : element;
    const uint64_t x_bytes = k.planes * k.x_plane * element, dy_bytes = k.planes * k.dy_plane * dy_element;
    if (padded_bytes(x_bytes) <= limits.max_binding_bytes && padded_bytes(dy_bytes) <= limits.max_binding_bytes)
        return k.planes;
    const uint64_t slack = limits.offset_alignment + 16;
    const uint64_t room = limits.max_binding_bytes > slack ? limits.max_binding_bytes - slack : 0;
    const bool pairs = k.half && k.x_plane % 2 == 1;  // chunks start at even elements
    uint64_t per_chunk = std::min(room / (k.x_plane * element), room / (k.dy_plane * dy_element));
    if (pairs) per_chunk &= ~uint64_t(1);
    if (per_chunk == 0)
        throw RuntimeFailure(
            fmt::format("maxpool-grad on the GPU: {} of X ({} bytes) or dY ({} bytes) exceed the device's limit of {} "
                        "bytes per storage binding; run it with --cpu",
                        pairs ? "two planes" : "one plane", (pairs ? 2 : 1) * k.x_plane * element,
                        (pairs ? 2 : 1) * k.dy_plane * dy_element, limits.max_binding_bytes));
    return per_chunk;
}

// Dispatches running `total` work items of `family` in batches of at most kMaxTilesPerBatch items (or that many
// workgroups' threads for the families of a thread per item); only the first waits for the steps before it.
void append_batches(GpuProgram& program, const FamilyRecord& family, const std::vector<BufferWindow>& bindings,
                    kernel::Params params, uint64_t total, const DeviceLimits& limits, bool barrier_before) {
    const bool per_thread = family.items_per_group == kWorkgroup;
    const uint64_t batch_size = per_thread ? kMaxTilesPerBatch * kWorkgroup : kMaxTilesPerBatch;
    for (uint64_t batch = 0; batch < total; batch += batch_size) {
        const uint64_t count = std::min(batch_size, total - batch);
        params.first = uint32_t(batch);
        params.count = uint32_t(count);
        append_dispatches(program, bindings, params, 0, thread_count(family, count), limits,
                          barrier_before && batch == 0);
    }
}

// The dispatches of planes [first, end). The two-pass kernel's choices of one chunk are gathered before the next
// chunk's overwrite them: each phase waits for the one before.
void append_chunk(GpuProgram& program, const KernelChoice& k, uint64_t first, uint64_t end, uint64_t element,
                  const DeviceLimits& limits) {
    const FamilyRecord& family = record_of(k.variant.family);
    const uint64_t x_bytes = k.planes * k.x_plane * element, dy_bytes = k.planes * k.dy_plane * element;
    const BufferWindow x = plane_window(0, first, end, k.x_plane * element, x_bytes, limits);
    const BufferWindow dy = plane_window(1, first, end, k.dy_plane * element, dy_bytes, limits);
    const BufferWindow dx{2, x.offset, x.range};
    const BufferWindow geometry{3, 0, padded_bytes(4 * k.geometry.size())};
    const BufferWindow header{3, 0, 16 * kernel::GEOMETRY_HEADER_UINT4S};  // kernels/maxpool_grad.hlsl's uniform
    kernel::Params params{};
    params.planes = uint32_t(end - first);
    params.x_origin = uint32_t(first * k.x_plane - x.offset / element);
    params.dy_origin = uint32_t(first * k.dy_plane - dy.offset / element);
    // k2s2 reads whole vectors: its rows are whole units, so plane starts and aligned offsets are too.
    if (k.variant.family == Family::k2s2 &&
        (params.x_origin % (2 * k.windows_per_unit) != 0 || params.dy_origin % k.windows_per_unit != 0))
        throw std::logic_error("maxpool-grad: a k2s2 chunk origin off its vectors");
    if (k.variant.family == Family::select)  // X unread: not bound (kernels/maxpool_grad_select.hlsl)
        return append_batches(program, family, {dy, dx, geometry}, params, family.items(k, end - first), limits, false);
    if (k.variant.family != Family::twopass)
        return append_batches(program, family, {x, dy, dx, binds_header(k.variant.family) ? header : geometry}, params,
                              family.items(k, end - first), limits, false);
    const std::vector<BufferWindow> bindings{x, dy, dx, header, {4, 0, program.scratch_bytes}, geometry};
    params.phase = kernel::PHASE_CHOOSE;
    append_batches(program, family, bindings, params, (end - first) * k.choose_groups, limits, first > 0);
    // The scatter's fill: dX's words of the chunk (an even first element for fp16) set to +0, after the choose (H200,
    // fill39: 1.01-1.12x faster than before it on 13 sweep cases).
    if (k.variant.scatter) {
        const uint64_t words = ceil_div((end - first) * k.x_plane * element, uint64_t(4));
        params.phase = kernel::PHASE_FILL;
        const uint64_t group_words = kernel::FILL_WORDS * kernel::FILL_LANES;  // the fill's units, whole groups
        append_batches(program, family, bindings, params, ceil_div(words, group_words) * kernel::FILL_LANES, limits,
                       false);
    }
    params.phase = k.variant.scatter ? kernel::PHASE_SCATTER : kernel::PHASE_GATHER;
    const uint64_t items = k.variant.scatter ? (end - first) * k.dy_plane : family.items(k, end - first);
    append_batches(program, family, bindings, params, items, limits, true);
}

}  // namespace

namespace maxpool_gpu {

std::string kernel_name(const Variant& v) {
    const std::string_view prefix = record_of(v.family).prefix;
    const std::string dtype = dtype_suffix(v.dtype);
    switch (v.family) {
        case Family::k2s2: return fmt::format("{}_{}d_{}", prefix, v.layout == Layout::cube ? 3 : 2, dtype);
        case Family::walk2d: return fmt::format("{}_k3s{}p1_{}", prefix, v.stride, dtype);
        case Family::fast: {
            const std::string_view layout = v.layout == Layout::cube     ? "3d"
                                            : v.layout == Layout::narrow ? "_narrow"
                                                                         : "";
            return fmt::format("{}{}_k{}s{}_{}", prefix, layout, v.window, v.stride, dtype);
        }
        case Family::twopass:
            return fmt::format("{}{}{}{}_{}", prefix, v.window > 1 ? "_rows" : "", v.long_runs ? "_long" : "",
                               v.scatter ? "_scatter" : "", dtype);
        case Family::cellwords: return fmt::format("{}{}_{}", prefix, v.shared_words ? "_shared" : "", dtype);
        case Family::select:
        case Family::cellrows:
        case Family::cells:
        case Family::walk3d:
        case Family::walk3d_k2s1:
        case Family::bands: return fmt::format("{}_{}", prefix, dtype);
    }
    throw std::logic_error("maxpool-grad: unknown family");
}

std::vector<Variant> compiled_variants() {
    std::vector<Variant> all;
    for (const FamilyRecord& family : kFamilies)
        for (DType dtype : {DType::f32, DType::f16}) {
            const std::vector<Variant> variants = family.variants(dtype);
            all.insert(all.end(), variants.begin(), variants.end());
        }
    return all;
}

ApiSet family_apis(Family family) { return record_of(family).apis; }

}  // namespace maxpool_gpu

GpuProgram build_maxpool_grad_program(const MaxPoolGradPlan& plan, const DeviceLimits& limits) {
    const KernelChoice k = choose_kernel(checked_axes(plan), plan.planes, plan.dtype, limits);
    GpuProgram program;
    program.kernel = maxpool_gpu::kernel_name(k.variant);
    if (find_kernel(program.kernel).workgroup_size != kWorkgroup)
        throw std::logic_error("maxpool-grad: the kernels are compiled for 256 threads per group");
    const bool twopass = k.variant.family == Family::twopass;
    program.binding_count = twopass ? 6 : k.variant.family == Family::select ? 3 : 4;
    if (binds_header(k.variant.family)) {
        program.binding_types.assign(program.binding_count, BindingType::storage);
        program.binding_types[3] = BindingType::uniform;
    }
    program.push_bytes = push_bytes<kernel::Params>();
    program.constants.push_back(k.geometry);
    const uint64_t element = dtype_size(plan.dtype);
    const uint64_t per_chunk = planes_per_chunk(k, element, limits);
    if (twopass) program.scratch_bytes = padded_bytes(per_chunk * k.dy_plane * kChosenBytes);
    for (uint64_t first = 0; first < k.planes; first += per_chunk)
        append_chunk(program, k, first, std::min(k.planes, first + per_chunk), element, limits);
    return program;
}

}  // namespace dmlgrad
