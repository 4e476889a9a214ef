// Element k of a thread's uint4 of dX set to its result, float32 bits (fp16: rounded to a half): the uint4s of the
// resample walk and planes. Needs DTYPE and exact_float.hlsli's float_to_half_bits_fast.
#ifndef DMLGRAD_RESAMPLE_UINT4_ELEMENT_HLSLI
#define DMLGRAD_RESAMPLE_UINT4_ELEMENT_HLSLI

uint4 with_element(uint4 w, uint k, uint sum) {
#if DTYPE == DT_F16
    uint shift = (k & 1u) * 16u;
    uint bits = float_to_half_bits_fast(sum) << shift;
    uint keep = ~(0xFFFFu << shift);
    uint q = k >> 1;
#else
    uint bits = sum;
    uint keep = 0;
    uint q = k;
#endif
    return uint4(q == 0 ? (w.x & keep) | bits : w.x, q == 1 ? (w.y & keep) | bits : w.y,
                 q == 2 ? (w.z & keep) | bits : w.z, q == 3 ? (w.w & keep) | bits : w.w);
}

#endif  // DMLGRAD_RESAMPLE_UINT4_ELEMENT_HLSLI
