#pragma once
// The host-side geometry of resample grad on the GPU (kept apart from the dispatch so tests can check it alone):
// the kernel's 4-axis view of dX, its tap tables, the bound on dY below which the kernel recomputes exactly, the
// chunks that keep each pass within one binding, and the regular case that the block kernel takes.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/ops/chunk.h"
#include "ops/resample_grad.h"

namespace dmlgrad::resample_gpu {

// One axis of the view. An identity axis maps dX index i to dY index i with weight 1 (no table); others keep
// the plan's taps.
struct Axis {
    uint64_t dx = 1;
    uint64_t dy = 1;
    bool identity = true;
    const AxisTaps* taps = nullptr;  // the plan's, when !identity
};
using View = std::array<Axis, 4>;

// The plan's axes with adjacent identity axes merged (N and C of an image batch become one), identity axes of size
// 1 dropped (a trailing one would make rows of one element) and padded in front to 4 axes of size 1. The same element
// order as the plan's shape. Throws std::logic_error if a tap list is not contiguous in dY (the kernel relies on it;
// the plan's monotonic coordinates guarantee it).
View make_view(const ResampleGradPlan& plan);

// The kernel's `tables` buffer in the layout of kernels/interface/resample_grad.h (TABLE_*): 1.0f, then per table
// axis its (first dY index, tap start) pairs with a sentinel, then (linear mode) its weights. `offsets` gets the
// word offset of each axis' pairs, or IDENTITY_AXIS.
std::vector<uint32_t> tap_tables(const View& view, InterpolationMode mode, std::array<uint32_t, 4>& offsets);

// Tables whose axis 3 has a table (the last table axis: its pairs, or linear its weights, end the tables before the
// padding): the walk's phased copy of axis 3 (interface/resample_grad.h's PHASED_*) inserted after them, `phases` the
// walk's elements a thread; nearest, the first and count arrays only.
// walk's phased copy of axis 3 (interface/resample_grad.h's PHASED_*) inserted after them, `phases` the walk's
// elements a thread.
void insert_phased_columns(const View& view, InterpolationMode mode, uint32_t phases, std::vector<uint32_t>& tables);
// The words insert_phased_columns adds (0 where axis 3 is an identity).
uint64_t phased_words(const View& view, InterpolationMode mode, uint32_t phases);

// Whether every dX row of the view reads the one dY row of its own index: view axes 0-2 identities (the plan
// resamples its innermost axis alone).
bool rows_read_their_own_row(const View& view);

// The lines kernel's row table (interface/resample_grad.h's Params::row_starts), where each dX row of the view reads
// one dY row at most (dy_rows_of_a_row <= 1): per dX row the first dY element of its dY row or NO_DY_ROW, then a
// NO_DY_ROW for the row after the last (a thread past dX's end steps there).
std::vector<uint32_t> line_row_starts(const View& view);

// The lines kernel's column words (interface/resample_grad.h's LINE_*: first dY index and tap count of each column
// of view axis 3), phased for `phases` elements a thread. Throws std::logic_error where axis 3 is an identity (the
// kernel needs no table), a column has more than LINE_MOST_COUNT taps or a dY row is too long for the words.
std::vector<uint32_t> line_columns(const View& view, uint32_t phases);

// Whether view axis 3 has a table whose taps are the dY indices in order, each once (nearest taps are: every dY
// index samples one dX index, and the sampling is monotonic), so that column i's taps run from its first dY index
// to the next column's.
bool taps_cover_dy_rows_in_order(const View& view);

// The lines' bounds (LINE_TAPS 0, interface/resample_grad.h): each column's first dY index and, past the last
// column, the dY row's length, phased as line_columns for `phases` elements a thread (dx + 1 words, rounded up to
// `phases` arrays). Throws std::logic_error where taps_cover_dy_rows_in_order does not hold.
std::vector<uint32_t> line_bounds(const View& view, uint32_t phases);

// The kernel's tiny_limit: a dX element that reads a dY value whose magnitude key (its bits without the sign,
// minus 1, so that zeros come last) is below it is recomputed with exact integer arithmetic. See the kernel.
uint32_t tiny_limit(const View& view, InterpolationMode mode, DType type);

// Where every dX element sums a fixed block of dY: view axes 0 and 1 identities and axes 2 and 3 each an identity
// or "dX index i takes dY indices [f i, f i + f), weight 1" (nearest with integer factors, such as PyTorch's
// nearest 2x). dX row R of the view (axes 0-2 flattened) then sums dY rows [rows R, rows R + rows) and column c
// dY columns [columns c, columns c + columns) (kernels/resample_grad_block.hlsl).
struct BlockFactors {
    uint32_t rows = 1;
    uint32_t columns = 1;
};

// The view's block factors when it has them, `columns` at most max_columns; else none.
std::optional<BlockFactors> block_factors(const View& view, uint32_t max_columns);

// Whether every index of every table axis has exactly one tap (linear 0.5x, for one): the kernel's ONE_TAP
// strips, which know the counts.
bool one_tap(const View& view);

// The most taps any index of view axes 2 and 3 has (an identity axis: 1): linear f32 plans with 2 to
// MAX_FIXED_TAPS take the kernel's fixed-tap variants (TAPS), whose steps have no test of a list's length.
uint64_t inner_taps(const View& view);

// The most taps any index of view axes 0 and 1 has (an identity axis: 1). Where it is more than 1, the strips make
// the rows of those indices with their general code, element by element; nearest plans take the walk instead.
uint64_t outer_taps(const View& view);

// The most taps any index of view axis 3 has (an identity axis: 1): how far apart the dY values of a row's
// neighbouring elements lie.
uint64_t row_taps(const View& view);

// The most taps any index of view axis 3 but its first and last has (an identity axis: 1; none between: 0).
uint64_t inner_column_taps(const View& view);

// The most dY rows a dX row of the view reads: the product of the most taps of view axes 0, 1 and 2.
uint64_t dy_rows_of_a_row(const View& view);

using dmlgrad::Chunk;  // what chunks() below returns (gpu/ops/chunk.h)

// dX cut into chunks of at most `max_elements` dX elements that read a dY range of at most `max_elements`:
// boxes (outer indices fixed, a range along one axis, inner axes whole). Throws RuntimeFailure when a single dX
// element already reads a longer dY range.
std::vector<Chunk> chunks(const View& view, uint64_t max_elements);

}  // namespace dmlgrad::resample_gpu
