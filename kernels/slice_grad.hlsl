// Slice grad (docs/OPERATORS.md section 3) as a gather: every dX element is written exactly once, with its dY element
// when the slice reaches it, else 0. A bit copy, so the variants only differ in element size:
// DTYPE = u8, u16, u32, u64 serve every type of that size. Two layouts: ROWS=0, any geometry, each thread writes
// one uint4 of dX; ROWS=1 (rows of whole uint4s, dY bound whole), the workgroup shares each row's set-up.
// Bindings: 0 dY (a window of it), 1 dX (a window of it, uint4s), 2 the per-axis geometry.
#include "common.hlsli"
#include "interface/slice_grad.h"

DMLGRAD_PARAMS(Params);

#include "slice_grad_axes.hlsli"

// The first of the coordinates c0, c0 + 1, ... that the slice reaches along `ax`, as an offset e from c0, and its dY
// coordinate k. False when there is none within ELEMS.
bool first_reached(Axis ax, uint c0, out uint e, out uint k) {
    e = 0;
    k = 0;
    if (ax.negative == 0) {
        if (c0 <= ax.start) {
            e = ax.start - c0;
        } else {
            uint d = c0 - ax.start;
            k = div_by(d, ax.stride, ax.stride_shift);
            uint r = d - k * ax.stride;
            if (r != 0) {
                e = ax.stride - r;
                k += 1;
            }
        }
        return e < ELEMS && k < ax.dy_size;
    }
    if (c0 > ax.start) return false;
    uint d = ax.start - c0;  // k decreases as the coordinate grows
    k = div_by(d, ax.stride, ax.stride_shift);
    e = d - k * ax.stride;
    if (k >= ax.dy_size) {  // below the window's far end: skip to its last reached coordinate
        uint t = k - (ax.dy_size - 1u);
        if (t >= ELEMS || ax.stride >= ELEMS) return false;
        e += t * ax.stride;
        k = ax.dy_size - 1u;
    }
    return e < ELEMS;
}

// Splits element `idx` into its innermost coordinate and what the outer axes contribute.
void locate(uint idx, Axis inner, out uint c0, out bool outer_ok, out uint dy_base) {
    uint row = div_by(idx, inner.dx_size, inner.dx_shift);
    c0 = idx - row * inner.dx_size;
    locate_row(row, outer_ok, dy_base);
}

uint low_bytes(uint n) { return n >= 4u ? 0xFFFFFFFFu : (1u << (8u * n)) - 1u; }  // mask of the n low bytes

// Stride 1 along the inner axis: the uint4's elements [e_lo, e_hi) come from the contiguous dY run starting at
// element j of the window; the others are 0. Whole words are loaded and shifted into place, with word indices
// clamped to the run so that nothing outside it is read (what a clamped load brings is masked off).
uint4 load_run(uint j, uint e_lo, uint e_hi) {
#if LANE_BITS == 64  // two elements, each a uint2 of dy_buf
    uint4 pair = uint4(0, 0, 0, 0);
    if (e_lo == 0) pair.xy = dy_buf[j];
    if (e_hi == 2) pair.zw = dy_buf[j + 1u - e_lo];
    return pair;
#else
    const uint es = LANE_BITS / 8;
    uint first = j * es;                           // the run's bytes in the window: [first, last]
    uint last = first + (e_hi - e_lo) * es - 1u;
    uint lo = e_lo * es, hi = e_hi * es;           // the bytes of the uint4 they go to: [lo, hi)
    uint base = first + 16u - lo;                  // + 16: never below 0; output byte b <- window byte base - 16 + b
    uint w0 = base >> 2;                           // word of output word 0, plus 4
    uint4 result;
#if LANE_BITS == 32
    [unroll] for (uint m = 0; m < 4; ++m)
        result[m] = dy_buf[clamp(w0 + m, (first >> 2) + 4u, (last >> 2) + 4u) - 4u];
#else
    uint words[5];
    [unroll] for (uint m = 0; m < 5; ++m) words[m] = dy_buf[clamp(w0 + m, (first >> 2) + 4u, (last >> 2) + 4u) - 4u];
    uint shift = (base & 3u) * 8u;
    [unroll] for (uint m = 0; m < 4; ++m)
        result[m] = shift == 0 ? words[m] : (words[m] >> shift) | (words[m + 1] << (32u - shift));
#endif
    [unroll] for (uint m = 0; m < 4; ++m) {
        uint from = lo > 4u * m ? lo - 4u * m : 0u, to = hi > 4u * m ? hi - 4u * m : 0u;
        result[m] &= low_bytes(to) & ~low_bytes(from);
    }
    return result;
#endif
}

