// Resample grad, fp16 strips (resample_grad_strips.hlsli): thread j makes STRIP_ROWS rows of one word (two
// columns). Variants: MODE and ONE_TAP, as resample_grad_gather.hlsli says.
#include "resample_grad_strips.hlsli"
#if DTYPE != DT_F16
#error "the fp16 strips: the build passes -DDTYPE=DT_F16"
#endif

#if MODE == LINEAR && !ONE_TAP
// Linear fp16 strips whose rows' taps lie within SPAN_ROWS dY rows (2x: 10, 1.5x: 8) walk those rows once: each dY
// row is loaded once and its terms go to every strip row that taps it (at 2x each row feeds two), instead of each
// strip row loading its own (H100: linear 2x 988 -> 793 us, 1.5x 743 -> 625). Every sum still adds its terms in
// the CPU's order: its rows' taps in increasing dY row, each row's column taps in increasing dY column. (f32 strips
// were slower this way, 4-8% as a loop and 14-24% written out: one sum's four terms a branch, each a chain of
// dependent adds, where the fp16 strips have two sums a branch.)
//
// A column takes FEW_TAPS taps: a tap past its list's count has weight 0 and reads a column clamped into the row,
// a zero term that changes no sum, as in the fixed-tap steps above (TAPS). So the taps need no per-term test.
// (Strips are one chunk: the whole of dY is bound.)
#define SPAN_ROWS 12

// The dY rows [lo, hi) a strip's rows tap: an interval, as each list is contiguous and the lists are monotonic
// (an empty list's first is 0, which only widens it).
struct RowSpan {
    uint lo, hi;
};
RowSpan span_of(Strip s) {
    RowSpan r;
    r.lo = min(min(s.ra.first, s.rb.first), min(s.rc.first, s.rd.first));
    r.hi = max(max(s.ra.first + s.ra.count, s.rb.first + s.rb.count),
               max(s.rc.first + s.rc.count, s.rd.first + s.rd.count));
    return r;
}
bool takes_shared_rows(RowSpan r) { return r.hi > r.lo && r.hi - r.lo <= SPAN_ROWS; }

// The columns a column's FEW_TAPS taps read, clamped into the row.
void tap_columns(Taps t, out uint c[FEW_TAPS]) {
    [unroll] for (uint k = 0; k < FEW_TAPS; ++k) c[k] = min(t.first + k, pc.dy_size3 - 1u);
}

// dY row ROW's values at columns C into V (converted with HW_VALUE), their smallest magnitude key into LOW.
#define LOAD_ROW(V, LOW, ROW, C)                                                            \
    [unroll] for (uint k = 0; k < FEW_TAPS; ++k) {                                          \
        uint raw = load_raw(ROW + C[k]);                                                    \
        LOW = min(LOW, MAGNITUDE_KEY(raw));                                                 \
        V[k] = HW_VALUE(raw);                                                               \
    }
// ACC += (p2 * W[k]) * V[k] for each column tap k (written out: spirv-opt's unrolling drops NoContraction from
// the copies it makes).
#define ROW_TERMS(ACC, W, V)                                                                \
    ACC = ROUNDED(ACC + ROUNDED(ROUNDED(p2 * W[0]) * V[0]));                                \
    ACC = ROUNDED(ACC + ROUNDED(ROUNDED(p2 * W[1]) * V[1]));                                \
    ACC = ROUNDED(ACC + ROUNDED(ROUNDED(p2 * W[2]) * V[2]));                                \
    ACC = ROUNDED(ACC + ROUNDED(ROUNDED(p2 * W[3]) * V[3]));
// TERMS with p2, strip row R's weight product for dY row `o`, if R taps that row.
#define IF_ROW_TAPS(R, TERMS)                                                               \
    {                                                                                       \
        uint k2 = o - R.first;                                                              \
        [branch] if (k2 < R.count) {                                                        \
            precise float p2 = HW_MUL(p1, weight(R, k2));                                   \
            TERMS                                                                           \
        }                                                                                   \
    }

