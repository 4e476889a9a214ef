// Max-pooling grad (docs/OPERATORS.md 4.2) for any geometry, as a deterministic gather, no atomics: every dX
// element starts at +0 and adds, in float32 and in increasing row-major dY order, the dY of each window whose chosen
// element it is; exactly the sequence of additions of the CPU reference (src/cpu/maxpool_grad.cpp), so the bits
// agree. (Overlapping windows of 2 or 3, 2-D or 3-D cubes, take kernels/maxpool_grad_fast.hlsl, the same rule with
// loops unrolled; the walk kernels take some of those.)
//
// Variants: DTYPE = DT_F32 or DT_F16 (fp16 packed two to a word, one word of dX per thread unit);
// the two-pass kernel (no define): any geometry, two dispatches per chunk of planes. PHASE_CHOOSE: a thread per
// window (dY element), or (CHOOSE_GROUPS defined, for windows along the rows that share rows of taps; a variant of
// its own, so that the other geometries' code is not compiled beside it) per CHOOSE_ROWS windows of a column,
// writes the in-plane index of each one's chosen element to the scratch buffer (binding 4); PHASE_GATHER: a thread
// per TWOPASS_RUN dX elements (TWOPASS_LONG_RUN with LONG_RUNS defined, where the columns' windows overlap, a
// variant of its own), a row segment at a time, walks the windows that cover the segment (depth and rows from the
// host's cover tables, at most ceil(W / T) per axis; along the columns every window between the first and the last
// that reach it) and adds to each element the dY of those that chose it (SCATTER defined, a variant of its own, where
// windows are few beside the elements: PHASE_FILL sets dX to +0, then PHASE_SCATTER, a thread per window, sums and
// stores its chosen element where it is the first window to choose it). X is read about once (neighbouring windows
// share it through the caches), the choices written once and read once per segment covered, dX written once: no
// recomputation, no groupshared memory, so every geometry (dilation, odd sizes, large windows) stays near the memory
// bound and D3D12 compiles it too.
// CELLS defined, the cell kernel: windows that do not overlap, one thread per window (see below);
// CELL_WORDS defined (fp16): the cell kernel where a cell's columns may split a word.
// glslang traps met here: `?:` and `&&` evaluate both sides (a call or a load in either runs regardless), and
// lavapipe stops every loop of an invocation after 65535 iterations in all (so its tests keep loops short).
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry's header (a uniform buffer): an Axis per axis
// (depth, rows, columns) and the PlaneSizes of interface/maxpool_grad.h, written by
// src/gpu/ops/maxpool_grad_dispatch.cpp; the two-pass kernel's 4: the chosen elements, 5: the whole geometry, with
// its cover tables.
#include "maxpool_grad_common.hlsli"

#define NONE CHOSEN_NONE

// The geometry's Axes and PlaneSizes, as uint4s in a uniform buffer: every thread reads the same words, which then
// come from the constant cache (a thread's loads of them from a storage buffer took up to 16% of the two-pass and
// cell kernels' time on windows of few taps: docs/PERFORMANCE.md, uniform40).
struct GeometryHeader {
    uint4 words[GEOMETRY_HEADER_UINT4S];
};
DMLGRAD_CBV(GeometryHeader, header, 3);

Axis load_axis(uint a) {
    uint4 p = header.words[3u * a], q = header.words[3u * a + 1u], r = header.words[3u * a + 2u];
    Axis ax;
    ax.size = p.x; ax.out_size = p.y; ax.window = p.z; ax.stride = p.w;
    ax.pad = q.x; ax.dilation = q.y; ax.step = q.z; ax.span_m1 = q.w;
    ax.size_magic = r.x; ax.out_magic = r.y; ax.stride_magic = r.z; ax.dilation_magic = r.w;
    return ax;
}

PlaneSizes load_plane_sizes() {
    uint4 w = header.words[PLANE_SIZES_WORD / 4u];
    PlaneSizes sizes;
    sizes.x_plane = w.x;
    sizes.dy_plane = w.y;
    sizes.cover_tables = w.z;
    sizes.row_groups_magic = w.w;
    return sizes;
}

// ---- geometry ----

// (plane, depth, row, column) of index i over planes of `extent`, by the extent's division magics (the two-pass
// gather pays these once for its run of consecutive elements, which then advance by increments).
uint4 position_of(uint i, uint3 extent, uint3 magic) {
    uint rest = div_magic(i, extent.z, magic.z), w = i - rest * extent.z;
    uint next = div_magic(rest, extent.y, magic.y), h = rest - next * extent.y;
    uint plane = div_magic(next, extent.x, magic.x);
    return uint4(plane, next - plane * extent.x, h, w);
}

// (plane, depth, row, column) of window `unit` (a dY element) and of X element `e`, counted from the chunk's first.
uint4 window_position(Axis ad, Axis ah, Axis aw, uint unit) {
    return position_of(unit, uint3(ad.out_size, ah.out_size, aw.out_size),
                       uint3(ad.out_magic, ah.out_magic, aw.out_magic));
}
uint4 element_position(Axis ad, Axis ah, Axis aw, uint e) {
    return position_of(e, uint3(ad.size, ah.size, aw.size), uint3(ad.size_magic, ah.size_magic, aw.size_magic));
}

// The windows of `ax` that may reach coordinates [p, p_last]: every window reaching one of them lies in the range.
uint2 reaching_range(Axis ax, uint p, uint p_last) {
    uint q = p + ax.pad, q_last = p_last + ax.pad;
    uint lo = q > ax.span_m1 ? div_magic(q - ax.span_m1 + ax.stride - 1u, ax.stride, ax.stride_magic) : 0u;
    return uint2(lo, min(ax.out_size - 1u, div_magic(q_last, ax.stride, ax.stride_magic)));
}

