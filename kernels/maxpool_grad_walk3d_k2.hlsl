// Max-pooling grad, 3-D cube windows of 2 at stride 1 without start padding (end padding 0 or 1), walking along
// the depth. Same rule and order of additions as kernels/maxpool_grad.hlsl (the general kernel), so the same bits.
//
// A depth slice of the plane is taken as one run of in_h * in_w elements, cut into chunks of CHUNK elements
// (WALK3D_K2_CHUNK of interface/maxpool_grad.h, fp16 twice that): a workgroup owns one chunk, a thread one element of
// it (fp16 two), in every slice of a segment of the depth. Windows are named by their first element, as positions of
// the slice: window q reads the keys at q, q + 1, q + W and q + W + 1 (W = in_w; the second column only where q's
// column is not the row's last), and element e is reached by windows e - W - 1, e - W, e - 1 and e (increasing dY
// order), those that exist (row and column below out_h and out_w). So a chunk [e0, e0 + CHUNK) needs the windows from
// e0 - W - 1 (CHUNK + W + 1 of them) and the keys from there (CHUNK + 2W + 2): rows of any length below
// WALK3D_K2_CHUNK share a workgroup without idle columns (the fast kernel's 64-column tiles left 27 of 64 lanes idle
// on rows of 37 and computed each window 1.9 times).
// Step s:
//   1. the keys of slice s go to groupshared memory; the loads were issued during step s - 1;
//   2. the 2 x 2 argmax of each window on slice s, combined with the one of slice s - 1 kept in registers from
//      step s - 1 (the first maximum in (depth, row, column) order: slice s wins only with a greater key), is the
//      choice of depth window s - 1; it and its dY go to groupshared memory;
//   3. each thread reads the choices of the 4 windows of depth s - 1 reaching its element's position: those that
//      chose it in slice s - 1 complete its sum there (begun in step s - 1 by the windows of depth s - 2 that chose
//      it in their second slice), which it writes; those that chose it in slice s begin its sum there, carried in
//      registers to step s + 1. So each window's choice is read once per element, and the terms are added in
//      increasing dY order: plain float adds while every term is plain, guarded_add otherwise.
// A segment of slices [z0, z1) starts at step z0 - 1 (its first window's first slice) and ends at step z1.
// Variants: DTYPE = DT_F32 (a thread writes one element) or DT_F16 (a thread writes a word of two; the host takes
// slices of an even size, so that no word spans two slices).
//
// Bindings: 0 X, 1 dY, 2 dX (maxpool_grad_common.hlsli), 3 the geometry: the FAST_WORD_* header of
// interface/maxpool_grad.h (no tables) and the WALK3D_K2_WORD_* words, written by
// src/gpu/ops/maxpool_grad_dispatch.cpp.
#include "maxpool_grad_common.hlsli"

#if DTYPE == DT_F16
#define ELEMENTS 2  // a thread's elements: a word of dX
#else
#define ELEMENTS 1
#endif
static const uint CHUNK = WALK3D_K2_CHUNK * ELEMENTS;
static const uint MOST_WINDOWS = CHUNK + WALK3D_K2_CHUNK;  // CHUNK + W + 1, rows shorter than WALK3D_K2_CHUNK
static const uint MOST_KEYS = CHUNK + 2 * WALK3D_K2_CHUNK;  // CHUNK + 2W + 2
static const uint WINDOW_SLOTS = MOST_WINDOWS / WORKGROUP_SIZE;
static const uint KEY_SLOTS = MOST_KEYS / WORKGROUP_SIZE;
#define NONE 0xFFFFFFFFu
#define NOT_PLAIN 0x40000000u  // in g_chosen: the window chose an element and its dY is not plain
#define PADDING int(0x80000000u)  // the key of padding: never wins

DMLGRAD_SRV(uint, geometry, 3);

groupshared int g_key[MOST_KEYS];
groupshared uint g_chosen[MOST_WINDOWS];  // key slot << 1 | slice of the chosen element (0 the window's first),
                                          // | NOT_PLAIN; or NONE
