// What a PyTorch or numpy user types by habit: PyTorch's flag names, misspelt flags, a slice without quotes, float64
// arrays, channels-last shapes, PyTorch's max-pool stride; each refusal names what was meant. Also --explain on
// every operator and the completeness of --json's parameters.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

// The one error line, without "dmlgrad: error: " and the newline.
std::string error_of(const CommandResult& r) {
    const std::string prefix = "dmlgrad: error: ";
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.err.starts_with(prefix) && r.err.ends_with("\n")) << r.err;
    return r.err.substr(prefix.size(), r.err.size() - prefix.size() - 1);
}

// Max-pool inputs: X of 1x2x8x8 and a dY of 1x2x4x4, which nn.MaxPool2d(2) makes (stride 2 = the window).
struct PoolCase {
    CliHarness h;
    std::mt19937_64 rng{test_seed()};
    PoolCase() {
        h.write("x.npy", random_tensor(DType::f32, {1, 2, 8, 8}, rng, false));
        h.write("dy.npy", random_tensor(DType::f32, {1, 2, 4, 4}, rng, false));
    }
    std::vector<std::string> args(std::vector<std::string> extra) const {
        std::vector<std::string> a{"maxpool-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

TEST(PyTorchHabits, PyTorchsFlagNamesAndTyposGetADidYouMean) {
    PoolCase c;
    EXPECT_EQ(error_of(c.h.run(c.args({"--kernel-size", "2,2"}))),
              "--kernel-size is not a flag of maxpool-grad; did you mean --window-size? (PyTorch's kernel_size)");
    EXPECT_EQ(error_of(c.h.run(c.args({"--window-size", "2,2", "--stride", "2,2"}))),
              "--stride is not a flag of maxpool-grad; did you mean --strides? (PyTorch's stride)");
    EXPECT_EQ(error_of(c.h.run(c.args({"--window-size", "2,2", "--padding=1,1"}))),
              "--padding is not a flag of maxpool-grad; did you mean --start-padding and --end-padding? (PyTorch's "
              "padding=P pads both ends: --start-padding P,P --end-padding P,P)");
    EXPECT_EQ(error_of(c.h.run(c.args({"--window_size", "2,2"}))),
              "--window_size is not a flag of maxpool-grad; did you mean --window-size?");
    EXPECT_EQ(error_of(c.h.run({"relu-grad", "-x", "x.npy", "-o", "dx.npy", "--input-gradiant", "dy.npy"})),
              "--input-gradiant is not a flag of relu-grad; did you mean --input-gradient?");
    EXPECT_EQ(error_of(c.h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--zzzzzz"})),
              "--zzzzzz is not a flag of relu-grad");
    // A PyTorch name the subcommand has no flag for is not suggested: relu-grad has no --strides.
    EXPECT_EQ(error_of(c.h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--stride", "2"})),
              "--stride is not a flag of relu-grad");
    EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy")));
}

TEST(PyTorchHabits, WordsAreEchoedInTheOrderTyped) {
    PoolCase c;
    EXPECT_EQ(error_of(c.h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "first", "second"})),
              "unexpected words: first second");
    EXPECT_EQ(error_of(c.h.run({"--cpu", "relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy"})),
              "--cpu goes after the subcommand: dmlgrad relu-grad ... --cpu");
}

TEST(PyTorchHabits, AnUnquotedSliceIsToldToBeQuoted) {
    CliHarness h;
    h.write("dy.npy", tensor_from(DType::f32, {2, 2}, {1, 2, 3, 4}));
    // What the shell passes for `--slice [:, 1:]` typed without quotes: two words.
    EXPECT_EQ(error_of(h.run(
                  {"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "2,4", "--slice", "[:,", "1:]"})),
              "--slice: the shell split the slice into words; quote the slice: --slice \"[:, 1:]\"");
    auto quoted = h.run({"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "2,4", "--slice", "[:, 2:]"});
    EXPECT_EQ(quoted.exit_code, 0) << quoted.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{0, 0, 1, 2, 0, 0, 3, 4}));
}

TEST(PyTorchHabits, Float64AndInt64AreRefusedWithTheCast) {
    CliHarness h;
    h.write("x64.npy", tensor_from(DType::f64, {3}, {1, -2, 3}));
    h.write("i64.npy", tensor_from(DType::i64, {3}, {1, -2, 3}));
    EXPECT_EQ(error_of(h.run({"relu-grad", "-x", "x64.npy", "-g", "x64.npy", "-o", "dx.npy"})),
              "--input x64.npy: dtype float64 is not supported by relu-grad (supported: float32, float16, int32, "
              "int16, int8); cast it before saving, e.g. np.save(path, x.astype(np.float32))");
    EXPECT_EQ(error_of(h.run({"relu-grad", "-x", "i64.npy", "-g", "i64.npy", "-o", "dx.npy"})),
              "--input i64.npy: dtype int64 is not supported by relu-grad (supported: float32, float16, int32, int16, "
              "int8); cast it before saving, e.g. np.save(path, x.astype(np.int32))");
    // Max-pool takes no integers: an int64 array is to become float32.
    const std::string pool =
        error_of(h.run({"maxpool-grad", "-x", "i64.npy", "-g", "i64.npy", "-o", "dx.npy", "--window-size", "1,1"}));
    EXPECT_TRUE(pool.ends_with("cast it before saving, e.g. np.save(path, x.astype(np.float32))")) << pool;
}

TEST(PyTorchHabits, MaxPoolWithPyTorchsDefaultStrideIsExplained) {
    PoolCase c;
    EXPECT_EQ(error_of(c.h.run(c.args({"--window-size", "2,2"}))),
              "--input-gradient dy.npy: size 4 on axis 2 does not fit the pooling of --input x.npy (expected 7); "
              "PyTorch's max-pool stride defaults to the window, dmlgrad's to 1: add --strides 2,2 "
              "(nn.MaxPool2d(2) is --window-size 2,2 --strides 2,2)");
    auto right = c.h.run(c.args({"--window-size", "2,2", "--strides", "2,2"}));
    EXPECT_EQ(right.exit_code, 0) << right.err;
    // Strides that were given are not second-guessed.
    const std::string given = error_of(c.h.run(c.args({"--window-size", "2,2", "--strides", "1,1"})));
    EXPECT_EQ(given.find("PyTorch"), std::string::npos) << given;
}

TEST(PyTorchHabits, ChannelsLastShapesGetTheTranspose) {
    CliHarness h;
    std::mt19937_64 rng(test_seed());
    h.write("x.npy", random_tensor(DType::f32, {1, 8, 8, 3}, rng, false));
    h.write("dy.npy", random_tensor(DType::f32, {1, 4, 4, 3}, rng, false));
    const std::string e = error_of(h.run({"maxpool-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu",
                                          "--window-size", "2,2", "--strides", "2,2"}));
    EXPECT_TRUE(
        e.ends_with("; the shapes fit channels-last data (N, H, W, C): dmlgrad takes N, C, H, W as PyTorch "
                    "does; transpose both, e.g. x.transpose(0, 3, 1, 2)"))
        << e;
}

TEST(PyTorchHabits, ChannelsLastResampleShapesGetTheTranspose) {
    CliHarness h;
    std::mt19937_64 rng(test_seed());
    h.write("dy.npy", random_tensor(DType::f32, {1, 16, 16, 3}, rng, false));
    const std::string e = error_of(h.run({"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--output-sizes",
                                          "1,8,8,3", "--torch-mode", "bilinear"}));
    EXPECT_EQ(e,
              "--output-sizes: axis 1 is 8 and --input-gradient's is 16; PyTorch resizes only the spatial axes (from "
              "axis 2 on); the shapes fit channels-last data (N, spatial axes, C): PyTorch and dmlgrad take N, C "
              "first; transpose, e.g. x.transpose(0, 3, 1, 2)");
}

TEST(PyTorchHabits, ExplainShowsEachPoolingWindowAndItsPadding) {
    CliHarness h;
    std::mt19937_64 rng(test_seed());
    h.write("x.npy", random_tensor(DType::f32, {1, 1, 5, 2}, rng, false));
    h.write("dy.npy", random_tensor(DType::f32, {1, 1, 3, 1}, rng, false));
    // H: windows of 3 at stride 2 from -1 (one padding row each end): [-1, 0, 1], [1, 2, 3], [3, 4, 5].
    auto r = h.run({"maxpool-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--window-size", "3,2", "--strides",
                    "2,1", "--start-padding", "1,0", "--end-padding", "1,0", "--explain"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(
        r.out,
        "kernel: maxpool_grad_twopass_f32 (on the GPU, under an H100's limits)\n"  // windows of 3 by 2: no special
        "axis 2: X size 5, dY size 3, window 3, stride 2, dilation 1, start padding 1, end padding 1\n"
        "  window of dY[0]: X[-1] (padding), X[0], X[1]\n"
        "  window of dY[1]: X[1], X[2], X[3]\n"
        "  window of dY[2]: X[3], X[4], X[5] (padding)\n"
        "  dX[0] <- dY[0] (each where X[0] is its window's first maximum)\n"
        "  dX[1] <- dY[0] + dY[1] (each where X[1] is its window's first maximum)\n"
        "  dX[2] <- dY[1] (each where X[2] is its window's first maximum)\n"
        "  dX[3] <- dY[1] + dY[2] (each where X[3] is its window's first maximum)\n"
        "  dX[4] <- dY[2] (each where X[4] is its window's first maximum)\n"
        "axis 3: X size 2, dY size 1, window 2, stride 1, dilation 1, start padding 0, end padding 0\n"
        "  window of dY[0]: X[0], X[1]\n"
        "  dX[0] <- dY[0] (each where X[0] is its window's first maximum)\n"
        "  dX[1] <- dY[0] (each where X[1] is its window's first maximum)\n"
        "A window is the product of the axes' windows; its dY goes to the first maximum of X in it (in "
        "row-major order; padding never wins), and where windows overlap their dY add.\n");
    EXPECT_FALSE(std::filesystem::exists(h.path("dx.npy")));
}

TEST(PyTorchHabits, ExplainStatesTheElementwiseRules) {
    CliHarness h;
    h.write("x.npy", tensor_from(DType::f16, {2, 3}, {1, -1, 2, -2, 3, -3}));
    auto relu = h.run({"relu-grad", "-x", "x.npy", "-g", "x.npy", "-o", "dx.npy", "--explain"});
    EXPECT_EQ(relu.exit_code, 0) << relu.err;
    EXPECT_EQ(relu.out,
              "kernel: relu_grad_f16 (on the GPU, under an H100's limits)\n"
              "relu-grad: dX[i] = dY[i] where X[i] > 0, else 0 (a NaN in X gives 0), for each of the 6 elements of "
              "shape [2, 3]; dX[i] depends on X[i] and dY[i] alone\n");
    // 0.1 in float16 is 0.0999755859375.
    auto clip =
        h.run({"clip-grad", "-x", "x.npy", "-g", "x.npy", "-o", "dx.npy", "--min", "-1", "--max", "0.1", "--explain"});
    EXPECT_EQ(clip.exit_code, 0) << clip.err;
    EXPECT_EQ(clip.out,
              "kernel: clip_grad_f16 (on the GPU, under an H100's limits)\n"
              "clip-grad: dX[i] = dY[i] where -1 < X[i] < 0.099975586 (the bounds in float16), else 0 (a NaN in X "
              "gives dY), for each of the 6 elements of shape [2, 3]\n");
    EXPECT_FALSE(std::filesystem::exists(h.path("dx.npy")));
}

// The keys of the "parameters" object, in order, and the object itself.
std::string parameters_object(const std::string& json) {
    const size_t begin = json.find("\"parameters\":{");
    EXPECT_NE(begin, std::string::npos) << json;
    return json.substr(begin + 13, json.find('}', begin) - begin - 12);
}
std::vector<std::string> keys_of(const std::string& object) {
    std::vector<std::string> keys;
    const std::regex key("\"([a-z_]+)\":");
    for (auto it = std::sregex_iterator(object.begin(), object.end(), key); it != std::sregex_iterator(); ++it)
        keys.push_back((*it)[1]);
    return keys;
}

// Every field of each DirectML operator description (snake case, the tensors aside) is in --json's parameters,
// with the value the run used: each parameter is given a value unlike its default so a missing or defaulted field
// shows.
TEST(JsonParameters, EveryFieldOfEachOperatorsDescriptionIsReported) {
    PoolCase c;
    c.h.write("x9.npy", random_tensor(DType::f32, {1, 1, 9, 9}, c.rng, false));
    c.h.write("dy4.npy", random_tensor(DType::f32, {1, 1, 4, 3}, c.rng, false));
    // H: (9 + 1 + 2 - ((2 - 1) * 2 + 1)) / 2 + 1 = 5, or 4 with end padding 0: 9 + 1 + 0 - 3 = 7, 7 / 2 + 1 = 4.
    // W: (9 + 0 + 1 - ((3 - 1) * 1 + 1)) / 3 + 1 = 3.
    auto pool =
        c.h.run({"maxpool-grad", "-x", "x9.npy", "-g", "dy4.npy", "-o", "dx.npy", "--cpu", "--json", "--window-size",
                 "2,3", "--strides", "2,3", "--start-padding", "1,0", "--end-padding", "0,1", "--dilations", "2,1"});
    ASSERT_EQ(pool.exit_code, 0) << pool.err;
    EXPECT_EQ(parameters_object(pool.out),
              R"({"window_size":[2,3],"strides":[2,3],"start_padding":[1,0],"end_padding":[0,1],"dilations":[2,1]})");

    c.h.write("v.npy", tensor_from(DType::f32, {2}, {1, -1}));
    auto clip = c.h.run(
        {"clip-grad", "-x", "v.npy", "-g", "v.npy", "-o", "dx.npy", "--cpu", "--json", "--min", "-0.5", "--max", "2"});
    ASSERT_EQ(clip.exit_code, 0) << clip.err;
    EXPECT_EQ(parameters_object(clip.out), R"({"min":-0.5,"max":2})");

    auto relu = c.h.run({"relu-grad", "-x", "v.npy", "-g", "v.npy", "-o", "dx.npy", "--cpu", "--json"});
    EXPECT_EQ(parameters_object(relu.out), "{}");

    auto slice = c.h.run(
        {"slice-grad", "-g", "v.npy", "-o", "dx.npy", "--cpu", "--json", "--output-sizes", "5", "--slice", "[4:0:-3]"});
    ASSERT_EQ(slice.exit_code, 0) << slice.err;
    EXPECT_EQ(keys_of(parameters_object(slice.out)),
              (std::vector<std::string>{"input_window_offsets", "input_window_sizes", "input_window_strides"}));

    c.h.write("r.npy", random_tensor(DType::f32, {1, 1, 4, 6}, c.rng, false));
    auto resample =
        c.h.run({"resample-grad", "-g", "r.npy", "-o", "dx.npy", "--cpu", "--json", "--output-sizes", "1,1,2,3",
                 "--interpolation-mode", "nearest", "--rounding-direction", "increasing", "--scales", "1,1,2,2",
                 "--input-pixel-offsets", "0,0,0.25,0", "--output-pixel-offsets", "0,0,0,-0.25"});
    ASSERT_EQ(resample.exit_code, 0) << resample.err;
    EXPECT_EQ(parameters_object(resample.out),
              R"({"interpolation_mode":"nearest","rounding_direction":"increasing","scales":[1,1,2,2],)"
              R"("input_pixel_offsets":[0,0,0.25,0],"output_pixel_offsets":[0,0,0,-0.25],"taps":"directml"})");
}

}  // namespace
}  // namespace dmlgrad::testing
