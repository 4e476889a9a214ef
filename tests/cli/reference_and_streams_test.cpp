// --compare with a reference file, --rtol/--atol, --explain, `-` as a path, and the JSON of failures.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// relu-grad inputs whose result is known element by element: X alternates sign, dY = 1..6.
struct ReluCase {
    CliHarness h;
    ReluCase() {
        h.write("x.npy", tensor_from(DType::f32, {2, 3}, {1, -1, 2, -2, 3, -3}));
        h.write("dy.npy", tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    }
    std::vector<std::string> args(std::vector<std::string> extra) const {
        std::vector<std::string> a{"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

TEST(Compare, AMatchingReferencePassesAndTheResultIsWritten) {
    ReluCase c;
    c.h.write("ref.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 0}));
    auto r = c.h.run(c.args({"--compare", "ref.npy"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "compare  bit for bit against ref.npy: match")) << r.out;
    EXPECT_TRUE(bitwise_equal(c.h.read("ref.npy"), c.h.read("dx.npy")));
}

TEST(Compare, ADifferenceExitsThreeNamesTheFirstAndWritesNothing) {
    ReluCase c;
    c.h.write("ref.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5.5, 7}));
    auto r = c.h.run(c.args({"--compare", "ref.npy"}));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "compare failed: 2 of 6 elements differ bit for bit; first at index 4 (1,1): result 5"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "ref.npy 5.5")) << r.err;
    EXPECT_EQ(c.h.listing(), (std::vector<std::string>{"dy.npy", "ref.npy", "x.npy"}));
}

TEST(Compare, TolerancesDecideAndAnotherDtypeIsComparedByValue) {
    ReluCase c;
    c.h.write("ref64.npy", tensor_from(DType::f64, {2, 3}, {1.00001, 0, 3, 0, 5, 0}));
    EXPECT_EQ(c.h.run(c.args({"--compare", "ref64.npy"})).exit_code, 3);  // exact by default for relu
    EXPECT_EQ(c.h.run(c.args({"--compare", "ref64.npy", "--rtol", "2e-5"})).exit_code, 0);
    EXPECT_EQ(c.h.run(c.args({"--compare", "ref64.npy", "--rtol", "0.5e-5"})).exit_code, 3);
    EXPECT_EQ(c.h.run(c.args({"--compare", "ref64.npy", "--atol", "1.1e-5"})).exit_code, 0);
    EXPECT_EQ(c.h.run(c.args({"--compare", "ref64.npy", "--atol", "0.9e-5"})).exit_code, 3);
}

TEST(Compare, BadReferencesAndTolerancesAreUsageErrors) {
    ReluCase c;
    c.h.write("ref.npy", tensor_from(DType::f32, {3, 2}, {1, 0, 3, 0, 5, 0}));
    auto shape = c.h.run(c.args({"--compare", "ref.npy"}));
    EXPECT_EQ(shape.exit_code, 2);
    EXPECT_TRUE(contains(shape.err, "--compare ref.npy: shape 3x2 differs from the result's 2x3")) << shape.err;
    EXPECT_EQ(c.h.run(c.args({"--compare", "missing.npy"})).exit_code, 2);
    for (const char* bad : {"-1", "nan", "inf", "1e", "0x1", "+-1"}) {
        auto r = c.h.run(c.args({"--compare", "ref.npy", "--rtol", bad}));
        EXPECT_EQ(r.exit_code, 2) << bad;
        EXPECT_TRUE(contains(r.err, "--rtol")) << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy")));
}

TEST(Compare, JsonIsPrintedOnFailureWithPassedFalse) {
    ReluCase c;
    c.h.write("ref.npy", tensor_from(DType::f32, {2, 3}, {1, 0, 3, 0, 5, 1}));
    auto r = c.h.run(c.args({"--compare", "ref.npy", "--json"}));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(lines(r.out), 1) << r.out;
    for (const char* part : {R"("passed":false)",
                             R"("compare":{"reference":"ref.npy","exact":true,"rtol":0,"atol":0,)"
                             R"("passed":false,"differing":1,"first_index":5,)",
                             R"("inputs":{"input":"x.npy","input_gradient":"dy.npy"})", R"("check":null)"})
        EXPECT_TRUE(contains(r.out, part)) << part << " not in " << r.out;
}

TEST(Json, ErrorsBecomeAJsonObjectToo) {
    ReluCase c;
    auto usage = c.h.run({"relu-grad", "-x", "nope.npy", "-g", "dy.npy", "-o", "dx.npy", "--json"});
    EXPECT_EQ(usage.exit_code, 2);
    EXPECT_TRUE(contains(usage.out, R"(,"exit_code":2})")) << usage.out;
    EXPECT_TRUE(contains(usage.out, R"("error":"nope.npy: cannot open)")) << usage.out;
    auto parse = c.h.run({"relu-grad", "-x", "x.npy", "--json"});
    EXPECT_EQ(parse.exit_code, 2);
    EXPECT_TRUE(contains(parse.out, R"("exit_code":2)")) << parse.out;
    auto without = c.h.run({"relu-grad", "-x", "nope.npy", "-g", "dy.npy", "-o", "dx.npy"});
    EXPECT_EQ(without.out, "");
}

TEST(Json, EveryStringIsValidWhateverBytesAPathHolds) {
    ReluCase c;
    const std::string odd = "x\xff\x01\xc3\xa9\xed\xa0\x80\"\\.npy";  // invalid byte, control, é, a surrogate
    std::filesystem::rename(c.h.path("x.npy"), c.h.path(odd));
    auto r = c.h.run({"relu-grad", "-x", odd, "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(
        contains(r.out, "\"input\":\"x\xef\xbf\xbd\\u0001\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\\\"\\\\.npy\""))
        << r.out;
}

TEST(Json, ParametersShowTheResolvedDirectMLCall) {
    CliHarness h;
    h.write("dy.npy", tensor_from(DType::f32, {2, 2}, {1, 2, 3, 4}));
    auto r = h.run({"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--json", "--output-sizes", "4,5",
                    "--input-window-offsets", "1,0", "--input-window-sizes", "3,4", "--input-window-strides", "2,-3"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, R"("parameters":{"input_window_offsets":[1,0],"input_window_sizes":[3,4],)"
                                R"("input_window_strides":[2,-3]})"))
        << r.out;
    EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{0, 0, 0, 0, 0, 2, 0, 0, 1, 0,  //
                                                                 0, 0, 0, 0, 0, 4, 0, 0, 3, 0}));
}

TEST(Json, ParametersOfAPyTorchModeNameTheTapRule) {
    CliHarness h;
    h.write("dy.npy", tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    auto r = h.run({"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "1,1,14,14", "--torch-mode",
                    "nearest", "--cpu", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, R"("parameters":{"interpolation_mode":"nearest","rounding_direction":"decreasing",)"
                                R"("scales":[1,1,0.14285715,0.14285715],"input_pixel_offsets":[0,0,0,0],)"
                                R"("output_pixel_offsets":[0,0,0,0],"taps":"pytorch"})"))
        << r.out;
}

TEST(Streams, StandardInputFromAPipeOrAFileAndTheResultToStandardOutput) {
    ReluCase c;
    c.h.run(c.args({}));
    const std::string expected = c.h.read_bytes("dx.npy");
    auto piped = c.h.run({"relu-grad", "-x", "-", "-g", "dy.npy", "-o", "-", "--cpu"}, "cat x.npy |");
    EXPECT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(piped.out, expected);
    EXPECT_TRUE(contains(piped.err, "wrote -")) << piped.err;  // the report moves to stderr
    auto redirected = c.h.run({"relu-grad", "-x", "x.npy", "-g", "-", "-o", "out.npy", "--cpu"}, "<dy.npy");
    EXPECT_EQ(redirected.exit_code, 0) << redirected.err;
    EXPECT_EQ(c.h.read_bytes("out.npy"), expected);
}

TEST(Streams, StandardInputErrorsAreNamedAndOnlyOneInputMayUseIt) {
    ReluCase c;
    auto twice = c.h.run({"relu-grad", "-x", "-", "-g", "-", "-o", "dx.npy", "--cpu"}, "cat x.npy |");
    EXPECT_EQ(twice.exit_code, 2);
    EXPECT_TRUE(contains(twice.err, "only one input can be - (standard input)")) << twice.err;
    auto garbage = c.h.run({"relu-grad", "-x", "-", "-g", "dy.npy", "-o", "dx.npy", "--cpu"}, "echo hello |");
    EXPECT_EQ(garbage.exit_code, 2);
    EXPECT_TRUE(contains(garbage.err, "standard input")) << garbage.err;
    EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy")));
}

// The finding: a folder or a write-only descriptor as standard input aborted the process (SIGABRT, no message).
TEST(Streams, AFolderOrAWriteOnlyStandardInputIsAUsageError) {
    ReluCase c;
    const std::vector<std::string> args{"relu-grad", "-x", "x.npy", "-g", "-", "-o", "dx.npy", "--cpu"};
    auto folder = c.h.run(args, "<. ");
    EXPECT_EQ(folder.exit_code, 2) << folder.err;
    EXPECT_TRUE(contains(folder.err, "standard input is a folder")) << folder.err;
    auto write_only = c.h.run(args, "0>>wo.npy ");
    EXPECT_EQ(write_only.exit_code, 2) << write_only.err;
    EXPECT_TRUE(contains(write_only.err, "standard input is open for writing only")) << write_only.err;
    EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy")));
}

#ifndef __SANITIZE_ADDRESS__  // its run-time opens a file before main(), which takes descriptor 0
// A closed standard input is named as such, not read from whatever file a GPU driver opens next (it would take
// descriptor 0): main holds descriptor 0 with /dev/null before any thread starts.
TEST(Streams, AClosedStandardInputIsAUsageError) {
    ReluCase c;
    const std::vector<std::string> gpu{"relu-grad", "-x", "x.npy", "-g", "-", "-o", "dx.npy"};
    std::vector<std::string> cpu = gpu;
    cpu.push_back("--cpu");
    for (const auto& args : {gpu, cpu}) {
        auto r = c.h.run(args, "<&- ");
        EXPECT_EQ(r.exit_code, 2) << args.size() << ": " << r.err;
        EXPECT_TRUE(contains(r.err, "standard input is closed")) << args.size() << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(c.h.path("dx.npy"))) << args.size();
    }
}
#endif

// The finding: two arrays np.save'd into one file, the first read by the caller: dmlgrad read the first again.
TEST(Streams, ARegularFileAsStandardInputIsReadFromItsCurrentOffset) {
    ReluCase c;
    c.h.run(c.args({}));
    const std::string expected = c.h.read_bytes("dx.npy");
    const std::string first = c.h.read_bytes("x.npy");
    c.h.write_bytes("two.npy", first + c.h.read_bytes("dy.npy"));
    const std::string skip_first =
        fmt::format("exec 3<two.npy && dd bs={} count=1 of=/dev/null <&3 2>/dev/null && <&3 ", first.size());
    auto r = c.h.run({"relu-grad", "-x", "x.npy", "-g", "-", "-o", "out.npy", "--cpu"}, skip_first);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(c.h.read_bytes("out.npy"), expected);
}

// The finding: with -o - --json, an error in the flags printed its JSON object on stdout, into the data.
TEST(Json, AFlagErrorWithTheResultToStandardOutputKeepsStdoutClean) {
    ReluCase c;
    for (const std::vector<std::string>& output : {std::vector<std::string>{"-o", "-"}, {"--output=-"}}) {
        std::vector<std::string> args{"relu-grad", "-x", "x.npy", "--json", "--no-such-flag"};
        args.insert(args.end(), output.begin(), output.end());
        auto r = c.h.run(args, "");
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_EQ(r.out, "");
        EXPECT_TRUE(contains(r.err, R"("exit_code":2)")) << r.err;
    }
}

TEST(Streams, ABatchJobCannotUseTheStandardStreamsOrExplain) {
    ReluCase c;
    c.h.write_bytes("m.txt",
                    "relu-grad -x x.npy -g dy.npy -o -\nslice-grad -g dy.npy -o a.npy --output-sizes 2,3 "
                    "--input-window-offsets 0,0 --input-window-sizes 2,3 --input-window-strides 1,1 --explain\n");
    auto r = c.h.run({"batch", "m.txt", "--cpu"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "cannot be a batch job's file")) << r.err;
    EXPECT_TRUE(contains(r.err, "--explain is not a job")) << r.err;
}

TEST(NumpySliceCli, GradientOfANumpySliceOnTheCpuAndTheGpu) {
    CliHarness h;
    // x of shape 3x5, x[1:, ::-2] has shape 2x3: rows 1, 2; columns 4, 2, 0.
    h.write("dy.npy", tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    const std::vector<double> want{0, 0, 0, 0, 0, 3, 0, 2, 0, 1, 6, 0, 5, 0, 4};
    for (const char* backend : {"--cpu", "--check"}) {
        auto r = h.run(
            {"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "3,5", "--slice", "[1:, ::-2]", backend});
        EXPECT_EQ(r.exit_code, 0) << backend << r.err;
        EXPECT_EQ(to_doubles(h.read("dx.npy")), want) << backend;
    }
    // An integer index: dY may lack the axis (numpy's shape) or keep it as 1.
    h.write("row.npy", tensor_from(DType::f32, {5}, {1, 2, 3, 4, 5}));
    h.write("row1.npy", tensor_from(DType::f32, {1, 5}, {1, 2, 3, 4, 5}));
    for (const char* dy : {"row.npy", "row1.npy"}) {
        auto r = h.run({"slice-grad", "-g", dy, "-o", "dx.npy", "--output-sizes", "3,5", "--slice", "-1", "--check"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(to_doubles(h.read("dx.npy")), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5}));
    }
}

TEST(NumpySliceCli, OneFormOfTheWindowAndNumpysRefusals) {
    CliHarness h;
    h.write("dy.npy", tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    const std::vector<std::string> base{"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "3,5", "--cpu"};
    const auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return h.run(args);
    };
    for (const auto& [extra, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--slice", "1:", "--input-window-strides", "1,1"}, "--slice replaces --input-window-offsets"},
             {{}, "--input-window-offsets is required (or give the window as --slice)"},
             {{"--slice", ":, None"}, "None (newaxis)"},
             {{"--slice", "[[0, 2]]"}, "array indices"}}) {
        auto r = with(extra);
        EXPECT_EQ(r.exit_code, 2) << message;
        EXPECT_EQ(lines(r.err), 1) << r.err;
        EXPECT_TRUE(contains(r.err, message)) << r.err;
    }
    auto wrong = with({"--slice", "1:, 1:"});
    EXPECT_EQ(wrong.exit_code, 2);
    EXPECT_TRUE(contains(wrong.err, "is not the shape of x[1:, 1:] for x of shape 3x5, which is 2x4")) << wrong.err;
    EXPECT_FALSE(std::filesystem::exists(h.path("dx.npy")));
}

TEST(Explain, SliceListsWhereEachDyElementLands) {
    CliHarness h;
    h.write("dy.npy", tensor_from(DType::f32, {2}, {1, 2}));
    auto r = h.run({"slice-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "5", "--input-window-offsets", "1",
                    "--input-window-sizes", "4", "--input-window-strides", "-3", "--explain"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "kernel: slice_grad_walk_lines_b32 (on the GPU, under an H100's limits)\n"
              "axis 0: dX size 5, dY size 2, dY[k] -> dX[4 - 3*k]\n"
              "  dX[0] <- 0 (outside the slice)\n  dX[1] <- dY[1]\n  dX[2] <- 0 (outside the slice)\n"
              "  dX[3] <- 0 (outside the slice)\n  dX[4] <- dY[0]\n");
    EXPECT_FALSE(std::filesystem::exists(h.path("dx.npy")));
}

TEST(Explain, ResampleListsTapsAndWeights) {
    CliHarness h;
    h.write("dy.npy", tensor_from(DType::f32, {4}, {1, 2, 3, 4}));
    // Linear 2x with half-pixel centres: dY j reads dX at (j + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25.
    auto r = h.run({"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "2", "--interpolation-mode",
                    "linear", "--explain"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out,
                         "  dX[0] <- 1 * dY[0] + 0.75 * dY[1] + 0.25 * dY[2]\n"
                         "  dX[1] <- 0.25 * dY[1] + 0.75 * dY[2] + 1 * dY[3]\n"))
        << r.out;
    auto nearest = h.run({"resample-grad", "-g", "dy.npy", "-o", "dx.npy", "--output-sizes", "2",
                          "--interpolation-mode", "nearest", "--explain"});
    // Nearest rounds down by default (DirectML's decreasing): -0.25 and 0.25 and 0.75 -> 0 (clamped), 1.25 -> 1.
    EXPECT_TRUE(contains(nearest.out, "  dX[0] <- dY[0] + dY[1] + dY[2]\n  dX[1] <- dY[3]\n")) << nearest.out;
}

}  // namespace
}  // namespace dmlgrad::testing
