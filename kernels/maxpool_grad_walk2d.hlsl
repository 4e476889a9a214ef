// Max-pooling grad, 2-D square windows of 3 with a start padding of 1 and stride T = 2 or 1 (the common 2-D
// overlapping cases; the depth of 5-D tensors folded into the planes), walking down the rows. Same rule and order of
// additions as kernels/maxpool_grad.hlsl (the general kernel), so the same bits.
//
// A thread owns a column (T = 2: a column of windows, X columns 2j and 2j + 1; T = 1: COLS X columns, whole words,
// fewer at a row's end) and walks down the rows of its plane, keeping in registers the row maxima (first maximum of
// each 3-tap row of a window, key and column) of the rows the next windows share, and the choices and dY of the
// window rows that the next dX rows still need. The neighbouring columns' keys and choices come through groupshared
// memory: a thread publishes its edge keys and its windows' choices each step, one barrier per step, and reads its
// neighbours' a step later. A workgroup owns WALK2D_COLUMNS_STRIDE_* consecutive columns of the chunk's planes
// laid end to end (a plane's columns then the next plane's, so short rows keep the threads busy); its halo
// threads (T = 2: the last, T = 1: the first and the last) compute the choices of the neighbouring group's edge
// windows and write nothing. The halo's keys past the group come from loads of their own.
//  - T = 2: window j reads X columns 2j - 1 .. 2j + 1, so X column 2j is read by window j alone and 2j + 1 by
//    windows j and j + 1 (as its first column); the same holds for rows. dX splits into cells of 2 x 2, cell
//    (i, j) = rows 2i, 2i + 1 and columns 2j, 2j + 1, reached only by windows (i, j), (i, j + 1), (i + 1, j),
//    (i + 1, j + 1), in that (increasing dY) order. Step i loads X rows 2i and 2i + 1 and dY row i, chooses window
//    row i and writes cell row i - 2 (the choices of window row i - 1 of the neighbour are read in step i).
//  - T = 1: dX (r, c) is reached by windows (r - 1 .. r + 1, c - 1 .. c + 1). Step i loads X row i and dY row
//    i - 1, chooses window row i - 1 and writes dX row i - 3 (ROWS of each per step: 1, see below).
// Where a batch's columns fill few workgroups, the host cuts the rows into segments, each walked by groups of its
// own (from one step (T = 2) or two (T = 1) before its first row, for the rows that its first windows share).
// The host takes this kernel only where the walk writes every element of dX: T = 2 with in <= 2 * out on rows and
// columns; T = 1 with out <= in (end padding 0 or 1). Sums: plain float adds when every dY that reaches the cell
// or element (of any window of the 2 x 2 or 3 x 3 around it, chosen or not) is plain (is_plain), else guarded_add
// (exact_float.hlsli).
// Variants: DTYPE = DT_F32 or DT_F16 (rows of even length: a thread loads and writes whole words), T = 1 or 2.
// Tried for T = 1 on an H100 and dropped: two or four X rows per step (ROWS; twice as slow), the strip's and row
// maxima's registers rotated by unrolling three steps instead of moved each step (16-30% slower).
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: the FAST_WORD_* header of
// interface/maxpool_grad.h (no tables) and the WALK2D_WORD_* words of the segments, written by
// src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#if !defined(T) || (T != 1 && T != 2)
#error "the build passes -DT=1 or 2"
#endif

#ifndef ROWS
#define ROWS 1  // T = 1: X rows per step; 1 was the fastest on an H100 (2 and 4 took twice as long)
#endif
#define PAD_KEY int(0x80000000u)  // padding: never wins (every X key is larger)
#define CODE_NONE 0x80u           // a window that chose nothing (or does not exist)
#define NOT_PLAIN 0x40u           // in a code: the window's dY is not plain
#if DTYPE == DT_F16
#define UNIT 2  // X columns per loaded word
#else
#define UNIT 1
#endif
#ifndef COLS
#define COLS WALK2D_STRIDE_1_COLUMNS  // T = 1: X columns per thread (even: whole fp16 words)
#endif
#define WORDS (COLS / UNIT)  // ... and X words
#if T == 2
static const uint OWNED = WALK2D_COLUMNS_STRIDE_2;
static const uint FIRST_OWNER = 0;  // threads 0 .. OWNED - 1 own their column, thread OWNED is a halo
#else
static const uint OWNED = WALK2D_COLUMNS_STRIDE_1;
static const uint FIRST_OWNER = 1;  // thread 0 and thread OWNED + 1 are halos
#endif