groupshared uint g_dy[MOST_WINDOWS];      // its dY as float32 bits

struct Geometry {
    uint in_d, in_h, in_w, out_d, out_h, out_w, slice, out_slice;
};

// A workgroup's chunk: its slices [z0, z1), and where its key slot 0 (= window slot 0) lies in a slice.
struct Walk {
    uint z0, z1;
    int first;             // slice position of key slot 0: e0 - W - 1
    uint x_base, dy_base;  // the plane's first element of X (and dX), of dY
    uint keys, windows;    // slots in use: CHUNK + 2W + 2, CHUNK + W + 1
};

Walk locate_walk(uint item, Geometry g) {
    uint chunks = geometry[WALK3D_K2_WORD_CHUNKS], segments = geometry[WALK3D_K2_WORD_SEGMENTS];
    uint chunk = item % chunks, segment = (item / chunks) % segments, plane = item / (chunks * segments);
    uint slices = geometry[WALK3D_K2_WORD_SEGMENT_SLICES];
    Walk w;
    w.z0 = segment * slices;
    w.z1 = min(w.z0 + slices, g.in_d);
    w.first = int(chunk * CHUNK) - int(g.in_w) - 1;
    w.x_base = pc.x_origin + plane * geometry[FAST_WORD_X_PLANE];
    w.dy_base = pc.dy_origin + plane * geometry[FAST_WORD_DY_PLANE];
    w.keys = CHUNK + 2 * g.in_w + 2;
    w.windows = CHUNK + g.in_w + 1;
    return w;
}

// A thread's slots, the same in every slice: bit i of `key_inside`, key slot tid + i * WORKGROUP_SIZE lies in the
// slice; per window slot, its dY offset in a depth slice of dY, and bits of `window_exists` (a window of the
// slice's rows and columns) and `second_column` (its column is not the row's last: it reads the next one).
struct Slots {
    uint key_inside;
    uint dy_at[WINDOW_SLOTS];
    uint window_exists, second_column;
};

Slots thread_slots(Walk w, Geometry g, uint tid) {
    Slots t;
    t.key_inside = 0;
    [unroll] for (uint i = 0; i < KEY_SLOTS; ++i) {
        uint k = tid + WORKGROUP_SIZE * i;
        int p = w.first + int(k);
        if (k < w.keys && p >= 0 && p < int(g.slice)) t.key_inside |= 1u << i;
    }
    t.window_exists = 0;
    t.second_column = 0;
    [unroll] for (uint i = 0; i < WINDOW_SLOTS; ++i) {
        uint j = tid + WORKGROUP_SIZE * i;
        int q = w.first + int(j);
        uint r = uint(q) / g.in_w, c = uint(q) % g.in_w;
        t.dy_at[i] = r * g.out_w + c;
        if (j < w.windows && q >= 0 && r < g.out_h && c < g.out_w) t.window_exists |= 1u << i;
        if (c + 1u < g.in_w) t.second_column |= 1u << i;
    }
    return t;
}

// Step s's loads, issued together and used only in step s + 1's time: the keys of X's slice s (padding outside
// it), and the dY of the windows of depth s - 1 (0 where none).
void load_step(Walk w, Geometry g, Slots t, uint s, uint tid, out int key[KEY_SLOTS], out uint dy[WINDOW_SLOTS]) {
    uint inside = s < g.in_d ? t.key_inside : 0u;
    uint x_step = w.x_base + s * g.slice + uint(w.first);
    [unroll] for (uint i = 0; i < KEY_SLOTS; ++i) {
        key[i] = PADDING;
        if ((inside >> i & 1u) != 0) key[i] = pool_key(load_x(x_step + tid + WORKGROUP_SIZE * i));
    }
    uint dy_step = w.dy_base + (s - 1u) * g.out_slice;
    bool depth_exists = s - 1u < g.out_d;  // s = 0: none
    [unroll] for (uint i = 0; i < WINDOW_SLOTS; ++i) {
        dy[i] = 0;
        if ((t.window_exists >> i & 1u) != 0 && depth_exists) dy[i] = load_dy_f32(dy_step + t.dy_at[i]);
    }
}