// The windows o of `ax` that reach coordinate p: (first, count); o = first + i * ax.step for i < count.
// o reaches p when o*T - S + k*D == p for some k in [0, W).
uint2 cover(Axis ax, uint p) {
    uint2 range = reaching_range(ax, p, p);
    uint q = p + ax.pad, lo = range.x, hi = range.y;
    uint first = NONE;
    // The offsets q - o*T repeat their residues mod D every `step` windows.
    [loop] for (uint o = lo; o <= hi && o < lo + ax.step && first == NONE; ++o)
        first = (q - o * ax.stride) % ax.dilation == 0 ? o : NONE;
    return first == NONE ? uint2(lo, 0u) : uint2(first, (hi - first) / ax.step + 1u);
}

// Window o of `ax`: (input coordinate at k = 0, first and end offsets k that lie inside the input).
int3 window_taps(Axis ax, uint o) {
    int origin = int(o * ax.stride) - int(ax.pad);
    uint k_begin = 0, k_end = 0;
    if (ax.dilation == 1u) {  // no divisions
        if (origin < 0) k_begin = uint(-origin);
        if (origin < int(ax.size)) k_end = min(ax.window, uint(int(ax.size) - origin));
    } else {
        if (origin < 0) k_begin = div_magic(uint(-origin) + ax.dilation - 1u, ax.dilation, ax.dilation_magic);
        if (origin < int(ax.size))
            k_end = min(ax.window, div_magic(uint(int(ax.size) - 1 - origin), ax.dilation, ax.dilation_magic) + 1u);
    }
    return int3(origin, int(k_begin), int(k_end));
}

// The in-plane index of window (od, oh, ow)'s chosen element: the first in row-major window order whose key is
// strictly greater than those before it; NONE for a window of only padding.
uint window_argmax(Axis ad, Axis ah, Axis aw, uint x_plane, uint od, uint oh, uint ow) {
    int3 td = window_taps(ad, od), th = window_taps(ah, oh), tw = window_taps(aw, ow);
    int od0 = td.x, oh0 = th.x, ow0 = tw.x;
    uint kd0 = uint(td.y), kd1 = uint(td.z), kh0 = uint(th.y), kh1 = uint(th.z), kw0 = uint(tw.y), kw1 = uint(tw.z);
    int best = int(0x80000000u);  // below every key: the first candidate wins
    uint chosen = NONE;
    [loop] for (uint kd = kd0; kd < kd1; ++kd) {
        uint pd = uint(od0 + int(kd * ad.dilation));
        [loop] for (uint kh = kh0; kh < kh1; ++kh) {
            uint row = (pd * ah.size + uint(oh0 + int(kh * ah.dilation))) * aw.size;
            [branch] if (aw.window == 2u) {
                // Windows of two columns: both loaded before either is compared (the first again where the second
                // lies past the input; never chosen then), not a loop of one or two steps a row.
                if (kw0 >= kw1) continue;  // no column inside the input
                uint i = row + uint(ow0 + int(kw0 * aw.dilation));
                bool second = kw0 + 1u < kw1;
                uint j = second ? i + aw.dilation : i;
                int key = pool_key(load_x(x_plane + i)), next = pool_key(load_x(x_plane + j));
                if (key > best) {
                    best = key;
                    chosen = i;
                }
                if (second && next > best) {
                    best = next;
                    chosen = j;
                }
                continue;
            }
            [loop] for (uint kw = kw0; kw < kw1; ++kw) {
                uint i = row + uint(ow0 + int(kw * aw.dilation));
                int key = pool_key(load_x(x_plane + i));
                if (key > best) {
                    best = key;
                    chosen = i;
                }
            }
        }
    }
    return chosen;
}

#if defined(CELLS) || defined(CELL_WORDS) || defined(CELL_ROWS)

// The cell kernel, for windows that do not overlap (each axis's span at most its stride): one thread per window (dY
// element) writes its cell of dX, the input coordinates from the window's first to the next window's first (the last
// cell to the end of the axis): the window's dY at its chosen element, zeros elsewhere. Every element lies in one cell
// and can only be chosen by that cell's window, so its sum has one term at most. No groupshared memory (but
// CELL_WORDS's choice per window): X is read about once and dX written once, in rows along the lanes. fp16: the host
// takes this kernel only where every cell's columns start and end at even elements (stride, padding and row length
// even), so a thread writes whole words.

// The input coordinates [begin, end) of cell o of `ax`.
uint2 cell_range(Axis ax, uint o) {
    int first = int(o * ax.stride) - int(ax.pad);
    int end = o + 1u == ax.out_size ? int(ax.size) : first + int(ax.stride);
    return uint2(clamp(first, 0, int(ax.size)), clamp(end, 0, int(ax.size)));
}

// A cell thread's window (the cell and cellwords kernels' prologue): its chunk-relative dY element, the axes, the
// plane sizes, its position and the first element of its plane.
struct CellWindow {
    uint unit;
    Axis ad, ah, aw;
    PlaneSizes sizes;
    uint4 at;
    uint x_plane;
};

CellWindow window_at(uint unit) {
    CellWindow c;
    c.unit = unit;
    c.ad = load_axis(0), c.ah = load_axis(1), c.aw = load_axis(2);
    c.sizes = load_plane_sizes();
    c.at = window_position(c.ad, c.ah, c.aw, unit);
    c.x_plane = pc.x_origin + c.at.x * c.sizes.x_plane;
    return c;
}

#if defined(CELL_WORDS)
// CELL_WORDS (fp16 only): cells whose columns may start or end inside a word (odd stride, padding or row length).
// Each word is stored whole, once, by the thread of the cell holding its second (odd) element; its first element,
// where it lies in another cell (the window before along the row, or the last of the row before), gets that
// window's choice from groupshared memory, where each thread of the workgroup puts its window's (a window outside
// the workgroup is chosen again: at most one per cell row, at the group's first threads). That is the _shared
// variant (CELL_SHARED_WORDS), which the host takes where cells have 9 elements or more; smaller cells set a shared
// word's halves by atomics (store_cell_row), faster there on an H100, in a variant of their own: the shared path's
// code in the same kernel cost them 11-12% (docs/PERFORMANCE.md).

