// resample-grad's framework forms end to end: cases of tests/data/resample_vectors.txt (PyTorch autograd, ONNX's
// formulas) through the binary on the GPU (lavapipe where there is no real GPU), the rules between the three
// forms, the refused modes, and the resolved parameters in the -v log.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_harness.h"
#include "support/resample_vectors.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

using Args = std::vector<std::string>;

std::string join(const Shape& shape) {
    std::string text;
    for (int64_t n : shape) {
        if (!text.empty()) text += ',';
        text += std::to_string(n);
    }
    return text;
}

class ResampleModesCli : public ::testing::Test {
protected:
    CliHarness h;

    // resample-grad on a 1x1x4 dY into a 1x1x2 dX, plus `flags`.
    CommandResult run(const Args& flags) {
        h.write("dy.npy", tensor_from(DType::f32, {1, 1, 4}, {1, 2, 3, 4}));
        Args args = {"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "1,1,2", "--cpu"};
        args.insert(args.end(), flags.begin(), flags.end());
        return h.run(args);
    }

    // Exit 2 with one line on stderr that holds every needle, and no output file.
    void expect_usage_error(const Args& flags, const std::vector<std::string>& needles) {
        const CommandResult r = run(flags);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
        EXPECT_EQ(h.listing(), std::vector<std::string>{"dy.npy"});
    }
};

TEST_F(ResampleModesCli, VectorsMatchOnTheGpu) {
    const std::string path = std::string(DMLGRAD_TEST_DATA) + "/resample_vectors.txt";
    const auto cases = read_resample_vectors(path);
    ASSERT_EQ(cases.size(), resample_vector_lines(path));
    size_t checked = 0;
    for (size_t k = 0; k < cases.size(); k += 23) {  // a spread of PyTorch and ONNX cases
        const ResampleVector& v = cases[k];
        SCOPED_TRACE(v.describe());
        h.write("dy.npy", tensor_from(DType::f32, v.dy_shape, v.dy));
        Args args = {"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", join(v.dx_shape), "-q"};
        const Args flags = v.flags();
        args.insert(args.end(), flags.begin(), flags.end());
        const CommandResult r = h.run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto result = matches_vector(v, to_doubles(h.read("dx.npy")), {});
        EXPECT_TRUE(result);
        checked += bool(result);
    }
    std::cout << "resample vectors on the GPU: " << checked << " cases match\n";
    EXPECT_GE(checked, cases.size() / 23);
}

// PyTorch's 5-D volumes, beyond DirectML's rank 4: N and C are folded into one axis and the output keeps its 5-D
// shape. Every volume case on the CPU, every fifth on the GPU (lavapipe is slow to start).
TEST_F(ResampleModesCli, VolumesMatchPyTorchOnBothBackends) {
    const auto cases = read_resample_vectors(std::string(DMLGRAD_TEST_DATA) + "/resample_vectors.txt");
    size_t volumes = 0;
    for (const ResampleVector& v : cases) {
        if (v.dx_shape.size() != 5) continue;
        SCOPED_TRACE(v.describe());
        h.write("dy.npy", tensor_from(DType::f32, v.dy_shape, v.dy));
        std::vector<bool> on_cpu{true};
        if (volumes % 5 == 0) on_cpu.push_back(false);
        for (bool cpu : on_cpu) {
            h.write("dx.npy", tensor_from(DType::f32, {1}, {1234}));  // poisoned: replaced by the run
            Args args = {"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", join(v.dx_shape), "-q"};
            if (cpu) args.push_back("--cpu");
            const Args flags = v.flags();
            args.insert(args.end(), flags.begin(), flags.end());
            const CommandResult r = h.run(args);
            ASSERT_EQ(r.exit_code, 0) << r.err;
            const Tensor dx = h.read("dx.npy");
            EXPECT_EQ(dx.shape(), v.dx_shape);
            EXPECT_TRUE(matches_vector(v, to_doubles(dx), {}));
        }
        ++volumes;
    }
    EXPECT_GE(volumes, 20u);
}

TEST_F(ResampleModesCli, VerboseLogsTheResolvedParameters) {
    const CommandResult r = run({"--torch-mode", "nearest-exact", "-v"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("interpolation_mode=nearest rounding_direction=decreasing scales=1,1,2 "
                         "input_pixel_offsets=0,0,-0.5 output_pixel_offsets=0,0,0 taps=pytorch"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{3, 7}));  // docs/OPERATORS.md 5.6
    const CommandResult onnx = run({"--coordinate-transformation-mode", "asymmetric", "--nearest-mode", "ceil", "-v"});
    ASSERT_EQ(onnx.exit_code, 0) << onnx.err;
    EXPECT_NE(onnx.err.find("rounding_direction=increasing scales=1,1,2"), std::string::npos) << onnx.err;
    EXPECT_NE(onnx.err.find("taps=onnx"), std::string::npos) << onnx.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{1, 9}));  // ceil(o / 2), clamped: 0, 1, 1, 1
    const CommandResult raw = run({"--interpolation-mode", "linear", "-v"});
    ASSERT_EQ(raw.exit_code, 0) << raw.err;
    EXPECT_NE(raw.err.find("input_pixel_offsets=-0.5,-0.5,-0.5 output_pixel_offsets=0.5,0.5,0.5 taps=directml"),
              std::string::npos)
        << raw.err;
}