DMLGRAD_SRV(uint, geometry, 3);

// Per step parity: each thread's edge keys (T = 2: of X column 2j + 1, rows 2i and 2i + 1; T = 1: of its first
// and last column, per row of the step), and its windows' codes and dY (first and last window: T = 1 fp16 has two;
// per row of the step).
#if T == 2
groupshared int2 g_key[2][WORKGROUP_SIZE];
groupshared uint4 g_window[2][WORKGROUP_SIZE];
#else
groupshared int2 g_key[2][ROWS][WORKGROUP_SIZE];
groupshared uint4 g_window[2][ROWS][WORKGROUP_SIZE];
#endif

struct Geometry {
    uint in_h, in_w, out_h, out_w;
};

// A thread's column of its plane.
struct Column {
    bool valid;         // a column of the chunk (threads past it only take part in the barriers)
    bool owner;         // writes dX (not a halo thread)
    bool left_halo;     // loads its left neighbour's edge keys itself (no thread on its left in the group)
    bool right_halo;    // ... its right neighbour's (T = 1)
    uint col;           // T = 2: the window column j; T = 1: the first X column
    uint row0, row1;    // the segment's rows of cells (T = 2) or of dX (T = 1) that the thread writes
    uint x_row0;        // X's (and dX's) element at (row 0, X column 2j or col)
    uint dy_row0;       // dY's element at (row 0, the first window column of the thread)
};

Column locate_column(uint item, uint tid, Geometry g) {
    Column c;
    uint per_plane = T == 2 ? g.out_w : (g.in_w + COLS - 1) / COLS;
    // Items: the chunk's groups of columns, segment by segment.
    uint groups = (pc.planes * per_plane + OWNED - 1) / OWNED, segment = item / groups;
    uint segment_rows = geometry[WALK2D_WORD_SEGMENT_ROWS];
    c.row0 = segment * segment_rows;
    c.row1 = min(c.row0 + segment_rows, T == 2 ? g.out_h : g.in_h);
    int f = int((item % groups) * OWNED + tid) - int(FIRST_OWNER);  // the column in the planes laid end to end
    c.valid = f >= 0 && uint(f) < pc.planes * per_plane;
    uint plane = uint(max(f, 0)) / per_plane, unit = uint(max(f, 0)) % per_plane;
    c.col = T == 2 ? unit : unit * COLS;
    c.owner = tid >= FIRST_OWNER && tid < FIRST_OWNER + OWNED;
    c.left_halo = tid == 0;
    c.right_halo = tid == WORKGROUP_SIZE - 1;
    uint x_col = T == 2 ? 2 * c.col : c.col;
    c.x_row0 = pc.x_origin + plane * geometry[FAST_WORD_X_PLANE] + x_col;
    c.dy_row0 = pc.dy_origin + plane * geometry[FAST_WORD_DY_PLANE] + c.col;
    return c;
}

// The first maximum of a window's row of three taps: its key (PAD_KEY: all padding) and column (0-2).
struct RowBest {
    int key;
    uint col;
};

RowBest row_best(int a, int b, int c) {
    RowBest r;
    r.key = a;
    r.col = 0;
    r.col = b > r.key ? 1u : r.col;
    r.key = max(r.key, b);
    r.col = c > r.key ? 2u : r.col;
    r.key = max(r.key, c);
    return r;
}

// The first maximum of a window from its three rows' (top to bottom), as row << 2 | column, or CODE_NONE.
uint window_choice(RowBest r0, RowBest r1, RowBest r2) {
    int key = r0.key;
    uint chosen = r0.col;
    chosen = r1.key > key ? 4u | r1.col : chosen;
    key = max(key, r1.key);
    chosen = r2.key > key ? 8u | r2.col : chosen;
    key = max(key, r2.key);
    return key == PAD_KEY ? CODE_NONE : chosen;
}