// The strip's sums s0 to s7 by walking its dY rows once (SPAN_ROWS above).
void strip_by_shared_rows(Strip s, Taps ta, Taps tb, RowSpan span, inout uint s0, inout uint s1, inout uint s2,
                          inout uint s3, inout uint s4, inout uint s5, inout uint s6, inout uint s7) {
    STRIP_PLANE(s)
    LOAD_WEIGHTS(wa, ta)
    LOAD_WEIGHTS(wb, tb)
    uint ca[FEW_TAPS], cb[FEW_TAPS];
    tap_columns(ta, ca);
    tap_columns(tb, cb);
    precise float acc_0 = 0.0f;
    precise float acc_1 = 0.0f;
    precise float acc_2 = 0.0f;
    precise float acc_3 = 0.0f;
    precise float acc_4 = 0.0f;
    precise float acc_5 = 0.0f;
    precise float acc_6 = 0.0f;
    precise float acc_7 = 0.0f;
    uint low_a = 0xFFFFFFFFu, low_b = 0xFFFFFFFFu;
    [loop] for (uint o = span.lo; o < span.hi; ++o) {
        uint row_start = (o01 + o) * pc.dy_size3 - pc.dy_origin;
        float va[FEW_TAPS], vb[FEW_TAPS];
        LOAD_ROW(va, low_a, row_start, ca)
        LOAD_ROW(vb, low_b, row_start, cb)
        IF_ROW_TAPS(s.ra, ROW_TERMS(acc_0, wa, va) ROW_TERMS(acc_1, wb, vb))
        IF_ROW_TAPS(s.rb, ROW_TERMS(acc_2, wa, va) ROW_TERMS(acc_3, wb, vb))
        IF_ROW_TAPS(s.rc, ROW_TERMS(acc_4, wa, va) ROW_TERMS(acc_5, wb, vb))
        IF_ROW_TAPS(s.rd, ROW_TERMS(acc_6, wa, va) ROW_TERMS(acc_7, wb, vb))
    }
    s0 = checked_hw(acc_0, low_a);
    s1 = checked_hw(acc_1, low_b);
    s2 = checked_hw(acc_2, low_a);
    s3 = checked_hw(acc_3, low_b);
    s4 = checked_hw(acc_4, low_a);
    s5 = checked_hw(acc_5, low_b);
    s6 = checked_hw(acc_6, low_a);
    s7 = checked_hw(acc_7, low_b);
}
#endif

// One row of a strip into OUT_A and OUT_B (its two columns): as STRIP_ROW with the columns' ta, wa and tb, wb.
#define STRIP_ROW_PAIR(T2, OUT_A, OUT_B)                                                    \
    {                                                                                       \
        precise float acc_a = 0.0f;                                                         \
        precise float acc_b = 0.0f;                                                         \
        uint low_a = 0xFFFFFFFFu, low_b = 0xFFFFFFFFu;                                      \
        ROWS_OF(T2, COLUMNS(acc_a, low_a, ta, wa, row_start + ta.first, HW_VALUE)           \
                    COLUMNS(acc_b, low_b, tb, wb, row_start + tb.first, HW_VALUE))          \
        OUT_A = checked_hw(acc_a, low_a);                                                   \
        OUT_B = checked_hw(acc_b, low_b);                                                   \
    }

#if ONE_TAP
// One-tap fp16 strips: each sum is a single term, so a column or a row whose tap (dY index and weight) is its
// neighbour's has its neighbour's sum (linear 0.5x: both halves of every word, and rows in pairs): made once.
bool same_tap(Taps a, Taps b) {
#if MODE == LINEAR
    if (tables[a.start] != tables[b.start]) return false;
#endif
    return a.first == b.first;
}
// Row T2 of the strip into OUT_A and OUT_B (its two columns, the second a copy where same_columns).
#define ONE_TAP_ROW(T2, OUT_A, OUT_B)                                                       \
    {                                                                                       \
        precise float p2 = PRODUCT(HW_MUL, p1, weight(T2, 0));                              \
        uint row_start = (o01 + T2.first) * pc.dy_size3 - pc.dy_origin;                     \
        uint raw_a = load_raw(row_start + ta.first);                                        \
        precise float acc_a = 0.0f;                                                         \
        acc_a = ROUNDED(acc_a + TERM(HW_MUL, p2, wa, HW_VALUE(raw_a)));                     \
        OUT_A = checked_hw(acc_a, MAGNITUDE_KEY(raw_a));                                    \
        OUT_B = OUT_A;                                                                      \
        [branch] if (!same_columns) {                                                       \
            uint raw_b = load_raw(row_start + tb.first);                                    \
            precise float acc_b = 0.0f;                                                     \
            acc_b = ROUNDED(acc_b + TERM(HW_MUL, p2, wb, HW_VALUE(raw_b)));                 \
            OUT_B = checked_hw(acc_b, MAGNITUDE_KEY(raw_b));                                \
        }                                                                                   \
    }

