#pragma once
// What the operator fuzz targets share: the fuzzer's bytes read as small choices, tensors filled from them, and
// an element as a number. Deliberately separate from the code under test: the targets' references must not
// reuse what they check.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/half.h"
#include "core/tensor.h"

namespace dmlgrad::fuzz {

// The fuzzer's bytes, read front to back; 0 once they run out.
struct Bytes {
    const uint8_t* p;
    size_t n;
    uint8_t next() { return n ? (--n, *p++) : 0; }
    // A choice among `count` (count > 0).
    size_t pick(size_t count) { return next() % count; }
    template <class T, size_t N>
    T pick_from(const T (&options)[N]) {
        return options[pick(N)];
    }
};

inline Tensor raw_tensor(DType type, const Shape& shape, Bytes& in) {
    Tensor t(TensorInfo{type, shape});
    for (std::byte& b : t.span()) b = std::byte(in.next());
    return t;
}

// An element as a double (fp16 through half_to_float, integers signed or unsigned as their type is).
inline double value_at(const Tensor& t, uint64_t i) {
    const std::byte* p = t.span().data() + i * dtype_size(t.info.dtype);
    auto load = [p](auto v) {
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    switch (t.info.dtype) {
        case DType::f16: return half_to_float(load(uint16_t{}));
        case DType::f32: return load(float{});
        case DType::f64: return load(double{});
        case DType::i8: return load(int8_t{});
        case DType::i16: return load(int16_t{});
        case DType::i32: return load(int32_t{});
        case DType::i64: return double(load(int64_t{}));
        case DType::u8: return load(uint8_t{});
        case DType::u16: return load(uint16_t{});
        case DType::u32: return load(uint32_t{});
        case DType::u64: return double(load(uint64_t{}));
    }
    return 0;
}

// Small integers (and, where `nan` is set, a NaN now and then) stored in a float tensor: sums of them are exact
// in any order, and ties are frequent.
inline Tensor small_values(DType type, const Shape& shape, Bytes& in, bool nan) {
    Tensor t(TensorInfo{type, shape});
    for (uint64_t i = 0; i < t.elements(); ++i) {
        const uint8_t b = in.next();
        const float v = nan && b == 0xFF ? NAN : float(int(b % 9) - 4);
        if (type == DType::f16) {
            const uint16_t h = float_to_half(v);
            std::memcpy(t.span().data() + 2 * i, &h, 2);
        } else {
            std::memcpy(t.span().data() + 4 * i, &v, 4);
        }
    }
    return t;
}

// Fills with a pattern: an element the backend does not write shows.
inline void poison(Tensor& t) { std::memset(t.span().data(), 0xA5, t.bytes()); }

}  // namespace dmlgrad::fuzz