// A window's code: its choice as the kernel's gather reads it, NOT_PLAIN where its dY is not plain; CODE_NONE for a
// window that does not exist or chose nothing.
uint window_code(uint chosen, bool exists, uint dy) {
    if (!exists || chosen == CODE_NONE) return CODE_NONE;
#if T == 2
    // The chosen element lies in the cell of window o - n, n = (a, b) in {0, 1}^2 (a window's coordinate 0 is
    // the previous cell's element 1, coordinates 1 and 2 its own cell's elements 0 and 1), as element e = row << 1
    // | column of the cell: code n << 2 | e. The owner of cell o finds window o + n's contribution to its element
    // e where the code is n << 2 | e.
    uint kh = chosen >> 2, kw = chosen & 3u;
    uint n = (kh == 0 ? 2u : 0u) | (kw == 0 ? 1u : 0u);
    uint e = (kh == 0 ? 1u : kh - 1u) << 1 | (kw == 0 ? 1u : kw - 1u);
    uint code = n << 2 | e;
#else
    uint code = chosen;  // row << 2 | column within the window
#endif
    return code | (is_plain(dy) ? 0u : NOT_PLAIN);
}

// Keys of loaded X bits; `inside` false for padding.
int key_of(uint bits, bool inside) { return inside ? pool_key(bits) : PAD_KEY; }

// X's word (fp16: two elements) holding element `at` (fp16: even).
uint load_word(uint at) {
#if DTYPE == DT_F16
    return x_buf[at >> 1];
#else
    return x_buf[at];
#endif
}

uint low_key_bits(uint word) { return DTYPE == DT_F16 ? word & 0xFFFFu : word; }  // the word's first element
uint high_key_bits(uint word) { return DTYPE == DT_F16 ? word >> 16 : word; }      // ... its last

// dX's word (fp16: two elements) at element `at` from float32 sums (fp16: rounded once here).
void store_word(uint at, uint low, uint high) {
#if DTYPE == DT_F16
    dx_buf[at >> 1] = float_to_half_bits_fast(low) | (float_to_half_bits_fast(high) << 16);
#else
    dx_buf[at] = low;
#endif
}

#if T == 2
// Step i's loads: X rows 2i and 2i + 1 at columns 2j and 2j + 1 (fp16: one word), for the left halo also column
// 2j - 1 (fp16: the word before), and dY (i, j). 0 where outside.
struct Loads {
    uint x[2][2 / UNIT];
    uint left[2];
    uint dy;
};

Loads load_step(Column c, Geometry g, uint i) {
    Loads l;
    [unroll] for (uint r = 0; r < 2; ++r) {
        uint row = 2 * i + r, at = c.x_row0 + row * g.in_w;
        bool row_in = c.valid && row < g.in_h;
        [unroll] for (uint q = 0; q < 2 / UNIT; ++q) {
            l.x[r][q] = 0;
            if (row_in && 2 * c.col + UNIT * q < g.in_w) l.x[r][q] = load_word(at + UNIT * q);
        }
        l.left[r] = 0;
        if (c.left_halo && row_in && c.col != 0) l.left[r] = load_word(at - UNIT);
    }
    l.dy = 0;
    if (c.valid && i < g.out_h) l.dy = load_dy_f32(c.dy_row0 + i * g.out_w);
    return l;
}

// The keys of X row 2i + r at columns 2j - 1 (filled in later: PAD_KEY here), 2j, 2j + 1.
void row_keys(Loads l, Column c, Geometry g, uint i, uint r, out int k[3]) {
    bool row_in = 2 * i + r < g.in_h;
    k[0] = PAD_KEY;
#if DTYPE == DT_F16
    bool inside = row_in && 2 * c.col < g.in_w;
    k[1] = key_of(low_key_bits(l.x[r][0]), inside);
    k[2] = key_of(high_key_bits(l.x[r][0]), inside);
#else
    k[1] = key_of(l.x[r][0], row_in && 2 * c.col < g.in_w);
    k[2] = key_of(l.x[r][1], row_in && 2 * c.col + 1 < g.in_w);
#endif
}

