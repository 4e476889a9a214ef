// The diff report end to end: compact on a pass, full on a failure, the same fields in --json; the MISTRUSTED
// warnings; --save-diff and the reproducer line.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// relu-grad with X alternating sign: dX = {1, 0, 3, 0, 5, 0} from dY = 1..6.
struct ReluCase {
    CliHarness h;
    ReluCase() {
        h.write("x.npy", tensor_from(DType::f32, {2, 3}, {1, -1, 2, -2, 3, -3}));
        h.write("dy.npy", tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    }
    CommandResult run(std::vector<std::string> extra) const {
        std::vector<std::string> a{"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu"};
        a.insert(a.end(), extra.begin(), extra.end());
        return h.run(a);
    }
};

TEST(DiffReportCli, APassIsOneOrTwoLines) {
    ReluCase c;
    c.h.write("same.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 0}));
    auto same = c.run({"--compare", "same.npy"});
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_TRUE(contains(same.out, "  compare  bit for bit against same.npy: match, bit-identical\n  total"))
        << same.out;
    c.h.write("near.npy", tensor_from(DType::f64, {2, 3}, {1, 0, 3.0000001, 0, 5, 0}));
    // 3.0000001 is 3 in float32: 0 ULPs.
    auto near = c.run({"--compare", "near.npy", "--rtol", "1e-7"});
    EXPECT_EQ(near.exit_code, 0) << near.err;
    EXPECT_TRUE(contains(near.out,
                         "rtol 1e-7, atol 0 against near.npy: match within the rule (not bit-identical)\n"
                         "           max abs error 1e-07, max rel error 3.33e-08, ULP max 0 p99 0, NMSE "))
        << near.out;
}

TEST(DiffReportCli, AFailureShowsCountsTheWorstAndTheTolerancesThatWouldPass) {
    ReluCase c;
    // Differences: (0,2) 3 vs 3.5, (1,1) 5 vs 4, and a NaN-free rest.
    c.h.write("ref.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3.5, 0, 4, 0}));
    auto r = c.run({"--compare", "ref.npy"});
    EXPECT_EQ(r.exit_code, 3);
    for (const char* part :
         {"DIFFERENT, 2 of 6 elements (33.3%) beyond\n",
          "max abs error 1, max rel error 0.25, ULP max 2097152 p99 2097152, NMSE 0.0427\n",
          "mismatches: 0 NaN, 0 infinity, 0 signed zero\n", "worst (1,1): result 5, reference 4, |diff| 1, beyond\n",
          "      (0,2): result 3, reference 3.5, |diff| 0.5, beyond\n",
          "would pass with --atol 1 (with rtol 0) or --rtol 0.25 (with atol 0)\n"})
        EXPECT_TRUE(contains(r.out, part)) << part << " not in\n" << r.out;
    // The suggestions pass, typed back.
    EXPECT_EQ(c.run({"--compare", "ref.npy", "--atol", "1"}).exit_code, 0);
    EXPECT_EQ(c.run({"--compare", "ref.npy", "--rtol", "0.25"}).exit_code, 0);
    EXPECT_EQ(c.run({"--compare", "ref.npy", "--rtol", "0.249"}).exit_code, 3);
    auto json = c.run({"--compare", "ref.npy", "--json"});
    for (const char* part :
         {R"("bit_identical":false,"elements":6,"share_beyond":0.3333333333333333,"max_abs_error":1,)"
          R"("max_rel_error":0.25,"max_ulp":2097152,"p99_ulp":2097152,)",
          R"("nan_mismatches":0,"inf_mismatches":0,"signed_zero_mismatches":0,)",
          R"("worst":[{"index":4,"coordinate":[1,1],"result":"5","reference":"4","abs_error":1,"beyond":true},)"
          R"({"index":2,"coordinate":[0,2],"result":"3","reference":"3.5","abs_error":0.5,"beyond":true}],)",
          R"("smallest_atol":1,"smallest_rtol":0.25,"mistrusted":false,"warnings":[])"})
        EXPECT_TRUE(contains(json.out, part)) << part << " not in\n" << json.out;
}

TEST(DiffReportCli, APassThatProvesLittleIsMistrusted) {
    ReluCase c;
    // X all positive: dX is dY itself, so a reference equal to dY passes.
    c.h.write("xpos.npy", tensor_from(DType::f32, {2, 3}, {9, 8, 7, 6, 5, 4}));
    auto copy = c.h.run(
        {"relu-grad", "-x", "xpos.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--compare", "dy.npy", "--json"});
    EXPECT_EQ(copy.exit_code, 0) << copy.err;
    EXPECT_TRUE(contains(copy.out, R"("passed":true,"mistrusted":true,)")) << copy.out;
    EXPECT_TRUE(contains(copy.out, R"("warnings":["the reference equals the input --input-gradient (dy.npy))"))
        << copy.out;
    // X mostly negative: 10 of 10 zero but one.
    std::vector<double> x(10, -1.0), dy(10, 2.0), ref(10, 0.0);
    x[3] = 1, ref[3] = 2;
    c.h.write("xneg.npy", tensor_from(DType::f32, {10}, x));
    c.h.write("dy10.npy", tensor_from(DType::f32, {10}, dy));
    c.h.write("ref10.npy", tensor_from(DType::f32, {10}, ref));
    auto zeros =
        c.h.run({"relu-grad", "-x", "xneg.npy", "-g", "dy10.npy", "-o", "dx.npy", "--cpu", "--compare", "ref10.npy"});
    EXPECT_EQ(zeros.exit_code, 0) << zeros.err;
    EXPECT_TRUE(contains(zeros.out, "MISTRUSTED: 90% of the elements are 0 in both result and reference")) << zeros.out;
    // A trustworthy pass has no warning.
    c.h.write("same.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 0}));
    auto fine = c.run({"--compare", "same.npy", "--json"});
    EXPECT_TRUE(contains(fine.out, R"("passed":true,"mistrusted":false,)")) << fine.out;
}

TEST(DiffReportCli, MaxPoolTiesAreMistrusted) {
    CliHarness h;
    // 2x2 windows, stride 2, over a 4x4 X: windows 0 and 1 hold tied maxima (2, 2), windows 2 and 3 do not.
    h.write("x.npy", tensor_from(DType::f32, {1, 1, 4, 4}, {1, 2, 0, 0, 2, 1, 2, 2, 1, 0, 0, 1, 3, 0, 5, 2}));
    h.write("dy.npy", tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    const std::vector<std::string> base{"maxpool-grad",  "-x",  "x.npy",     "-g",  "dy.npy",
                                        "--window-size", "2,2", "--strides", "2,2", "--cpu"};
    auto run = base;
    run.insert(run.end(), {"-o", "ref.npy"});
    ASSERT_EQ(h.run(run).exit_code, 0);
    auto compared = base;
    compared.insert(compared.end(), {"-o", "dx.npy", "--compare", "ref.npy"});
    auto r = h.run(compared);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "MISTRUSTED: 2 of 4 max-pool windows (50%) have tied maxima")) << r.out;
}

TEST(SaveDiff, AFailureWritesTheResultTheErrorMapAndTheMaskAndPrintsAReproducer) {
    ReluCase c;
    c.h.write("ref.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3.5, NAN, 4, 0}));
    std::filesystem::create_directory(c.h.path("diff"));
    auto r = c.run({"--compare", "ref.npy", "--save-diff", "diff/case"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy")));
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 0}), c.h.read("diff/case.result.npy")));
    // |result - reference|, NaN for the NaN mismatch; 1 where the rule (bit for bit) fails.
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f64, {2, 3}, {0, 0, 0.5, NAN, 1, 0}),
                              c.h.read("diff/case.compare-error.npy")));
    EXPECT_TRUE(
        bitwise_equal(tensor_from(DType::u8, {2, 3}, {0, 0, 1, 1, 1, 0}), c.h.read("diff/case.compare-beyond.npy")));
    // The reproducer, run as printed (with this build's binary), fails the same way.
    const std::string prefix = "  rerun    cd ";
    const size_t at = r.out.find(prefix);
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string line = r.out.substr(at + 9, r.out.find('\n', at) - at - 9);
    EXPECT_TRUE(contains(line, " && dmlgrad relu-grad -x x.npy -g dy.npy -o dx.npy --cpu --compare ref.npy")) << line;
    line.replace(line.find(" dmlgrad "), 9, std::string(" ") + DMLGRAD_BINARY + " ");
    EXPECT_EQ(WEXITSTATUS(std::system((line + " >/dev/null 2>&1").c_str())), 3) << line;
    auto json = c.run({"--compare", "ref.npy", "--json"});
    EXPECT_TRUE(contains(json.out, R"(,"reproducer":"cd )")) << json.out;
}

TEST(SaveDiff, NothingOnAPassAndMistakesAreUsageErrors) {
    ReluCase c;
    c.h.write("same.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 0}));
    auto pass = c.run({"--compare", "same.npy", "--save-diff", "case", "--json"});
    EXPECT_EQ(pass.exit_code, 0) << pass.err;
    EXPECT_TRUE(contains(pass.out, R"("reproducer":null)")) << pass.out;
    EXPECT_EQ(c.h.listing(), (std::vector<std::string>{"dx.npy", "dy.npy", "same.npy", "x.npy"}));
    auto alone = c.run({"--save-diff", "case"});
    EXPECT_EQ(alone.exit_code, 2);
    EXPECT_TRUE(contains(alone.err, "--save-diff: needs --check or --compare")) << alone.err;
    auto missing = c.run({"--compare", "same.npy", "--save-diff", "nowhere/case"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(missing.err, "--save-diff nowhere/case: folder 'nowhere' does not exist")) << missing.err;
}

}  // namespace
}  // namespace dmlgrad::testing