// A window's chosen element (chunk-relative, or NONE) and its dY as half bits (+0 + dY, the CPU's sum of one term).
struct CellChoice {
    uint chosen, h16;
};

// Window `unit` (a chunk-relative dY element), at position `at` of the plane starting at element x_plane, chooses.
CellChoice choice_at(Axis ad, Axis ah, Axis aw, uint4 at, uint x_plane, uint unit) {
    CellChoice c;
    c.chosen = window_argmax(ad, ah, aw, x_plane, at.y, at.z, at.w);
    c.h16 = 0;
    if (c.chosen != NONE) {
        c.chosen += x_plane;
        c.h16 = float_to_half_bits_fast(guarded_add(0u, load_dy_f32(pc.dy_origin + unit)));
    }
    return c;
}

// Window `unit` chooses.
CellChoice cell_choice(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint unit) {
    uint4 at = window_position(ad, ah, aw, unit);
    return choice_at(ad, ah, aw, at, pc.x_origin + at.x * sizes.x_plane, unit);
}

// The cell of `ax` holding coordinate p (cell o starts at o * T - S; the last one runs to the end of the axis).
uint cell_of(Axis ax, uint p) { return min((p + ax.pad) / ax.stride, ax.out_size - 1u); }

// The window whose cell holds bound element e of the chunk.
uint cell_unit(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint e) {
    uint4 at = element_position(ad, ah, aw, e - pc.x_origin);
    return ((at.x * ad.out_size + cell_of(ad, at.y)) * ah.out_size + cell_of(ah, at.z)) * aw.out_size +
           cell_of(aw, at.w);
}


// Smaller cells: a word of which the cell owns both halves is stored; a word of which it owns one half gets only that
// half, by an atomic AND that clears it and an atomic OR that sets it: each half is set by one thread only, so any
// interleaving leaves the same bits. A word of which it owns neither half is not touched (an empty cell starting at
// an odd element would otherwise clear its neighbour's half). Columns [begin, end) of bound elements.
void store_cell_row(uint begin, uint end, CellChoice c) {
    [loop] for (uint g = begin & ~1u; g < end; g += 2u) {
        uint word = (g == c.chosen ? c.h16 : 0u) | ((g + 1u == c.chosen ? c.h16 : 0u) << 16);
        uint mine = (g >= begin ? 0x0000FFFFu : 0u) | (g + 1u < end ? 0xFFFF0000u : 0u);  // g + 1 >= begin
        if (mine == 0xFFFFFFFFu) {
            dx_buf[g >> 1] = word;
        } else if (mine != 0u) {
            InterlockedAnd(dx_buf[g >> 1], ~mine);
            InterlockedOr(dx_buf[g >> 1], word & mine);
        }
    }
}

// The half bits of element e under choice c.
uint half_at(CellChoice c, uint e) { return e == c.chosen ? c.h16 : 0u; }

#if !defined(CELL_SHARED_WORDS)
// Smaller cells (maxpool_grad_cellwords_f16): shared words set by halves (store_cell_row).
[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    CellWindow win = window_at(pc.first + i);
    CellChoice mine = choice_at(win.ad, win.ah, win.aw, win.at, win.x_plane, win.unit);
    uint2 cd = cell_range(win.ad, win.at.y), ch = cell_range(win.ah, win.at.z), cw = cell_range(win.aw, win.at.w);
    [loop] for (uint d = cd.x; d < cd.y; ++d) {
        [loop] for (uint h = ch.x; h < ch.y; ++h) {
            uint row = win.x_plane + (d * win.ah.size + h) * win.aw.size;
            store_cell_row(row + cw.x, row + cw.y, mine);
        }
    }
}

#else  // CELL_SHARED_WORDS: cells of 9 elements or more (maxpool_grad_cellwords_shared_f16)

groupshared uint g_cell_chosen[WORKGROUP_SIZE];
groupshared uint g_cell_h16[WORKGROUP_SIZE];

// Window `unit`'s choice: from groupshared memory where a thread of this group chose it, else chosen again.
CellChoice neighbour_choice(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint unit, uint group_first, uint group_end) {
    if (unit >= group_first && unit < group_end) {
        CellChoice c;
        c.chosen = g_cell_chosen[unit - group_first];
        c.h16 = g_cell_h16[unit - group_first];
        return c;
    }
    return cell_choice(ad, ah, aw, sizes, unit);
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID, uint3 local : SV_GroupThreadID) {
    uint i = pc.base + id.x;
    bool active = i < pc.count;  // the others only take part in the barrier
    CellWindow win = window_at(pc.first + i);
    CellChoice mine;
    mine.chosen = NONE;
    mine.h16 = 0;
    if (active) mine = choice_at(win.ad, win.ah, win.aw, win.at, win.x_plane, win.unit);
    g_cell_chosen[local.x] = mine.chosen;
    g_cell_h16[local.x] = mine.h16;
    GroupMemoryBarrierWithGroupSync();
    if (!active) return;
    // The group's windows that chose: its threads below pc.count.
    uint group_first = win.unit - local.x, group_end = pc.first + min(i - local.x + WORKGROUP_SIZE, pc.count);
    uint chunk_end = pc.x_origin + pc.planes * win.sizes.x_plane;
    uint2 cd = cell_range(win.ad, win.at.y), ch = cell_range(win.ah, win.at.z), cw = cell_range(win.aw, win.at.w);
    if (cw.x == cw.y) return;
    [loop] for (uint d = cd.x; d < cd.y; ++d) {
        [loop] for (uint h = ch.x; h < ch.y; ++h) {
            uint begin = win.x_plane + (d * win.ah.size + h) * win.aw.size + cw.x, end = begin + (cw.y - cw.x);
            uint e = begin | 1u;  // the first odd element at or after begin
            if (e == begin) {  // begin odd: its word's first element lies in the cell before
                uint before = win.unit - 1u;  // along the row
                // At column 0: the end of the row before.
                if (cw.x == 0u) before = cell_unit(win.ad, win.ah, win.aw, win.sizes, begin - 1u);
                CellChoice c = neighbour_choice(win.ad, win.ah, win.aw, win.sizes, before, group_first, group_end);
                dx_buf[begin >> 1] = half_at(c, begin - 1u) | half_at(mine, begin) << 16;
                e += 2u;
            }
            [loop] for (; e < end; e += 2u) dx_buf[e >> 1] = half_at(mine, e - 1u) | half_at(mine, e) << 16;
            // The chunk's last element, even: its word's second half lies past the chunk (+0).
            if (end == chunk_end && (end & 1u) == 1u) dx_buf[(end - 1u) >> 1] = half_at(mine, end - 1u);
        }
    }
}

