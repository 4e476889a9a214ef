// The binary on its default path, the GPU (lavapipe where there is no real GPU): results equal to --cpu,
// --check, devices, and the errors of the GPU side.
#include <gtest/gtest.h>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

using Args = std::vector<std::string>;

class CliGpu : public ::testing::Test {
protected:
    CliHarness h;
    SeededRng rng;

    // Runs `args` on the GPU and with --cpu; both must succeed and write the same bits. The GPU's report and
    // --explain name `kernel`; the CPU's --json has no kernel.
    void expect_gpu_equals_cpu(Args args, const std::string& kernel) {
        args.insert(args.end(), {"-o", "gpu.npy"});
        auto gpu = h.run(args);
        ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
        EXPECT_NE(gpu.out.find(" on gpu ("), std::string::npos) << gpu.out;
        EXPECT_NE(gpu.out.find(", vulkan, kernel " + kernel + "): "), std::string::npos) << gpu.out;
        Args explain = args;
        explain.push_back("--explain");
        EXPECT_TRUE(h.run(explain).out.starts_with("kernel: " + kernel + " (")) << kernel;
        args.back() = "cpu.npy";
        args.insert(args.end(), {"--cpu", "--json"});
        auto cpu = h.run(args);
        ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
        EXPECT_NE(cpu.out.find(R"("kernel":null)"), std::string::npos) << cpu.out;
        EXPECT_TRUE(bitwise_equal(h.read("cpu.npy"), h.read("gpu.npy")));
    }
};

TEST_F(CliGpu, EveryOperatorMatchesTheCpu) {
    h.write("x.npy", random_tensor(DType::f32, {2, 3, 9, 11}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {2, 3, 9, 11}, rng));
    expect_gpu_equals_cpu({"relu-grad", "-x", "x.npy", "-g", "dy.npy"}, "relu_grad_f32");
    expect_gpu_equals_cpu({"clip-grad", "-x", "x.npy", "-g", "dy.npy", "--min", "-0.5", "--max", "2"}, "clip_grad_f32");

    h.write("dys.npy", random_tensor(DType::i16, {2, 3, 3, 4}, rng));
    expect_gpu_equals_cpu({"slice-grad", "-g", "dys.npy", "--output-sizes", "2,3,9,11", "--input-window-offsets",
                           "0,0,1,0", "--input-window-sizes", "2,3,7,11", "--input-window-strides", "1,-1,-3,3"},
                          "slice_grad_walk_lines_b16");  // rows of 11 int16s: lines of 9 rows, their columns shared
    h.write("dyt.npy", random_tensor(DType::i16, {5, 3}, rng));
    expect_gpu_equals_cpu(
        {"slice-grad", "-g", "dyt.npy", "--output-sizes", "400,13", "--slice", "[::80, 2:5]"},
        "slice_grad_spans_regions_b16");  // a hundredth of dX under short spans: a region's zeros, then its spans

    h.write("dyp.npy", random_small_integers(DType::f32, {2, 3, 5, 6}, rng));
    expect_gpu_equals_cpu({"maxpool-grad", "-x", "x.npy", "-g", "dyp.npy", "--window-size", "3,3", "--strides", "2,2",
                           "--start-padding", "1,1", "--end-padding", "1,1"},
                          "maxpool_grad_walk2d_k3s2p1_f32");  // windows of 3, stride 2, padding 1: the 2-D walk

    h.write("dyr.npy", random_tensor(DType::f32, {2, 3, 14, 17}, rng, false));
    expect_gpu_equals_cpu(
        {"resample-grad", "-g", "dyr.npy", "--output-sizes", "2,3,9,11", "--interpolation-mode", "linear"},
        "resample_grad_linear_f32_strips_taps4");  // rows shorter than a run; scales of ~1.5: up to 4 taps a list
}

// The kernel that ran, in --json and in the batch's -v job lines (relu fp32: the one relu kernel of its dtype).
TEST_F(CliGpu, JsonAndBatchJobLinesNameTheKernel) {
    h.write("x.npy", random_tensor(DType::f32, {3, 7}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {3, 7}, rng));
    auto json = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "a.npy", "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_NE(json.out.find(R"("kernel":"relu_grad_f32")"), std::string::npos) << json.out;
    h.write_bytes("m.txt", "relu-grad -x x.npy -g dy.npy -o b.npy\n");
    auto batch = h.run({"batch", "m.txt", "-v"});
    ASSERT_EQ(batch.exit_code, 0) << batch.err;
    EXPECT_NE(batch.err.find("line 1: relu-grad on gpu (relu_grad_f32) in "), std::string::npos) << batch.err;
}