VALUE extract(uint4 v, uint e) {
#if LANE_BITS == 64
    return e == 0 ? v.xy : v.zw;
#else
    uint w = e / LANES_PER_WORD;
    uint word = w == 0 ? v.x : (w == 1 ? v.y : (w == 2 ? v.z : v.w));
    return lane_get(word, e % LANES_PER_WORD);
#endif
}

#if LANE_BITS < 32
// (a >> s) | (b << (32 - s)) and (a << s) | (b >> (32 - s)) for s in [0, 32), without a shift by 32 (undefined
// in SPIR-V).
uint funnel_right(uint a, uint b, uint s) { return (a >> s) | ((b << 1) << (31u - s)); }
uint funnel_left(uint a, uint b, uint s) { return (a << s) | ((b >> 1) >> (31u - s)); }

uint low_bits(uint n) { return n >= 32u ? 0xFFFFFFFFu : (1u << n) - 1u; }  // mask of the n low bits

// v shifted toward its high end by `sh` bits (sh < 128), as one 128-bit number (x the low word).
// vkd3d unrolls constant bounds only; on D3D12 j runs to 3, and for j > i the wrapped i - j matches no q.
#if DMLGRAD_D3D12
#define SHIFT_SOURCE_WORD(j, i) (j < 4u)
#else
#define SHIFT_SOURCE_WORD(j, i) (j <= i)
#endif
uint4 shift_up(uint4 v, uint sh) {
    uint q = sh / 32u, b = sh % 32u;
    uint words[4] = {v.x, v.y, v.z, v.w};
    uint4 shifted;
    [unroll] for (uint i = 0; i < 4; ++i) {
        // out[i] takes words i - q (high part) and i - q - 1 (low part), 0 below word 0.
        uint hi = 0, lo = 0;
        [unroll] for (uint j = 0; SHIFT_SOURCE_WORD(j, i); ++j) {
            hi = i - j == q ? words[j] : hi;
            lo = i - j == q + 1u ? words[j] : lo;
        }
        shifted[i] = funnel_left(hi, lo, b);
    }
    return shifted;
}

// The elements of the 64 bits r0 (low), r1 placed at 0, 2, 4, ... of a uint4, the rest 0.
uint4 spread_words(uint r0, uint r1) {
#if LANE_BITS == 8  // byte m to byte 2m
    return uint4((r0 & 0xFFu) | ((r0 & 0xFF00u) << 8), ((r0 >> 16) & 0xFFu) | ((r0 >> 8) & 0xFF0000u),
                 (r1 & 0xFFu) | ((r1 & 0xFF00u) << 8), ((r1 >> 16) & 0xFFu) | ((r1 >> 8) & 0xFF0000u));
#else  // half m to half 2m
    return uint4(r0 & 0xFFFFu, r0 >> 16, r1 & 0xFFFFu, r1 >> 16);
#endif
}

// The n (1 <= n <= ELEMS / 2) elements of the dY window starting at element `lo`, placed at e, e + 2, ...
// of a uint4, the rest 0. Only the run's words are read.
uint4 spread_by_two(uint lo, uint n, uint e) {
    // Most uint4s of a row: two whole words to every other element from 0, without the shifts and masks below.
    if (e == 0 && n == ELEMS / 2 && lo % LANES_PER_WORD == 0)
        return spread_words(dy_buf[lo / LANES_PER_WORD], dy_buf[lo / LANES_PER_WORD + 1u]);
    uint w0 = lo / LANES_PER_WORD, w_last = (lo + n - 1u) / LANES_PER_WORD;
    uint words[3];  // n elements span at most 3 words (8 bytes from any lane)
    [unroll] for (uint q = 0; q < 3; ++q) {
        words[q] = 0;
        if (w0 + q <= w_last) words[q] = dy_buf[w0 + q];
    }
    uint s = (lo % LANES_PER_WORD) * LANE_BITS;  // the run's 64 bits, its first element lowest, n elements kept
    uint r0 = funnel_right(words[0], words[1], s) & low_bits(n * LANE_BITS);
    uint r1 = funnel_right(words[1], words[2], s) & (n * LANE_BITS > 32u ? low_bits(n * LANE_BITS - 32u) : 0u);
    uint4 spread = spread_words(r0, r1);
    // e is 0 or 1 except where a row's slice starts inside this uint4: a cheap shift for those.
    uint sh = e * LANE_BITS;
    if (sh >= 32u) return shift_up(spread, sh);
    return uint4(spread.x << sh, funnel_left(spread.y, spread.x, sh), funnel_left(spread.z, spread.y, sh),
                 funnel_left(spread.w, spread.z, sh));
}
#endif

