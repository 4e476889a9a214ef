// Element k's dX bits from its fast sum, where a thread makes several elements in registers and stores them together
// (the resample walk and the linear planes). Needs DTYPE, NEEDS_EXACT and exact_float.hlsli's
// float_to_half_bits_fast.
#ifndef DMLGRAD_RESAMPLE_ELEMENT_BITS_HLSLI
#define DMLGRAD_RESAMPLE_ELEMENT_BITS_HLSLI

// A float32 sum's bits as dX holds them (fp16: rounded to a half).
#if DTYPE == DT_F16
#define ELEMENT_BITS(sum) float_to_half_bits_fast(sum)
#else
#define ELEMENT_BITS(sum) (sum)
#endif

// bits##k, element k's bits, from its sum acc##k and smallest magnitude key low##k through SUM_BITS (a sum's float32
// bits, or NEEDS_EXACT): where the sum must be made again on bits after the store, 0 there and bit k set in `exact`.
#define ELEMENT_DONE(k, SUM_BITS)                                                           \
    uint bits##k;                                                                           \
    {                                                                                       \
        uint sum = SUM_BITS(acc##k, low##k);                                                \
        exact |= sum == NEEDS_EXACT ? 1u << k : 0u;                                         \
        bits##k = sum == NEEDS_EXACT ? 0u : ELEMENT_BITS(sum);                              \
    }

#endif  // DMLGRAD_RESAMPLE_ELEMENT_BITS_HLSLI
