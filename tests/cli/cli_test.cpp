// The dmlgrad binary end to end: results on files, exit codes, one-line messages, nothing left behind.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

using Args = std::vector<std::string>;

int line_count(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// Every failure: the given exit code, exactly one line on stderr containing each of `needles`, nothing on stdout.
void expect_failure(const CommandResult& r, int code, const std::vector<std::string>& needles) {
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_EQ(r.out, "");
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
}

class Cli : public ::testing::Test {
protected:
    CliHarness h;

    void write_relu_example() {
        h.write("x.npy", tensor_from(DType::f32, {8}, {-2, -0.0, 0.0, 3, NAN, INFINITY, -INFINITY, 0.001}));
        h.write("dy.npy", tensor_from(DType::f32, {8}, {1, 2, 3, 4, 5, 6, 7, 8}));
    }
    Args relu_args(const std::string& out = "dx.npy") {
        return {"relu-grad", "--input", "x.npy", "--input-gradient", "dy.npy", "--output", out, "--cpu"};
    }
};

TEST_F(Cli, ReluGradWritesTheSpecExample) {
    write_relu_example();
    auto r = h.run(relu_args());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{0, 0, 0, 4, 0, 6, 0, 8}));
    EXPECT_NE(r.out.find("relu-grad float32 on cpu"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST_F(Cli, ShortAliasesWork) {
    write_relu_example();
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");  // -q prints nothing
    EXPECT_EQ(to_doubles(h.read("dx.npy"))[3], 4);
}

TEST_F(Cli, ClipGradWritesTheSpecExample) {
    h.write("x.npy", tensor_from(DType::f32, {8}, {-2, -1, -0.5, 0, 0.5, 1, 2, NAN}));
    h.write("dy.npy", tensor_from(DType::f32, {8}, {10, 20, 30, 40, 50, 60, 70, 80}));
    auto r = h.run({"clip-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--min", "-1", "--max", "1", "--cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{0, 0, 30, 40, 50, 0, 0, 80}));
}

TEST_F(Cli, SliceGradWritesTheNegativeStrideExample) {
    h.write("dy.npy", tensor_from(DType::i32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    auto r = h.run({"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "1,1,4,4", "--input-window-offsets",
                    "0,0,0,1", "--input-window-sizes", "1,1,4,3", "--input-window-strides", "1,1,-2,2", "--cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 1, 0, 2}));
}

TEST_F(Cli, MaxPoolGradWritesThePaddingExample) {
    h.write("x.npy", tensor_from(DType::f32, {1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9}));
    h.write("dy.npy", tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    auto r = h.run({"maxpool-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--window-size", "3,3", "--strides",
                    "2,2", "--start-padding", "1,1", "--end-padding", "1,1", "--cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{1, 2, 0, 3, 4, 0, 0, 0, 0}));
}

TEST_F(Cli, ResampleGradWritesTheHalfPixelLinearExample) {
    h.write("dy.npy", tensor_from(DType::f32, {4}, {1, 2, 3, 4}));
    auto r = h.run({"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "2", "--interpolation-mode",
                    "linear", "--scales", "2", "--cpu"});  // default offsets: -0.5 / 0.5
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{3.25, 6.75}));
}

TEST_F(Cli, ResampleGradNearestRoundsInBothDirections) {
    h.write("dy.npy", tensor_from(DType::f32, {6}, {1, 2, 3, 4, 5, 6}));
    Args args{"resample-grad",
              "-g",
              "dy.npy",
              "-o",
              "dx.npy",
              "--output-sizes",
              "3",
              "--interpolation-mode",
              "nearest",
              "--scales",
              "2",
              "--input-pixel-offsets",
              "0",
              "--output-pixel-offsets",
              "0",
              "--cpu"};
    ASSERT_EQ(h.run(args).exit_code, 0);
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{3, 7, 11}));
    args.insert(args.end(), {"--rounding-direction", "increasing"});
    ASSERT_EQ(h.run(args).exit_code, 0);
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{1, 5, 15}));
}

TEST_F(Cli, JsonReportHasEveryField) {
    write_relu_example();
    Args args = relu_args();
    args.insert(args.end(), {"--json", "--repeat", "5"});
    auto r = h.run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(line_count(r.out), 1) << r.out;
    for (const char* key : {"\"op\":\"relu-grad\"", "\"backend\":\"cpu\"", "\"device\":", "\"dtype\":\"float32\"",
                            "\"shapes\":{\"input\":[8],\"input_gradient\":[8],\"output\":[8]}", "\"kernel_ms\":{",
                            "\"median\":", "\"n\":5", "\"effective_gbps\":", "\"total_ms\":", "\"load_ms\":",
                            "\"setup_ms\":", "\"upload_ms\":", "\"download_ms\":", "\"save_ms\":"})
        EXPECT_NE(r.out.find(key), std::string::npos) << key << " not in " << r.out;
}

TEST_F(Cli, OutputMayBeAnInput) {
    write_relu_example();
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dy.npy", "--cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(to_doubles(h.read("dy.npy")), (std::vector<double>{0, 0, 0, 4, 0, 6, 0, 8}));
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "x.npy"}));
}

TEST_F(Cli, VersionAndHelpExitZero) {
    auto v = h.run({"--version"});
    EXPECT_EQ(v.exit_code, 0);
    // "dmlgrad <major>.<minor>.<patch> (commit <hash>)\n", then the libraries and Vulkan (version_test.cpp)
    const std::string first_line = v.out.substr(0, v.out.find('\n'));
    const std::string version = first_line.substr(0, first_line.find(" (commit "));
    ASSERT_EQ(version.rfind("dmlgrad ", 0), 0u) << v.out;
    EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << v.out;
    EXPECT_EQ(version.find_first_not_of("0123456789.", 8), std::string::npos) << v.out;
    auto help = h.run({"--help"});
    EXPECT_EQ(help.exit_code, 0);
    for (const char* sub : {"relu-grad", "clip-grad", "slice-grad", "maxpool-grad", "resample-grad", "devices"})
        EXPECT_NE(help.out.find(sub), std::string::npos) << sub;
    auto sub_help = h.run({"maxpool-grad", "--help"});
    EXPECT_EQ(sub_help.exit_code, 0);
    EXPECT_NE(sub_help.out.find("--window-size"), std::string::npos);
}

// --- usage errors: exit 2, one line naming the flag or file, and no output file ---

TEST_F(Cli, MissingInputFile) {
    h.write("dy.npy", tensor_from(DType::f32, {2}, {1, 2}));
    expect_failure(h.run(relu_args()), 2, {"x.npy"});
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy"}));
}

TEST_F(Cli, MalformedInputFile) {
    h.write_bytes("x.npy", "not a numpy file at all");
    h.write("dy.npy", tensor_from(DType::f32, {2}, {1, 2}));
    expect_failure(h.run(relu_args()), 2, {"x.npy"});
}

TEST_F(Cli, TruncatedInputFile) {
    h.write("x.npy", tensor_from(DType::f32, {64}, std::vector<double>(64, 1.5)));
    std::string bytes = h.read_bytes("x.npy");
    h.write_bytes("x.npy", bytes.substr(0, bytes.size() - 3));
    h.write("dy.npy", tensor_from(DType::f32, {64}, std::vector<double>(64, 2)));
    expect_failure(h.run(relu_args()), 2, {"x.npy"});
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "x.npy"}));
}

