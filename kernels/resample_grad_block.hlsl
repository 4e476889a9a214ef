// Resample grad, nearest, fp16, where every dX element sums a fixed block of dY (docs/OPERATORS.md section 5): the
// view's outer axes untouched and integer factors on its last two (resample_geometry.h's block_factors, e.g.
// PyTorch's nearest 2x). With R the dX row over all outer axes (N, C and H flattened) and c the column:
//
//     dX[R, c] = sum over a < rows, then b < COLUMNS, of dY[rows * R + a, COLUMNS * c + b]
//
// added from +0 in that order, the CPU reference's (src/cpu/resample_grad.cpp; every weight is 1). The general
// gather (resample_grad.hlsl) gives the same bits; this one drops its tap tables and per-element set-up.
//
// A thread makes BLOCK_ELEMENTS consecutive dX halves (interface/resample_grad.h), reading dY as uint4s (where
// its elements share a row at even dY words, BlockParams::aligned, a thread's words of each dY row at once:
// run_aligned; one column a block on rows of an even length, its two words of each dY row: run_even_row). Every term
// is an fp16 value, a multiple of 2^-24 below 2^16, normal as a float32, and so is every sum of them (or 0):
// hardware adds give the CPU's bits, except a NaN's (the GPU's own) and -0 (positive_zero). The hardware
// converts the halves, but a device may flush subnormal ones: a thread that reads one makes its elements again
// with the halves converted by hand (rare); a NaN sum is made again on bits (exact_float.hlsli).
#include "common.hlsli"
#include "interface/resample_grad.h"
#include "resample_grad_common.hlsli"

#ifndef COLUMNS
#error "the build passes -DCOLUMNS=1 to BLOCK_MAX_COLUMNS, the block's width"
#endif

DMLGRAD_PARAMS(BlockParams);

DMLGRAD_SRV(uint4, dy_buf, 0);  // whole uint4s (the buffers are padded to them)
DMLGRAD_UAV(uint2, dx_buf, 1);  // BLOCK_ELEMENTS halves a thread

uint word_at(uint w) {
    uint4 v = dy_buf[w >> 2];
    uint c = w & 3u;
    return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w));
}

// One half (the low 16 bits of h) into ACC; `low` keeps the smallest magnitude minus 1 (a subnormal half: below
// 0x3FF; a zero wraps to the top).
#define ADD_HALF_TO(ACC, h)                          \
    {                                                \
        uint half_bits = (h) & 0xFFFFu;              \
        low = min(low, (half_bits & 0x7FFFu) - 1u);  \
        ACC = ACC + f16tof32(half_bits);             \
    }
#define ADD_HALF(h) ADD_HALF_TO(acc, h)
#define ADD_PAIR(ACC, word) ADD_HALF_TO(ACC, word) ADD_HALF_TO(ACC, (word) >> 16)

// acc += dY halves [start, start + COLUMNS), in order, from whole words. (Written out, not [unroll]ed: spirv-opt's
// unrolling drops NoContraction from the copies it makes.)
#define ADD_WORD(at)                    \
    {                                   \
        uint word = word_at(at);        \
        ADD_HALF(word) ADD_HALF(word >> 16) \
    }
#if COLUMNS == 2
#define ADD_SPAN(start) ADD_WORD((start) >> 1)
#elif COLUMNS == 4  // start is a multiple of 4 (dY rows are 4 dx_width long): its two words share one uint4
#define ADD_SPAN(start)                                                          \
    {                                                                            \
        uint4 v = dy_buf[(start) >> 3];                                          \
        bool upper = ((start) & 4u) != 0;                                        \
        uint low_word = upper ? v.z : v.x, high_word = upper ? v.w : v.y;        \
        ADD_HALF(low_word) ADD_HALF(low_word >> 16) ADD_HALF(high_word) ADD_HALF(high_word >> 16) \
    }
#elif COLUMNS == 1
#define ADD_SPAN(start) ADD_HALF(word_at((start) >> 1) >> (((start) & 1u) * 16u))
#elif COLUMNS == 3  // two words hold the three halves, from the first word's low or high half
#define ADD_SPAN(start)                                                          \
    {                                                                            \
        uint first = word_at((start) >> 1), second = word_at(((start) >> 1) + 1u); \
        bool odd = ((start) & 1u) != 0;                                          \
        uint aligned = odd ? (first >> 16) | (second << 16) : first;             \
        ADD_HALF(aligned) ADD_HALF(aligned >> 16) ADD_HALF(odd ? second >> 16 : second) \
    }
#else
#error "COLUMNS is 1 to BLOCK_MAX_COLUMNS (4)"
#endif