#endif  // CELL_SHARED_WORDS

#elif defined(CELL_ROWS)
// CELL_ROWS (maxpool_grad_cellrows_f32; Vulkan only: groupshared arrays): the same fp32 cells written along the
// lanes. A cell thread (below) stores its cell a row piece at a time, its lanes a cell apart, and those scattered
// stores are most of its time (H200, 3-D k4 s4: 310 of 343 us; the window search alone 124). Here a workgroup takes
// whole rows of windows (a row of windows: one plane, depth and row), as many as its threads cover a column of X
// each (the host takes this kernel for rows of at most WORKGROUP_SIZE columns). A thread searches its column's taps
// of its window (the loads along the lanes) and shares its best through groupshared memory; then it takes its
// window's best of those columns (the greater key, on a tie the first in row-major order: the first maximum) and
// stores its column of the window's cell: dY at the chosen element, +0 elsewhere.
groupshared int g_key[WORKGROUP_SIZE];
groupshared uint g_index[WORKGROUP_SIZE];

bool beats(int key, uint index, int best, uint best_index) {
    return key > best || (key == best && index < best_index);
}

// Whether column c is one of window ow's taps along the columns (tw: its window_taps).
bool is_column_tap(Axis aw, int3 tw, uint c) {
    int k = int(c) - tw.x;
    if (k < 0) return false;
    uint kk = uint(k) / aw.dilation;
    return kk * aw.dilation == uint(k) && kk >= uint(tw.y) && kk < uint(tw.z);
}

// The best (key, then the first in-plane index) of column c's taps in window (od, oh) of the depth and rows:
// INT_MIN and NONE where none.
void search_column(Axis ad, Axis ah, Axis aw, uint x_plane, uint od, uint oh, uint c, out int best,
                   out uint best_index) {
    best = int(0x80000000u);
    best_index = NONE;
    int3 td = window_taps(ad, od), th = window_taps(ah, oh);
    [loop] for (uint kd = uint(td.y); kd < uint(td.z); ++kd) {
        uint pd = uint(td.x + int(kd * ad.dilation));
        [loop] for (uint kh = uint(th.y); kh < uint(th.z); ++kh) {
            uint i = (pd * ah.size + uint(th.x + int(kh * ah.dilation))) * aw.size + c;
            int key = pool_key(x_buf[x_plane + i]);
            if (beats(key, i, best, best_index)) {
                best = key;
                best_index = i;
            }
        }
    }
}

// The window's chosen element: the best of its tap columns' slots (tw: its window_taps; row_slot: the slot of its
// row's column 0).
uint chosen_of_columns(Axis aw, int3 tw, uint row_slot) {
    int best = int(0x80000000u);
    uint best_index = NONE;
    if (tw.z > tw.y) {
        uint first = uint(tw.x + tw.y * int(aw.dilation)), last = uint(tw.x + (tw.z - 1) * int(aw.dilation));
        [loop] for (uint s = row_slot + first; s <= row_slot + last; ++s) {
            if (beats(g_key[s], g_index[s], best, best_index)) {
                best = g_key[s];
                best_index = g_index[s];
            }
        }
    }
    return best_index;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint item = pc.base / WORKGROUP_SIZE + group.x;
    if (item >= pc.count) return;  // uniform per group, before the barrier
    Axis ad = load_axis(0), ah = load_axis(1), aw = load_axis(2);
    PlaneSizes sizes = load_plane_sizes();
    // This thread's row of windows (plane, depth, row), column, and window along the row (its cell's).
    uint b = local.x / aw.size, c = local.x % aw.size, rows_per_group = WORKGROUP_SIZE / aw.size;
    uint band = (pc.first + item) * rows_per_group + b;
    bool active = b < rows_per_group && band < pc.planes * ad.out_size * ah.out_size;
    uint od = band / ah.out_size % ad.out_size, oh = band % ah.out_size;
    uint x_plane = pc.x_origin + band / ah.out_size / ad.out_size * sizes.x_plane;
    uint ow = min((c + aw.pad) / aw.stride, aw.out_size - 1u);
    int3 tw = window_taps(aw, ow);
    int best = int(0x80000000u);
    uint best_index = NONE;
    if (active && is_column_tap(aw, tw, c)) search_column(ad, ah, aw, x_plane, od, oh, c, best, best_index);
    g_key[local.x] = best;
    g_index[local.x] = best_index;
    GroupMemoryBarrierWithGroupSync();
    if (!active) return;
    uint chosen = chosen_of_columns(aw, tw, b * aw.size);
    uint dy = 0;  // +0 + dY (the CPU's sum of one term), where this column holds the window's choice
    if (chosen != NONE && chosen == best_index)
        dy = guarded_add(0u, load_dy_f32(pc.dy_origin + band * aw.out_size + ow));
    uint2 cd = cell_range(ad, od), ch = cell_range(ah, oh);
    [loop] for (uint d = cd.x; d < cd.y; ++d) {
        [loop] for (uint h = ch.x; h < ch.y; ++h) {
            uint i = (d * ah.size + h) * aw.size + c;
            dx_buf[x_plane + i] = i == chosen ? dy : 0u;
        }
    }
}

