// A batch's comparisons: each job's JSON line carries the diff report (a failed comparison's too), and the
// summary counts the jobs whose comparisons passed, passed but proved little (mistrusted), and failed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The --json line of manifest line `line`.
std::string job_line(const std::string& out, int line) {
    std::istringstream in(out);
    for (std::string row; std::getline(in, row);)
        if (row.starts_with("{\"line\":" + std::to_string(line) + ",")) return row;
    return "";
}

struct ComparisonBatch {
    CliHarness h;
    ComparisonBatch() {
        h.write("x.npy", tensor_from(DType::f32, {2, 3}, {1, -1, 2, -2, 3, -3}));
        h.write("xpos.npy", tensor_from(DType::f32, {2, 3}, {9, 8, 7, 6, 5, 4}));
        h.write("dy.npy", tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}));
        h.write("same.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 0}));
        h.write("off.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5.5, 0}));
        std::ofstream(h.path("m.txt")) << "relu-grad -x x.npy -g dy.npy -o a.npy --cpu --compare same.npy\n"
                                          "relu-grad -x xpos.npy -g dy.npy -o b.npy --cpu --compare dy.npy\n"
                                          "relu-grad -x x.npy -g dy.npy -o c.npy --cpu --compare off.npy\n"
                                          "relu-grad -x x.npy -g dy.npy -o d.npy --cpu\n"
                                          "relu-grad -x x.npy -g dy.npy -o e.npy --cpu --deterministic\n";
    }
};

TEST(BatchComparisons, EveryJobLineCarriesItsReportAndTheSummaryCountsThem) {
    ComparisonBatch b;
    auto r = b.h.run({"batch", "m.txt", "--json"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(job_line(r.out, 1), R"("status":"ok",)")) << r.out;
    EXPECT_TRUE(contains(job_line(r.out, 1), R"("compare":{"reference":"same.npy","exact":true,)")) << r.out;
    EXPECT_TRUE(contains(job_line(r.out, 2), R"("passed":true,"mistrusted":true,)")) << r.out;
    const std::string failed = job_line(r.out, 3);
    EXPECT_TRUE(contains(failed, R"("status":"failed","error":"compare failed: 1 of 6 elements differ)")) << failed;
    EXPECT_TRUE(contains(failed, R"("exit_code":3,)")) << failed;
    EXPECT_TRUE(contains(failed, R"("worst":[{"index":4,"coordinate":[1,1],"result":"5","reference":"5.5",)"))
        << failed;
    EXPECT_TRUE(contains(failed, R"("reproducer":"cd )")) << failed;
    EXPECT_TRUE(contains(failed, R"( && dmlgrad relu-grad -x x.npy -g dy.npy -o c.npy --cpu --compare off.npy")"))
        << failed;
    EXPECT_TRUE(contains(job_line(r.out, 5), R"("deterministic":{"runs":2,"identical":true,)")) << r.out;
    EXPECT_TRUE(contains(r.out, R"("comparisons":{"passed":3,"mistrusted":1,"failed":1}}})")) << r.out;
    auto text = b.h.run({"batch", "m.txt"});
    EXPECT_TRUE(contains(text.out,
                         "5 jobs: 4 succeeded, 1 failed (1 with exit 3), 0 skipped; comparisons: 3 passed "
                         "(1 mistrusted), 1 failed in "))
        << text.out;
}

}  // namespace
}  // namespace dmlgrad::testing