// The strip's sums s0 to s7, each made once for a run of equal taps.
void one_tap_strip(Strip s, Taps ta, Taps tb, inout uint s0, inout uint s1, inout uint s2, inout uint s3,
                   inout uint s4, inout uint s5, inout uint s6, inout uint s7) {
    STRIP_PLANE(s)
    float wa = 1.0f, wb = 1.0f;
#if MODE == LINEAR
    wa = weight(ta, 0);
    wb = weight(tb, 0);
#endif
    bool same_columns = same_tap(ta, tb);
    ONE_TAP_ROW(s.ra, s0, s1)
    s2 = s0;
    s3 = s1;
    [branch] if (!same_tap(s.rb, s.ra)) ONE_TAP_ROW(s.rb, s2, s3)
    s4 = s2;
    s5 = s3;
    [branch] if (!same_tap(s.rc, s.rb)) ONE_TAP_ROW(s.rc, s4, s5)
    s6 = s4;
    s7 = s5;
    [branch] if (!same_tap(s.rd, s.rc)) ONE_TAP_ROW(s.rd, s6, s7)
}
#endif

// fp16: two columns (one word of each row): sums s0 to s7, row k's in s(2k) and s(2k + 1). The words are stored
// first, then each sum that needs it is made again and its half patched in place. Redoing into s0 to s7 in the
// loop (SET_SUM) and storing after it gave 0 for every redone sum on the H100 (driver 580.159, seen in nearest;
// lavapipe right, and the SPIR-V's loop reads right): tests/gpu/resample_specials_test.cpp.
void run_strip(uint j) {
    uint shift = shift_of(2);
    Strip s = strip_of(j, 2u, shift == NO_SHIFT ? NO_SHIFT : shift - 1u);
    Taps ta = taps_of(pc.table3, s.col), tb = taps_of(pc.table3, s.col + 1u);
    if (ONE_TAP) ta.count = tb.count = 1;
    uint s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    bool fast_path = strip_is_fast(s) && FITS(ta) && FITS(tb);
#if MODE == LINEAR && !ONE_TAP
    RowSpan span = span_of(s);
    [branch] if (fast_path && takes_shared_rows(span)) {
        strip_by_shared_rows(s, ta, tb, span, s0, s1, s2, s3, s4, s5, s6, s7);
    } else
#endif
#if ONE_TAP
    [branch] if (fast_path) {
        one_tap_strip(s, ta, tb, s0, s1, s2, s3, s4, s5, s6, s7);
    } else
#endif
#if MODE == NEAREST && !ONE_TAP
    [branch] if (plane_is_empty(s)) {
        // s0 to s7 stay +0
    } else
#endif
    [branch] if (fast_path) {
        STRIP_PLANE(s)
        LOAD_WEIGHTS(wa, ta)
        LOAD_WEIGHTS(wb, tb)
        STRIP_ROW_PAIR(s.ra, s0, s1) STRIP_ROW_PAIR(s.rb, s2, s3)
        STRIP_ROW_PAIR(s.rc, s4, s5) STRIP_ROW_PAIR(s.rd, s6, s7)
    } else {
        [loop] for (uint k = 0; k < 2u * s.rows; ++k) {
            uint sum = gather(s.e0 + (k >> 1) * pc.dx_size3 + (k & 1u));
            SET_SUM(k, sum)
        }
    }
    uint valid = (1u << (2u * s.rows)) - 1u;
    uint fast = MASK_OF(NEEDS_FAST) & valid, exact = MASK_OF(NEEDS_EXACT) & valid;
    uint at = (s.e0 - pc.dx_origin) / 2u, step = pc.dx_size3 / 2u;
    dx_buf[at] = float_to_half_bits_fast(s0) | (float_to_half_bits_fast(s1) << 16);
    if (s.rows > 1) dx_buf[at + step] = float_to_half_bits_fast(s2) | (float_to_half_bits_fast(s3) << 16);
    if (s.rows > 2) dx_buf[at + 2u * step] = float_to_half_bits_fast(s4) | (float_to_half_bits_fast(s5) << 16);
    if (s.rows > 3) dx_buf[at + 3u * step] = float_to_half_bits_fast(s6) | (float_to_half_bits_fast(s7) << 16);
    [loop] while ((fast | exact) != 0) {
        uint k = firstbitlow(fast | exact);
        uint e = s.e0 + (k >> 1) * pc.dx_size3 + (k & 1u);
        uint sum = NEEDS_EXACT;
        [branch] if ((fast & (1u << k)) != 0) sum = gather(e);
        fast &= ~(1u << k);
        exact &= ~(1u << k);
        [branch] if (sum == NEEDS_EXACT) sum = asuint(exact_sum(e));
        uint word = at + (k >> 1) * step, low_bit = (k & 1u) * 16u;  // the thread's own word: no race
        dx_buf[word] = (dx_buf[word] & ~(0xFFFFu << low_bit)) | (float_to_half_bits_fast(sum) << low_bit);
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) run_strip(j);
}
