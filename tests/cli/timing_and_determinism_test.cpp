// --json's timing samples and their statistics, recomputed here from the samples; --deterministic's separate
// runs, and a run that differs (through the test hook that flips a bit of one run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The number after "\"key\":" inside kernel_ms's object.
double kernel_field(const std::string& json, const std::string& key) {
    const size_t object = json.find(R"("kernel_ms":{)");
    const size_t at = json.find("\"" + key + "\":", object);
    EXPECT_NE(at, std::string::npos) << key;
    return std::stod(json.substr(at + key.size() + 3));
}

std::vector<double> samples(const std::string& json) {
    const size_t begin = json.find(R"("samples":[)") + 11;
    std::vector<double> values;
    for (size_t at = begin; json[at] != ']';) {
        size_t used = 0;
        values.push_back(std::stod(json.substr(at), &used));
        at += used;
        if (json[at] == ',') ++at;
    }
    return values;
}

struct ReluCase {
    CliHarness h;
    ReluCase() {
        h.write("x.npy", tensor_from(DType::f32, {64}, std::vector<double>(64, 1.5)));
        h.write("dy.npy", tensor_from(DType::f32, {64}, std::vector<double>(64, -2.5)));
    }
    std::vector<std::string> args(std::vector<std::string> extra) const {
        std::vector<std::string> a{"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--json"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

TEST(TimingSamples, EverySampleAndTheStatisticsRecomputedFromThem) {
    ReluCase c;
    auto r = c.h.run(c.args({"--repeat", "37"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<double> s = samples(r.out);
    ASSERT_EQ(s.size(), 37u) << r.out;
    EXPECT_EQ(kernel_field(r.out, "n"), 37);
    const double mean = std::accumulate(s.begin(), s.end(), 0.0) / 37;
    double squares = 0;
    for (double v : s) squares += (v - mean) * (v - mean);
    const double stddev = std::sqrt(squares / 36);
    std::sort(s.begin(), s.end());
    EXPECT_EQ(kernel_field(r.out, "min"), s.front());
    EXPECT_EQ(kernel_field(r.out, "max"), s.back());
    EXPECT_EQ(kernel_field(r.out, "median"), s[18]);
    EXPECT_EQ(kernel_field(r.out, "p90"), s[33]);  // nearest rank: ceil(0.9 * 37) = 34th
    EXPECT_EQ(kernel_field(r.out, "p99"), s[36]);  // ceil(0.99 * 37) = 37th
    EXPECT_NEAR(kernel_field(r.out, "mean"), mean, mean * 1e-9);
    EXPECT_NEAR(kernel_field(r.out, "stddev"), stddev, stddev * 1e-6 + 1e-15);
    const double cv = stddev / mean;
    EXPECT_NEAR(kernel_field(r.out, "cv"), cv, cv * 1e-6 + 1e-15);
    // The warning follows the coefficient of variation: null up to 10%, a sentence above.
    EXPECT_EQ(contains(r.out, R"("timing_warning":"noisy timing: the coefficient of variation is )"), cv > 0.1)
        << r.out;
    EXPECT_EQ(contains(r.out, R"("timing_warning":null)"), cv <= 0.1) << r.out;
}

TEST(Determinism, SeparateRunsAreComparedBitForBit) {
    ReluCase c;
    auto r = c.h.run(c.args({"--repeat", "3", "--deterministic"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, R"("deterministic":{"runs":3,"identical":true,"first_differing_run":null,)")) << r.out;
    EXPECT_EQ(samples(r.out).size(), 3u);  // one sample per separate run
    auto two = c.h.run(c.args({"--deterministic"}));
    EXPECT_TRUE(contains(two.out, R"("deterministic":{"runs":2,"identical":true,)")) << two.out;
    auto none = c.h.run(c.args({}));
    EXPECT_TRUE(contains(none.out, R"("deterministic":null)")) << none.out;
}

TEST(Determinism, ARunThatDiffersExitsThreeAndWritesNothing) {
    ReluCase c;
    auto r = c.h.run_with_hooks(c.args({"--repeat", "4", "--deterministic"}), "DMLGRAD_TEST_CORRUPT_REPEAT=3");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(
        contains(r.err, "deterministic failed: run 3 of 4 differs from run 1 in 1 elements; first at index 0 (0)"))
        << r.err;
    EXPECT_TRUE(contains(r.out, R"("passed":false,)")) << r.out;
    EXPECT_TRUE(
        contains(r.out, R"("deterministic":{"runs":4,"identical":false,"first_differing_run":3,"differing":1})"))
        << r.out;
    EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy")));
}

}  // namespace
}  // namespace dmlgrad::testing