// What the innermost axis alone decides for a uint4 inside a row (first element at coordinate c0): the same for
// every row, so the rows layout works it out once per column. n == 0: the slice reaches none of its elements.
struct Columns {
    uint k;  // stride 1: the dY offset in the row of element e; else the dY coordinate of element e
    uint e;  // the first element of the uint4 that the slice reaches
    uint n;  // stride 1 and 2 (8-, 16-bit): how many elements (from e, every |stride|-th) come from dY; else 1
};

Columns plan_columns(Axis inner, uint c0) {
    Columns col;
    col.k = 0;
    col.e = 0;
    col.n = 0;
    if (inner.stride == 1 && inner.negative == 0) {
        // A run of dY (crops, whole rows): the elements with start <= c0 + e < start + dY size.
        uint end = inner.start + inner.dy_size;
        uint e_lo = c0 >= inner.start ? 0u : min(inner.start - c0, (uint)ELEMS);
        uint e_hi = c0 >= end ? 0u : min(end - c0, (uint)ELEMS);
        if (e_lo < e_hi) {
            col.k = c0 + e_lo - inner.start;
            col.e = e_lo;
            col.n = e_hi - e_lo;
        }
#if LANE_BITS < 32
    } else if (inner.stride == 2 && inner.negative == 0) {
        uint e, k;
        if (first_reached(inner, c0, e, k)) {
            col.k = k;
            col.e = e;
            col.n = min((ELEMS + 1u - e) / 2u, inner.dy_size - k);
        }
#endif
    } else {
        uint e, k;
        if (first_reached(inner, c0, e, k)) {
            col.k = k;
            col.e = e;
            col.n = 1;
        }
    }
    return col;
}

// The uint4 of a row whose outer coordinates the slice reaches from dY element dy_base, as `col` plans it.
uint4 gather_planned(Axis inner, Columns col, uint dy_base) {
    uint4 result = uint4(0, 0, 0, 0);
    if (col.n == 0) return result;
    if (inner.stride == 1 && inner.negative == 0) {
        result = load_run(dy_base + col.k - pc.dy_origin, col.e, col.e + col.n);
#if LANE_BITS < 32
    } else if (inner.stride == 2 && inner.negative == 0) {
        // Every other element, 8- and 16-bit (downsampling by 2): element by element, the generic loop
        // below costs ~30 instructions per element; here the run of dY is spread with word operations.
        result = spread_by_two(dy_base + col.k - pc.dy_origin, col.n, col.e);
#endif
    } else {
        // Strided: from the first element the slice reaches, every |stride|-th one, while dY lasts.
        uint e = col.e, k = col.k;
        [loop] for (;;) {
            result = insert(result, e, load_dy(dy_base + k - pc.dy_origin));
            if (inner.stride >= ELEMS - e) break;  // (compared so, a huge stride cannot wrap)
            e += inner.stride;
            if (inner.negative != 0) {
                if (k == 0) break;
                k -= 1u;
            } else {
                k += 1u;
                if (k >= inner.dy_size) break;
            }
        }
    }
    return result;
}

// Element by element, for the uint4s where a pass begins or ends, the tensor ends or a row ends. `old`: the uint4's
// current contents (the elements another pass owns are kept).
uint4 gather_elements(uint first, uint4 old, Axis inner, uint c0, bool outer_ok, uint dy_base) {
    uint4 result = uint4(0, 0, 0, 0);
    [loop] for (uint e = 0; e < ELEMS; ++e) {
        uint idx = first + e;
        if (e > 0) {
            c0 += 1;
            if (c0 == inner.dx_size) locate(idx, inner, c0, outer_ok, dy_base);  // next row
        }
        VALUE value = (VALUE)0;
        uint k;
        if (idx < pc.elem_begin || idx >= pc.elem_end) {
            value = extract(old, e);
        } else if (reach(inner, c0, k) && outer_ok && idx < pc.total) {
            value = load_dy(dy_base + k - pc.dy_origin);
        }
        result = insert(result, e, value);
    }
    return result;
}