// Cell (ci, j): rows 2ci, 2ci + 1, columns 2j, 2j + 1, from windows n = (ci, j), (ci, j + 1), (ci + 1, j),
// (ci + 1, j + 1) (increasing dY order); window n reaches only the elements e at or past it on each axis.
void write_cell(Column c, Geometry g, uint ci, uint code[4], uint dy[4]) {
    bool plain = ((code[0] | code[1] | code[2] | code[3]) & NOT_PLAIN) == 0;
    uint sum[4];
    // One branch around the whole gather: the rare path's guarded adds stay out of the plain one's instructions.
    [branch] if (plain) {
        [unroll] for (uint e = 0; e < 4; ++e) {
            precise float f = 0.0f;
            [unroll] for (uint n = 0; n < 4; ++n) {
                if ((n & ~e) == 0) f += code[n] == (n << 2 | e) ? asfloat(dy[n]) : 0.0f;
            }
            sum[e] = plain_bits(f);
        }
    } else {
        [unroll] for (uint e = 0; e < 4; ++e) {
            uint acc = 0;  // +0.0f
            [unroll] for (uint n = 0; n < 4; ++n) {
                if ((n & ~e) == 0 && (code[n] & ~NOT_PLAIN) == (n << 2 | e)) acc = guarded_add(acc, dy[n]);
            }
            sum[e] = acc;
        }
    }
    [unroll] for (uint r = 0; r < 2; ++r) {
        uint row = 2 * ci + r, at = c.x_row0 + row * g.in_w;
        if (row < g.in_h && 2 * c.col < g.in_w) {
#if DTYPE == DT_F16
            store_word(at, sum[2 * r], sum[2 * r + 1]);  // in_w is even: both elements are in the row
#else
            dx_buf[at] = sum[2 * r];
            if (2 * c.col + 1 < g.in_w) dx_buf[at + 1] = sum[2 * r + 1];
#endif
        }
    }
}

void walk(Column c, Geometry g, uint tid) {
    RowBest kept;  // X row 2i - 1's row maximum (row -1: padding)
    kept.key = PAD_KEY;
    kept.col = 0;
    uint code1 = CODE_NONE, dy1 = 0;        // this thread's window of row i - 1
    uint code2 = CODE_NONE, dy2 = 0;        // ... of row i - 2
    uint nb_code2 = CODE_NONE, nb_dy2 = 0;  // the right neighbour's window of row i - 2
    // Steps first to row1 + 1: step i chooses window row i (none from out_h) and writes cell row i - 2 from row0
    // on. A segment from row0 > 0 starts a step early, with X row 2 row0 - 3 (which only window row0 - 1 reads)
    // taken as padding: that window and the cells before row0 are not written.
    uint first = c.row0 == 0 ? 0 : c.row0 - 1;
    Loads l = load_step(c, g, first);
    [loop] for (uint i = first; i <= c.row1 + 1; ++i) {
        int k0[3], k1[3];
        row_keys(l, c, g, i, 0, k0);
        row_keys(l, c, g, i, 1, k1);
        g_key[i & 1u][tid] = int2(k0[2], k1[2]);
        GroupMemoryBarrierWithGroupSync();
        Loads next = load_step(c, g, i + 1);  // under way during this step's work

        // Column 2j - 1: the left neighbour's last, or the halo's own load (padding at the plane's start).
        int2 left = int2(PAD_KEY, PAD_KEY);
        if (c.col != 0) {
            bool inside = c.valid && 2 * c.col - 1 < g.in_w;
            left = c.left_halo ? int2(key_of(high_key_bits(l.left[0]), inside && 2 * i < g.in_h),
                                      key_of(high_key_bits(l.left[1]), inside && 2 * i + 1 < g.in_h))
                               : g_key[i & 1u][tid - 1];
        }
        k0[0] = left.x;
        k1[0] = left.y;
        RowBest r1 = row_best(k0[0], k0[1], k0[2]), r2 = row_best(k1[0], k1[1], k1[2]);
        uint code = window_code(window_choice(kept, r1, r2), c.valid && i < g.out_h, l.dy);
        kept = r2;

        // The right neighbour's window of row i - 1, published in step i - 1.
        uint nb_code1 = CODE_NONE, nb_dy1 = 0;
        if (i > first && c.owner && c.col + 1 < g.out_w) {
            uint2 v = g_window[(i - 1u) & 1u][tid + 1].xy;
            nb_code1 = v.x;
            nb_dy1 = v.y;
        }
        g_window[i & 1u][tid] = uint4(code, l.dy, 0, 0);
        if (i >= c.row0 + 2 && c.owner && c.valid) {
            uint codes[4] = {code2, nb_code2, code1, nb_code1}, dys[4] = {dy2, nb_dy2, dy1, nb_dy1};
            write_cell(c, g, i - 2, codes, dys);
        }
        code2 = code1;
        dy2 = dy1;
        code1 = code;
        dy1 = l.dy;
        nb_code2 = nb_code1;
        nb_dy2 = nb_dy1;
        l = next;
    }
}

