#include "support/tensor_testing.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/compare.h"
#include "core/half.h"

namespace dmlgrad::testing {
namespace {

template <class F>
void for_type(DType type, F&& f) {
    switch (type) {
        case DType::f16: return f(uint16_t{});
        case DType::f32: return f(float{});
        case DType::f64: return f(double{});
        case DType::i8: return f(int8_t{});
        case DType::i16: return f(int16_t{});
        case DType::i32: return f(int32_t{});
        case DType::i64: return f(int64_t{});
        case DType::u8: return f(uint8_t{});
        case DType::u16: return f(uint16_t{});
        case DType::u32: return f(uint32_t{});
        case DType::u64: return f(uint64_t{});
    }
}

double element_as_double(const Tensor& t, uint64_t i) {
    double v = 0;
    for_type(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        T x;
        std::memcpy(&x, t.buffer.data() + i * sizeof(T), sizeof(T));
        if (t.dtype() == DType::f16)
            v = half_to_float(uint16_t(x));
        else
            v = double(x);
    });
    return v;
}

::testing::AssertionResult same_layout(const Tensor& expected, const Tensor& actual) {
    if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
        return ::testing::AssertionFailure()
               << "layout differs: expected " << dtype_name(expected.dtype()) << " " << shape_string(expected.shape())
               << ", got " << dtype_name(actual.dtype()) << " " << shape_string(actual.shape());
    return ::testing::AssertionSuccess();
}

// The first difference, in core's words (core/compare.h: the formatting --check and --compare print).
::testing::AssertionResult mismatch(const Tensor& expected, const Tensor& actual) {
    const Comparison c = compare_tensors(actual, expected, Tolerance{});
    if (c.passed())
        return ::testing::AssertionFailure() << "the bytes differ where core's comparison finds no difference";
    return ::testing::AssertionFailure() << c.beyond << " element(s) differ; first at index " << c.first_beyond
                                         << " coordinate " << coordinate_string(expected.shape(), c.first_beyond)
                                         << ": expected " << element_string(expected, c.first_beyond) << ", got "
                                         << element_string(actual, c.first_beyond);
}

}  // namespace

Tensor tensor_from(DType type, Shape shape, const std::vector<double>& values) {
    Tensor t(TensorInfo{type, std::move(shape)});
    if (values.size() != t.elements()) throw std::invalid_argument("tensor_from: value count does not match shape");
    for_type(type, [&](auto tag) {
        using T = decltype(tag);
        for (size_t i = 0; i < values.size(); ++i) {
            T x;
            if (type == DType::f16)
                x = T(float_to_half(float(values[i])));
            else
                x = T(values[i]);
            std::memcpy(t.buffer.data() + i * sizeof(T), &x, sizeof(T));
        }
    });
    return t;
}

std::vector<double> to_doubles(const Tensor& t) {
    std::vector<double> out(t.elements());
    for (uint64_t i = 0; i < out.size(); ++i) out[i] = element_as_double(t, i);
    return out;
}

Tensor random_tensor(DType type, const Shape& shape, std::mt19937_64& rng, bool specials, double range) {
    Tensor t(TensorInfo{type, shape});
    const uint64_t n = t.elements();
    std::uniform_real_distribution<double> uniform(-range, range);
    std::uniform_int_distribution<int> special_pick(0, 15);
    if (dtype_is_float(type)) {
        const double inf = std::numeric_limits<double>::infinity();
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double denormal = type == DType::f16 ? 6e-8 : (type == DType::f32 ? 1e-45 : 5e-324);
        const double specials_list[] = {0.0, -0.0, inf, -inf, nan, denormal, -denormal, 1.0};
        for_type(type, [&](auto tag) {
            using T = decltype(tag);
            for (uint64_t i = 0; i < n; ++i) {
                double v = uniform(rng);
                if (specials && special_pick(rng) == 0) v = specials_list[rng() % 8];
                T x;
                if (type == DType::f16)
                    x = T(float_to_half(float(v)));
                else
                    x = T(v);
                std::memcpy(t.buffer.data() + i * sizeof(T), &x, sizeof(T));
            }
        });
    } else {
        for_type(type, [&](auto tag) {
            using T = decltype(tag);
            for (uint64_t i = 0; i < n; ++i) {
                T x = T(rng());
                if (special_pick(rng) == 0) {
                    const T extremes[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), T(1)};
                    x = extremes[rng() % 4];
                }
                std::memcpy(t.buffer.data() + i * sizeof(T), &x, sizeof(T));
            }
        });
    }
    return t;
}

Tensor random_small_integers(DType type, const Shape& shape, std::mt19937_64& rng, int range) {
    Tensor t(TensorInfo{type, shape});
    std::uniform_int_distribution<int> dist(-range, range);
    std::vector<double> values(t.elements());
    for (auto& v : values) v = dist(rng);
    return tensor_from(type, shape, values);
}

Shape random_shape(std::mt19937_64& rng, size_t rank, uint64_t max_elements) {
    Shape shape(rank, 1);
    uint64_t elements = 1;
    std::uniform_int_distribution<int64_t> size_pick(1, 9);
    for (auto& d : shape) {
        d = size_pick(rng);
        if (elements * uint64_t(d) > max_elements) d = 1;
        elements *= uint64_t(d);
    }
    return shape;
}

void poison(Tensor& t) { std::memset(t.buffer.data(), 0xA5, t.bytes()); }

::testing::AssertionResult bitwise_equal(const Tensor& expected, const Tensor& actual) {
    if (auto r = same_layout(expected, actual); !r) return r;
    if (std::memcmp(expected.buffer.data(), actual.buffer.data(), expected.bytes()) == 0)
        return ::testing::AssertionSuccess();
    return mismatch(expected, actual);
}

uint64_t test_seed() {
    if (const char* s = std::getenv("DMLGRAD_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    return std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32);
}

Tensor tensor_from_bits(DType type, const Shape& shape, const std::vector<uint64_t>& bits) {
    Tensor t(TensorInfo{type, shape});
    if (bits.size() != t.elements()) throw std::invalid_argument("tensor_from_bits: count does not match shape");
    const size_t size = dtype_size(type);
    for (size_t i = 0; i < bits.size(); ++i) std::memcpy(t.buffer.data() + i * size, &bits[i], size);  // little-endian
    return t;
}

}  // namespace dmlgrad::testing