// Outputs of 1 MiB and more are mapped files, and inputs of that size are mapped from the page cache: the result
// may replace one of its own inputs, or an earlier result, while the device, the mappings and the replaced file
// are freed on other threads (runner.cpp's BackgroundRelease). Each time only the new file is left.
TEST_F(CliGpu, LargeOutputsReplaceAnInputOrAnEarlierResult) {
    const Tensor x = random_tensor(DType::f32, {1 << 19}, rng), dy = random_tensor(DType::f32, {1 << 19}, rng);
    h.write("x.npy", x);
    h.write("dy.npy", dy);
    auto cpu = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "cpu.npy", "--cpu"});
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    for (int run = 0; run < 2; ++run) {  // the second run replaces the first one's result
        auto gpu = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "gpu.npy"});
        ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
        EXPECT_TRUE(bitwise_equal(h.read("cpu.npy"), h.read("gpu.npy")));
    }
    auto over_input = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dy.npy"});
    ASSERT_EQ(over_input.exit_code, 0) << over_input.err;
    EXPECT_TRUE(bitwise_equal(h.read("cpu.npy"), h.read("dy.npy")));
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"cpu.npy", "dy.npy", "gpu.npy", "x.npy"}));
}

TEST_F(CliGpu, CheckPassesAndReportsTheOtherBackend) {
    h.write("x.npy", random_tensor(DType::f16, {1000}, rng));
    h.write("dy.npy", random_tensor(DType::f16, {1000}, rng));
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--check", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(R"("check":{"backend":"cpu")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("passed":true)"), std::string::npos) << r.out;
}

TEST_F(CliGpu, CheckDifferenceExitsThreeAndWritesNothing) {
    h.write("x.npy", tensor_from(DType::f32, {3}, {1, 2, 3}));
    h.write("dy.npy", tensor_from(DType::f32, {3}, {4, 5, 6}));
    auto r = h.run_with_hooks({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--check"},
                              "DMLGRAD_TEST_CORRUPT_CHECK=1");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    for (const char* needle : {"check failed", "1 of 3", "index 0", "(0)", "gpu 4 (bits 0x40800000)", "cpu"})
        EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " not in " << r.err;
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "x.npy"}));
}

TEST_F(CliGpu, RepeatReportsEveryTimedDispatch) {
    h.write("x.npy", random_tensor(DType::i8, {4096}, rng));
    h.write("dy.npy", random_tensor(DType::i8, {4096}, rng));
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--repeat", "7", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(R"("backend":"gpu")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("n":7)"), std::string::npos) << r.out;
}

// --api: Vulkan by default and by name, named in --json with the kernel that ran; an unknown API is a usage error
// that names the flag and leaves no output.
TEST_F(CliGpu, ApiIsVulkanByDefaultAndNamedWithTheKernelInJson) {
    h.write("x.npy", random_tensor(DType::f16, {300}, rng));
    h.write("dy.npy", random_tensor(DType::f16, {300}, rng));
    for (const Args& api : {Args{}, Args{"--api", "vulkan"}}) {
        Args args = {"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--json"};
        args.insert(args.end(), api.begin(), api.end());
        auto r = h.run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.out.find(R"("api":"vulkan","kernel":"relu_grad_f16")"), std::string::npos) << r.out;
    }
    auto cpu = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--json", "--cpu"});
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    EXPECT_NE(cpu.out.find(R"("api":null,"kernel":null)"), std::string::npos) << cpu.out;
    std::filesystem::remove(h.path("dx.npy"));
    auto bad = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--api", "d3d11"});
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("--api"), std::string::npos) << bad.err;
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "x.npy"}));
}

