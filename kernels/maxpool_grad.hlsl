// Max-pooling grad (docs/OPERATORS.md 4.2) for any geometry, as a deterministic gather, no atomics: every dX
// element starts at +0 and adds, in float32 and in increasing row-major dY order, the dY of each window whose chosen element it
// is; exactly the sequence of additions of the CPU reference (src/cpu/maxpool_grad.cpp), so the bits agree.
// (Overlapping windows of 2 or 3, 2-D or 3-D cubes, take kernels/maxpool_grad_fast.hlsl, the same rule with loops
// unrolled; 3-D cubes of 3 with stride 2 and padding 1 take kernels/maxpool_grad_walk.hlsl.)
//
// Variants: DTYPE = DT_F32 or DT_F16 (fp16 packed two to a word, one word of dX per thread unit);
// TILED = 1: one workgroup per tile of dX (a box of planes x depth x rows x columns, sizes powers of two chosen by
// the host); it computes the argmax of every window that reaches the tile once into groupshared memory, from X's
// keys staged there too where the region they read fits ("staged"), then each thread gathers its elements.
// TILED = 0, the direct kernel: one thread per unit, every covering window's argmax recomputed from X; the
// fallback for windows too large for groupshared memory. Both use the direct path for an fp16 word whose second
// element lies outside the tile.
// TILED = 0 and CELLS defined, the cell kernel: windows that do not overlap, one thread per window (see below);
// CELL_WORDS defined (fp16): the cell kernel where a cell's columns may split a word.
// glslang traps met here: `?:` and `&&` evaluate both sides (a call or a load in either runs regardless), and
// lavapipe stops every loop of an invocation after 65535 iterations in all (so its tests keep loops short).
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: an Axis per axis (depth, rows, columns)
// then the TileShape of interface/maxpool_grad.h as uint4s, written by src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#define NONE 0xFFFFFFFFu
static const uint MAX_TILE = 1u << MAX_TILE_LOG2;  // along one axis

DMLGRAD_SRV(uint4, geometry, 3);

Axis load_axis(uint a) {
    uint4 p = geometry[AXIS_UINT4S * a], q = geometry[AXIS_UINT4S * a + 1], r = geometry[AXIS_UINT4S * a + 2];
    Axis ax;
    ax.size = p.x; ax.out_size = p.y; ax.window = p.z; ax.stride = p.w;
    ax.pad = q.x; ax.dilation = q.y; ax.step = q.z; ax.span_m1 = q.w;
    ax.dilation_shift = r.x; ax.tile_log2 = r.y; ax.tiles = r.z; ax.box = r.w;
    return ax;
}

TileShape load_tile_shape() {
    uint4 v = geometry[TILE_SHAPE_UINT4];
    TileShape shape;
    shape.plane_log2 = v.x; shape.x_plane = v.y; shape.dy_plane = v.z; shape.staged = v.w;
    return shape;
}

// ---- geometry ----

