// Word-wise gathers of slice grad (shared by kernels/slice_grad.hlsl and kernels/slice_grad_walk.hlsl): a run of dY
// (step 1) or, for 8- and 16-bit elements, every other element (step 2) moved into a uint4 with whole-word loads,
// shifts and masks instead of element by element. The includer includes slice_grad_axes.hlsli first.
#ifndef DMLGRAD_SLICE_GRAD_WORDS_HLSLI
#define DMLGRAD_SLICE_GRAD_WORDS_HLSLI

uint low_bytes(uint n) { return n >= 4u ? 0xFFFFFFFFu : (1u << (8u * n)) - 1u; }  // mask of the n low bytes

// A run over the whole uint4 (most uint4s of a crop's rows): its 16 bytes from byte `first` of the window, from the
// words that hold them (four, a fifth where `first` is not a word's first byte), without load_run's clamps and masks:
// with those, 8- and 16-bit copies ran 75-79% of the bound, now 93% (H200, wholeruns44). The spans kernels, whose
// span ends take load_run's general path, define WHOLE_RUNS 0: the branch cost them 3-6%. 64-bit elements: load_run's
// two uint2 loads.
#ifndef WHOLE_RUNS
#define WHOLE_RUNS 1
#endif
#if WHOLE_RUNS && LANE_BITS < 64
uint4 load_whole_run(uint first) {
    uint w = first >> 2;
    uint4 words = uint4(dy_buf[w], dy_buf[w + 1u], dy_buf[w + 2u], dy_buf[w + 3u]);
#if LANE_BITS < 32
    uint shift = (first & 3u) * 8u;
    [branch] if (shift != 0) {
        uint next = dy_buf[w + 4u];
        words = (words >> shift) | (uint4(words.yzw, next) << (32u - shift));
    }
#endif
    return words;
}
#endif

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
#if WHOLE_RUNS
    if (e_lo == 0 && e_hi == ELEMS) return load_whole_run(first);
#endif
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

// The uint4's elements in reverse order (element e to ELEMS - 1 - e): a run of dY read backwards is load_run's run
// placed in the mirrored elements, then mirrored.
uint4 mirror_elements(uint4 v) {
#if LANE_BITS == 64
    return uint4(v.z, v.w, v.x, v.y);
#else
    uint4 r = v.wzyx;
#if LANE_BITS == 16
    r = (r >> 16) | (r << 16);
#elif LANE_BITS == 8
    r = ((r & 0xFFu) << 24) | ((r & 0xFF00u) << 8) | ((r >> 8) & 0xFF00u) | (r >> 24);
#endif
    return r;
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

#endif  // DMLGRAD_SLICE_GRAD_WORDS_HLSLI
