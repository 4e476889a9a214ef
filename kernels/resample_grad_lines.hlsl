// Resample grad, nearest, lines (interface/resample_grad.h): where every dX row of the view reads one dY row at most
// (view axes 0-2 of at most one tap each: identities, where the plan resamples its innermost axis alone, or
// downsampled axes) and each element has at most LINE_TAPS (1 to 4) taps on axis 3 (3 and 4: but the first and last
// column, which may have up to LINE_MOST_COUNT). Every row then has the same
// columns, and its dY row is row r (identities) or the host's row table says which (or none). The host
// packs each column's first dY index and tap count into one word (LINE_*), a table that every row shares and that
// stays in the L1 cache. Thread j makes the ELEMENTS consecutive dX elements of one uint4 from ELEMENTS * j (eight
// halves or four floats), stepping over as many row ends as it meets, so rows of any length take whole uint4 stores,
// and an element costs its column word, its loads and a few integer operations (the walk, which looks up each row's
// taps on axes 0-2 and steps over dY rows, reached 20-28% of the bound on rows of 9 to 72 halves on the H100).
//
// An element sums its values from +0 in the CPU's order (src/cpu/resample_grad.cpp; every weight is 1). One value:
// +0 + v is v, so its bits move as they are (no float arithmetic: nothing to flush), but -0, which becomes +0, and a
// NaN, which is made again on bits (exact_float.hlsli, the bits x86-64 gives it). Two to four values (LINE_TAPS 2-4):
// added as floats one after another, as the CPU adds them (fp16 values are multiples of 2^-24, so no partial sum is
// denormal), then rounded to a half; a subnormal half (which the hardware may flush on conversion), a float below tiny_limit or a NaN sum makes
// the element again on bits. Variants: DTYPE and LINE_TAPS (0: the bounds, below).
#define STRIPS 0
#ifndef LINE_WORDS
#define LINE_WORDS 0
#endif
// LINE_WORDS (fp16, 4 taps): a thread makes one 32-bit word of dX, two halves, not a uint4: the lanes of a warp then
// read dY 4 x LINE_TAPS bytes apart, not 16 x LINE_TAPS (the linear word walk's reason: kernels/README.md).
#if LINE_WORDS
#define DX_WORDS uint  // a thread's elements, one store
#else
#define DX_WORDS uint4
#endif
#include "resample_grad_gather.hlsli"
#if MODE != NEAREST
#error "lines are nearest"
#endif
#if LINE_TAPS < 0 || LINE_TAPS > 4  // up to LINE_MOST_TAPS
#error "the build passes -DLINE_TAPS=0 (the bounds) or 1 to 4"
#endif
// LINE_TAPS 0, the bounds: rows whose columns no column word holds (a column of more than LINE_MOST_COUNT taps, or dY
// rows longer than LINE_FIRST_MASK). The table holds each column's first dY index, and past the row's last column
// the row's dY length (nearest taps cover a dY row in order: interface/resample_grad.h); a column's taps are the next
// column's first less its own, summed in a loop.
#define LINE_BOUNDS (LINE_TAPS == 0)
#define WRITTEN_TAPS (LINE_BOUNDS ? 2 : LINE_TAPS)  // an element's taps written out; the rest in a loop
#if DTYPE == DT_F16
#if LINE_WORDS
#define ELEMENTS 2
#else
#define ELEMENTS 8
#endif
#define NEGATIVE_ZERO 0x8000u
#define RAW_IS_NAN(raw) (((raw) & 0x7FFFu) > 0x7C00u)
#define TINY_KEY NORMAL_HALF_KEY  // the hardware converts halves: subnormal ones are made again
#define RAW_FLOAT(raw) f16tof32(raw)
#define FLOAT_BITS(sum) float_to_half_bits_fast(sum)
#else
#if LINE_WORDS
#error "the words are fp16"
#endif
#define ELEMENTS 4
#define NEGATIVE_ZERO 0x80000000u
#define RAW_IS_NAN(raw) is_nan(raw)
#define TINY_KEY pc.tiny_limit
#define RAW_FLOAT(raw) asfloat(raw)
#define FLOAT_BITS(sum) (sum)
#endif

