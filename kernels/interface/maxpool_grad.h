// The interface of the max-pooling grad kernels (see prelude.h): kernels/maxpool_grad.hlsl (two-pass and cells),
// maxpool_grad_k2s2.hlsl, maxpool_grad_fast.hlsl, maxpool_grad_walk.hlsl, maxpool_grad_walk3d_k2.hlsl,
// maxpool_grad_walk2d.hlsl and maxpool_grad_bands.hlsl.
// Bindings: 0 X, 1 dY, 2 dX (windows over a chunk of planes), 3 the geometry (kernels/maxpool_grad.hlsl: its header,
// as a uniform buffer); the two-pass kernel's 4: the chosen elements (a scratch buffer of a uint per dY element of
// the chunk), 5: the geometry as a storage buffer (its cover tables).
#ifndef DMLGRAD_MAXPOOL_GRAD_INTERFACE_H
#define DMLGRAD_MAXPOOL_GRAD_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(maxpool_grad)

struct Params {
    uint base;       // first thread of this dispatch (append_dispatches)
    uint first;      // fast, walk: the batch's first tile; the others: its first unit
    uint count;      // tiles or units in the batch
    uint planes;     // planes in this chunk
    uint x_origin;   // element of the bound X window where the chunk's first plane starts (also dX's)
    uint dy_origin;  // element of the bound dY window where the chunk's first plane starts
    uint phase;      // the two-pass kernel: PHASE_CHOOSE, PHASE_GATHER, PHASE_FILL or PHASE_SCATTER
};

// ---- the two-pass and cell kernels (kernels/maxpool_grad.hlsl) ----

// The two-pass kernel's phases: a thread per window writes its chosen element, then a thread per dX unit sums the
// dY of the windows that chose it.
DMLGRAD_CONST uint PHASE_CHOOSE = 0;
DMLGRAD_CONST uint PHASE_GATHER = 1;
// The scatter variants (maxpool_grad_twopass[_rows]_scatter_*) instead of the gather: a thread per FILL_WORDS dX words
// sets them to +0, then a thread per window stores the sums of its chosen element (fp16: word) where it is the first
// window to choose it. The fill's threads go in groups of FILL_LANES, whose FILL_WORDS stores each write
// FILL_LANES consecutive words (128 bytes a warp's store).
DMLGRAD_CONST uint PHASE_FILL = 2;
DMLGRAD_CONST uint PHASE_SCATTER = 3;
DMLGRAD_CONST uint FILL_WORDS = 4;
DMLGRAD_CONST uint FILL_LANES = 32;
// Consecutive dX elements per thread of phase 2: the position's divisions paid once for them. Even, so that fp16
// runs are whole words.
DMLGRAD_CONST uint TWOPASS_RUN = 4;
// The same in the variants with long runs (maxpool_grad_twopass[_rows]_long_*, where the columns' windows overlap):
// each row segment's column windows are then walked once for twice the elements.
DMLGRAD_CONST uint TWOPASS_LONG_RUN = 8;
// Phase 1's windows per thread in the variant that chooses by rows (maxpool_grad_twopass_rows_*, where windows along
// the rows share rows of taps): that many consecutive windows of one column, each shared row searched once for them.
DMLGRAD_CONST uint CHOOSE_ROWS = 4;
// A window of only padding chooses none.
DMLGRAD_CONST uint CHOSEN_NONE = 0xFFFFFFFFu;

// The geometry buffer, of uints: an Axis per axis (depth, rows, columns), the PlaneSizes, then any cover tables.
struct Axis {
    uint size, out_size, window, stride;  // I, O, W, T
    uint pad, dilation, step, span_m1;    // S, D, D / gcd(T, D) (between the windows that reach one coordinate),
                                          // (W - 1) * D
    // Division magics (src/gpu/ops/division_magic.h) of I, O, T and D: kernels/maxpool_grad.hlsl's positions and
    // window taps by multiplications (its divisions took up to 10% of the two-pass time: docs/PERFORMANCE.md).
    uint size_magic, out_magic, stride_magic, dilation_magic;
};
struct PlaneSizes {
    uint x_plane;           // X (and dX) elements per plane
    uint dy_plane;          // dY elements per plane
    uint cover_tables;      // the two-pass kernel: word of the cover tables, or 0 where the kernel computes covers
    uint row_groups_magic;  // the division magic of ceil(O / CHOOSE_ROWS) of the rows (the choose by rows)
};
DMLGRAD_CONST uint AXIS_WORDS = 12;                    // words per Axis
DMLGRAD_CONST uint PLANE_SIZES_WORD = 3 * AXIS_WORDS;  // the word where the PlaneSizes start
DMLGRAD_CONST uint COVER_TABLES_WORD = PLANE_SIZES_WORD + 4;
// The header (the Axes and the PlaneSizes) in uint4s, which kernels/maxpool_grad.hlsl binds as a uniform buffer.
DMLGRAD_CONST uint GEOMETRY_HEADER_UINT4S = COVER_TABLES_WORD / 4;
// The cover tables, one per axis for the depth and rows from COVER_TABLES_WORD: per input coordinate, the windows
// that reach it, first | count << 16 (every count-th window from the first, D / gcd(T, D) apart); written where both
// axes have fewer than 2^16 windows and the tables stay small.
DMLGRAD_CONST uint COVER_COUNT_SHIFT = 16;

