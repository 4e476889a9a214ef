// Resample grad, f32 strips (resample_grad_strips.hlsli): thread j makes STRIP_ROWS rows of one column. Variants:
// MODE, ONE_TAP and (linear) TAPS, as resample_grad_gather.hlsli says.
#include "resample_grad_strips.hlsli"
#if DTYPE != DT_F32
#error "the f32 strips: the build passes -DDTYPE=DT_F32"
#endif

// One row of a strip into OUT: its taps T2 (at most FEW_TAPS) of axis 2, the strip's p1, o01, t3 and w3.
#define STRIP_ROW(T2, OUT)                                                                  \
    {                                                                                       \
        precise float acc = 0.0f;                                                           \
        uint low = 0xFFFFFFFFu;                                                             \
        ROWS_OF(T2, COLUMNS(acc, low, t3, w3, row_start + t3.first, HW_VALUE))              \
        OUT = checked(acc, low);                                                            \
    }

#if TAPS == 4
// Four taps (TAPS 4): where the strip's four rows have the same weights (integer upscales such as 2x, away from
// the edges), the products (p1 * w2) * w3 of the first row serve all four: q[k2 * 4 + k3], written out
// (spirv-opt's unrolling drops NoContraction from the copies it makes); a step past a list's count has the product
// 0, as in TERM. (Not with 3 taps: at 1.5x the rows' weights differ in their last bits, and the test alone made
// linear 1.5x 6% slower, 420 -> 446 us on the H100.)
#define Q_STEP(k2, k3) q[k2 * 4 + k3] = HW_MUL(k2 < s.ra.count ? HW_MUL(p1, weight(s.ra, k2)) : 0.0f, w3[k3]);
#define Q_ROW(k2) Q_STEP(k2, 0) Q_STEP(k2, 1) Q_STEP(k2, 2) Q_STEP(k2, 3)
#define Q_TERM(k2, k3)                                                                      \
    {                                                                                       \
        uint raw = load_raw(row_start + t3.first + min(k3, t3.count - 1u));                 \
        low = min(low, MAGNITUDE_KEY(raw));                                                 \
        acc = ROUNDED(acc + ROUNDED(q[k2 * 4 + k3] * HW_VALUE(raw)));                       \
    }
#define Q_ROW_TERMS(T2, k2)                                                                 \
    {                                                                                       \
        uint row_start = (o01 + T2.first + min(k2, T2.count - 1u)) * pc.dy_size3 - pc.dy_origin; \
        Q_TERM(k2, 0) Q_TERM(k2, 1) Q_TERM(k2, 2) Q_TERM(k2, 3)                             \
    }
// One row of a strip into OUT with the shared products q.
#define STRIP_ROW_Q(T2, OUT)                                                                \
    {                                                                                       \
        precise float acc = 0.0f;                                                           \
        uint low = 0xFFFFFFFFu;                                                             \
        Q_ROW_TERMS(T2, 0) Q_ROW_TERMS(T2, 1) Q_ROW_TERMS(T2, 2) Q_ROW_TERMS(T2, 3)         \
        OUT = checked(acc, low);                                                            \
    }

// Where moreover the rows' four taps each start two dY rows apart (2x away from the edges), the strip's rows tap
// dY rows ra.first + 2 r + k2 (r = 0-3, k2 = 0-3): ten rows, each loaded once for the two strip rows that tap it.
#define PAIRED_LOAD(n)                                                                      \
    {                                                                                       \
        uint row_start = (o01 + s.ra.first + n) * pc.dy_size3 - pc.dy_origin;               \
        [unroll] for (uint k3 = 0; k3 < 4; ++k3) {                                          \
            uint raw = load_raw(row_start + t3.first + min(k3, t3.count - 1u));             \
            low = min(low, MAGNITUDE_KEY(raw));                                             \
            v[n * 4 + k3] = HW_VALUE(raw);                                                  \
        }                                                                                   \
    }
#define PAIRED_TERMS(ACC, r, k2)                                                            \
    ACC = ROUNDED(ACC + ROUNDED(q[k2 * 4 + 0] * v[(2 * r + k2) * 4 + 0]));                  \
    ACC = ROUNDED(ACC + ROUNDED(q[k2 * 4 + 1] * v[(2 * r + k2) * 4 + 1]));                  \
    ACC = ROUNDED(ACC + ROUNDED(q[k2 * 4 + 2] * v[(2 * r + k2) * 4 + 2]));                  \
    ACC = ROUNDED(ACC + ROUNDED(q[k2 * 4 + 3] * v[(2 * r + k2) * 4 + 3]));