TEST_F(Cli, DtypeMismatch) {
    h.write("x.npy", tensor_from(DType::f32, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::f16, {2}, {1, 2}));
    expect_failure(h.run(relu_args()), 2, {"--input-gradient dy.npy", "float16", "float32"});
}

TEST_F(Cli, ShapeMismatch) {
    h.write("x.npy", tensor_from(DType::f32, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::f32, {3}, {1, 2, 3}));
    expect_failure(h.run(relu_args()), 2, {"dy.npy", "shape"});
}

TEST_F(Cli, UnsupportedDtypeNamesTheOperator) {
    h.write("x.npy", tensor_from(DType::u8, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::u8, {2}, {1, 2}));
    expect_failure(h.run(relu_args()), 2, {"x.npy", "uint8", "relu-grad"});
}

TEST_F(Cli, BadListValueNamesTheFlag) {
    h.write("x.npy", tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    h.write("dy.npy", tensor_from(DType::f32, {1, 1, 1, 1}, {1}));
    expect_failure(
        h.run({"maxpool-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--window-size", "2,x", "--cpu"}), 2,
        {"--window-size", "'x'"});
}

TEST_F(Cli, ClipBoundOutOfRangeNamesTheFlag) {
    h.write("x.npy", tensor_from(DType::u8, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::u8, {2}, {1, 2}));
    expect_failure(
        h.run({"clip-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--min", "0", "--max", "256", "--cpu"}), 2,
        {"--max"});
}

TEST_F(Cli, MissingRequiredFlag) {
    expect_failure(h.run({"relu-grad", "--input", "x.npy", "--cpu"}), 2, {"--input-gradient"});
}

TEST_F(Cli, UnknownFlag) { expect_failure(h.run({"relu-grad", "--bogus"}), 2, {"--bogus"}); }

TEST_F(Cli, UnknownInterpolationMode) {
    h.write("dy.npy", tensor_from(DType::f32, {2}, {1, 2}));
    expect_failure(h.run({"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "2",
                          "--interpolation-mode", "cubic", "--cpu"}),
                   2, {"--interpolation-mode", "cubic"});
}

TEST_F(Cli, RepeatMustBePositive) {
    write_relu_example();
    Args args = relu_args();
    args.insert(args.end(), {"--repeat", "0"});
    expect_failure(h.run(args), 2, {"--repeat"});
}

TEST_F(Cli, MissingOutputFolder) {
    write_relu_example();
    expect_failure(h.run(relu_args("no/such/dir/dx.npy")), 2, {"--output", "does not exist"});
}

TEST_F(Cli, FailedRunLeavesAnExistingOutputUntouched) {
    h.write("x.npy", tensor_from(DType::f32, {2}, {1, 2}));
    h.write("dy.npy", tensor_from(DType::f32, {3}, {1, 2, 3}));
    h.write_bytes("dx.npy", "precious");
    expect_failure(h.run(relu_args()), 2, {"shape"});
    EXPECT_EQ(h.read_bytes("dx.npy"), "precious");
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dx.npy", "dy.npy", "x.npy"}));
}

TEST_F(Cli, SuccessfulRunLeavesNoTemporaryFile) {
    write_relu_example();
    h.write_bytes("dx.npy", "old");
    ASSERT_EQ(h.run(relu_args()).exit_code, 0);
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dx.npy", "dy.npy", "x.npy"}));
    EXPECT_EQ(h.read("dx.npy").elements(), 8u);
}

TEST_F(Cli, WriteFailureIsARuntimeErrorAndLeavesNothing) {
    SeededRng rng;
    h.write("x.npy", random_tensor(DType::f32, {4096}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {4096}, rng));
    h.write_bytes("dx.npy", "precious");
    // A 1 KiB file-size limit (with SIGXFSZ ignored) makes the 16 KiB write fail with EFBIG.
    expect_failure(h.run(relu_args(), "ulimit -f 1 && trap '' XFSZ &&"), 1, {"dx.npy"});
    EXPECT_EQ(h.read_bytes("dx.npy"), "precious");
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dx.npy", "dy.npy", "x.npy"}));
}

}  // namespace
}  // namespace dmlgrad::testing
