// The values of --json's fields that no other test reads: "output" (the path written, not an input's) and "bytes"
// (every input read once and the output written once). Max-pool's three tensors have different sizes, so that
// each term of the sum shows.
#include <gtest/gtest.h>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

TEST(ReportFields, JsonNamesTheOutputWrittenAndCountsEveryTensorsBytes) {
    CliHarness h;
    SeededRng rng;
    h.write("x.npy", random_small_integers(DType::f32, {1, 2, 4, 6}, rng));   // 192 bytes
    h.write("dy.npy", random_small_integers(DType::f32, {1, 2, 2, 3}, rng));  // 48 bytes
    auto r = h.run({"maxpool-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--window-size", "2,2", "--strides",
                    "2,2", "--start-padding", "0,0", "--end-padding", "0,0", "--cpu", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(R"("output":"dx.npy")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("inputs":{"input":"x.npy","input_gradient":"dy.npy"})"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("bytes":432,)"), std::string::npos) << "192 + 48 + a dX of 192: " << r.out;
    EXPECT_EQ(h.read("dx.npy").bytes(), 192u);
}

}  // namespace
}  // namespace dmlgrad::testing