#else  // T == 1

// Step k's loads: X rows k * ROWS + m at the thread's COLS columns (WORDS words), for the left halo also the column
// before (the word before), for the right halo the column after (the word after), and the dY of window rows
// k * ROWS + m - 1. 0 outside.
struct Loads {
    uint x[ROWS][WORDS], left[ROWS], right[ROWS];
    uint dy[ROWS][COLS];
};

Loads load_step(Column c, Geometry g, uint k) {
    Loads l;
    [unroll] for (uint m = 0; m < ROWS; ++m) {
        uint i = k * ROWS + m, at = c.x_row0 + i * g.in_w;
        bool row_in = c.valid && i < g.in_h;
        [unroll] for (uint w = 0; w < WORDS; ++w)
            l.x[m][w] = row_in && (w == 0 || c.col + w * UNIT < g.in_w) ? load_word(at + w * UNIT) : 0u;
        l.left[m] = row_in && c.left_halo && c.col != 0 ? load_word(at - UNIT) : 0u;
        l.right[m] = row_in && c.right_halo && c.col + COLS < g.in_w ? load_word(at + COLS) : 0u;
        [unroll] for (uint q = 0; q < COLS; ++q) {
            l.dy[m][q] = 0;
            if (c.valid && i >= 1 && i - 1 < g.out_h && c.col + q < g.out_w)
                l.dy[m][q] = load_dy_f32(c.dy_row0 + (i - 1) * g.out_w + q);
        }
    }
    return l;
}

// The bits of the thread's column q (of COLS) in its loaded words.
uint column_bits(uint x[WORDS], uint q) {
#if DTYPE == DT_F16
    return (q & 1u) != 0 ? high_key_bits(x[q >> 1]) : low_key_bits(x[q >> 1]);
#else
    return x[q];
#endif
}

// A row of windows' codes and dY: the left neighbour's last, this thread's COLS, the right neighbour's first; and
// the OR of the codes (their NOT_PLAIN bits).
struct Strip {
    uint code[COLS + 2], dy[COLS + 2];
    uint flags;
};