// A window's best key so far and its chosen element (key slot << 1 | slice within the window); with the padding
// key, no element (chosen_of).
struct Best {
    int key;
    uint chosen;
};

// `a` then the taps of `later` (all after a's): a later tap wins only with a greater key.
Best combine(Best a, Best later) {
    a.chosen = later.key > a.key ? later.chosen : a.chosen;
    a.key = max(a.key, later.key);
    return a;
}

Best tap(uint at, uint slice, bool read) {
    Best b;
    b.key = read ? g_key[at] : PADDING;
    b.chosen = at << 1 | slice;
    return b;
}

// The first maximum of window slot j's 2 x 2 taps in the slice now in g_key, as the window's slice `slice`.
Best slice_argmax(uint j, uint in_w, bool second_column, uint slice) {
    Best top = combine(tap(j, slice, true), tap(j + 1u, slice, second_column));
    Best bottom = combine(tap(j + in_w, slice, true), tap(j + in_w + 1u, slice, second_column));
    return combine(top, bottom);
}

uint chosen_of(Best b) { return b.key == PADDING ? NONE : b.chosen; }

// Step 2 for the windows of depth s - 1: their choices and dY to g_chosen and g_dy; `kept`, each slot's argmax of
// slice s - 1, becomes that of slice s.
void choose_windows(Walk w, Geometry g, Slots t, uint s, uint tid, uint dy[WINDOW_SLOTS],
                    inout Best kept[WINDOW_SLOTS]) {
    bool depth_exists = s - 1u < g.out_d;
    [unroll] for (uint i = 0; i < WINDOW_SLOTS; ++i) {
        uint j = tid + WORKGROUP_SIZE * i;
        if (j < w.windows) {
            Best now = slice_argmax(j, g.in_w, (t.second_column >> i & 1u) != 0, 1u);
            bool exists = depth_exists && (t.window_exists >> i & 1u) != 0;
            uint chosen = exists ? chosen_of(combine(kept[i], now)) : NONE;
            g_chosen[j] = chosen | (chosen != NONE && !is_plain(dy[i]) ? NOT_PLAIN : 0u);
            g_dy[j] = dy[i];
            kept[i] = now;
            kept[i].chosen &= ~1u;  // slice s is window s's first
        }
    }
}

// A sum of terms in order, as float32 bits, and whether every term so far was plain (then hardware adds give the
// CPU's bits; past a term that is not, guarded_add).
struct Sum {
    uint bits;
    bool plain;
};

// `sum` then the terms of `dy` whose bit is set in `terms` (increasing dY order); `not_plain`: one of them is not.
Sum add_terms(Sum sum, uint dy[4], uint terms, bool not_plain) {
    // One branch around the whole sum: the rare path's guarded adds stay out of the plain one's registers.
    [branch] if (sum.plain && !not_plain) {
        precise float f = asfloat(sum.bits);
        [unroll] for (uint n = 0; n < 4; ++n) {
            if ((terms >> n & 1u) != 0) f += asfloat(dy[n]);
        }
        sum.bits = plain_bits(f);
        return sum;
    }
    [unroll] for (uint n = 0; n < 4; ++n) {
        if ((terms >> n & 1u) != 0) sum.bits = guarded_add(sum.bits, dy[n]);
    }
    sum.plain = false;
    return sum;
}

Sum empty_sum() {
    Sum sum;
    sum.bits = 0;  // +0.0f
    sum.plain = true;
    return sum;
}

