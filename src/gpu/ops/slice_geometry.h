#pragma once
// The host-side geometry of slice grad on the GPU (kept apart from the dispatch so tests can check it alone).
#include <cstdint>
#include <vector>

#include "gpu/ops/chunk.h"
#include "ops/slice_grad.h"

namespace dmlgrad::slice_gpu {

using dmlgrad::Chunk;  // what chunks() below returns (gpu/ops/chunk.h)

// Splits dX, seen through the plan's gather_axes, into chunks of at most `max_elements` each (at least 1), shaped as
// boxes (outer coordinates fixed, a range along one axis, inner axes whole), so that the dY span each one reads is no
// longer than the chunk.
std::vector<Chunk> chunks(const std::vector<SliceAxis>& axes, uint64_t max_elements);

// The walk kernel's levels (kernels/slice_grad_walk.hlsl): the innermost axis, then the outer axes grouped from the
// inside out into levels of at most `table_max` coordinates, each with a table (per coordinate, in the group's
// row-major order: the dY offset it contributes, or `not_reached`); an axis longer than table_max is a level of its
// own without one. Outermost first, as gather_axes; a group is a SliceAxis of its sizes' products (start 0,
// stride 1: only its dx and dy are meaningful, dy for the dY strides of the levels outside it).
struct WalkLevels {
    std::vector<SliceAxis> levels;
    std::vector<uint32_t> table_at;  // per level: its table's first entry in `tables`, or kNoTable
    std::vector<uint32_t> tables;
};
inline constexpr uint32_t kNoTable = UINT32_MAX;
WalkLevels walk_levels(const std::vector<SliceAxis>& axes, uint64_t table_max, uint32_t not_reached);

// The lines walk (kernels/slice_grad_lines.hlsli): how many innermost axes fold into one line, from 1 (none) while
// the line is shorter than `min_columns` and the folded one would be at most `max_columns` long.
size_t line_axes(const std::vector<SliceAxis>& axes, uint64_t min_columns, uint64_t max_columns);

// The axes with their `folded` innermost ones made one line (a SliceAxis of their sizes' products, start 0, stride
// 1), and the line's columns: per column, in the folded axes' row-major order, its dY element relative to the line's
// first, or `not_reached`.
struct Lines {
    std::vector<SliceAxis> axes;
    std::vector<uint32_t> columns;
};
Lines lines(const std::vector<SliceAxis>& axes, size_t folded, uint32_t not_reached);

// The axes with axis `a`, whose step is m = |stride| > 1, split in two: its periods of m coordinates (stepping by
// one period, either way) and the phase within a period, of which the slice reaches one (coordinate = period * m +
// phase). Exact where m divides the axis' size, or on the outermost axis, whose last period may then run past dX.
std::vector<SliceAxis> split_by_step(const std::vector<SliceAxis>& axes, size_t a);

// The axes with axis `a`, copied whole, split in two, both copied whole: its blocks of n coordinates and the
// coordinate within a block (coordinate = block * n + within). Exact where n divides the axis' size, or on the
// outermost axis, whose last block may then run past dX.
std::vector<SliceAxis> split_into_blocks(const std::vector<SliceAxis>& axes, size_t a, int64_t n);

// Per column c of a line (`columns` as lines() makes them), how many columns on from c the next reached one lies,
// counting on into the next line (lines at least `window` long), at most `window`: the `window` columns from c hold
// a reached one where c's gap is below `window`.
std::vector<uint32_t> column_gaps(const std::vector<uint32_t>& columns, uint32_t not_reached, uint32_t window);

// Per column c of a line (`columns` as lines() makes them), the `elems` words of columns c, c + 1, ... (on into the
// next line, lines being at least `elems` long) in ceil(elems / 4) uint4s (4 words each, `filler` past `elems`),
// uint4 g of column c at (g * elems + c % elems) * length + c / elems, length = ceil(columns / elems): a uint4 of dX
// reads its columns in whole uint4s, and a warp's uint4s of one line read neighbouring ones.
std::vector<uint32_t> column_windows(const std::vector<uint32_t>& columns, uint64_t elems, uint32_t filler);

// Per column c of a line of 8-bit elements (`columns` as lines() makes them, lines at least 16 long), the 16 columns
// c, c + 1, ... (on into the next line) as two uint4s, where in each line they touch the reached ones lie within 8
// dY elements: a byte code per column (in the 8 dY elements from its line's lowest reached one: (line << 6) |
// (word << 5) | (byte << 3); line 1 the next), then (each line's lowest reached dY element, relative to its first;
// the reached columns' mask | each line's highest minus lowest << 16 and << 24). Uint4 g of column c at
// (g * 16 + c % 16) * length + c / 16, length = ceil(columns / 16). Empty where some window's columns lie wider.
std::vector<uint32_t> column_words(const std::vector<uint32_t>& columns, uint32_t not_reached);

// `columns` as `phases` arrays of equal length, column c at (c % phases) * length + c / phases; `filler` pads.
std::vector<uint32_t> phased(const std::vector<uint32_t>& columns, uint64_t phases, uint32_t filler);

// A walk's step of `step` dX elements as one digit per level (outermost first, as `levels`): within the row, then
// the rows it carries, in the outer levels' mixed radix. The outermost digit is taken modulo its size.
std::vector<uint64_t> step_digits(const std::vector<SliceAxis>& levels, uint64_t step);

// The stretches of dX outside which the slice reaches nothing, as the `levels` outermost axes tell them (1 <= levels
// < the axes' count): per tuple of their reached coordinates, its elements of dX. Element ranges [begin, end) in
// dX's order, neighbours merged; empty where they would be more than `most` before merging (a run of the innermost
// of those axes stepping by +-1 counts once).
struct Stretch {
    uint64_t begin = 0, end = 0;
};
std::vector<Stretch> reached_stretches(const std::vector<SliceAxis>& axes, size_t levels, uint64_t most);

// The plan with its innermost gather axis, where copied whole, folded into wider elements of up to 8 bytes: each
// kernel is a bit copy by element size, so k neighbouring elements copied together are one element of k times the
// bytes (i8 rows of 2 taken whole at every 4th column are 16-bit elements at every 4th column, rows of 2 bytes
// become spans of 115 elements). With `runs`, also where that axis steps by +1 and k divides its size, its first
// reached coordinate and its dY length (i8 `[..., -4:]` of rows of 8: u32 `[..., 1:]` of rows of 2). Its shapes are
// the gather axes' sizes; unchanged where nothing folds.
SliceGradPlan with_wide_elements(const SliceGradPlan& plan, bool runs = false);

}  // namespace dmlgrad::slice_gpu