// The windows o of `ax` that reach coordinate p: (first, count); o = first + i * ax.step for i < count.
// o reaches p when o*T - S + k*D == p for some k in [0, W).
uint2 cover(Axis ax, uint p) {
    uint q = p + ax.pad;
    uint lo = q > ax.span_m1 ? (q - ax.span_m1 + ax.stride - 1u) / ax.stride : 0u;
    uint hi = min(ax.out_size - 1u, q / ax.stride);
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
    if (origin < 0) k_begin = div_by(uint(-origin) + ax.dilation - 1u, ax.dilation, ax.dilation_shift);
    if (origin < int(ax.size))
        k_end = min(ax.window, div_by(uint(int(ax.size) - 1 - origin), ax.dilation, ax.dilation_shift) + 1u);
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

// dX at (plane, d, h, w) of the chunk from X and dY alone, as float32 bits.
uint dx_direct(Axis ad, Axis ah, Axis aw, uint x_plane_size, uint dy_plane_size, uint plane, uint d, uint h,
               uint w) {
    uint x_plane = pc.x_origin + plane * x_plane_size;
    uint dy_plane = pc.dy_origin + plane * dy_plane_size;
    uint target = (d * ah.size + h) * aw.size + w;
    uint2 cd = cover(ad, d), ch = cover(ah, h), cw = cover(aw, w);
    uint fd = cd.x, nd = cd.y, fh = ch.x, nh = ch.y, fw = cw.x, nw = cw.y;
    uint acc = 0;
    [loop] for (uint i = 0; i < nd; ++i) {
        uint od = fd + i * ad.step;
        [loop] for (uint j = 0; j < nh; ++j) {
            uint oh = fh + j * ah.step;
            [loop] for (uint k = 0; k < nw; ++k) {
                uint ow = fw + k * aw.step;
                if (window_argmax(ad, ah, aw, x_plane, od, oh, ow) == target)
                    acc = guarded_add(acc, load_dy_f32(dy_plane + (od * ah.out_size + oh) * aw.out_size + ow));
            }
        }
    }
    return acc;
}

// The element after (plane, d, h, w) in memory order; false past the chunk.
bool next_element(Axis ad, Axis ah, Axis aw, inout uint plane, inout uint d, inout uint h, inout uint w) {
    if (++w < aw.size) return true;
    w = 0;
    if (++h < ah.size) return true;
    h = 0;
    if (++d < ad.size) return true;
    d = 0;
    return ++plane < pc.planes;
}

#if DTYPE == DT_F16
#define UNIT_ELEMENTS 2
#else
#define UNIT_ELEMENTS 1
#endif

#if TILED

groupshared uint g_chosen[MAX_WINDOWS];  // per window of the tile's box: its chosen element (see Tile), or NONE
groupshared uint g_dy[MAX_WINDOWS];      // its dY as float32 bits (where chosen != NONE)
groupshared int g_key[MAX_REGION];       // staged tiles: the pool keys of the X region the windows read
groupshared uint g_cover[3][MAX_TILE];   // per axis and tile coordinate: first window (box-relative) | count << 16

struct Tile {
    uint plane0;       // first plane (chunk-relative)
    uint planes;       // planes of the tile within the chunk
    uint3 origin;      // first (d, h, w) coordinate
    uint3 extent;      // coordinates inside the input from there, at most the tile size
    uint3 box_origin;  // first window reaching the tile, per axis
    uint3 box_count;   // windows reaching the tile, per axis
    // Staged tiles: the box of input coordinates its windows read, padding included (keys INT_MIN there, which
    // never win). Chosen elements are then region indices, else in-plane indices.
    int3 region_origin;
    uint3 region_size;
};

// The windows reaching [origin, origin + extent) lie between the lowest window that can reach the first
// coordinate and the highest that can reach the last one.
void box_of(Axis ax, uint origin, uint extent, out uint box_origin, out uint box_count) {
    uint q0 = origin + ax.pad, q1 = origin + extent - 1u + ax.pad;
    uint lo = q0 > ax.span_m1 ? (q0 - ax.span_m1 + ax.stride - 1u) / ax.stride : 0u;
    uint hi = min(ax.out_size - 1u, q1 / ax.stride);
    box_origin = lo;
    box_count = lo <= hi ? hi - lo + 1u : 0u;
}

uint log2_ceil(uint v) { return v <= 1u ? 0u : firstbithigh(v - 1u) + 1u; }

// Work over rows x columns: each thread takes column `lane` (and every `lanes` after it) of every `step`-th row;
// a row is (plane, a, b), b fastest, advanced without divisions.
struct RowWalk {
    uint lanes_log2, lane, step, row;
    uint3 at;  // (plane, a, b)
};

RowWalk row_walk(uint tid, uint columns, uint size_a, uint size_b) {
    RowWalk w;
    w.lanes_log2 = min(8u, log2_ceil(columns));
    w.lane = tid & ((1u << w.lanes_log2) - 1u);
    w.step = WORKGROUP_SIZE >> w.lanes_log2;
    w.row = tid >> w.lanes_log2;
    uint rows_per_plane = max(size_a * size_b, 1u);
    w.at = uint3(w.row / rows_per_plane, (w.row % rows_per_plane) / max(size_b, 1u), w.row % max(size_b, 1u));
    return w;
}

void next_row(inout RowWalk w, uint size_a, uint size_b) {
    w.row += w.step;
    w.at.z += w.step;
    [loop] while (w.at.z >= size_b) {
        w.at.z -= size_b;
        if (++w.at.y >= size_a) {
            w.at.y = 0;
            ++w.at.x;
        }
    }
}

// Box-relative slot of window (plane tp, bd, bh, bw relative to the box origin) in g_chosen / g_dy.
uint box_slot(Axis ad, Axis ah, Axis aw, uint tp, uint bd, uint bh, uint bw) {
    return ((tp * ad.box + bd) * ah.box + bh) * aw.box + bw;
}

// The argmax of box window (tp, bd, bh, bw) from the staged keys: a region index, or NONE.
uint staged_argmax(Axis ad, Axis ah, Axis aw, Tile t, uint tp, uint bd, uint bh, uint bw) {
    uint row_size = t.region_size.z, slab = t.region_size.y * row_size;
    uint base = ((tp * t.region_size.x + bd * ad.stride) * t.region_size.y + bh * ah.stride) * row_size +
                bw * aw.stride;
    int best = int(0x80000000u);  // padding keys equal it: they never win
    uint chosen = NONE;
    [loop] for (uint kd = 0; kd < ad.window; ++kd) {
        [loop] for (uint kh = 0; kh < ah.window; ++kh) {
            uint i = base + kd * ad.dilation * slab + kh * ah.dilation * row_size;
            [loop] for (uint kw = 0; kw < aw.window; ++kw) {
                int key = g_key[i];
                if (key > best) {
                    best = key;
                    chosen = i;
                }
                i += aw.dilation;
            }
        }
    }
    return chosen;
}

// dX at tile-relative (tp, td, th, tw), from the box, as float32 bits.
uint dx_gathered(Axis ad, Axis ah, Axis aw, Tile t, bool staged, uint tp, uint td, uint th, uint tw) {
    uint3 p = t.origin + uint3(td, th, tw);
    uint target = staged ? ((tp * t.region_size.x + uint(int(p.x) - t.region_origin.x)) * t.region_size.y +
                            uint(int(p.y) - t.region_origin.y)) * t.region_size.z + uint(int(p.z) - t.region_origin.z)
                         : (p.x * ah.size + p.y) * aw.size + p.z;
    uint cd = g_cover[0][td], ch = g_cover[1][th], cw = g_cover[2][tw];
    uint nd = cd >> 16, nh = ch >> 16, nw = cw >> 16;
    uint acc = 0;
    [loop] for (uint i = 0; i < nd; ++i) {
        uint bd = (cd & 0xFFFFu) + i * ad.step;
        [loop] for (uint j = 0; j < nh; ++j) {
            uint bh = (ch & 0xFFFFu) + j * ah.step;
            uint slot = box_slot(ad, ah, aw, tp, bd, bh, cw & 0xFFFFu);
            [loop] for (uint k = 0; k < nw; ++k) {
                if (g_chosen[slot] == target) acc = guarded_add(acc, g_dy[slot]);
                slot += aw.step;
            }
        }
    }
    return acc;
}

// Tile `index` of the chunk: its planes and coordinates, the box of windows reaching it and the region they read.
Tile locate_tile(Axis ad, Axis ah, Axis aw, uint plane_log2, uint index) {
    uint3 tile_log2 = uint3(ad.tile_log2, ah.tile_log2, aw.tile_log2);
    uint3 in_size = uint3(ad.size, ah.size, aw.size);
    Tile t;
    uint rest = index;
    uint iw = rest % aw.tiles; rest /= aw.tiles;
    uint ih = rest % ah.tiles; rest /= ah.tiles;
    uint id = rest % ad.tiles; rest /= ad.tiles;
    t.plane0 = rest << plane_log2;
    t.planes = min(1u << plane_log2, pc.planes - t.plane0);
    t.origin = uint3(id << tile_log2.x, ih << tile_log2.y, iw << tile_log2.z);
    t.extent = min(uint3(1u, 1u, 1u) << tile_log2, in_size - t.origin);
    box_of(ad, t.origin.x, t.extent.x, t.box_origin.x, t.box_count.x);
    box_of(ah, t.origin.y, t.extent.y, t.box_origin.y, t.box_count.y);
    box_of(aw, t.origin.z, t.extent.z, t.box_origin.z, t.box_count.z);
    uint3 stride = uint3(ad.stride, ah.stride, aw.stride), pad = uint3(ad.pad, ah.pad, aw.pad);
    uint3 span_m1 = uint3(ad.span_m1, ah.span_m1, aw.span_m1);
    t.region_origin = int3(t.box_origin * stride) - int3(pad);
    t.region_size = t.box_count == uint3(0, 0, 0) ? uint3(0, 0, 0) : (t.box_count - 1u) * stride + span_m1 + 1u;
    return t;
}

// Per-axis tables: which box windows reach each tile coordinate.
void fill_cover_tables(Axis ad, Axis ah, Axis aw, Tile t, uint tid) {
    if (tid < t.extent.x) {
        uint2 c = cover(ad, t.origin.x + tid);
        g_cover[0][tid] = (c.x - t.box_origin.x) | (c.y << 16);
    }
    if (tid < t.extent.y) {
        uint2 c = cover(ah, t.origin.y + tid);
        g_cover[1][tid] = (c.x - t.box_origin.y) | (c.y << 16);
    }
    if (tid < t.extent.z) {
        uint2 c = cover(aw, t.origin.z + tid);
        g_cover[2][tid] = (c.x - t.box_origin.z) | (c.y << 16);
    }
}

// Staged tiles: the keys of the region, each X element loaded and keyed once.
void stage_keys(Axis ad, Axis ah, Axis aw, Tile t, uint x_plane_size, uint tid) {
    RowWalk w = row_walk(tid, t.region_size.z, t.region_size.x, t.region_size.y);
    uint rows = t.planes * t.region_size.x * t.region_size.y;
    [loop] for (; w.row < rows; next_row(w, t.region_size.x, t.region_size.y)) {
        int pd = t.region_origin.x + int(w.at.y), ph = t.region_origin.y + int(w.at.z);
        bool row_inside = pd >= 0 && pd < int(ad.size) && ph >= 0 && ph < int(ah.size);
        uint x_row = pc.x_origin + (t.plane0 + w.at.x) * x_plane_size + (uint(pd) * ah.size + uint(ph)) * aw.size;
        [loop] for (uint c = w.lane; c < t.region_size.z; c += 1u << w.lanes_log2) {
            int pw = t.region_origin.z + int(c);
            int key = int(0x80000000u);
            if (row_inside && pw >= 0 && pw < int(aw.size)) key = pool_key(load_x(x_row + uint(pw)));
            g_key[w.row * t.region_size.z + c] = key;
        }
    }
}

// Every window of the box: its chosen element and dY.
void choose_windows(Axis ad, Axis ah, Axis aw, Tile t, TileShape shape, uint tid) {
    RowWalk w = row_walk(tid, t.box_count.z, t.box_count.x, t.box_count.y);
    uint rows = t.planes * t.box_count.x * t.box_count.y;
    [loop] for (; w.row < rows; next_row(w, t.box_count.x, t.box_count.y)) {
        uint tp = w.at.x, bd = w.at.y, bh = w.at.z;
        uint plane = t.plane0 + tp;
        uint od = t.box_origin.x + bd, oh = t.box_origin.y + bh;
        [loop] for (uint bw = w.lane; bw < t.box_count.z; bw += 1u << w.lanes_log2) {
            uint ow = t.box_origin.z + bw;
            // if/else, not ?: (glslang's ?: runs both sides)
            uint chosen = NONE;
            if (shape.staged != 0) chosen = staged_argmax(ad, ah, aw, t, tp, bd, bh, bw);
            else chosen = window_argmax(ad, ah, aw, pc.x_origin + plane * shape.x_plane, od, oh, ow);
            uint slot = box_slot(ad, ah, aw, tp, bd, bh, bw);
            g_chosen[slot] = chosen;
            if (chosen != NONE)
                g_dy[slot] = load_dy_f32(pc.dy_origin + plane * shape.dy_plane + (od * ah.out_size + oh) * aw.out_size +
                                         ow);
        }
    }
}

// Gather: thread units over (plane, depth, row, column) of the tile, columns fastest; each writes its unit of dX.
void gather_tile(Axis ad, Axis ah, Axis aw, Tile t, TileShape shape, uint tid) {
    bool staged = shape.staged != 0;
    uint3 tile_log2 = uint3(ad.tile_log2, ah.tile_log2, aw.tile_log2);
    uint units_log2_w = max(tile_log2.z, UNIT_ELEMENTS - 1u) - (UNIT_ELEMENTS - 1u);
    uint units = (t.planes << (tile_log2.x + tile_log2.y)) << units_log2_w;
    [loop] for (uint u = tid; u < units; u += WORKGROUP_SIZE) {
        uint j = u & ((1u << units_log2_w) - 1u);
        uint r = u >> units_log2_w;
        uint th = r & ((1u << tile_log2.y) - 1u);
        r >>= tile_log2.y;
        uint td = r & ((1u << tile_log2.x) - 1u);
        uint tp = r >> tile_log2.x;
        if (td >= t.extent.x || th >= t.extent.y) continue;
        uint plane = t.plane0 + tp;
        uint d = t.origin.x + td, h = t.origin.y + th;
        uint row_start = plane * shape.x_plane + (d * ah.size + h) * aw.size + t.origin.z;
#if DTYPE == DT_F16
        // Units are words: the first element is the even one of the pair.
        uint tw = (row_start & 1u) + 2u * j;
        if (tw >= t.extent.z) continue;
        uint low = dx_gathered(ad, ah, aw, t, staged, tp, td, th, tw);
        uint p2 = plane, d2 = d, h2 = h, w2 = t.origin.z + tw;
        uint high = 0;  // past the tensor's last element: the padding of the last word
        if (next_element(ad, ah, aw, p2, d2, h2, w2)) {
            bool inside = p2 - t.plane0 < t.planes && d2 - t.origin.x < t.extent.x &&
                          h2 - t.origin.y < t.extent.y && w2 - t.origin.z < t.extent.z;
            if (inside)
                high = dx_gathered(ad, ah, aw, t, staged, p2 - t.plane0, d2 - t.origin.x, h2 - t.origin.y,
                                   w2 - t.origin.z);
            else
                high = dx_direct(ad, ah, aw, shape.x_plane, shape.dy_plane, p2, d2, h2, w2);
        }
        dx_buf[(pc.x_origin + row_start + tw) >> 1] = float_to_half_bits(low) | (float_to_half_bits(high) << 16);
#else
        uint tw = j;
        if (tw >= t.extent.z) continue;
        dx_buf[pc.x_origin + row_start + tw] = dx_gathered(ad, ah, aw, t, staged, tp, td, th, tw);
#endif
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint tile_index = pc.base / WORKGROUP_SIZE + group.x;
    if (tile_index >= pc.count) return;  // uniform per group, before any barrier
    Axis ad = load_axis(0), ah = load_axis(1), aw = load_axis(2);
    TileShape shape = load_tile_shape();
    Tile t = locate_tile(ad, ah, aw, shape.plane_log2, pc.first + tile_index);
    uint tid = local.x;

    fill_cover_tables(ad, ah, aw, t, tid);
    if (shape.staged != 0) {
        stage_keys(ad, ah, aw, t, shape.x_plane, tid);
        GroupMemoryBarrierWithGroupSync();
    }
    choose_windows(ad, ah, aw, t, shape, tid);
    GroupMemoryBarrierWithGroupSync();
    gather_tile(ad, ah, aw, t, shape, tid);
}

#elif defined(CELLS) || defined(CELL_WORDS)

// The cell kernel, for windows that do not overlap (each axis's span at most its stride): one thread per window
// (dY element) writes its cell of dX, the input coordinates from the window's first to the next window's first
// (the last cell to the end of the axis): the window's dY at its chosen element, zeros elsewhere. Every element
// lies in one cell and can only be chosen by that cell's window, so its sum has one term at most. No groupshared
// memory: X is read about once and dX written once, in rows along the lanes. fp16: the host takes this kernel
// only where every cell's columns start and end at even elements (stride, padding and row length even), so a
// thread writes whole words.

// The input coordinates [begin, end) of cell o of `ax`.
uint2 cell_range(Axis ax, uint o) {
    int first = int(o * ax.stride) - int(ax.pad);
    int end = o + 1u == ax.out_size ? int(ax.size) : first + int(ax.stride);
    return uint2(clamp(first, 0, int(ax.size)), clamp(end, 0, int(ax.size)));
}

#if defined(CELL_WORDS)
// CELL_WORDS (fp16 only): cells whose columns may start or end inside a word (odd stride, padding or row length).
// A word of which the cell owns both halves is stored; a word of which it owns one half gets only that half, by an
// atomic AND that clears it and an atomic OR that sets it: each half is set by one thread only, so any interleaving
// leaves the same bits. A word of which it owns neither half is not touched: an empty cell (a window of only
// padding past the input, or before it) starting at an odd element would otherwise clear its neighbour's half.
// Columns cw of the row starting at element `row_start` of the window; `chosen`: the window's choice, or NONE.
void store_cell_row(uint row_start, uint2 cw, uint chosen, uint h16) {
    uint begin = row_start + cw.x, end = row_start + cw.y;
    [loop] for (uint g = begin & ~1u; g < end; g += 2u) {
        uint word = (g == chosen ? h16 : 0u) | ((g + 1u == chosen ? h16 : 0u) << 16);
        uint mine = (g >= begin ? 0x0000FFFFu : 0u) | (g + 1u < end ? 0xFFFF0000u : 0u);  // g + 1 >= begin
        if (mine == 0xFFFFFFFFu) {
            dx_buf[g >> 1] = word;
        } else if (mine != 0u) {
            InterlockedAnd(dx_buf[g >> 1], ~mine);
            InterlockedOr(dx_buf[g >> 1], word & mine);
        }
    }
}
#endif

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint unit = pc.first + i;  // chunk-relative dY element
    Axis ad = load_axis(0), ah = load_axis(1), aw = load_axis(2);
    TileShape shape = load_tile_shape();
    uint ow = unit % aw.out_size, rest = unit / aw.out_size;
    uint oh = rest % ah.out_size;
    rest /= ah.out_size;
    uint od = rest % ad.out_size, plane = rest / ad.out_size;
    uint x_plane = pc.x_origin + plane * shape.x_plane;
    uint chosen = window_argmax(ad, ah, aw, x_plane, od, oh, ow);
    uint dy = 0;  // +0 + dY (the CPU's sum of one term), where a window chose
    if (chosen != NONE) dy = guarded_add(0u, load_dy_f32(pc.dy_origin + unit));
    uint2 cd = cell_range(ad, od), ch = cell_range(ah, oh), cw = cell_range(aw, ow);
#if DTYPE == DT_F16
    uint h16 = float_to_half_bits_fast(dy);
#endif
    [loop] for (uint d = cd.x; d < cd.y; ++d) {
        [loop] for (uint h = ch.x; h < ch.y; ++h) {
            uint row = (d * ah.size + h) * aw.size;
#if defined(CELL_WORDS)
            store_cell_row(x_plane + row, cw, chosen == NONE ? NONE : x_plane + chosen, h16);
#elif DTYPE == DT_F16
            [loop] for (uint w = cw.x; w < cw.y; w += 2u) {
                uint low = row + w == chosen ? h16 : 0u, high = row + w + 1u == chosen ? h16 : 0u;
                dx_buf[(x_plane + row + w) >> 1] = low | (high << 16);
            }
#else
            [loop] for (uint w = cw.x; w < cw.y; ++w) dx_buf[x_plane + row + w] = row + w == chosen ? dy : 0u;
#endif
        }
    }
}

#else  // direct kernel

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint i = pc.base + id.x;
    if (i >= pc.count) return;
    uint unit = pc.first + i;
    Axis ad = load_axis(0), ah = load_axis(1), aw = load_axis(2);
    TileShape shape = load_tile_shape();
    uint x_plane_size = shape.x_plane, dy_plane_size = shape.dy_plane;
    uint e = unit * UNIT_ELEMENTS;  // chunk-relative element
    uint plane = e / x_plane_size, rest = e % x_plane_size;
    uint w = rest % aw.size;
    rest /= aw.size;
    uint h = rest % ah.size, d = rest / ah.size;
#if DTYPE == DT_F16
    uint word = 0;
    bool inside = true;
    [loop] for (uint k = 0; k < 2 && inside; ++k) {
        word |= float_to_half_bits(dx_direct(ad, ah, aw, x_plane_size, dy_plane_size, plane, d, h, w)) << (16 * k);
        inside = next_element(ad, ah, aw, plane, d, h, w);
    }
    dx_buf[(pc.x_origin + e) >> 1] = word;
#else
    dx_buf[pc.x_origin + e] = dx_direct(ad, ah, aw, x_plane_size, dy_plane_size, plane, d, h, w);
#endif
}

#endif