// dX row r at the thread's columns from window rows r - 1, r, r + 1 (s0, s1, s2): element q from windows
// s[a][q + b], a and b in 0-2 (increasing dY order), each where it chose element (2 - a, 2 - b) of its window.
void write_row(Column c, Geometry g, uint r, Strip s0, Strip s1, Strip s2) {
    Strip s[3] = {s0, s1, s2};
    bool plain = ((s0.flags | s1.flags | s2.flags) & NOT_PLAIN) == 0;
    uint sum[COLS];
    // One branch around the whole gather: the rare path's guarded adds stay out of the plain one's instructions.
    [branch] if (plain) {
        [unroll] for (uint q = 0; q < COLS; ++q) {
            precise float f = 0.0f;
            [unroll] for (uint a = 0; a < 3; ++a) {
                [unroll] for (uint b = 0; b < 3; ++b)
                    f += s[a].code[q + b] == ((2 - a) << 2 | (2 - b)) ? asfloat(s[a].dy[q + b]) : 0.0f;
            }
            sum[q] = plain_bits(f);
        }
    } else {
        [unroll] for (uint q = 0; q < COLS; ++q) {
            uint acc = 0;  // +0.0f
            [unroll] for (uint a = 0; a < 3; ++a) {
                [unroll] for (uint b = 0; b < 3; ++b) {
                    if ((s[a].code[q + b] & ~NOT_PLAIN) == ((2 - a) << 2 | (2 - b)))
                        acc = guarded_add(acc, s[a].dy[q + b]);
                }
            }
            sum[q] = acc;
        }
    }
    uint at = c.x_row0 + r * g.in_w;
    [unroll] for (uint w = 0; w < WORDS; ++w) {
        // Words past the row's end: only for the last thread of a row whose length is not a multiple of COLS.
        if (w == 0 || c.col + w * UNIT < g.in_w) store_word(at + w * UNIT, sum[w * UNIT], sum[w * UNIT + UNIT - 1]);
    }
}

// The row keys of X row i (loaded as `x`, with the halos' `left` and `right`) from the neighbours' edge keys in
// g_key: k[0] the column before the thread's, k[COLS + 1] the one after; padding past the plane's ends.
void neighbour_keys(Column c, Geometry g, uint tid, uint parity, uint m, uint i, uint left, uint right,
                    inout int k[COLS + 2]) {
    bool inside = i < g.in_h && c.valid;
    k[0] = PAD_KEY;
    if (c.col != 0) k[0] = c.left_halo ? key_of(high_key_bits(left), inside) : g_key[parity][m][tid - 1].y;
    k[COLS + 1] = PAD_KEY;
    if (c.col + COLS < g.in_w)
        k[COLS + 1] = c.right_halo ? key_of(low_key_bits(right), inside) : g_key[parity][m][tid + 1].x;
}

// A row of windows for the strip: the neighbours' edge windows of window row w (published in the previous step
// in g_window[parity][m]; none at the plane's ends or before the walk's first step) around this thread's.
Strip strip_row(Column c, Geometry g, uint tid, uint parity, uint m, bool published, uint own_code[COLS],
                uint own_dy[COLS]) {
    Strip s;
    s.code[0] = s.code[COLS + 1] = CODE_NONE;
    s.dy[0] = s.dy[COLS + 1] = 0;
    if (published && c.owner) {
        if (c.col != 0) {
            uint2 v = g_window[parity][m][tid - 1].zw;
            s.code[0] = v.x;
            s.dy[0] = v.y;
        }
        if (c.col + COLS < g.in_w) {
            uint2 v = g_window[parity][m][tid + 1].xy;
            s.code[COLS + 1] = v.x;
            s.dy[COLS + 1] = v.y;
        }
    }
    s.flags = s.code[0] | s.code[COLS + 1];
    [unroll] for (uint q = 0; q < COLS; ++q) {
        s.code[q + 1] = own_code[q];
        s.dy[q + 1] = own_dy[q];
        s.flags |= own_code[q];
    }
    return s;
}

// The walk's state before its first step: padding above row 0, no windows yet.
void clear_walk(out RowBest prev2[COLS], out RowBest prev1[COLS], out Strip s[ROWS + 2],
                out uint own_code[ROWS][COLS], out uint own_dy[ROWS][COLS]) {
    [unroll] for (uint q = 0; q < COLS; ++q) {
        prev2[q].key = prev1[q].key = PAD_KEY;
        prev2[q].col = prev1[q].col = 0;
        [unroll] for (uint m = 0; m < ROWS; ++m) {
            own_code[m][q] = CODE_NONE;
            own_dy[m][q] = 0;
        }
    }
    [unroll] for (uint a = 0; a < ROWS + 2; ++a) {
        [unroll] for (uint k = 0; k < COLS + 2; ++k) {
            s[a].code[k] = CODE_NONE;
            s[a].dy[k] = 0;
        }
        s[a].flags = CODE_NONE;
    }
}