// Column c's word: the table is phased as the walk's copy of axis 3 (column c at (c mod ELEMENTS) phase + c /
// ELEMENTS), so that on rows of many uint4s the lanes of a warp, a uint4 apart, read consecutive words. An identity
// axis 3 has no table (it would be as large as the rows: an identity plan is one row).
uint table_column_word(uint c) {
    uint phase = (pc.dx_size3 + ELEMENTS - 1u) / ELEMENTS;
    return tables[pc.columns + (c % ELEMENTS) * phase + c / ELEMENTS];
}
uint column_word(uint c) {
    if (pc.columns == IDENTITY_AXIS) return c | (1u << LINE_COUNT_SHIFT);  // an if: ?: would read both sides
    return table_column_word(c);
}

#if LINE_BOUNDS
// Column c's first dY index (c up to dx_size3: the row's dY length), phased as the column words.
uint column_first(uint c) {
    uint phase = (pc.dx_size3 + ELEMENTS) / ELEMENTS;  // dx_size3 + 1 words, rounded up
    return tables[pc.columns + (c % ELEMENTS) * phase + c / ELEMENTS];
}
#endif

// The first dY element of dX row r's dY row, or NO_DY_ROW.
uint row_start(uint r) {
    if (pc.row_starts == NO_ROW_TABLE) return r * pc.dy_size3;  // an if: ?: would read the table too
    return tables[pc.row_starts + r];
}

// fp16 at one tap: an element's bits are its one half's (or 0), so its NaNs are found in the thread's words at once.
#define HALF_WORDS_FIND_NANS (DTYPE == DT_F16 && LINE_TAPS == 1)

// The halves of w that are NaNs, a bit each (element k: bit k): (h & 0x7FFF) + 0x3FF carries into bit 15 exactly
// where h & 0x7FFF > 0x7C00, both halves of a word at once (no carry crosses into the high half: 0x7FFF + 0x3FF <
// 0x10000).
uint nan_halves(uint4 w) {
    uint4 carries = ((w & 0x7FFF7FFFu) + 0x03FF03FFu) & 0x80008000u;
    uint4 pairs = ((carries >> 15) & 1u) | ((carries >> 30) & 2u);
    return pairs.x | (pairs.y << 2) | (pairs.z << 4) | (pairs.w << 6);
}

// Tap t of an element (t >= 1), its bits `raw`, into `sum`, in the CPU's order, and its magnitude key into `least`.
// Written out, not [unroll]ed (vkd3d 1.17's unrolling crashes around folded branches: kernels/README.md).
#define LINE_TAP_OF(t, RAW)                                                      \
    {                                                                            \
        uint raw = RAW;                                                          \
        sum = ROUNDED(sum + (count > t ? RAW_FLOAT(raw) : 0.0f));                \
        least = min(least, MAGNITUDE_KEY(raw));                                  \
    }
#define LINE_TAP(t) LINE_TAP_OF(t, load_raw(count > t ? at + t : at))

// fp16 of 3 or 4 taps: an element's halves come from the two or three words that hold them, not a load a half (H100,
// 20261208/86, a uint4 a thread: 75.7 -> 63.8 us). A word is loaded only where a tap within the count lies in it
// (else word 0's again: never past dY's end); taps past the count take tap 0's half, as LINE_TAP's load of `at` does.
#define LINE_TAP_WORDS (DTYPE == DT_F16 && LINE_TAPS >= 3)
#if LINE_TAP_WORDS
#define LINE_HALVES                                                              \
    uint word0 = at >> 1;                                                        \
    bool odd = (at & 1u) != 0;                                                   \
    uint x0 = dy_buf[word0];                                                     \
    uint x1 = dy_buf[count > (odd ? 1u : 2u) ? word0 + 1u : word0];              \
    uint x2 = LINE_TAPS == 4 ? dy_buf[odd && count > 3u ? word0 + 2u : word0] : 0u; \
    uint taps01 = odd ? (x0 >> 16) | (x1 << 16) : x0;                            \
    uint taps23 = odd ? (x1 >> 16) | (x2 << 16) : x1;                            \
    uint raw0 = taps01 & 0xFFFFu;                                                \
    uint raw1 = count > 1u ? taps01 >> 16 : raw0;                                \
    uint raw2 = count > 2u ? taps23 & 0xFFFFu : raw0;                            \
    uint raw3 = count > 3u ? taps23 >> 16 : raw0;
#endif

