// The one version number (CMakeLists.txt's project()) as --version and --json print it.
#include <gtest/gtest.h>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

TEST(Version, NamesTheVersionCommitLibrariesAndVulkan) {
    CliHarness h;
    auto r = h.run({"--version"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind(std::string("dmlgrad ") + DMLGRAD_PROJECT_VERSION + " (commit ", 0), 0u) << r.out;
    for (const char* part : {"fmt ", "spdlog ", "CLI11 ", "Vulkan loader "})
        EXPECT_NE(r.out.find(part), std::string::npos) << part << " not in " << r.out;
}

TEST(Version, JsonReportCarriesTheVersion) {
    CliHarness h;
    SeededRng rng;
    h.write("x.npy", random_tensor(DType::f32, {16}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {16}, rng));
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string(R"("version":")") + DMLGRAD_PROJECT_VERSION + "\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace dmlgrad::testing