#define PAIRED_ROW(ACC, r)                                                                  \
    PAIRED_TERMS(ACC, r, 0) PAIRED_TERMS(ACC, r, 1) PAIRED_TERMS(ACC, r, 2) PAIRED_TERMS(ACC, r, 3)
bool rows_paired(Strip s) {
    return s.ra.count == 4 && s.rb.first == s.ra.first + 2u && s.rc.first == s.ra.first + 4u &&
           s.rd.first == s.ra.first + 6u;
}

// Whether rows A and B have the same taps' weights (bits: all are positive and finite) and counts.
bool same_weights(Taps a, Taps b) {
    bool same = a.count == b.count;
    [unroll] for (uint k = 0; k < 4; ++k) same = same && (k >= a.count || tables[a.start + k] == tables[b.start + k]);
    return same;
}
#endif

// f32: one column, sums s0 to s3 (s4 to s7 unused).
void run_strip(uint j) {
    Strip s = strip_of(j, 1u, shift_of(2));
    Taps t3 = taps_of(pc.table3, s.col);
    if (ONE_TAP) t3.count = 1;
    uint s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    bool fast = strip_is_fast(s) && FITS(t3);
#if TAPS == 4
    [branch] if (fast && same_weights(s.ra, s.rb) && same_weights(s.ra, s.rc) && same_weights(s.ra, s.rd)) {
        STRIP_PLANE(s)
        LOAD_WEIGHTS(w3, t3)
        precise float q[16];
        Q_ROW(0) Q_ROW(1) Q_ROW(2) Q_ROW(3)
        [branch] if (rows_paired(s)) {
            float v[40];
            uint low = 0xFFFFFFFFu;
            PAIRED_LOAD(0) PAIRED_LOAD(1) PAIRED_LOAD(2) PAIRED_LOAD(3) PAIRED_LOAD(4)
            PAIRED_LOAD(5) PAIRED_LOAD(6) PAIRED_LOAD(7) PAIRED_LOAD(8) PAIRED_LOAD(9)
            precise float acc_a = 0.0f;
            precise float acc_b = 0.0f;
            precise float acc_c = 0.0f;
            precise float acc_d = 0.0f;
            PAIRED_ROW(acc_a, 0) PAIRED_ROW(acc_b, 1) PAIRED_ROW(acc_c, 2) PAIRED_ROW(acc_d, 3)
            s0 = checked(acc_a, low);
            s1 = checked(acc_b, low);
            s2 = checked(acc_c, low);
            s3 = checked(acc_d, low);
        } else {
            STRIP_ROW_Q(s.ra, s0) STRIP_ROW_Q(s.rb, s1) STRIP_ROW_Q(s.rc, s2) STRIP_ROW_Q(s.rd, s3)
        }
    } else
#endif
#if MODE == NEAREST && !ONE_TAP
    [branch] if (plane_is_empty(s)) {
        // s0 to s3 stay +0
    } else
#endif
    [branch] if (fast) {
        STRIP_PLANE(s)
        LOAD_WEIGHTS(w3, t3)
        STRIP_ROW(s.ra, s0) STRIP_ROW(s.rb, s1) STRIP_ROW(s.rc, s2) STRIP_ROW(s.rd, s3)
    } else {
        [loop] for (uint k = 0; k < s.rows; ++k) {
            uint sum = gather(s.e0 + k * pc.dx_size3);
            SET_SUM(k, sum)
        }
    }
    uint exact = MASK_OF(NEEDS_EXACT) & ((1u << s.rows) - 1u);
    [loop] while (exact != 0) {
        uint k = firstbitlow(exact);
        exact &= exact - 1u;
        uint sum = asuint(exact_sum(s.e0 + k * pc.dx_size3));
        SET_SUM(k, sum)
    }
    uint at = s.e0 - pc.dx_origin;
    dx_buf[at] = s0;
    if (s.rows > 1) dx_buf[at + pc.dx_size3] = s1;
    if (s.rows > 2) dx_buf[at + 2u * pc.dx_size3] = s2;
    if (s.rows > 3) dx_buf[at + 3u * pc.dx_size3] = s3;
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) run_strip(j);
}