// ---- the k2s2 kernel (kernels/maxpool_grad_k2s2.hlsl: windows of 2, stride 2, no padding, tiling the input) ----

// A thread unit: this many bytes (one uint4) of each X row that a row of windows reads, i.e. K2S2_UNIT_BYTES / 2 /
// element size windows of the row (2 fp32, 4 fp16); the host takes the kernel only where a row of windows is whole
// units.
DMLGRAD_CONST uint K2S2_UNIT_BYTES = 16;
// The geometry buffer: one uint4.
struct K2s2Geometry {
    uint units_per_row;  // thread units per row of windows
    uint out_h;          // rows of windows per depth slice of windows (3-D)
    uint row_vectors;    // uint4s per X row
    uint slice_vectors;  // uint4s per X depth slice (3-D)
};

// ---- the fast kernel (square windows K of 2 or 3, strides T of 1-3; 2-D, or 3-D with cube windows) ----

// A tile is FAST_TILE_COLS columns by FAST_TILE_ROWS_* rows by FAST_TILE_DEPTH_3D depth slices of one plane (2-D:
// one slice, the depth folded into the planes); a workgroup runs FAST_TILES_PER_GROUP consecutive tiles. The sizes
// keep a thread's load slots at 21 or fewer (the fast kernel's mask of loaded slots has 32 bits).
DMLGRAD_CONST uint FAST_TILE_COLS_LOG2 = 6;
DMLGRAD_CONST uint FAST_TILE_COLS = 1u << FAST_TILE_COLS_LOG2;
// Narrow tiles, for 2-D pooling of rows of at most FAST_NARROW_TILE_COLS elements (which would leave most of a
// wide tile's lanes idle): half the columns and twice the rows.
DMLGRAD_CONST uint FAST_NARROW_TILE_COLS_LOG2 = FAST_TILE_COLS_LOG2 - 1;
DMLGRAD_CONST uint FAST_NARROW_TILE_COLS = 1u << FAST_NARROW_TILE_COLS_LOG2;
DMLGRAD_CONST uint FAST_TILE_ROWS_STRIDE_1 = 8;  // taller tiles share more of the windows' overlap but hold more
DMLGRAD_CONST uint FAST_TILE_ROWS_STRIDED = 16;  // values per thread; these were the fastest on an H100
// 3-D (windows of 2, stride 1): rows and depth slices of a tile, few so that its groupshared arrays stay within
// 32 KiB.
DMLGRAD_CONST uint FAST_TILE_ROWS_3D = 4;
DMLGRAD_CONST uint FAST_TILE_DEPTH_3D = 2;
DMLGRAD_CONST uint FAST_TILES_PER_GROUP = 8;

// ---- the walk kernel (kernels/maxpool_grad_walk.hlsl: 3-D cube windows of 3, stride 2, start padding 1) ----

// A workgroup owns the cells of WALK_TILE_ROWS x WALK_TILE_COLS windows of rows and columns (a thread per window,
// WALK_TILE_ROWS * WALK_TILE_COLS = the workgroup size) of one plane and walks through the depth; its geometry is
// the fast kernel's header below, without the tables (its grid: tiles of windows, not padded).
DMLGRAD_CONST uint WALK_TILE_ROWS = 8;
DMLGRAD_CONST uint WALK_TILE_COLS = 32;

// The geometry buffer: uints, a header of these words, then the tables. An axis table holds, per tile along the
// axis, (first window | count << 16) of the windows reaching the tile, then per input coordinate (first covering
// window | count << 16). 2-D: one depth slice, a depth table of one tile and one coordinate.
DMLGRAD_CONST uint FAST_WORD_IN_D = 0;
DMLGRAD_CONST uint FAST_WORD_IN_H = 1;
DMLGRAD_CONST uint FAST_WORD_IN_W = 2;
DMLGRAD_CONST uint FAST_WORD_OUT_D = 3;
DMLGRAD_CONST uint FAST_WORD_OUT_H = 4;
DMLGRAD_CONST uint FAST_WORD_OUT_W = 5;
DMLGRAD_CONST uint FAST_WORD_PAD_D = 6;
DMLGRAD_CONST uint FAST_WORD_PAD_H = 7;
DMLGRAD_CONST uint FAST_WORD_PAD_W = 8;
DMLGRAD_CONST uint FAST_WORD_GRID_COLS_LOG2 = 9;  // the grid of tiles per plane, padded to powers of two
DMLGRAD_CONST uint FAST_WORD_GRID_ROWS_LOG2 = 10;
DMLGRAD_CONST uint FAST_WORD_GRID_DEPTH_LOG2 = 11;
DMLGRAD_CONST uint FAST_WORD_GRID_COLS = 12;  // tiles per plane along each axis
DMLGRAD_CONST uint FAST_WORD_GRID_ROWS = 13;
DMLGRAD_CONST uint FAST_WORD_GRID_DEPTH = 14;
DMLGRAD_CONST uint FAST_WORD_X_PLANE = 15;  // elements per plane
DMLGRAD_CONST uint FAST_WORD_DY_PLANE = 16;
DMLGRAD_CONST uint FAST_WORD_DEPTH_TABLE = 17;  // word offset of each table
DMLGRAD_CONST uint FAST_WORD_ROW_TABLE = 18;
DMLGRAD_CONST uint FAST_WORD_COL_TABLE = 19;
DMLGRAD_CONST uint FAST_HEADER_WORDS = 20;

