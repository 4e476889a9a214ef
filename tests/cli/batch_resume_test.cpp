// --skip-existing trusts only complete outputs, skipped jobs are counted apart from the succeeded ones, and a batch's
// exit status follows the precedence docs/BATCH.md states (1, then 3, then 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "cli/batch_testing.h"
#include "io/npy.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

class BatchResume : public ::testing::Test {
protected:
    CliHarness h;
    SeededRng rng;

    void SetUp() override {
        h.write("x.npy", random_tensor(DType::f32, {300}, rng));
        h.write("dy.npy", random_tensor(DType::f32, {300}, rng));
    }
};

// Each output o<i>.npy is there before the batch, complete or broken; the broken ones are redone (and -v and --json
// say why), the complete one is skipped and left as it was.
TEST_F(BatchResume, SkipExistingRedoesEveryIncompleteOutput) {
    ASSERT_EQ(h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "expected.npy", "--cpu", "-q"}).exit_code, 0);
    const std::string complete = h.read_bytes("expected.npy");
    h.write("other.npy", random_tensor(DType::f32, {300}, rng));  // complete: the right shape and dtype
    h.write("shape.npy", random_tensor(DType::f32, {10, 30}, rng));
    h.write("dtype.npy", random_tensor(DType::f16, {300}, rng));
    const std::vector<std::pair<std::string, std::string>> broken = {
        {"truncated", complete.substr(0, complete.size() - 4)},
        {"empty", ""},
        {"garbage", std::string(complete.size(), 'g')},
        {"longer", complete + "tail"},
        {"wrong shape", h.read_bytes("shape.npy")},
        {"wrong dtype", h.read_bytes("dtype.npy")}};
    std::vector<std::string> jobs;
    for (size_t i = 0; i < broken.size() + 1; ++i)
        jobs.push_back(fmt::format("relu-grad -x x.npy -g dy.npy -o o{}.npy", i));
    write_manifest(h, "m.txt", jobs);
    for (const Args& flags : std::vector<Args>{{"--cpu", "-v"}, {"--device", "0,0"}}) {
        for (size_t i = 0; i < broken.size(); ++i) h.write_bytes(fmt::format("o{}.npy", i), broken[i].second);
        h.write_bytes("o6.npy", h.read_bytes("other.npy"));  // complete: skipped, not replaced
        Args args = {"batch", "m.txt", "--skip-existing", "--json"};
        args.insert(args.end(), flags.begin(), flags.end());
        const CommandResult r = h.run(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        for (size_t i = 0; i < broken.size(); ++i)
            EXPECT_TRUE(h.read_bytes(fmt::format("o{}.npy", i)) == complete) << "o" << i << ": " << broken[i].first;
        EXPECT_TRUE(h.read_bytes("o6.npy") == h.read_bytes("other.npy"));
        EXPECT_EQ(lines_with_status(r.out, "skipped"), (std::vector<int>{9}));
        std::vector<int> ok = lines_with_status(r.out, "ok");
        std::sort(ok.begin(), ok.end());  // two workers finish in any order
        EXPECT_EQ(ok, (std::vector<int>{3, 4, 5, 6, 7, 8}));
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 8) << r.out;
        for (const std::string reason :
             {R"("not_skipped":"o0.npy: truncated)", R"("not_skipped":"o1.npy: not a .npy file)",
              R"("not_skipped":"o2.npy: not a .npy file)", R"("not_skipped":"o3.npy: trailing data)",
              R"("not_skipped":"o4.npy: holds float32 10x30)", R"("not_skipped":"o5.npy: holds float16 300)"})
            EXPECT_NE(r.out.find(reason), std::string::npos) << reason << " not in " << r.out;
        EXPECT_EQ(summary_field(r.out, "succeeded"), 6);
        EXPECT_EQ(summary_field(r.out, "skipped"), 1);
        if (flags.back() == "-v") {
            EXPECT_NE(r.err.find("line 5: relu-grad on cpu"), std::string::npos) << r.err;
            EXPECT_NE(r.err.find("wrote o2.npy (not skipped: o2.npy: not a .npy file"), std::string::npos) << r.err;
        }
    }
}

// Skipped jobs are their own count in both summaries, never counted as succeeded.
TEST_F(BatchResume, SkippedJobsAreCountedApartFromSucceededOnes) {
    write_manifest(h, "m.txt",
                   {"relu-grad -x x.npy -g dy.npy -o a.npy", "relu-grad -x x.npy -g dy.npy -o b.npy",
                    "relu-grad -x x.npy -g dy.npy -o c.npy"});
    h.write("b.npy", random_tensor(DType::f32, {300}, rng));
    h.write("c.npy", random_tensor(DType::f32, {300}, rng));
    const CommandResult text = h.run({"batch", "m.txt", "--skip-existing", "--cpu"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("batch: 3 jobs: 1 succeeded, 0 failed, 2 skipped in "), std::string::npos) << text.out;
    std::filesystem::remove(h.dir() / "a.npy");
    const CommandResult json = h.run({"batch", "m.txt", "--skip-existing", "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(summary_field(json.out, "succeeded"), 1);
    EXPECT_EQ(summary_field(json.out, "skipped"), 2);
    EXPECT_EQ(summary_field(json.out, "jobs"), 3);
}

// docs/BATCH.md: "1 if any job failed at run time, else 3 if any --check found a difference, else 2".
TEST_F(BatchResume, ExitStatusIsRunTimeFailureThenDifferenceThenUsage) {
    h.write("big.npy", random_tensor(DType::f32, {100000}, rng));
    const std::string usage = "relu-grad -x missing.npy -g dy.npy -o u.npy";         // exit 2
    const std::string difference = "relu-grad -x x.npy -g dy.npy -o d.npy --check";  // exit 3 (the hook)
    const std::string run_time = "relu-grad -x big.npy -g big.npy -o r.npy";         // exit 1 (the cap)
    const std::string hooks = "DMLGRAD_TEST_CORRUPT_CHECK=1 DMLGRAD_TEST_GPU_ALLOCATION_CAP=65536";
    for (const auto& [lines, expected] :
         std::vector<std::pair<std::vector<std::string>, int>>{{{usage, difference}, 3},
                                                               {{difference, usage}, 3},
                                                               {{usage, run_time, difference}, 1},
                                                               {{difference, run_time}, 1},
                                                               {{usage}, 2}}) {
        write_manifest(h, "m.txt", lines);
        const CommandResult r = h.run_with_hooks({"batch", "m.txt", "--json"}, hooks);
        EXPECT_EQ(r.exit_code, expected) << fmt::format("{}", fmt::join(lines, " / ")) << ": " << r.err;
        EXPECT_EQ(summary_field(r.out, "exit_code"), expected);
        EXPECT_EQ(summary_field(r.out, "failed"), long(lines.size()));
    }
}

}  // namespace
}  // namespace dmlgrad::testing
