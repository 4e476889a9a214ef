// A manifest as a program, end to end (CPU and lavapipe, one worker and two): a job reading an earlier job's output
// gets that job's result, a later job replacing a file an earlier one reads leaves the earlier one the old
// content, and files are matched by identity, not by spelling.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "cli/batch_testing.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

// The ways a batch runs: both backends, one worker and two, and little or much read-ahead.
const std::vector<Args> kBatchFlags = {{"--cpu"}, {}, {"--device", "0,0"}, {"--device", "0,0", "--max-in-flight", "1"}};

class BatchChain : public ::testing::Test {
protected:
    CliHarness h;
    SeededRng rng;

    void SetUp() override {
        h.write("x.npy", random_tensor(DType::f32, {4000}, rng));
        for (const char* name : {"dy0.npy", "dy1.npy", "dy2.npy"})
            h.write(name, random_tensor(DType::f32, {4000}, rng));
    }

    // Each line run as a single command, one after the other (on the CPU: the reference), keeping `keep`'s result
    // as `expected_<keep>` and restoring the files the lines wrote to what they held before.
    void run_one_after_another(const std::vector<std::string>& lines, const std::vector<std::string>& keep) {
        std::map<std::string, std::optional<std::string>> before;
        for (const std::string& line : lines) {
            const Args args_of_line = words(line);
            const std::string output = *(std::find(args_of_line.begin(), args_of_line.end(), "-o") + 1);
            if (!before.count(output))
                before[output] =
                    std::filesystem::exists(h.dir() / output) ? std::optional(h.read_bytes(output)) : std::nullopt;
            Args args = words(line);
            args.insert(args.end(), {"--cpu", "-q"});
            const CommandResult r = h.run(args);
            ASSERT_EQ(r.exit_code, 0) << line << ": " << r.err;
        }
        for (const std::string& name : keep) h.write_bytes("expected_" + name, h.read_bytes(name));
        for (const auto& [name, bytes] : before)
            bytes ? h.write_bytes(name, *bytes) : static_cast<void>(std::filesystem::remove(h.dir() / name));
    }

    // Runs `lines` as a batch with each of kBatchFlags, the files named in `reset` rewritten before each run, and
    // expects each of `keep` to hold what running the lines one after another left there.
    void expect_batch_equals_sequence(const std::vector<std::string>& lines, const std::vector<std::string>& keep,
                                      const std::map<std::string, std::string>& reset = {}) {
        for (const auto& [name, bytes] : reset) h.write_bytes(name, bytes);
        run_one_after_another(lines, keep);
        write_manifest(h, "m.txt", lines);
        for (const Args& flags : kBatchFlags) {
            for (const auto& [name, bytes] : reset) h.write_bytes(name, bytes);
            for (const std::string& name : keep)
                if (!reset.count(name)) std::filesystem::remove(h.dir() / name);
            Args args = {"batch", "m.txt"};
            args.insert(args.end(), flags.begin(), flags.end());
            const CommandResult r = h.run(args);
            const std::string how = fmt::format("batch {}", fmt::join(flags, " "));
            ASSERT_EQ(r.exit_code, 0) << how << ": " << r.err;
            for (const std::string& name : keep)
                EXPECT_TRUE(h.read_bytes(name) == h.read_bytes("expected_" + name)) << name << " after " << how;
        }
    }
};

// relu-grad then clip-grad then relu-grad, each reading the one before: by hand, then against the lines run one
// after another, with no file there before and with a stale one.
TEST_F(BatchChain, AJobReadsTheOutputOfTheLineBeforeIt) {
    const std::vector<std::string> chain = {"relu-grad -x x.npy -g dy0.npy -o t.npy",
                                            "clip-grad -x t.npy -g dy1.npy -o u.npy --min -0.5 --max 0.5",
                                            "relu-grad -x u.npy -g dy2.npy -o v.npy"};
    expect_batch_equals_sequence(chain, {"t.npy", "u.npy", "v.npy"});
    // By hand (docs/OPERATORS.md): t = dy0 where x > 0; u = dy1 unless t <= -0.5 or t >= 0.5 (NaN passes);
    // v = dy2 where u > 0.
    const std::vector<double> x = to_doubles(h.read("x.npy")), dy0 = to_doubles(h.read("dy0.npy")),
                              dy1 = to_doubles(h.read("dy1.npy")), dy2 = to_doubles(h.read("dy2.npy"));
    const std::vector<double> v = to_doubles(h.read("v.npy"));
    size_t nonzero = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double t = x[i] > 0 ? dy0[i] : 0, u = t <= -0.5 || t >= 0.5 ? 0 : dy1[i], expected = u > 0 ? dy2[i] : 0;
        if (std::isnan(expected)) continue;  // the specials propagate as the operators define; compared above
        EXPECT_EQ(v[i], expected) << i;
        nonzero += v[i] != 0;
    }
    EXPECT_GT(nonzero, 100u);
    const Tensor stale = random_tensor(DType::f32, {4000}, rng);
    std::string stale_bytes = h.read_bytes("x.npy");  // a well-formed file of the right shape, other content
    h.write("stale.npy", stale);
    expect_batch_equals_sequence(chain, {"t.npy", "u.npy", "v.npy"},
                                 {{"t.npy", h.read_bytes("stale.npy")}, {"u.npy", stale_bytes}});
}