uint load_half(uint j) { return (word_at(j >> 1) >> ((j & 1u) * 16u)) & 0xFFFFu; }

// The sum of element e with every half converted by hand, or on bits if that sum is a NaN.
uint careful_sum(uint e) {
    uint row = div_by(e, pc.dx_width, pc.width_shift);
    uint start = pc.rows * row * pc.dy_width + COLUMNS * (e - row * pc.dx_width);
    precise float acc = 0.0f;
    [loop] for (uint a = 0; a < pc.rows; ++a)
        [loop] for (uint b = 0; b < COLUMNS; ++b)
            acc = acc + fast_half_to_float(load_half(start + a * pc.dy_width + b));
    if (!is_nan(asuint(acc))) return asuint(positive_zero(acc));
    float exact = 0.0f;  // soft_add(+0, -0) is +0
    [loop] for (uint a = 0; a < pc.rows; ++a)
        [loop] for (uint b = 0; b < COLUMNS; ++b)
            exact = soft_add(exact, asfloat(half_to_float_bits(load_half(start + a * pc.dy_width + b))));
    return asuint(exact);
}

// Element e + k's sum into SUM (0 past the tensor's end), then (row, col) steps to the next element.
#define ELEMENT(k, SUM)                                          \
    {                                                            \
        precise float acc = 0.0f;                                \
        if (e + k < pc.total) {                                  \
            uint start = pc.rows * row * pc.dy_width + COLUMNS * col; \
            [loop] for (uint a = 0; a < pc.rows; ++a) {          \
                ADD_SPAN(start)                                  \
                start += pc.dy_width;                            \
            }                                                    \
        }                                                        \
        SUM = asuint(positive_zero(acc));                        \
        col += 1u;                                               \
        if (col == pc.dx_width) {                                \
            col = 0;                                             \
            row += 1u;                                           \
        }                                                        \
    }

// Rounded to a half; 0 for padding past the tensor's end.
uint finished_half(uint e, uint sum) { return e < pc.total ? float_to_half_bits_fast(sum) : 0u; }

// Made again where needed, rounded and stored: the sums s0 to s3 of elements e to e + 3 (BLOCK_ELEMENTS), two
// words of dX. The redo runs from one call site (the code on bits is large): every element after a subnormal
// half (low < 0x3FF), which the hardware may have flushed, else the NaN sums; never padding.
void finish(uint j, uint e, uint low, uint s0, uint s1, uint s2, uint s3) {
    uint redo = low < 0x3FFu ? 0xFu
                             : (is_nan(s0) ? 1u : 0u) | (is_nan(s1) ? 2u : 0u) | (is_nan(s2) ? 4u : 0u) |
                                   (is_nan(s3) ? 8u : 0u);
    if (pc.total - e < BLOCK_ELEMENTS) redo &= (1u << (pc.total - e)) - 1u;
    [loop] while (redo != 0) {
        uint k = firstbitlow(redo);
        redo &= redo - 1u;
        uint sum = careful_sum(e + k);
        s0 = k == 0 ? sum : s0;
        s1 = k == 1 ? sum : s1;
        s2 = k == 2 ? sum : s2;
        s3 = k == 3 ? sum : s3;
    }
    uint h0 = finished_half(e, s0), h1 = finished_half(e + 1u, s1);
    uint h2 = finished_half(e + 2u, s2), h3 = finished_half(e + 3u, s3);
    dx_buf[j] = uint2(h0 | (h1 << 16), h2 | (h3 << 16));
}

// Any row length: each element on its own, its words picked from uint4s.
void run_any(uint j) {
    uint e = BLOCK_ELEMENTS * j;
    uint row = div_by(e, pc.dx_width, pc.width_shift);
    uint col = e - row * pc.dx_width;
    uint low = 0xFFFFFFFFu;
    uint s0, s1, s2, s3;
    ELEMENT(0u, s0) ELEMENT(1u, s1) ELEMENT(2u, s2) ELEMENT(3u, s3)
    finish(j, e, low, s0, s1, s2, s3);
}

// The COLUMNS halves of element k (0 to 3) of a row of four, from its 2 COLUMNS words x0, x1, ...: into ACC.
#if COLUMNS == 1
#define ADD_ROW_OF_FOUR ADD_HALF_TO(a0, x0) ADD_HALF_TO(a1, x0 >> 16) ADD_HALF_TO(a2, x1) ADD_HALF_TO(a3, x1 >> 16)
#elif COLUMNS == 2
#define ADD_ROW_OF_FOUR ADD_PAIR(a0, x0) ADD_PAIR(a1, x1) ADD_PAIR(a2, x2) ADD_PAIR(a3, x3)
#elif COLUMNS == 3
#define ADD_ROW_OF_FOUR                                                     \
    ADD_PAIR(a0, x0) ADD_HALF_TO(a0, x1) ADD_HALF_TO(a1, x1 >> 16) ADD_PAIR(a1, x2) \
    ADD_PAIR(a2, x3) ADD_HALF_TO(a2, x4) ADD_HALF_TO(a3, x4 >> 16) ADD_PAIR(a3, x5)
