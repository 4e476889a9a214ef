// Slice grad (SPEC.md section 3) as a gather: every dX element is written exactly once, with its dY element
// when the slice reaches it, else 0. A bit copy, so the variants only differ in element size:
// DTYPE = u8, u16, u32, u64 serve every type of that size. Each thread writes one uint4 of dX.
// Bindings: 0 dY (a window of it), 1 dX (a window of it, uint4s), 2 the per-axis geometry.
#include "common.hlsli"

#define MAX_RANK 8
#define ELEMS (128 / LANE_BITS)  // elements per uint4

struct Params {
    uint base;        // first uint4 of this dispatch, relative to the dX window
    uint count;       // uint4s in the dX window
    uint window_vec4; // uint4 index of the dX window in the whole dX
    uint elem_begin;  // dX elements this pass owns; the others in its first and last uint4 are kept as they are
    uint elem_end;    // (read-modify-write where a pass boundary falls inside a uint4: passes run in order)
    uint total;       // dX elements
    uint dy_origin;   // dY element at the start of the dY window
    uint rank;
};
[[vk::push_constant]] ConstantBuffer<Params> pc;  // not a bare "Params pc": glslang makes that a uniform buffer

#if LANE_BITS == 64
#define VALUE uint2
[[vk::binding(0, 0)]] StructuredBuffer<uint2> dy_buf;
#else
#define VALUE uint
[[vk::binding(0, 0)]] StructuredBuffer<uint> dy_buf;
#endif
[[vk::binding(1, 0)]] RWStructuredBuffer<uint4> dx_buf;
// Per axis, innermost first, two uint4s (written by src/gpu/ops/slice_grad_dispatch.cpp):
//   (dX size, its log2 or ~0, start, 1 if the stride is negative), (|stride|, its log2 or ~0, dY size, dY stride)
[[vk::binding(2, 0)]] StructuredBuffer<uint4> geometry;

struct Axis {
    uint dx_size, dx_shift, start, negative;
    uint stride, stride_shift, dy_size, dy_stride;
};

Axis load_axis(uint a) {
    uint4 p = geometry[2 * a];
    uint4 q = geometry[2 * a + 1];
    Axis ax;
    ax.dx_size = p.x; ax.dx_shift = p.y; ax.start = p.z; ax.negative = p.w;
    ax.stride = q.x; ax.stride_shift = q.y; ax.dy_size = q.z; ax.dy_stride = q.w;
    return ax;
}

// Does the slice reach coordinate c of this axis, and from which dY coordinate k?
bool reach(Axis ax, uint c, out uint k) {
    bool side = ax.negative != 0 ? c <= ax.start : c >= ax.start;
    uint d = ax.negative != 0 ? ax.start - c : c - ax.start;
    k = div_by(d, ax.stride, ax.stride_shift);
    return side && k * ax.stride == d && k < ax.dy_size;
}

// Splits element `idx` into its innermost coordinate and what the outer axes contribute.
void locate(uint idx, Axis inner, out uint c0, out bool outer_ok, out uint dy_base) {
    uint rest = div_by(idx, inner.dx_size, inner.dx_shift);
    c0 = idx - rest * inner.dx_size;
    outer_ok = true;
    dy_base = 0;
    [unroll] for (uint a = 1; a < MAX_RANK; ++a) {
        if (a < pc.rank) {
            Axis ax = load_axis(a);
            uint q = a + 1 < pc.rank ? div_by(rest, ax.dx_size, ax.dx_shift) : 0u;
            uint c = rest - q * ax.dx_size;
            rest = q;
            uint k;
            outer_ok = reach(ax, c, k) && outer_ok;
            dy_base += k * ax.dy_stride;
        }
    }
}

VALUE load_dy(uint j) {
#if LANE_BITS >= 32
    return dy_buf[j];
#else
    return lane_get(dy_buf[j / LANES_PER_WORD], j % LANES_PER_WORD);
#endif
}

// dY elements j .. j + ELEMS - 1 of the window as one uint4 (a contiguous run: stride 1 along the inner axis).
uint4 load_run(uint j) {
#if LANE_BITS == 64
    return uint4(dy_buf[j], dy_buf[j + 1]);
#elif LANE_BITS == 32
    return uint4(dy_buf[j], dy_buf[j + 1], dy_buf[j + 2], dy_buf[j + 3]);
#else
    uint byte = j * (LANE_BITS / 8);
    uint w = byte >> 2;
    uint shift = (byte & 3u) * 8u;
    uint4 lo = uint4(dy_buf[w], dy_buf[w + 1], dy_buf[w + 2], dy_buf[w + 3]);
    if (shift == 0) return lo;
    uint4 hi = uint4(lo.yzw, dy_buf[w + 4]);  // the run's last bytes lie in word w + 4
    return (lo >> shift) | (hi << (32u - shift));
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

uint4 insert(uint4 v, uint e, VALUE value) {
#if LANE_BITS == 64
    return e == 0 ? uint4(value, v.zw) : uint4(v.xy, value);
#else
    uint w = e / LANES_PER_WORD;
    uint bits = value << ((e % LANES_PER_WORD) * LANE_BITS);
    return v | uint4(w == 0 ? bits : 0u, w == 1 ? bits : 0u, w == 2 ? bits : 0u, w == 3 ? bits : 0u);
#endif
}

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
        // Fast path: the uint4 lies within one row of the innermost axis, so the outer axes are shared.
        if (outer_ok) {
            if (inner.stride == 1 && inner.negative == 0 && c0 >= inner.start &&
                c0 - inner.start + (ELEMS - 1) < inner.dy_size) {
                // All of it copied from one contiguous run of dY (crops, whole rows).
                result = load_run(dy_base + (c0 - inner.start) - pc.dy_origin);
            } else {
                [unroll] for (uint e = 0; e < ELEMS; ++e) {
                    uint k;
                    if (reach(inner, c0 + e, k)) result = insert(result, e, load_dy(dy_base + k - pc.dy_origin));
                }
            }
        }
    } else {
        uint4 old = uint4(0, 0, 0, 0);
        if (partial) old = dx_buf[i];  // read-modify-write: elements of another pass (or the padding) are kept
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
    }
    dx_buf[i] = result;
}