#else  // CELLS

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    CellWindow win = window_at(pc.first + i);
    uint chosen = window_argmax(win.ad, win.ah, win.aw, win.x_plane, win.at.y, win.at.z, win.at.w);
    uint dy = 0;  // +0 + dY (the CPU's sum of one term), where a window chose
    if (chosen != NONE) dy = guarded_add(0u, load_dy_f32(pc.dy_origin + win.unit));
    uint2 cd = cell_range(win.ad, win.at.y), ch = cell_range(win.ah, win.at.z), cw = cell_range(win.aw, win.at.w);
#if DTYPE == DT_F16
    uint h16 = float_to_half_bits_fast(dy);
#endif
    [loop] for (uint d = cd.x; d < cd.y; ++d) {
        [loop] for (uint h = ch.x; h < ch.y; ++h) {
            uint row = (d * win.ah.size + h) * win.aw.size;
#if DTYPE == DT_F16
            [loop] for (uint w = cw.x; w < cw.y; w += 2u) {
                uint low = row + w == chosen ? h16 : 0u, high = row + w + 1u == chosen ? h16 : 0u;
                dx_buf[(win.x_plane + row + w) >> 1] = low | (high << 16);
            }
#else
            [loop] for (uint w = cw.x; w < cw.y; ++w) dx_buf[win.x_plane + row + w] = row + w == chosen ? dy : 0u;
#endif
        }
    }
}

#endif  // CELL_WORDS, CELL_ROWS, CELLS

#else  // the two-pass kernel

DMLGRAD_UAV(uint, chosen_buf, 4);  // per dY element of the chunk: its window's chosen in-plane index, or NONE
DMLGRAD_SRV(uint, geometry, 5);     // the geometry again, as a storage buffer: its cover tables, indexed by data

// The position after `at` in memory order; false past the chunk's planes.
bool advance(inout uint4 at, uint3 extent) {
    if (++at.w < extent.z) return true;
    at.w = 0;
    if (++at.z < extent.y) return true;
    at.z = 0;
    if (++at.y < extent.x) return true;
    at.y = 0;
    return ++at.x < pc.planes;
}

// A tap: its key and in-plane index (NONE, below every key, where there is none).
struct Tap {
    int key;
    uint index;
};

Tap no_tap() {
    Tap t;
    t.key = int(0x80000000u);
    t.index = NONE;
    return t;
}

// The first tap of the greatest key among a row's column taps kw in [kw0, kw1) of window column 0 at in-plane element
// `start`. fp16 columns of dilation 1 (two taps or more) are read a word at a time, both halves' keys at once
// (half_keys: the same order as pool_key; a window's rows all take one of the two, so its comparisons agree).
Tap row_best(Axis aw, uint x_plane, uint start, uint kw0, uint kw1) {
    Tap best = no_tap();
#if DTYPE == DT_F16
    if (aw.dilation == 1u && kw1 > kw0 + 1u) {
        uint first = x_plane + start + kw0, last = x_plane + start + kw1 - 1u;
        [loop] for (uint w = first >> 1; w <= last >> 1; ++w) {
            uint keys = half_keys(x_buf[w]), e = 2u * w;
            int low = int(keys & 0xFFFFu), high = int(keys >> 16);
            if (e >= first && low > best.key) {
                best.key = low;
                best.index = e - x_plane;
            }
            if (e + 1u <= last && high > best.key) {
                best.key = high;
                best.index = e + 1u - x_plane;
            }
        }
        return best;
    }
#endif
    [loop] for (uint kw = kw0; kw < kw1; ++kw) {
        uint i = start + kw * aw.dilation;
        int key = pool_key(load_x(x_plane + i));
        if (key > best.key) {
            best.key = key;
            best.index = i;
        }
    }
    return best;
}

// Windows of one column (a column window of 1), and windows of at most TAP_BATCH taps, are walked as one sequence of
// taps over depth, rows and columns, TAP_BATCH taps loaded before any is compared: tap by tap, each row's column loop
// ran once and each load waited for the one before (H200, maxpool34: 3-D k4x7x1 s1x2x2 fp16 4121 -> 3506 us; 8 a
// batch 3652 us; uniform40: 2-D k2x2 d1x3 fp16 1815 -> 1628 us, fp32 k2x2 d2 540 -> 496; larger windows of several
// columns walked so took 0.91-1.14x, fp16 rows of 5-7 column taps a batch of words 0.88-1.12x: those as before). The
// rule is the geometry's, not the window's: windows of one warp taking different paths diverge.
#define TAP_BATCH 4

// A window's taps of `ax` (window_taps()'s first and end offsets): how many lie inside the input.
uint tap_count(int3 taps) { return uint(max(taps.z - taps.y, 0)); }

// The in-plane index of tap k = (depth, row, column offsets) of the window whose taps are td, th, tw.
uint tap_index(Axis ad, Axis ah, Axis aw, int3 td, int3 th, int3 tw, uint3 k) {
    uint pd = uint(td.x + int(k.x * ad.dilation)), ph = uint(th.x + int(k.y * ah.dilation));
    return (pd * ah.size + ph) * aw.size + uint(tw.x + int(k.z * aw.dilation));
}

// Tap k's successor in row-major tap order (the column, then the row, then the depth offset).
void next_tap(inout uint3 k, int3 th, int3 tw) {
    if (++k.z < uint(tw.z)) return;
    k.z = uint(tw.y);
    if (++k.y < uint(th.z)) return;
    k.y = uint(th.y);
    ++k.x;
}

// window_argmax()'s choice (the first tap of the greatest key in row-major tap order), the taps loaded
// TAP_BATCH at a time before they are compared in that order.
uint window_argmax_batched(Axis ad, Axis ah, Axis aw, uint x_plane, int3 td, int3 th, int3 tw) {
    uint taps = tap_count(td) * tap_count(th) * tap_count(tw);
    uint3 k = uint3(td.y, th.y, tw.y);
    int best = int(0x80000000u);  // below every key: the first candidate wins
    uint chosen = NONE;
    [loop] for (uint t = 0; t < taps; t += TAP_BATCH) {
        uint index[TAP_BATCH];
        int key[TAP_BATCH];
        [unroll] for (uint j = 0; j < TAP_BATCH; ++j) {
            index[j] = tap_index(ad, ah, aw, td, th, tw, k);
            key[j] = int(0x80000000u);  // past the last tap: never chosen
            if (t + j < taps) key[j] = pool_key(load_x(x_plane + index[j]));
            next_tap(k, th, tw);
        }
        [unroll] for (uint j = 0; j < TAP_BATCH; ++j) {
            if (key[j] > best) {
                best = key[j];
                chosen = index[j];
            }
        }
    }
    return chosen;
}