TEST_F(ResampleModesCli, FormsDoNotMix) {
    expect_usage_error({"--torch-mode", "nearest", "--scales", "1,1,2"}, {"--scales", "not with --torch-mode"});
    expect_usage_error({"--torch-mode", "linear", "--interpolation-mode", "linear"},
                       {"--interpolation-mode", "not with --torch-mode"});
    expect_usage_error({"--torch-mode", "nearest", "--nearest-mode", "floor"}, {"--nearest-mode", "--torch-mode"});
    expect_usage_error({"--coordinate-transformation-mode", "half_pixel", "--rounding-direction", "increasing"},
                       {"--rounding-direction", "not with --coordinate-transformation-mode"});
    expect_usage_error({"--nearest-mode", "floor", "--input-pixel-offsets", "0,0,0"},
                       {"--input-pixel-offsets", "--nearest-mode"});
    expect_usage_error({"--coordinate-transformation-mode", "asymmetric", "--align-corners"},
                       {"--align-corners", "not with --coordinate-transformation-mode"});
    expect_usage_error({"--interpolation-mode", "linear", "--scale-factor", "2"}, {"--scale-factor", "--torch-mode"});
    expect_usage_error({"--rounding-direction", "increasing"}, {"--interpolation-mode is required", "--torch-mode"});
    expect_usage_error(
        {"--interpolation-mode", "linear", "--coordinate-transformation-mode", "half_pixel", "--nearest-mode", "floor"},
        {"--nearest-mode", "only with --interpolation-mode nearest"});
}

TEST_F(ResampleModesCli, ModesDirectMLCannotExpressAreRefusedWithTheReason) {
    expect_usage_error({"--torch-mode", "bicubic"}, {"--torch-mode bicubic", "not expressible"});
    expect_usage_error({"--torch-mode", "area"}, {"--torch-mode area", "not expressible"});
    expect_usage_error({"--torch-mode", "trilinear"}, {"--torch-mode trilinear", "5-D", "rank 3"});
    expect_usage_error({"--torch-mode", "linear", "--antialias"}, {"--antialias", "not expressible"});
    expect_usage_error({"--coordinate-transformation-mode", "tf_crop_and_resize"}, {"tf_crop_and_resize", "roi"});
    expect_usage_error({"--interpolation-mode", "cubic", "--coordinate-transformation-mode", "asymmetric"},
                       {"--interpolation-mode cubic", "not expressible"});
    expect_usage_error({"--torch-mode", "bilinear"}, {"--torch-mode bilinear", "4-D", "rank 3"});
    expect_usage_error({"--torch-mode", "linear", "--scale-factor", "0.6"}, {"--scale-factor", "into 1", "has 4"});
}

TEST_F(ResampleModesCli, HelpShowsTheFrameworkFormsFirst) {
    const CommandResult r = h.run({"resample-grad", "--help"});
    ASSERT_EQ(r.exit_code, 0);
    const size_t torch = r.out.find("dmlgrad resample-grad -g dy.npy -o dx.npy --output-sizes 1,2,4,4 --torch-mode");
    const size_t onnx = r.out.find("--coordinate-transformation-mode asymmetric");
    const size_t raw = r.out.find("--interpolation-mode linear --scales");
    ASSERT_NE(torch, std::string::npos) << r.out;
    ASSERT_NE(onnx, std::string::npos) << r.out;
    ASSERT_NE(raw, std::string::npos) << r.out;
    EXPECT_LT(torch, onnx);
    EXPECT_LT(onnx, raw);
}

}  // namespace
}  // namespace dmlgrad::testing
