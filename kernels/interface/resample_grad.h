// The interface of the resample grad kernels (see prelude.h): the gather over tap tables, kernels/resample_grad.hlsl
// (runs), resample_grad_strips_f32/_f16.hlsl (strips) and resample_grad_walk.hlsl (walks), over
// resample_grad_gather.hlsli (bindings: 0 dY, 1 dX (windows of them), 2 the tap tables below, made by
// src/gpu/ops/resample_geometry.h), and kernels/resample_grad_block.hlsl, nearest fp16 with integer factors (bindings:
// 0 dY, 1 dX, whole).
#ifndef DMLGRAD_RESAMPLE_GRAD_INTERFACE_H
#define DMLGRAD_RESAMPLE_GRAD_INTERFACE_H
#include "interface/prelude.h"

DMLGRAD_INTERFACE_BEGIN(resample_grad)

// The thread mappings. Strips (the STRIPS variants), where dX is one chunk: a thread makes STRIP_ROWS
// consecutive rows of one column (f32 rows shorter than RUN_ELEMENTS, or of any length where every index has one
// tap on every axis or, linear in planes of several rows, at most MAX_FIXED_TAPS on axes 2 and 3) or of one word
// (fp16 rows of an even length), the lanes of a warp consecutive columns or words. Else runs: fp16 a thread makes one
// 32-bit word of dX (two neighbours); f32 a run of RUN_ELEMENTS elements takes RUN_THREADS threads, each making the
// RUN_ELEMENTS / RUN_THREADS elements RUN_THREADS apart (so the lanes of a 32-wide warp load and store consecutive
// elements).
DMLGRAD_CONST uint RUN_THREADS_LOG2 = 5;
DMLGRAD_CONST uint RUN_THREADS = 1u << RUN_THREADS_LOG2;
DMLGRAD_CONST uint RUN_ELEMENTS = 4 * RUN_THREADS;
DMLGRAD_CONST uint STRIP_ROWS = 4;
// Walks (nearest and linear fp16 where dX is one chunk, kernels/resample_grad_walk.hlsl): a thread makes the
// consecutive dX elements of WALK_BYTES (one uint4: eight halves or four floats), stepping from one to the next (rows
// of any length; rows of at least its elements less one keep them in two rows, the kernel's fast walk).
DMLGRAD_CONST uint WALK_BYTES = 16;
// The nearest fp16 word walk of small dX (resample_grad_nearest_f16_walk_words_ahead): the steps (a dY row's column)
// of a pass, every step's loads before their adds (written out for 4 in kernels/resample_grad_walk.hlsl).
DMLGRAD_CONST uint AHEAD_STEPS = 4;
DMLGRAD_CONST uint WALK_WORD_ELEMENTS = 2;  // the word walks (linear fp16): one 32-bit word of two halves a thread

DMLGRAD_CONST uint MAX_FIXED_TAPS = 4;  // linear f32 strips: the fixed-tap variants (TAPS 2 to this) the build makes

DMLGRAD_CONST uint IDENTITY_AXIS = 0xFFFFFFFFu;  // a table offset: the axis has no table (dX index i reads dY i)

