// The rules of --check and --compare (docs/COMPARISON.md), end to end: integers compared as integers at every
// width, signed against unsigned; no tolerance means bit for bit, while an explicit --atol 0 --rtol 0 means the
// formula; the boundary as typed passes; tolerances too small for a double are 0; standard input serves one of
// -x, -g and --compare. Each result is dY itself (slice-grad of the whole tensor, or relu-grad of X > 0), so the
// values compared are the ones written here.
#include <gtest/gtest.h>

#include <cstdint>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

// slice-grad of the whole of a 2-element dY: the result is dY, of any dtype.
struct CopyCase {
    CliHarness h;
    CopyCase(DType type, std::vector<uint64_t> result_bits) {
        h.write("dy.npy", tensor_from_bits(type, {2}, result_bits));
    }
    int compare(const Tensor& reference, std::vector<std::string> extra = {}) const {
        h.write("ref.npy", reference);
        std::vector<std::string> a{"slice-grad",     "-g", "dy.npy",  "-o",  "dx.npy",    "--cpu",
                                   "--output-sizes", "2",  "--slice", "[:]", "--compare", "ref.npy"};
        a.insert(a.end(), extra.begin(), extra.end());
        const CommandResult r = h.run(a);
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
        return r.exit_code;
    }
};

uint64_t bits_of(int64_t v) { return uint64_t(v); }
uint64_t bits_of(double v) { return std::bit_cast<uint64_t>(v); }

constexpr uint64_t kTwoTo60 = uint64_t(1) << 60;

TEST(ComparisonRules, Int64AgainstUint64BeyondTwoTo53ComparesAsIntegers) {
    CopyCase c(DType::i64, {kTwoTo60 + 1, 5});
    const Tensor reference = tensor_from_bits(DType::u64, {2}, {kTwoTo60, 5});
    EXPECT_EQ(c.compare(reference), 3);  // through double, 2^60 + 1 and 2^60 were equal
    EXPECT_EQ(c.compare(reference, {"--atol", "0"}), 3);
    EXPECT_EQ(c.compare(reference, {"--atol", "1"}), 0);
    EXPECT_EQ(c.compare(reference, {"--atol", "0.999"}), 3);
    EXPECT_EQ(c.compare(tensor_from_bits(DType::u64, {2}, {kTwoTo60 + 1, 5})), 0);
}

TEST(ComparisonRules, Int64AgainstFloat64ComparesExactValues) {
    const uint64_t two_to_53 = uint64_t(1) << 53;
    CopyCase c(DType::i64, {two_to_53 + 1, bits_of(int64_t(-7))});
    EXPECT_EQ(c.compare(tensor_from_bits(DType::f64, {2}, {bits_of(double(two_to_53)), bits_of(-7.0)})), 3);
    EXPECT_EQ(
        c.compare(tensor_from_bits(DType::f64, {2}, {bits_of(double(two_to_53)), bits_of(-7.0)}), {"--atol", "1"}), 0);
}

TEST(ComparisonRules, SignedAgainstUnsignedNeverWraps) {
    CopyCase c(DType::i64, {bits_of(int64_t(-1)), 0});
    EXPECT_EQ(c.compare(tensor_from_bits(DType::u64, {2}, {UINT64_MAX, 0})), 3);
    EXPECT_EQ(c.compare(tensor_from_bits(DType::u64, {2}, {UINT64_MAX, 0}), {"--atol", "1e19"}), 3);  // 2^64 apart
    EXPECT_EQ(c.compare(tensor_from_bits(DType::u64, {2}, {UINT64_MAX, 0}), {"--atol", "18446744073709551616"}), 0);
    CopyCase small(DType::i8, {0xFF, 0x80});                                           // -1, -128
    EXPECT_EQ(small.compare(tensor_from_bits(DType::u8, {2}, {0xFF, 0x80})), 3);       // 255, 128
    EXPECT_EQ(small.compare(tensor_from_bits(DType::i16, {2}, {0xFFFF, 0xFF80})), 0);  // -1, -128
}

TEST(ComparisonRules, AnExplicitToleranceAppliesToIntegersOfEveryWidth) {
    CopyCase c(DType::i32, {10, 20});
    EXPECT_EQ(c.compare(tensor_from_bits(DType::i32, {2}, {11, 20}), {"--atol", "5"}), 0);  // was bit for bit
    EXPECT_EQ(c.compare(tensor_from_bits(DType::i64, {2}, {11, 20}), {"--atol", "5"}), 0);
    EXPECT_EQ(c.compare(tensor_from_bits(DType::i32, {2}, {16, 20}), {"--atol", "5"}), 3);
    EXPECT_EQ(c.compare(tensor_from_bits(DType::i32, {2}, {11, 20}), {"--rtol", "0.1"}), 0);   // 1 <= 1.1
    EXPECT_EQ(c.compare(tensor_from_bits(DType::i32, {2}, {11, 20}), {"--rtol", "0.09"}), 3);  // 1 > 0.99
}