// Step 3: the windows of depth s - 1 reaching the thread's element (key slot and window slot `me`), in increasing
// dY order: `carried` (slice s - 1's sum from the windows of depth s - 2) completed with those that chose the
// element in slice s - 1, returned; slice s's sum begun with those that chose it there, into `carried`.
uint gather(uint me, uint in_w, inout Sum carried) {
    uint dy[4], here = 0, below = 0;  // terms of slice s - 1 and of slice s
    bool here_not_plain = false, below_not_plain = false;
    [unroll] for (uint n = 0; n < 4; ++n) {
        uint row = n >> 1, column = n & 1u;
        uint slot = me - (1u - row) * in_w - (1u - column);
        uint code = g_chosen[slot];
        dy[n] = g_dy[slot];
        uint chosen = code & ~NOT_PLAIN;
        bool not_plain = (code & NOT_PLAIN) != 0;  // read only where the window chose the element
        if (chosen == me << 1) {
            here |= 1u << n;
            here_not_plain = here_not_plain || not_plain;
        }
        if (chosen == (me << 1 | 1u)) {
            below |= 1u << n;
            below_not_plain = below_not_plain || not_plain;
        }
    }
    Sum done = add_terms(carried, dy, here, here_not_plain);
    carried = add_terms(empty_sum(), dy, below, below_not_plain);
    return done.bits;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {
    uint index = pc.base / WORKGROUP_SIZE + group.x;
    if (index >= pc.count) return;  // uniform per group, before any barrier
    uint tid = local.x;
    Geometry g;
    g.in_d = geometry[FAST_WORD_IN_D], g.in_h = geometry[FAST_WORD_IN_H], g.in_w = geometry[FAST_WORD_IN_W];
    g.out_d = geometry[FAST_WORD_OUT_D], g.out_h = geometry[FAST_WORD_OUT_H], g.out_w = geometry[FAST_WORD_OUT_W];
    g.slice = g.in_h * g.in_w;
    g.out_slice = g.out_h * g.out_w;
    Walk w = locate_walk(pc.first + index, g);
    const Slots slots = thread_slots(w, g, tid);
    uint me = ELEMENTS * tid + g.in_w + 1u;  // the thread's first element: its key slot and window slot
    int element = w.first + int(me);
    bool writes = element < int(g.slice);  // fp16: both elements (even slices)
    Sum carried[ELEMENTS];  // the sums of the elements in the next slice to write
    [unroll] for (uint n = 0; n < ELEMENTS; ++n) carried[n] = empty_sum();

    Best kept[WINDOW_SLOTS];  // slice z0 - 1's argmax; the first step sets it
    [unroll] for (uint i = 0; i < WINDOW_SLOTS; ++i) {
        kept[i].key = PADDING;
        kept[i].chosen = NONE;
    }
    // Steps z0 - 1 to z1 (as s + 1: slice -1 is padding): step s chooses depth window s - 1 and writes slice s - 1.
    uint start = w.z0 == 0 ? 0u : w.z0 - 1u;
    int key[KEY_SLOTS];
    uint dy[WINDOW_SLOTS];
    load_step(w, g, slots, start, tid, key, dy);
    [loop] for (uint s = start; s <= w.z1; ++s) {
        [unroll] for (uint i = 0; i < KEY_SLOTS; ++i) {
            uint k = tid + WORKGROUP_SIZE * i;
            if (k < w.keys) g_key[k] = key[i];
        }
        GroupMemoryBarrierWithGroupSync();
        int next_key[KEY_SLOTS];
        uint next_dy[WINDOW_SLOTS];
        load_step(w, g, slots, s + 1u, tid, next_key, next_dy);  // under way during this step's work
        choose_windows(w, g, slots, s, tid, dy, kept);
        GroupMemoryBarrierWithGroupSync();
        // The next step's key stores write g_key, read by nobody after the barrier above; its choose_windows
        // overwrites g_chosen and g_dy after its first barrier, which this step's gather precedes.
        uint at = w.x_base + (s - 1u) * g.slice + uint(element);
#if DTYPE == DT_F16
        uint low = gather(me, g.in_w, carried[0]), high = gather(me + 1u, g.in_w, carried[1]);
        if (s > w.z0 && writes) dx_buf[at >> 1] = float_to_half_bits_fast(low) | float_to_half_bits_fast(high) << 16;
#else
        uint sum = gather(me, g.in_w, carried[0]);
        if (s > w.z0 && writes) dx_buf[at] = sum;
#endif
        key = next_key;
        dy = next_dy;
    }
}