// Line 1 reads r.npy (with -x and with --compare) before line 2 replaces it: line 1 sees the old content.
TEST_F(BatchChain, ALaterLineReplacingAFileLeavesAnEarlierReaderTheOldContent) {
    const std::string old_r = h.read_bytes("dy0.npy");
    h.write_bytes("r.npy", old_r);
    expect_batch_equals_sequence({"relu-grad -x x.npy -g r.npy -o a.npy", "relu-grad -x x.npy -g dy1.npy -o r.npy"},
                                 {"a.npy", "r.npy"}, {{"r.npy", old_r}});
    // --compare reads its reference with the inputs: c.npy is line 1's own result, so it passes only if line 2
    // has not replaced it yet.
    h.run({"relu-grad", "-x", "x.npy", "-g", "dy0.npy", "-o", "c.npy", "--cpu", "-q"});
    const std::string old_c = h.read_bytes("c.npy");
    expect_batch_equals_sequence(
        {"relu-grad -x x.npy -g dy0.npy -o a.npy --compare c.npy", "relu-grad -x x.npy -g dy2.npy -o c.npy"},
        {"a.npy", "c.npy"}, {{"c.npy", old_c}});
}

// The dependency is found through a symbolic link to the output, a linked folder, and "./" and "..". A hard link
// is another entry: the output replaces t.npy's, and the hard link keeps the old content, as one after another.
TEST_F(BatchChain, FilesAreMatchedByIdentityNotSpelling) {
    std::filesystem::create_directory(h.dir() / "sub");
    std::filesystem::create_directory_symlink(".", h.dir() / "here");
    h.write("t.npy", random_tensor(DType::f32, {4000}, rng));  // stale
    const std::string stale = h.read_bytes("t.npy");
    std::filesystem::create_symlink("t.npy", h.dir() / "link.npy");
    std::filesystem::create_hard_link(h.dir() / "t.npy", h.dir() / "hard.npy");
    expect_batch_equals_sequence(
        {"relu-grad -x x.npy -g dy0.npy -o here/t.npy", "relu-grad -x link.npy -g dy1.npy -o u.npy",
         "relu-grad -x sub/../t.npy -g dy2.npy -o ./v.npy", "relu-grad -x hard.npy -g dy2.npy -o w.npy"},
        {"t.npy", "u.npy", "v.npy", "w.npy"}, {{"t.npy", stale}});
    EXPECT_EQ(h.read_bytes("hard.npy"), stale);
}

// A backward chain on the GPU: each job takes the previous job's output from device memory (the -v line says so)
// and still writes its file; every file equals the lines run one after another on the CPU, with one worker and two.
TEST_F(BatchChain, AChainedJobTakesItsInputFromDeviceMemory) {
    h.write("rdy.npy", random_tensor(DType::f32, {1, 2, 16, 16}, rng));
    h.write("cx.npy", random_tensor(DType::f32, {1, 2, 8, 8}, rng));
    h.write("px.npy", random_tensor(DType::f32, {1, 2, 16, 16}, rng, false));
    h.write("rx.npy", random_tensor(DType::f32, {1, 2, 16, 16}, rng));
    const std::vector<std::string> chain = {
        "resample-grad -g rdy.npy -o t1.npy --output-sizes 1,2,8,8 --torch-mode bilinear",
        "clip-grad -x cx.npy -g t1.npy -o t2.npy --min -1 --max 1",
        "maxpool-grad -x px.npy -g t2.npy -o t3.npy --window-size 2,2 --strides 2,2",
        "relu-grad -x rx.npy -g t3.npy -o t4.npy"};
    const std::vector<std::string> outputs = {"t1.npy", "t2.npy", "t3.npy", "t4.npy"};
    run_one_after_another(chain, outputs);
    write_manifest(h, "chain.txt", chain);
    // On both APIs: each hands the intermediates over in its own device memory, with the CPU's bytes.
    for (const Args& flags :
         std::vector<Args>{{}, {"--device", "0,0"}, {"--api", "d3d12"}, {"--api", "d3d12", "--device", "0,0"}}) {
        Args args = {"batch", "chain.txt", "-v"};
        args.insert(args.end(), flags.begin(), flags.end());
        const CommandResult r = h.run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        size_t handed_over = 0;
        for (size_t at = r.err.find("1 input(s) taken from device memory"); at != std::string::npos;
             at = r.err.find("1 input(s) taken from device memory", at + 1))
            ++handed_over;
        const std::string how = fmt::format("batch {}", fmt::join(flags, " "));
        EXPECT_EQ(handed_over, 3u) << how << ": " << r.err;
        for (const std::string& name : outputs)
            EXPECT_TRUE(h.read_bytes(name) == h.read_bytes("expected_" + name)) << name << " after " << how;
    }
}

TEST_F(BatchChain, AJobWhoseInputsWriterFailedIsNotRunAndSaysWhy) {
    write_manifest(h, "m.txt",
                   {"relu-grad -x missing.npy -g dy0.npy -o t.npy",  // line 3
                    "relu-grad -x t.npy -g dy1.npy -o u.npy",        // line 4
                    "relu-grad -x x.npy -g dy1.npy -o w.npy"});      // line 5: independent
    h.write("t.npy", random_tensor(DType::f32, {4000}, rng));        // stale
    for (const Args& flags : kBatchFlags) {
        Args args = {"batch", "m.txt", "--json"};
        args.insert(args.end(), flags.begin(), flags.end());
        const CommandResult r = h.run(args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find("m.txt line 4: not run: it reads the output of line 3, which failed"), std::string::npos)
            << r.err;
        EXPECT_EQ(lines_with_status(r.out, "failed"), (std::vector<int>{3, 4}));
        EXPECT_EQ(lines_with_status(r.out, "ok"), (std::vector<int>{5}));
        EXPECT_FALSE(std::filesystem::exists(h.dir() / "u.npy"));
    }
}

}  // namespace
}  // namespace dmlgrad::testing
