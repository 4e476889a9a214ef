// Resample grad, linear float32, fractions (interface/resample_grad.h): where every dX row of the view reads the dY
// row of its own index (view axes 0-2 identities) and each dY column o of axis 3 reaches dX columns lower(o), with
// weight 1 - f(o), and lower(o) + 1, with weight f(o) (or lower(o) alone, weight 1, f(o) = 0), lower(o) never
// decreasing (src/gpu/ops/resample_fractions.h). The host's tables then hold a word per dX column, the bounds, and a
// word per dY column, the fractions, where the tap tables hold two words per dX column and a weight per tap: on a
// 1-D resample (one row, whose tables are read once, from memory) those were twice the bytes of dX and dY together.
// Thread j makes dX element j: column i of row r sums, from +0 in the CPU's order (increasing dY column),
// (1 * f) * v over the dY columns [bounds[i], bounds[i + 1]) (those whose lower column is i - 1; f = 0 there means no
// tap) and (1 * (1 - f)) * v over [bounds[i + 1], bounds[i + 2]) (lower column i), v from dY row r. The host checked
// that the plan's weight of each lower tap is the float32 1 - f, so the kernel's subtraction gives the plan's bits.
// An element that reads a value below tiny_limit or sums to a NaN is made again on bits (exact_float.hlsli).
// Variants: FRACTION_STEPS (2 or 4).
#define STRIPS 0
#include "resample_grad_gather.hlsli"
#if MODE != LINEAR || DTYPE != DT_F32
#error "fractions are linear float32"
#endif

// The tables (binding 2): TABLE_ONE, then from Params::table3 the dx_size3 + 2 bounds, then the dy_size3 fractions.
uint bound(uint i) { return tables[pc.table3 + i]; }
uint fraction_bits(uint o) { return tables[pc.table3 + pc.dx_size3 + 2u + o]; }

// Steps written out (no branch around a load, so an element's loads issue together), FRACTION_STEPS of them (the
// variants: 2 where no column's dY range [bounds[i], bounds[i + 2]) is longer, as at downsamples from 0.5x up, else 4;
// a step costs about 15 instructions whether it adds or not, and the H100 spent them: 0.6x of 8.4M floats 58.7 us at
// 4 steps, 56.3 at 2; 1.25x up 88.8 at 4, 91.0 at 2); a loop takes the rest.
#ifndef FRACTION_STEPS
#error "the build passes -DFRACTION_STEPS=2 or 4"
#endif

// The term of dY column o: its weight for this column (the upper tap below `middle`, else the lower), times v.
#define FRACTION_TAP(HAS, o)                                                                \
    {                                                                                       \
        uint raw = load_raw(row + (o));                                                     \
        uint f_bits = fraction_bits(o);                                                     \
        bool upper = (o) < middle;                                                          \
        bool has = (HAS) && (!upper || f_bits != 0u);                                       \
        precise float w = upper ? asfloat(f_bits) : ROUNDED(1.0f - asfloat(f_bits));        \
        lowest = has ? min(lowest, MAGNITUDE_KEY(raw)) : lowest;                            \
        acc = has ? ROUNDED(acc + TERM(HW_MUL, 1.0f, w, asfloat(raw))) : acc;                \
    }
#define FRACTION_STEP(s) FRACTION_TAP(first + s < end, min(first + s, last))

// The exact sum (integer arithmetic) of a column whose taps are dY columns [first, end), uppers below middle.
float exact_column(uint row, uint first, uint middle, uint end) {
    float acc = 0.0f;
    [loop] for (uint o = first; o < end; ++o) {
        uint f_bits = fraction_bits(o);
        bool upper = o < middle;
        if (upper && f_bits == 0u) continue;
        precise float w = upper ? asfloat(f_bits) : ROUNDED(1.0f - asfloat(f_bits));  // never denormal: exact
        acc = soft_add(acc, TERM(soft_mul, 1.0f, w, EXACT_VALUE(load_raw(row + o))));
    }
    return positive_zero(acc);
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint e = pc.base + id.x;
    if (e >= pc.count) return;
    uint r = 0;  // one row (a 1-D resample): no division (a uniform branch)
    if (pc.dx_size3 != pc.total) r = div_by(e, pc.dx_size3, shift_of(2));
    uint i = e - r * pc.dx_size3;
    uint row = r * pc.dy_size3 - pc.dy_origin;
    uint first = bound(i), middle = bound(i + 1u), end = bound(i + 2u);
    uint last = max(end, 1u) - 1u;  // a step past the end reads the last tap again (or dY column 0), unused
    precise float acc = 0.0f;
    uint lowest = 0xFFFFFFFFu;
    FRACTION_STEP(0) FRACTION_STEP(1)
#if FRACTION_STEPS == 4
    FRACTION_STEP(2) FRACTION_STEP(3)
#endif
    [loop] for (uint o = first + FRACTION_STEPS; o < end; ++o) FRACTION_TAP(true, o)
    uint sum = checked(acc, lowest);
    if (sum == NEEDS_EXACT) sum = asuint(exact_column(row, first, middle, end));
    dx_buf[e] = sum;
}