// An element's bits (a half in the low 16 bits, or a float) from its `count` values from dY element `at`; `redo`
// where they must be made again on bits.
uint element_bits(uint at, uint count, out bool redo) {
#if LINE_TAP_WORDS
    LINE_HALVES
#else
    uint raw0 = load_raw(at);
#endif
    uint moved = count == 0 || raw0 == NEGATIVE_ZERO ? 0u : raw0;
#if HALF_WORDS_FIND_NANS
    redo = false;  // nan_halves finds them in the thread's words
#else
    redo = count != 0 && RAW_IS_NAN(raw0);
#endif
#if LINE_TAPS >= 2 || LINE_BOUNDS
    // Taps past the element's count load `at` again (in its row) and add +0 (exact: the sum keeps its value; a -0
    // sum, all its values -0, becomes +0 below, as the CPU's from +0).
    precise float sum = RAW_FLOAT(raw0);
    uint least = MAGNITUDE_KEY(raw0);
#if LINE_TAP_WORDS
    LINE_TAP_OF(1, raw1)
    LINE_TAP_OF(2, raw2)
#if LINE_TAPS >= 4
    LINE_TAP_OF(3, raw3)
#endif
#else
    LINE_TAP(1)
#if LINE_TAPS >= 3
    LINE_TAP(2)
#endif
#if LINE_TAPS >= 4
    LINE_TAP(3)
#endif
#endif
#if LINE_TAPS >= 3 || LINE_BOUNDS
    // A column of more taps than the variant's (the first or last, where clamping piles a downscale's spare dY
    // columns; the bounds: any) sums the rest in a loop, in order.
    [branch] if (count > WRITTEN_TAPS) {
        [loop] for (uint t = WRITTEN_TAPS; t < count; ++t) {
            uint raw = load_raw(at + t);
            sum = ROUNDED(sum + RAW_FLOAT(raw));
            least = min(least, MAGNITUDE_KEY(raw));
        }
    }
#endif
    bool several = count >= 2;
    redo = several ? is_nan(asuint(sum)) || least < TINY_KEY : redo;
    moved = several ? FLOAT_BITS(asuint(positive_zero(sum))) : moved;
#endif
    return moved;
}

// The same element on bits: soft_add from +0 (soft_add(+0, -0) is +0), then rounded to a half (fp16).
uint exact_bits(uint e) {
    uint r = div_by(e, pc.dx_size3, shift_of(2));
#if LINE_BOUNDS
    uint c = e - r * pc.dx_size3;
    uint first = column_first(c);
    uint row = row_start(r);
    uint at = row + first;
    uint count = row == NO_DY_ROW ? 0u : column_first(c + 1u) - first;
#else
    uint word = column_word(e - r * pc.dx_size3);
    uint row = row_start(r);
    uint at = row + (word & LINE_FIRST_MASK);
    uint count = row == NO_DY_ROW ? 0u : word >> LINE_COUNT_SHIFT;
#endif
    float acc = 0.0f;
    [loop] for (uint t = 0; t < count; ++t) acc = soft_add(acc, EXACT_VALUE(load_raw(at + t)));
    return FLOAT_BITS(asuint(acc));
}

#if LINE_WORDS
// Element k of the thread's word set to `bits`.
uint with_bits(uint w, uint k, uint bits) {
    uint shift = k * 16u;
    return (w & ~(0xFFFFu << shift)) | (bits << shift);
}
#else
// Element k of the thread's uint4 set to `bits`.
uint4 with_bits(uint4 w, uint k, uint bits) {
#if DTYPE == DT_F16
    uint shift = (k & 1u) * 16u;
    bits <<= shift;
    uint keep = ~(0xFFFFu << shift);
    uint q = k >> 1;
#else
    uint keep = 0;
    uint q = k;
#endif
    return uint4(q == 0 ? (w.x & keep) | bits : w.x, q == 1 ? (w.y & keep) | bits : w.y,
                 q == 2 ? (w.z & keep) | bits : w.z, q == 3 ? (w.w & keep) | bits : w.w);
}
#endif

// Element k (column c of row r, whose dY row starts at `row`) into bits##k, then c steps to the next element (into
// the next row at a row's end). Elements past dX's end (k >= n) and rows without a dY row have no taps: 0. PLAIN (a
// literal): the plan's common geometry, a column table and view axes 0-2 identities, whose steps need no test of
// either (the general steps cost about a quarter more instructions an element). Written out, not [unroll]ed
// (vkd3d 1.17's unrolling crashes around folded branches: kernels/README.md).
#define LINE_STEP(PLAIN)                                                         \
    c += 1u;                                                                     \
    bool row_end = c == pc.dx_size3;                                             \
    c = row_end ? 0u : c;                                                        \
    if (PLAIN) {                                                                 \
        row += row_end ? pc.dy_size3 : 0u;                                       \
    } else {                                                                     \
        r += row_end ? 1u : 0u;                                                  \
        [branch] if (row_end) row = row_start(r);                                \
    }