// The tap tables (binding 2, made by src/gpu/ops/resample_geometry.cpp), 32-bit words. Word TABLE_ONE holds 1.0f
// (the weight of an identity axis' one tap). A table axis starts at its offset (Params::table0..3) with
// TABLE_PAIR_WORDS words per dX index i, and a sentinel pair at i = size: first the dY index of i's first tap (its
// taps are that index and the next ones, contiguous), at TABLE_START its tap start; i's tap count is the next
// pair's tap start minus its own. In linear mode the tap start is the word of i's first weight (float
// bits; the axis' weights follow its pairs); nearest mode has no weights. After the last axis, TABLE_PAD_WORDS zero
// words: the kernels may read that many weights past a list's end.
DMLGRAD_CONST uint TABLE_ONE = 0;
DMLGRAD_CONST uint TABLE_PAIR_WORDS = 2;
DMLGRAD_CONST uint TABLE_START = 1;
DMLGRAD_CONST uint TABLE_NEXT_START = TABLE_PAIR_WORDS + TABLE_START;  // the next pair's tap start, from a pair
DMLGRAD_CONST uint TABLE_PAD_WORDS = 4;
// The walk's phased copy of axis 3 (where it has a table), after axis 3's pairs (nearest) or weights (linear, where
// its sentinel's tap start points) and before the padding: arrays of n = P ceil(dx size 3 / P) words each (P the
// walk's elements a thread), a column's first dY index (array PHASED_FIRST), tap count, and (linear) tap start, then
// its first PHASED_WEIGHTS weights (array PHASED_WEIGHT + k: weight k, 0 past its count). Column i is entry (i mod P)
// n / P + i / P of each array: a thread's k-th element reads entry k of its own phase, so the lanes of a warp, P
// columns apart, read consecutive words (in the pairs each lane's lay P pairs apart, 16 cache lines a warp's load).
DMLGRAD_CONST uint PHASED_FIRST = 0;
DMLGRAD_CONST uint PHASED_COUNT = 1;
DMLGRAD_CONST uint PHASED_START = 2;
DMLGRAD_CONST uint PHASED_WEIGHT = 3;
DMLGRAD_CONST uint PHASED_WEIGHTS = 4;
// Lines (nearest where every dX row of the view reads the dY row of its own index, kernels/resample_grad_lines.hlsl):
// the columns of a row, one word each in the tables at Params::columns, phased as the walk's copy (column c at
// (c mod P) ceil(dx size 3 / P) + c / P, P the elements a thread makes: WALK_BYTES of dX, or
// WALK_WORD_ELEMENTS for the fp16 words), its first dY index in
// the low LINE_COUNT_SHIFT bits (0 where it has no tap) and its tap count, at most LINE_MOST_COUNT, above them. Where
// view axes 0-2 are not all identities (each dX row then reads one dY row or none), the word at Params::row_starts
// + r holds the first dY element of dX row r's dY row, or NO_DY_ROW; else row_starts is NO_ROW_TABLE (row r reads
// dY row r). The bounds (LINE_TAPS 0, rows whose columns no word holds) have at Params::columns each column's first
// dY index instead, and past the last column the dY row's length (dx size 3 + 1 words, phased the same way, in
// ceil((dx size 3 + 1) / P) words a phase): column c's taps run up to column c + 1's first.
DMLGRAD_CONST uint LINE_COUNT_SHIFT = 28;
DMLGRAD_CONST uint LINE_FIRST_MASK = (1u << LINE_COUNT_SHIFT) - 1u;
DMLGRAD_CONST uint LINE_MOST_TAPS = 4;  // the variants' LINE_TAPS: 1 to this
// A column's most taps (beyond the variant's LINE_TAPS: summed in a loop).
DMLGRAD_CONST uint LINE_MOST_COUNT = (1u << (32 - LINE_COUNT_SHIFT)) - 1u;
DMLGRAD_CONST uint NO_DY_ROW = 0xFFFFFFFFu;
// Planes (where the view's resampled axes make small planes, kernels/resample_grad_planes.hlsl): at
// Params::columns in the tables, a dX plane's elements P (word PLANE_DX) and a dY plane's Q (PLANE_DY), then from
// PLANE_RUN_STARTS P + 1 words, the word where element k's runs start (element k's runs end where k + 1's start),
// then the runs: a dY offset within the plane in the low PLANE_LENGTH_SHIFT bits and the run's length (consecutive
// dY elements, 1 to PLANE_MOST_RUN) above them, in the CPU's order.
DMLGRAD_CONST uint PLANE_DX = 0;
DMLGRAD_CONST uint PLANE_DY = 1;
DMLGRAD_CONST uint PLANE_RUN_STARTS = 2;
DMLGRAD_CONST uint PLANE_LENGTH_SHIFT = 28;
DMLGRAD_CONST uint PLANE_OFFSET_MASK = (1u << PLANE_LENGTH_SHIFT) - 1u;
DMLGRAD_CONST uint PLANE_MOST_RUN = (1u << (32 - PLANE_LENGTH_SHIFT)) - 1u;
// Linear planes list terms instead of runs: PLANE_TERM_WORDS words a term, its dY offset within the plane and then
// its weight product ((w0 * w1) * w2) * w3 (float bits, made on the host in the CPU's order), in the CPU's order.
DMLGRAD_CONST uint PLANE_TERM_WORDS = 2;
DMLGRAD_CONST uint PLANE_MOST_DX = 16;  // the planes the host gives this kernel (fits_planes)
DMLGRAD_CONST uint PLANE_MOST_DY = 64;
DMLGRAD_CONST uint NO_ROW_TABLE = 0xFFFFFFFFu;
DMLGRAD_CONST uint NO_SHIFT_8 = 0xFFu;  // in Params::shifts: the size is not a power of two