// Phase 1: window `unit` (a dY element of the chunk) chooses. A thread per window: neighbouring lanes read
// neighbouring windows' taps, so each tap's loads coalesce (runs of 4 windows per thread, their lanes' loads 4
// windows apart, took up to 1.7x as long on an H100 for large windows and at most 5% less elsewhere:
// docs/PERFORMANCE.md). fp16 rows of two column taps or more at dilation 1 are searched a word at a time
// (row_best(): the first row of the greatest row key, in row-major tap order); windows of one column or of at most
// TAP_BATCH taps as one batched sequence of taps (window_argmax_batched()); the rest tap by tap, as before (taking
// them through row_best() too cost the H100 up to 3%).
void choose(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint unit) {
    uint4 at = window_position(ad, ah, aw, unit);
    if (at.x >= pc.planes) return;
    uint x_plane = pc.x_origin + at.x * sizes.x_plane;
    int3 td = window_taps(ad, at.y), th = window_taps(ah, at.z), tw = window_taps(aw, at.w);
#if DTYPE == DT_F16
    if (aw.dilation == 1u && tw.z > tw.y + 1) {
        Tap best = no_tap();
        [loop] for (uint kd = uint(td.y); kd < uint(td.z); ++kd) {
            uint pd = uint(td.x + int(kd * ad.dilation));
            [loop] for (uint kh = uint(th.y); kh < uint(th.z); ++kh) {
                uint start = (pd * ah.size + uint(th.x + int(kh * ah.dilation))) * aw.size + uint(tw.x);
                Tap t = row_best(aw, x_plane, start, uint(tw.y), uint(tw.z));
                if (t.key > best.key) best = t;
            }
        }
        chosen_buf[unit] = best.index;
        return;
    }
#endif
    if (aw.window == 1u || ad.window * ah.window * aw.window <= TAP_BATCH)
        chosen_buf[unit] = window_argmax_batched(ad, ah, aw, x_plane, td, th, tw);
    else chosen_buf[unit] = window_argmax(ad, ah, aw, x_plane, at.y, at.z, at.w);
}

#if defined(CHOOSE_GROUPS)
// One of the CHOOSE_ROWS windows of a thread of choose_rows(): its first and last rows of taps, the next one it
// takes, its best tap so far. A window with no row taps has first > last.
struct RowWindow {
    int first, next, last;
    Tap best;
};

// Window oh of the rows (none past the last window).
RowWindow row_window(Axis ah, uint oh) {
    int3 taps = window_taps(ah, oh);
    RowWindow w;
    w.first = taps.x + taps.y * int(ah.dilation);
    w.last = oh < ah.out_size ? taps.x + (taps.z - 1) * int(ah.dilation) : w.first - 1;
    w.next = w.first;
    w.best = no_tap();
    return w;
}

bool takes_row(RowWindow w, int r) { return w.next == r && r <= w.last; }

// Row r's best tap offered to window w, if r is its next row: the first tap of the greatest key along each row, then
// the first row of the greatest key, is the window's first tap of the greatest key.
void offer_row(inout RowWindow w, uint dilation, int r, Tap t) {
    if (!takes_row(w, r)) return;
    if (t.key > w.best.key) w.best = t;
    w.next += int(dilation);
}

// Phase 1 where windows along the rows share rows of taps: a thread per CHOOSE_ROWS consecutive windows of one
// depth and column (lanes along the columns, so loads coalesce as in choose()). It walks, per depth tap, the rows
// from the group's first tap row to its last, gcd(T, D) apart (the rows between hold no tap); each row that one of
// the windows takes is searched once along the columns and offered to the windows taking it, each in its own
// row-major tap order.
void choose_rows(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint item) {
    uint4 at = position_of(item, uint3(ad.out_size, (ah.out_size + CHOOSE_ROWS - 1u) / CHOOSE_ROWS, aw.out_size),
                           uint3(ad.out_magic, sizes.row_groups_magic, aw.out_magic));
    if (at.x >= pc.planes) return;
    uint x_plane = pc.x_origin + at.x * sizes.x_plane, oh = at.z * CHOOSE_ROWS;
    int3 td = window_taps(ad, at.y), tw = window_taps(aw, at.w);
    RowWindow w0 = row_window(ah, oh), w1 = row_window(ah, oh + 1u), w2 = row_window(ah, oh + 2u),
              w3 = row_window(ah, oh + 3u);
    // The group's rows of taps: from the least first row to the greatest last row (with a dilation neither need be
    // window 0's or 3's).
    int r_first = min(min(w0.first, w1.first), min(w2.first, w3.first));
    int r_last = max(max(w0.last, w1.last), max(w2.last, w3.last));
    int r_step = int(ah.dilation / ah.step);  // gcd(T, D): every tap row lies on r_first's residue mod it
    [loop] for (uint kd = uint(td.y); kd < uint(td.z); ++kd) {
        uint pd = uint(td.x + int(kd * ad.dilation));
        w0.next = w0.first;
        w1.next = w1.first;
        w2.next = w2.first;
        w3.next = w3.first;
        [loop] for (int r = r_first; r <= r_last; r += r_step) {
            bool taken = takes_row(w0, r) || takes_row(w1, r) || takes_row(w2, r) || takes_row(w3, r);
            if (!taken) continue;
            Tap t = row_best(aw, x_plane, (pd * ah.size + uint(r)) * aw.size + uint(tw.x), uint(tw.y), uint(tw.z));
            offer_row(w0, ah.dilation, r, t);
            offer_row(w1, ah.dilation, r, t);
            offer_row(w2, ah.dilation, r, t);
            offer_row(w3, ah.dilation, r, t);
        }
    }
    uint unit = at.x * sizes.dy_plane + (at.y * ah.out_size + oh) * aw.out_size + at.w;
    chosen_buf[unit] = w0.best.index;
    if (oh + 1u < ah.out_size) chosen_buf[unit + aw.out_size] = w1.best.index;
    if (oh + 2u < ah.out_size) chosen_buf[unit + 2u * aw.out_size] = w2.best.index;
    if (oh + 3u < ah.out_size) chosen_buf[unit + 3u * aw.out_size] = w3.best.index;
}