TEST(ComparisonRules, NoToleranceIsBitForBitButExplicitZerosAreTheFormula) {
    CopyCase zero(DType::f32, {0x80000000, 0x7FC00001});  // -0, a NaN with a payload
    const Tensor reference = tensor_from_bits(DType::f32, {2}, {0x00000000, 0x7FC00000});
    EXPECT_EQ(zero.compare(reference), 3);
    EXPECT_EQ(zero.compare(reference, {"--atol", "0", "--rtol", "0"}), 0);  // -0 == +0, NaN meets NaN
    EXPECT_EQ(zero.compare(reference, {"--atol", "0"}), 0);
    EXPECT_EQ(zero.compare(tensor_from_bits(DType::f32, {2}, {0x00000001, 0x7FC00000}), {"--atol", "0", "--rtol", "0"}),
              3);  // the smallest subnormal is not 0
}

TEST(ComparisonRules, AValueExactlyOnTheBoundaryAsTypedPasses) {
    // |2 - 3| = 1 = 0.1 + 0.3 * 3 exactly; in binary64 0.1 + 0.3 * 3 is 0.99999999999999989.
    CopyCase c(DType::f32, {std::bit_cast<uint32_t>(2.0f), std::bit_cast<uint32_t>(1.0f)});
    const Tensor reference = tensor_from(DType::f32, {2}, {3, 1});
    EXPECT_EQ(c.compare(reference, {"--atol", "0.1", "--rtol", "0.3"}), 0);
    EXPECT_EQ(c.compare(reference, {"--atol", "0.1", "--rtol", "0.29999999999999999999"}), 3);
    EXPECT_EQ(c.compare(reference, {"--atol", "0.09999999999999999999", "--rtol", "0.3"}), 3);
    // |1.5 - 1| = 0.5 = 0.25 + 0.25 * 1; a hair less fails.
    CopyCase d(DType::f64, {bits_of(1.5), bits_of(1.0)});
    const Tensor one = tensor_from(DType::f64, {2}, {1, 1});
    EXPECT_EQ(d.compare(one, {"--atol", "0.25", "--rtol", "0.25"}), 0);
    EXPECT_EQ(d.compare(one, {"--atol", "0.25", "--rtol", "0.2499999999999999999999999"}), 3);
}

TEST(ComparisonRules, TolerancesTooSmallForADoubleAreAcceptedAsZero) {
    CopyCase c(DType::f64, {bits_of(1.0), bits_of(-0.0)});
    EXPECT_EQ(c.compare(tensor_from(DType::f64, {2}, {1, 0}), {"--atol", "1e-400", "--rtol", "1e-400"}), 0);
    EXPECT_EQ(c.compare(tensor_from(DType::f64, {2}, {std::nextafter(1.0, 2.0), 0}), {"--atol", "1e-400"}), 3);
    // Beyond double's range at the top too: every finite pair passes.
    EXPECT_EQ(c.compare(tensor_from(DType::f64, {2}, {-1e300, 1e300}), {"--atol", "1e400"}), 0);
}

TEST(ComparisonRules, StandardInputServesOnlyOneOfTheInputsAndTheReference) {
    CliHarness h;
    h.write("x.npy", tensor_from(DType::f32, {3}, {1, 2, 3}));
    h.write("dy.npy", tensor_from(DType::f32, {3}, {4, 5, 6}));
    // dY through standard input, and the reference too: it would be dY itself.
    auto both = h.run({"relu-grad", "-x", "x.npy", "-g", "-", "-o", "dx.npy", "--cpu", "--compare", "-"}, "<dy.npy");
    EXPECT_EQ(both.exit_code, 2) << both.err;
    EXPECT_NE(both.err.find("only one input can be - (standard input), --compare's reference included"),
              std::string::npos)
        << both.err;
    auto alone =
        h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--compare", "-"}, "<dy.npy");
    EXPECT_EQ(alone.exit_code, 0) << alone.err;  // dX = dY here: the reference from standard input matches
}

}  // namespace
}  // namespace dmlgrad::testing