struct Params {
    uint base;        // first thread of this dispatch, relative to the chunk
    uint count;       // threads of the chunk
    uint elem_begin;  // dX elements the chunk owns; in fp16 the other half of a boundary word is kept
    uint elem_end;
    uint total;       // dX elements
    uint dx_origin;   // dX element at the start of the bound dX window (even in fp16)
    uint dy_origin;   // dY element at the start of the bound dY window
    uint tiny_limit;  // a dX element that reads a dY whose magnitude key is below this is recomputed exactly
    uint dx_size1;    // dX sizes of axes 1, 2, 3 of the view
    uint dx_size2;
    uint dx_size3;
    uint shifts;    // log2 of dx_size1..3 and (strips) strip_groups, 8 bits each from the lowest (NO_SHIFT_8: not a
                    // power of two)
    uint dy_size1;  // dY sizes of axes 1, 2, 3
    uint dy_size2;
    uint dy_size3;
    uint table0;  // word offset of each axis' pairs in the tables, or IDENTITY_AXIS
    uint table1;
    uint table2;
    uint table3;
    uint strip_groups;  // strips: groups of STRIP_ROWS rows per plane (dx_size2 / STRIP_ROWS rounded up)
    uint columns;       // lines: word offset of the row's column words (LINE_*) in the tables, or IDENTITY_AXIS
                        // where view axis 3 is an identity (column c: dY c, one tap); planes: of the plane's
                        // runs or terms (PLANE_*)
    uint row_starts;    // lines: word offset of each dX row's dY row start, or NO_ROW_TABLE
};

// ---- the block kernel ----

// A thread makes BLOCK_ELEMENTS consecutive dX elements (fp16: two 32-bit words); the build makes a variant per
// block width (the factor along the last axis), 1 to BLOCK_MAX_COLUMNS.
DMLGRAD_CONST uint BLOCK_ELEMENTS = 4;
DMLGRAD_CONST uint BLOCK_MAX_COLUMNS = 4;

struct BlockParams {
    uint base;         // first thread of this dispatch
    uint count;        // threads
    uint total;        // dX elements
    uint dx_width;     // dX elements per row (the view's last axis)
    uint width_shift;  // log2 of dx_width, or NO_SHIFT where it is not a power of two
    uint dy_width;     // dY elements per row: dx_width times the block's width
    uint rows;         // the block's height: dX row R sums dY rows [rows * R, rows * R + rows)
    uint aligned;      // BLOCK_ALIGNED where a thread's elements share a row and their dY words of a row start at
                       // an even word (a multiple of 4 for even widths): dx_width a multiple of BLOCK_ELEMENTS, or
                       // one row (the host's block_alignment);
                       // BLOCK_EVEN_ROWS where COLUMNS is 1 and dx_width even (the elements of a thread that share a
                       // row are two whole dY words of each dY row); else 0
};
DMLGRAD_CONST uint BLOCK_ALIGNED = 1;
DMLGRAD_CONST uint BLOCK_EVEN_ROWS = 2;

DMLGRAD_INTERFACE_END

#endif  // DMLGRAD_RESAMPLE_GRAD_INTERFACE_H