void walk(Column c, Geometry g, uint tid) {
    RowBest prev2[COLS], prev1[COLS];  // row maxima of the two X rows before the next (padding before row 0)
    Strip s[ROWS + 2];                 // window rows i0 - ROWS - 3 .. i0 - 2 after step k's update (i0 = k ROWS)
    uint own_code[ROWS][COLS], own_dy[ROWS][COLS];  // this thread's windows of the previous step
    clear_walk(prev2, prev1, s, own_code, own_dy);
    // Steps first to last: step k takes X rows i0 + m (i0 = k ROWS, m < ROWS), chooses window rows i0 + m - 1
    // (none before 0 or from out_h) and writes dX rows i0 - ROWS - 2 + m from row0 to row1. A segment from row0 > 0
    // starts where X row row0 - 2 is taken, the rows before it as padding (only windows of the dX rows before
    // row0 read them).
    uint first = c.row0 >= 2 ? (c.row0 - 2) / ROWS : 0, last = (c.row1 + 2 + ROWS - 1) / ROWS;
    Loads l = load_step(c, g, first);
    [loop] for (uint k = first; k <= last; ++k) {
        uint i0 = k * ROWS;
        int key[ROWS][COLS + 2];
        [unroll] for (uint m = 0; m < ROWS; ++m) {
            bool inside = i0 + m < g.in_h && c.valid;
            [unroll] for (uint q = 0; q < COLS; ++q)
                key[m][q + 1] = key_of(column_bits(l.x[m], q), inside && (q == 0 || c.col + q < g.in_w));
            g_key[k & 1u][m][tid] = int2(key[m][1], key[m][COLS]);
        }
        GroupMemoryBarrierWithGroupSync();
        Loads next = load_step(c, g, k + 1);  // under way during this step's work

        uint code[ROWS][COLS];
        [unroll] for (uint m = 0; m < ROWS; ++m) {
            uint i = i0 + m;
            neighbour_keys(c, g, tid, k & 1u, m, i, l.left[m], l.right[m], key[m]);
            bool row_exists = c.valid && i >= 1 && i - 1 < g.out_h;
            [unroll] for (uint q = 0; q < COLS; ++q) {
                RowBest now = row_best(key[m][q], key[m][q + 1], key[m][q + 2]);
                code[m][q] = window_code(window_choice(prev2[q], prev1[q], now), row_exists && c.col + q < g.out_w,
                                         l.dy[m][q]);
                prev2[q] = prev1[q];
                prev1[q] = now;
            }
        }

        // The strip moves down by ROWS window rows: the previous step's, with the neighbours' edge windows.
        [unroll] for (uint a = 0; a < 2; ++a) s[a] = s[a + ROWS];
        [unroll] for (uint m = 0; m < ROWS; ++m) {
            s[2 + m] = strip_row(c, g, tid, (k - 1u) & 1u, m, k > first, own_code[m], own_dy[m]);
            own_code[m] = code[m];
            own_dy[m] = l.dy[m];
            g_window[k & 1u][m][tid] = uint4(code[m][0], l.dy[m][0], code[m][COLS - 1], l.dy[m][COLS - 1]);
        }
        [unroll] for (uint m = 0; m < ROWS; ++m) {
            int r = int(i0 + m) - int(ROWS + 2);
            if (r >= int(c.row0) && r < int(c.row1) && c.owner && c.valid)
                write_row(c, g, uint(r), s[m], s[m + 1], s[m + 2]);
        }
        l = next;
    }
}
#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint item = pc.base / WORKGROUP_SIZE + group.x;
    if (item >= pc.count) return;  // uniform per group, before any barrier
    Geometry g;
    g.in_h = geometry[FAST_WORD_IN_H], g.in_w = geometry[FAST_WORD_IN_W];
    g.out_h = geometry[FAST_WORD_OUT_H], g.out_w = geometry[FAST_WORD_OUT_W];
    walk(locate_column(pc.first + item, local.x, g), g, local.x);
}
