#pragma once
// Helpers shared by every test binary: tensors from literal values, random tensors with special values,
// poisoned outputs and comparisons that report index, coordinate, values and bits on a mismatch.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace dmlgrad::testing {

// A tensor of `type` holding `values` converted to that type (fp16 rounded to nearest even).
Tensor tensor_from(DType type, Shape shape, const std::vector<double>& values);
// Every element as a double (for readable expectations).
std::vector<double> to_doubles(const Tensor& t);

// Fresh random values: floats in [-range, range] with about 1/16 of them special (±0, ±inf, NaN, denormals)
// when `specials`; integers over the full range of the type with its extremes mixed in.
Tensor random_tensor(DType type, const Shape& shape, std::mt19937_64& rng, bool specials = true, double range = 4.0);
// Small integers in [-range, range] stored in `type`: sums of these are exact in any order.
Tensor random_small_integers(DType type, const Shape& shape, std::mt19937_64& rng, int range = 8);

// A random shape of `rank` axes of 1 to 9, with axes set to 1 where the product would pass `max_elements`.
Shape random_shape(std::mt19937_64& rng, size_t rank, uint64_t max_elements);

// A tensor from raw bit patterns, one per element (zero-extended to 64 bits).
Tensor tensor_from_bits(DType type, const Shape& shape, const std::vector<uint64_t>& bits);

// Fills with a pattern no operator produces from the tests' inputs, so an unwritten element is caught.
void poison(Tensor& t);

// Same dtype, shape and bytes; a failure names the first difference as --check does (core/compare.h).
::testing::AssertionResult bitwise_equal(const Tensor& expected, const Tensor& actual);

// A seed for std::mt19937_64: from DMLGRAD_TEST_SEED if set, else fresh.
uint64_t test_seed();

// A test's random generator, seeded by test_seed(). While it lives, every failure message carries
// "DMLGRAD_TEST_SEED=<seed>", the setting that replays the test.
class SeededRng : public std::mt19937_64 {
public:
    SeededRng() : SeededRng(test_seed()) {}
    explicit SeededRng(uint64_t seed)
        : std::mt19937_64(seed), trace_(__FILE__, __LINE__, "DMLGRAD_TEST_SEED=" + std::to_string(seed)) {}

private:
    ::testing::ScopedTrace trace_;
};

}  // namespace dmlgrad::testing