#endif  // CHOOSE_GROUPS

// The windows of `ax` covering coordinate p, from the host's table where there is one (`table`: its word, or 0).
uint2 covering(Axis ax, uint table, uint p) {
    if (table == 0u) return cover(ax, p);
    uint v = geometry[table + p];
    return uint2(v & ((1u << COVER_COUNT_SHIFT) - 1u), v >> COVER_COUNT_SHIFT);
}

// The windows a segment (`count` consecutive elements of one row from `at`: plane, d, h, w) walks: the covering
// windows of the depth and row (cd, ch: first and count) and, in each of those rows of windows, every window between
// the first reaching the segment's first column and the last reaching its last (ow), in increasing dY order; a window
// whose choice is one of the segment's elements covers it, so each element's sum over them is the CPU's sequence of
// additions. The dY plane's first window, and the segment's first element (in-plane) that choices are compared with.
struct SegmentWalk {
    uint dy_plane, target;
    uint2 cd, ch, ow;
};

SegmentWalk segment_walk(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint4 at, uint count) {
    SegmentWalk s;
    s.dy_plane = at.x * sizes.dy_plane;
    s.target = (at.y * ah.size + at.z) * aw.size + at.w;
    uint td = sizes.cover_tables, th = td == 0u ? 0u : td + ad.size;
    s.cd = covering(ad, td, at.y);
    s.ch = covering(ah, th, at.z);
    s.ow = reaching_range(aw, at.w, at.w + count - 1u);
    return s;
}

// The first window (column 0) of row j of depth i of walk s.
uint walk_row(Axis ad, Axis ah, Axis aw, SegmentWalk s, uint i, uint j) {
    return s.dy_plane + ((s.cd.x + i * ad.step) * ah.out_size + s.ch.x + j * ah.step) * aw.out_size;
}

#if defined(SCATTER)

// The scatter variants' fill (after the choose, before the scatter): FILL_WORDS dX words of the chunk (fp16: from its
// first element's word; the chunk starts at an even element) set to +0, the sum of no term; the scatter then stores
// the elements some window chose. Unit u of a group of FILL_LANES takes the group's words u, u + FILL_LANES, ...: each
// store of a warp writes consecutive words (a thread's own consecutive words, lanes 16 bytes apart, made the scatter
// variants 1.05-1.96x slower on an H200: docs/PERFORMANCE.md, fill39).
void fill(PlaneSizes sizes, uint unit) {
#if DTYPE == DT_F16
    uint words = (pc.planes * sizes.x_plane + 1u) >> 1, first = pc.x_origin >> 1;
#else
    uint words = pc.planes * sizes.x_plane, first = pc.x_origin;
#endif
    uint lane = unit % FILL_LANES, w = (unit - lane) * FILL_WORDS + lane;
    [unroll] for (uint k = 0; k < FILL_WORDS; ++k)
        if (w + k * FILL_LANES < words) dx_buf[first + w + k * FILL_LANES] = 0u;
}

// Adds to acc from slot `first` on the dY of the windows that chose a segment's elements; false where a window
// before `unit` chose one of them (that window's thread stores them). fp32: an element of dilated columns (windows
// covering it `step` apart) walks only the columns' windows that cover it (H200: 3-D k3 s1 d3 0.96x); fp16 words
// walk their two elements together as the gather does (each alone took 2-D k6 s2 d3 fp16 1.04x).
bool scatter_segment(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint4 at, uint first, uint count, uint unit,
                     inout uint2 acc) {
    SegmentWalk s = segment_walk(ad, ah, aw, sizes, at, count);
    uint step = 1u;
#if DTYPE == DT_F32
    if (count == 1u && aw.step > 1u) {
        uint2 c = cover(aw, at.w);
        if (c.y == 0u) return true;
        s.ow = uint2(c.x, c.x + (c.y - 1u) * aw.step);
        step = aw.step;
    }
#endif
    [loop] for (uint i = 0; i < s.cd.y; ++i) {
        [loop] for (uint j = 0; j < s.ch.y; ++j) {
            uint row = walk_row(ad, ah, aw, s, i, j);
            [loop] for (uint window = row + s.ow.x; window <= row + s.ow.y; window += step) {
                uint delta = chosen_buf[window] - s.target;  // NONE: far past the segment
                if (delta < count) {
                    if (window < unit) return false;
                    uint dy = load_dy_f32(pc.dy_origin + window);
                    if (first + delta == 0u) acc.x = guarded_add(acc.x, dy);
                    else acc.y = guarded_add(acc.y, dy);
                }
            }
        }
    }
    return true;
}