// ---- the 3-D k2 s1 walk (kernels/maxpool_grad_walk3d_k2.hlsl: cube windows of 2, stride 1, no start padding) ----

// A workgroup owns WALK3D_K2_CHUNK consecutive elements of a depth slice (a thread each; rows shorter than it)
// and walks through a segment of the depth; its geometry is the fast kernel's header (no tables), then these words.
DMLGRAD_CONST uint WALK3D_K2_CHUNK = 256;
DMLGRAD_CONST uint WALK3D_K2_WORD_CHUNKS = FAST_HEADER_WORDS;              // chunks per depth slice
DMLGRAD_CONST uint WALK3D_K2_WORD_SEGMENT_SLICES = FAST_HEADER_WORDS + 1;  // depth slices per segment
DMLGRAD_CONST uint WALK3D_K2_WORD_SEGMENTS = FAST_HEADER_WORDS + 2;        // segments per plane
DMLGRAD_CONST uint WALK3D_K2_HEADER_WORDS = FAST_HEADER_WORDS + 3;

// ---- the 2-D walk kernel (kernels/maxpool_grad_walk2d.hlsl: square windows of 3, start padding 1, stride 2 or 1) ----

// Thread columns a workgroup of 256 threads owns (stride 2: a column of windows each; stride 1:
// WALK2D_STRIDE_1_COLUMNS of X's columns each) in its chunk's planes laid end to end; its other threads are halos
// (stride 2: the last thread, stride 1: the first and the last).
DMLGRAD_CONST uint WALK2D_COLUMNS_STRIDE_2 = 255;
DMLGRAD_CONST uint WALK2D_COLUMNS_STRIDE_1 = 254;
// X columns a stride-1 thread owns (even: whole fp16 words), fewer for the last thread of a plane whose rows are not
// a multiple of it; of 1, 2, 4 and 8, 4 was the fastest on an H100 (fewer neighbours' keys and windows per column
// than 1 or 2; 8 took 1.35-1.85x as long).
DMLGRAD_CONST uint WALK2D_STRIDE_1_COLUMNS = 4;
// Its geometry: the fast kernel's header (no tables), then the rows (of cells for stride 2, of dX for stride 1)
// of a segment, and the segments per plane: each segment of rows is walked by groups of its own.
DMLGRAD_CONST uint WALK2D_WORD_SEGMENT_ROWS = FAST_HEADER_WORDS;
DMLGRAD_CONST uint WALK2D_WORD_SEGMENTS = FAST_HEADER_WORDS + 1;
DMLGRAD_CONST uint WALK2D_HEADER_WORDS = FAST_HEADER_WORDS + 2;

// ---- the stride-1 bands (kernels/maxpool_grad_bands.hlsl: 2-D windows of any size at stride 1, dilation 1) ----

// A workgroup owns BANDS_PLANES whole planes, or a band of BANDS_ROWS rows of one plane, in groupshared arrays of
// BANDS_SLOTS entries each: the keys of its rows (a band's with the rows its windows reach above and below), each
// row's best key per window column, its windows' choices and their dY.
// 512 (8 KiB of arrays): on an H100, 1024, 1536 and 2048 slots took 1.3x, 1.55x and 2.95x the time of 512 on
// fp16 k4 s1 10 x 21 planes (fewer workgroups resident an SM while each waits at its barriers).
DMLGRAD_CONST uint BANDS_SLOTS = 512;
// Its geometry: the fast kernel's header (no tables), then the windows' rows and columns, the planes a workgroup
// owns, the rows of a band and the bands per plane (1 where a workgroup owns whole planes).
DMLGRAD_CONST uint BANDS_WORD_WINDOW_H = FAST_HEADER_WORDS;
DMLGRAD_CONST uint BANDS_WORD_WINDOW_W = FAST_HEADER_WORDS + 1;
DMLGRAD_CONST uint BANDS_WORD_PLANES = FAST_HEADER_WORDS + 2;
DMLGRAD_CONST uint BANDS_WORD_ROWS = FAST_HEADER_WORDS + 3;
DMLGRAD_CONST uint BANDS_WORD_BANDS = FAST_HEADER_WORDS + 4;
DMLGRAD_CONST uint BANDS_HEADER_WORDS = FAST_HEADER_WORDS + 5;
// Window columns at most (a bit each in the gather's mask of the windows whose row best is its element).
DMLGRAD_CONST uint BANDS_MOST_WINDOW_W = 32;

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_MAXPOOL_GRAD_INTERFACE_H