#if ROWS
// The rows layout (chosen by the host when every row is whole uint4s and dY is bound whole): the outer-axis
// arithmetic of each row a workgroup touches is done once, by one thread, and so is the innermost axis's of each
// column when a row is at most a workgroup long. Without it, that arithmetic (~100 instructions) is paid per
// uint4, 4x as often per byte for 8-bit elements as for 32-bit. A thread writes PER_THREAD uint4s,
// WORKGROUP_SIZE apart.
static const uint PER_THREAD =
    LANE_BITS <= ROWS_NARROW_MAX_BITS ? ROWS_UINT4S_PER_THREAD_NARROW : ROWS_UINT4S_PER_THREAD_WIDE;
static const uint GROUP_UINT4S = WORKGROUP_SIZE * PER_THREAD;
static const uint NOT_REACHED = 0xFFFFFFFFu;  // a row's dY base where the slice does not reach the row
groupshared uint row_base[GROUP_UINT4S];  // per row touched, from the workgroup's first: dY base or NOT_REACHED
groupshared uint col_k[WORKGROUP_SIZE];   // per column (when a row has at most WORKGROUP_SIZE uint4s): Columns
groupshared uint col_e[WORKGROUP_SIZE];
groupshared uint col_n[WORKGROUP_SIZE];

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint t : SV_GroupIndex) {
    Axis inner = load_axis(0);
    uint row_vec4s = inner.dx_size / ELEMS;  // whole uint4s (the host's condition)
    uint row_shift = inner.dx_shift == NO_SHIFT ? NO_SHIFT : inner.dx_shift - firstbitlow((uint)ELEMS);
    uint first = (pc.base + group.x * WORKGROUP_SIZE) * PER_THREAD;  // the workgroup's first uint4 (< pc.count)
    uint first_row = div_by(pc.window_vec4 + first, row_vec4s, row_shift);
    uint last_row = div_by(pc.window_vec4 + min(first + GROUP_UINT4S, pc.count) - 1u, row_vec4s, row_shift);
    [unroll] for (uint r = t; r < GROUP_UINT4S; r += WORKGROUP_SIZE) {
        if (first_row + r <= last_row) {
            bool outer_ok;
            uint dy_base;
            locate_row(first_row + r, outer_ok, dy_base);
            row_base[r] = outer_ok ? dy_base : NOT_REACHED;
        }
    }
    bool shared_columns = row_vec4s <= WORKGROUP_SIZE;
    if (shared_columns && t < row_vec4s) {
        Columns col = plan_columns(inner, t * ELEMS);
        col_k[t] = col.k;
        col_e[t] = col.e;
        col_n[t] = col.n;
    }
    GroupMemoryBarrierWithGroupSync();

    uint4 results[PER_THREAD];  // all gathered before any is stored: the dY loads are in flight together
    [unroll] for (uint j = 0; j < PER_THREAD; ++j) {
        results[j] = uint4(0, 0, 0, 0);
        uint i = first + t + j * WORKGROUP_SIZE;
        if (i >= pc.count) continue;
        uint g = pc.window_vec4 + i;
        uint row = div_by(g, row_vec4s, row_shift);
        uint column = g - row * row_vec4s;
        uint dy_base = row_base[row - first_row];
        if (dy_base == NOT_REACHED) continue;
        Columns col;
        if (shared_columns) {
            col.k = col_k[column];
            col.e = col_e[column];
            col.n = col_n[column];
        } else {
            col = plan_columns(inner, column * ELEMS);
        }
        results[j] = gather_planned(inner, col, dy_base);
    }
    [unroll] for (uint j = 0; j < PER_THREAD; ++j) {
        uint i = first + t + j * WORKGROUP_SIZE;
        if (i < pc.count) dx_buf[i] = results[j];
    }
}
#else
[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint first = (pc.window_vec4 + i) * ELEMS;

    Axis inner = load_axis(0);
    uint c0;
    bool outer_ok;
    uint dy_base;
    locate(first, inner, c0, outer_ok, dy_base);

    // dY is read only where the slice reaches (explicit branches: an index computed for an element the slice
    // does not reach may point outside the bound dY window).
    uint4 result = uint4(0, 0, 0, 0);
    // Only the uint4s where a pass begins or ends, or where the tensor ends, need more than the fast path.
    bool partial = first < pc.elem_begin || first + ELEMS > pc.elem_end || first + ELEMS > pc.total;
    if (!partial && c0 + ELEMS <= inner.dx_size) {
        if (outer_ok) result = gather_planned(inner, plan_columns(inner, c0), dy_base);
    } else {
        uint4 old = uint4(0, 0, 0, 0);
        if (partial) old = dx_buf[i];  // read-modify-write: elements of another pass (or the padding) are kept
        result = gather_elements(first, old, inner, c0, outer_ok, dy_base);
    }
    dx_buf[i] = result;
}
#endif