#if LINE_BOUNDS
// The bounds: `first` is column c's first dY index, its count the next column's first less it (column 0's is 0).
#define LINE_ELEMENT(k, PLAIN)                                                   \
    uint bits##k;                                                                \
    {                                                                            \
        uint next = column_first(c + 1u);                                        \
        uint count = k < n && (PLAIN || row != NO_DY_ROW) ? next - first : 0u;  \
        bool redo_k;                                                             \
        bits##k = element_bits(count != 0 ? row + first : 0u, count, redo_k);    \
        redo |= redo_k ? 1u << k : 0u;                                           \
        LINE_STEP(PLAIN)                                                         \
        first = row_end ? 0u : next;                                             \
    }
#else
#define LINE_ELEMENT(k, PLAIN)                                                   \
    uint bits##k;                                                                \
    {                                                                            \
        uint word;                                                               \
        if (PLAIN) word = table_column_word(c);                                  \
        else word = column_word(c);                                              \
        uint count = k < n && (PLAIN || row != NO_DY_ROW) ? word >> LINE_COUNT_SHIFT : 0u; \
        bool redo_k;                                                             \
        bits##k = element_bits(count != 0 ? row + (word & LINE_FIRST_MASK) : 0u, count, redo_k); \
        redo |= redo_k ? 1u << k : 0u;                                           \
        LINE_STEP(PLAIN)                                                         \
    }
#endif
#if LINE_WORDS
#define LINE_UINT4(PLAIN)                                                        \
    LINE_ELEMENT(0, PLAIN) LINE_ELEMENT(1, PLAIN)                                \
    words = bits0 | bits1 << 16;
#elif ELEMENTS == 8
#define LINE_UINT4(PLAIN)                                                        \
    LINE_ELEMENT(0, PLAIN) LINE_ELEMENT(1, PLAIN) LINE_ELEMENT(2, PLAIN) LINE_ELEMENT(3, PLAIN) \
    LINE_ELEMENT(4, PLAIN) LINE_ELEMENT(5, PLAIN) LINE_ELEMENT(6, PLAIN) LINE_ELEMENT(7, PLAIN) \
    words = uint4(bits0 | bits1 << 16, bits2 | bits3 << 16, bits4 | bits5 << 16, bits6 | bits7 << 16);
#else
#define LINE_UINT4(PLAIN)                                                        \
    LINE_ELEMENT(0, PLAIN) LINE_ELEMENT(1, PLAIN) LINE_ELEMENT(2, PLAIN) LINE_ELEMENT(3, PLAIN) \
    words = uint4(bits0, bits1, bits2, bits3);
#endif

void make_uint4(uint j) {
    uint e0 = ELEMENTS * j;
    uint r = div_by(e0, pc.dx_size3, shift_of(2));
    uint c = e0 - r * pc.dx_size3;
    uint row = row_start(r);
    uint n = min(ELEMENTS, pc.total - e0);
#if LINE_BOUNDS
    uint first = column_first(c);
#endif
    uint redo = 0;  // a bit per element made again on bits below
    DX_WORDS words;
    [branch] if (pc.columns != IDENTITY_AXIS && pc.row_starts == NO_ROW_TABLE) {
        LINE_UINT4(true)
    } else {
        LINE_UINT4(false)
    }
#if HALF_WORDS_FIND_NANS
    redo = nan_halves(words);
#endif
    dx_buf[j] = words;
    // Stored first, then each element made again patched in place (as the walk: redoing into registers and storing
    // after gave 0 for every redone sum in the fp16 strips on the H100).
    [loop] while (redo != 0) {
        uint k = firstbitlow(redo);
        redo &= redo - 1u;
        dx_buf[j] = with_bits(dx_buf[j], k, exact_bits(e0 + k));
    }
}

[numthreads(WORKGROUP_SIZE, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    set_opaque_zero();
    uint j = pc.base + id.x;
    if (j < pc.count) make_uint4(j);
}