#else
#define ADD_ROW_OF_FOUR                                                     \
    ADD_PAIR(a0, x0) ADD_PAIR(a0, x1) ADD_PAIR(a1, x2) ADD_PAIR(a1, x3)     \
    ADD_PAIR(a2, x4) ADD_PAIR(a2, x5) ADD_PAIR(a3, x6) ADD_PAIR(a3, x7)
#endif

// Rows of a multiple of BLOCK_ELEMENTS (pc.aligned): a thread's four elements share a row, and their 2 COLUMNS
// words of a dY row start at an even word (a multiple of 4 for even COLUMNS): one or two uint4 loads.
void run_aligned(uint j) {
    uint e = BLOCK_ELEMENTS * j;
    uint row = div_by(e, pc.dx_width, pc.width_shift);
    uint col = e - row * pc.dx_width;
    uint w = ((pc.rows * row) * pc.dx_width + col) * COLUMNS / 2u;  // element e's first dY word, row 0
    uint step = pc.dx_width * COLUMNS / 2u;                         // dY words per row
    uint low = 0xFFFFFFFFu;
    precise float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    [loop] for (uint a = 0; a < pc.rows; ++a) {
        uint4 v = dy_buf[w >> 2];
#if COLUMNS == 1
        bool upper = (w & 2u) != 0;  // the words are the uint4's upper half
        uint x0 = upper ? v.z : v.x, x1 = upper ? v.w : v.y;
#elif COLUMNS == 2
        uint x0 = v.x, x1 = v.y, x2 = v.z, x3 = v.w;
#elif COLUMNS == 3
        uint4 u = dy_buf[(w >> 2) + 1u];
        bool upper = (w & 2u) != 0;
        uint x0 = upper ? v.z : v.x, x1 = upper ? v.w : v.y, x2 = upper ? u.x : v.z;
        uint x3 = upper ? u.y : v.w, x4 = upper ? u.z : u.x, x5 = upper ? u.w : u.y;
#else
        uint4 u = dy_buf[(w >> 2) + 1u];
        uint x0 = v.x, x1 = v.y, x2 = v.z, x3 = v.w, x4 = u.x, x5 = u.y, x6 = u.z, x7 = u.w;
#endif
        ADD_ROW_OF_FOUR
        w += step;
    }
    finish(j, e, low, asuint(positive_zero(a0)), asuint(positive_zero(a1)), asuint(positive_zero(a2)),
           asuint(positive_zero(a3)));
}

#if COLUMNS == 1
// Rows of an even length (BLOCK_EVEN_ROWS), a thread's four elements in one row: two words of each dY row, from the
// uint4 or two that hold them.
void run_even_row(uint j, uint row, uint col) {
    uint w = ((pc.rows * row) * pc.dx_width + col) / 2u;  // element e's first dY word, row 0 (col is even)
    uint step = pc.dx_width / 2u;                         // dY words per row
    uint low = 0xFFFFFFFFu;
    precise float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    [loop] for (uint a = 0; a < pc.rows; ++a) {
        uint x0 = word_at(w), x1 = word_at(w + 1u);
        ADD_ROW_OF_FOUR
        w += step;
    }
    finish(j, BLOCK_ELEMENTS * j, low, asuint(positive_zero(a0)), asuint(positive_zero(a1)),
           asuint(positive_zero(a2)), asuint(positive_zero(a3)));
}
#endif

void run(uint j) {
    [branch] if (pc.aligned == BLOCK_ALIGNED) {
        run_aligned(j);
        return;
    }
#if COLUMNS == 1
    [branch] if (pc.aligned == BLOCK_EVEN_ROWS) {
        uint e = BLOCK_ELEMENTS * j;
        uint row = div_by(e, pc.dx_width, pc.width_shift);
        uint col = e - row * pc.dx_width;
        [branch] if (col + BLOCK_ELEMENTS <= pc.dx_width) {  // else the thread's elements cross the row's end
            run_even_row(j, row, col);
            return;
        }
    }
#endif
    run_any(j);
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint j = pc.base + id.x;
    if (j < pc.count) run(j);
}