// --explain --api d3d12 names the kernel a Direct3D 12 run takes (its kernel set is not Vulkan's: overlapping
// max-pool windows and resample have differed), or says why there is none, as the run does.
TEST_F(CliGpu, ExplainNamesTheKernelOfTheApiChosen) {
    h.write("x.npy", random_tensor(DType::f32, {2, 3, 9, 11}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {2, 3, 9, 11}, rng));
    h.write("dyp.npy", random_small_integers(DType::f32, {2, 3, 5, 6}, rng));
    h.write("dyr.npy", random_tensor(DType::f16, {2, 3, 14, 17}, rng, false));
    const std::vector<Args> commands{
        {"relu-grad", "-x", "x.npy", "-g", "dy.npy"},
        {"maxpool-grad", "-x", "x.npy", "-g", "dyp.npy", "--window-size", "3,3", "--strides", "2,2", "--start-padding",
         "1,1", "--end-padding", "1,1"},
        {"resample-grad", "-g", "dyr.npy", "--output-sizes", "2,3,9,11", "--interpolation-mode", "linear"},
    };
    for (Args args : commands) {
        args.insert(args.end(), {"-o", "dx.npy", "--api", "d3d12"});
        Args explain_args = args;
        explain_args.push_back("--explain");
        const std::string explained = h.run(explain_args).out;
        args.push_back("--json");
        auto run = h.run(args);
        if (run.exit_code != 0) {
            EXPECT_TRUE(explained.starts_with("kernel: none (")) << explained << run.err;
            continue;
        }
        const size_t at = run.out.find(R"("kernel":")");
        ASSERT_NE(at, std::string::npos) << run.out;
        const size_t from = at + 10;
        const std::string kernel = run.out.substr(from, run.out.find('"', from) - from);
        EXPECT_TRUE(explained.starts_with("kernel: " + kernel + " (on the GPU through Direct3D 12, ")) << explained;
    }
}

// Both APIs' devices, each named with its API (Direct3D 12's through vkd3d on the same devices, in CI).
TEST_F(CliGpu, DevicesAndVersionNameBothApis) {
    auto json = h.run({"devices", "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_NE(json.out.find(R"("api":"vulkan")"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find(R"("api":"d3d12")"), std::string::npos) << json.out;
    auto text = h.run({"devices"});
    EXPECT_NE(text.out.find("Direct3D 12"), std::string::npos) << text.out;
    auto version = h.run({"--version"});
    EXPECT_NE(version.out.find("Direct3D 12 (--api d3d12): vkd3d "), std::string::npos) << version.out;
}

TEST_F(CliGpu, DevicesListsAtLeastOneDevice) {
    auto text = h.run({"devices"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(text.out.rfind("0: ", 0), 0u) << text.out;
    auto json = h.run({"devices", "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_NE(json.out.find(R"("index":0,"name":)"), std::string::npos) << json.out;
}

TEST_F(CliGpu, UnknownDeviceIndexIsAUsageError) {
    h.write("x.npy", tensor_from(DType::f32, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::f32, {2}, {1, 2}));
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--device", "99"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "x.npy"}));
}

TEST_F(CliGpu, NoVulkanDriverIsARuntimeErrorThatSuggestsTheCpu) {
    h.write("x.npy", tensor_from(DType::f32, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::f32, {2}, {1, 2}));
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy"},
                   "VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("--cpu"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("mesa-vulkan-drivers"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "x.npy"}));
}

TEST_F(CliGpu, TheBinaryUsersRunHasNoTestHooks) {
    h.write("x.npy", tensor_from(DType::f32, {3}, {1, -2, 3}));
    h.write("dy.npy", tensor_from(DType::f32, {3}, {4, 5, 6}));
    const std::vector<std::string> args{"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--check"};
    auto release = h.run(args, "DMLGRAD_TEST_CORRUPT_CHECK=1 DMLGRAD_TEST_GPU_ALLOCATION_CAP=abc");
    EXPECT_EQ(release.exit_code, 0) << release.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{4, 0, 6}));
    auto bad_cap = h.run_with_hooks(args, "DMLGRAD_TEST_GPU_ALLOCATION_CAP=abc");
    EXPECT_EQ(bad_cap.exit_code, 2);
    EXPECT_NE(bad_cap.err.find("DMLGRAD_TEST_GPU_ALLOCATION_CAP=abc: expected a number of bytes"), std::string::npos)
        << bad_cap.err;
}

TEST_F(CliGpu, OutOfDeviceMemoryIsARuntimeErrorAndWritesNothing) {
    h.write("x.npy", random_tensor(DType::f32, {1 << 18}, rng));  // 1 MiB each
    h.write("dy.npy", random_tensor(DType::f32, {1 << 18}, rng));
    h.write_bytes("dx.npy", "precious");
    auto r = h.run_with_hooks({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy"},
                              "DMLGRAD_TEST_GPU_ALLOCATION_CAP=65536");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("try --cpu"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(h.read_bytes("dx.npy"), "precious");
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dx.npy", "dy.npy", "x.npy"}));
}

}  // namespace
}  // namespace dmlgrad::testing