// Phase 2 of the scatter variants: window `unit` (a dY element of the chunk) stores the sums of its chosen element
// (fp16: of the word holding it) where it is the first window, in dY order, that chose it (or the word's other
// element); the other elements keep the fill's +0. Each stored element is summed by one thread, over its covering
// windows in increasing dY order: the CPU's sequence of additions, as the gather makes it, from a thread per window
// instead of per element (fewer threads where a window has many elements: strides past 1).
void scatter(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint unit) {
    uint chosen = chosen_buf[unit];
    if (chosen == NONE) return;
    uint3 extent = uint3(ad.size, ah.size, aw.size);
    uint e = unit / sizes.dy_plane * sizes.x_plane + chosen;  // chunk-relative element
#if DTYPE == DT_F16
    e &= ~1u;  // the word's first element
    uint elements = min(2u, pc.planes * sizes.x_plane - e);
#else
    uint elements = 1u;
#endif
    uint4 at = element_position(ad, ah, aw, e);
    uint2 acc = 0;
    uint done = 0;
    [loop] while (done < elements) {  // fp16: the word's two elements, in two rows where the first ends one
        uint count = min(elements - done, aw.size - at.w);
#if DTYPE == DT_F32
        if (aw.step > 1u) count = 1u;  // dilated columns: each element's covering windows alone
#endif
        if (!scatter_segment(ad, ah, aw, sizes, at, done, count, unit, acc)) return;
        done += count;
        at.w += count - 1u;
        advance(at, extent);
    }
#if DTYPE == DT_F16
    dx_buf[(pc.x_origin + e) >> 1] = float_to_half_bits_fast(acc.x) | float_to_half_bits_fast(acc.y) << 16;
#else
    dx_buf[pc.x_origin + e] = acc.x;
#endif
}

#else  // the gather

// A gather thread's elements: TWOPASS_LONG_RUN with LONG_RUNS defined, else TWOPASS_RUN.
#if defined(LONG_RUNS)
#define GATHER_RUN TWOPASS_LONG_RUN
#else
#define GATHER_RUN TWOPASS_RUN
#endif

// The run's accumulators, float32 bits: elements 0-3, and 4-7 for long runs.
struct Run {
    uint4 low;
#if defined(LONG_RUNS)
    uint4 high;
#endif
};

// Adds `dy` to accumulator `s` of `quad` (one guarded add, whichever the slot).
uint4 add_to_quad(uint4 quad, uint s, uint dy) {
    uint sum = guarded_add(s == 0u ? quad.x : s == 1u ? quad.y : s == 2u ? quad.z : quad.w, dy);
    return uint4(s == 0u ? sum : quad.x, s == 1u ? sum : quad.y, s == 2u ? sum : quad.z, s == 3u ? sum : quad.w);
}

// Adds `dy` to accumulator `slot` of the run.
void add_to_run(inout Run acc, uint slot, uint dy) {
#if defined(LONG_RUNS)
    if (slot >= 4u) {
        acc.high = add_to_quad(acc.high, slot - 4u, dy);
        return;
    }
#endif
    acc.low = add_to_quad(acc.low, slot, dy);
}

// Adds to the run's accumulators from slot `first` on the dY of the windows that chose a segment's elements.
void gather_segment(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint4 at, uint first, uint count, inout Run acc) {
    SegmentWalk s = segment_walk(ad, ah, aw, sizes, at, count);
    [loop] for (uint i = 0; i < s.cd.y; ++i) {
        [loop] for (uint j = 0; j < s.ch.y; ++j) {
            uint row = walk_row(ad, ah, aw, s, i, j);
            [loop] for (uint window = row + s.ow.x; window <= row + s.ow.y; ++window) {
                uint delta = chosen_buf[window] - s.target;  // NONE: far past the segment
                if (delta < count) add_to_run(acc, first + delta, load_dy_f32(pc.dy_origin + window));
            }
        }
    }
}

// Stores the first `done` (at least 1) of 4 elements from dX element `e` (even for fp16: whole words, a word's
// second half +0 past the chunk).
void store_quad(uint e, uint4 v, uint done) {
#if DTYPE == DT_F16
    dx_buf[e >> 1] = float_to_half_bits_fast(v.x) | float_to_half_bits_fast(v.y) << 16;
    if (done > 2u) dx_buf[(e + 2u) >> 1] = float_to_half_bits_fast(v.z) | float_to_half_bits_fast(v.w) << 16;
#else
    dx_buf[e] = v.x;
    if (done > 1u) dx_buf[e + 1u] = v.y;
    if (done > 2u) dx_buf[e + 2u] = v.z;
    if (done > 3u) dx_buf[e + 3u] = v.w;
#endif
}

// Phase 2: dX run `run`, GATHER_RUN consecutive elements of the chunk (an even number: fp16 words whole), as
// float32 bits, gathered a row segment at a time (one segment unless the run crosses a row). Elements past the
// chunk keep +0: for fp16 the padding half of the chunk's last word, which is written; a word whose first element
// lies past the chunk belongs to the next one (or to no tensor) and is not.
void gather(Axis ad, Axis ah, Axis aw, PlaneSizes sizes, uint run) {
    uint3 extent = uint3(ad.size, ah.size, aw.size);
    uint e = run * GATHER_RUN;  // chunk-relative element
    uint4 at = element_position(ad, ah, aw, e);
    bool inside = at.x < pc.planes;
    if (!inside) return;
    Run acc;
    acc.low = 0;
#if defined(LONG_RUNS)
    acc.high = 0;
#endif
    uint done = 0;  // elements gathered
    [loop] while (done < GATHER_RUN && inside) {
        uint count = min(GATHER_RUN - done, aw.size - at.w);
        gather_segment(ad, ah, aw, sizes, at, done, count, acc);
        done += count;
        at.w += count - 1u;
        inside = advance(at, extent);
    }
    store_quad(pc.x_origin + e, acc.low, done);
#if defined(LONG_RUNS)
    if (done > 4u) store_quad(pc.x_origin + e + 4u, acc.high, done - 4u);
#endif
}

#endif  // SCATTER

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    Axis ad = load_axis(0), ah = load_axis(1), aw = load_axis(2);
    PlaneSizes sizes = load_plane_sizes();
#if defined(SCATTER)
    if (pc.phase == PHASE_FILL) fill(sizes, pc.first + i);
    else if (pc.phase == PHASE_SCATTER) scatter(ad, ah, aw, sizes, pc.first + i);
#else
    if (pc.phase == PHASE_GATHER) gather(ad, ah, aw, sizes, pc.first + i);
#endif
#if defined(CHOOSE_GROUPS)
    else choose_rows(ad, ah, aw, sizes, pc.first + i);
#else
    else choose(ad, ah, aw, sizes, pc.first + i);
#endif
}

#endif
