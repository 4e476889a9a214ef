// `dmlgrad batch` end to end on lavapipe: jobs give the bytes their single commands give, failures stay with
// their job, shards partition the manifest, a killed batch resumes, progress shows on terminals only.
#include <gtest/gtest.h>

#include <array>
#include <csignal>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/batch_testing.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

class Batch : public ::testing::Test {
protected:
    CliHarness h;
    SeededRng rng;

    // Inputs of every operator in several dtypes.
    void write_mixed_inputs() {
        h.write("x32.npy", random_tensor(DType::f32, {3, 5, 7}, rng));
        h.write("dy32.npy", random_tensor(DType::f32, {3, 5, 7}, rng));
        h.write("x16.npy", random_tensor(DType::f16, {64}, rng));
        h.write("dy16.npy", random_tensor(DType::f16, {64}, rng));
        h.write("xi16.npy", random_small_integers(DType::i16, {50}, rng));
        h.write("dyi16.npy", random_small_integers(DType::i16, {50}, rng));
        h.write("sdy8.npy", random_small_integers(DType::i8, {2, 3, 4, 4}, rng));
        h.write("px.npy", random_tensor(DType::f32, {1, 2, 6, 6}, rng, false));
        h.write("pdy.npy", random_tensor(DType::f32, {1, 2, 3, 3}, rng));
        h.write("px16.npy", random_tensor(DType::f16, {1, 2, 6, 6}, rng, false));
        h.write("pdy16.npy", random_tensor(DType::f16, {1, 2, 3, 3}, rng));
        h.write("rdy.npy", random_tensor(DType::f32, {1, 2, 8, 8}, rng, false));
        h.write("rdy16.npy", random_tensor(DType::f16, {12}, rng, false));
    }

    // A job of every operator, job n writing `<prefix><n>.npy`.
    static std::vector<std::string> mixed_jobs(const std::string& prefix) {
        const std::vector<std::string> ops = {
            "relu-grad -x x32.npy -g dy32.npy",
            "relu-grad -x x16.npy -g dy16.npy",
            "clip-grad -x x32.npy -g dy32.npy --min -1 --max 1",
            "clip-grad -x xi16.npy -g dyi16.npy --min -3 --max 3",
            "slice-grad -g sdy8.npy --output-sizes 2,3,8,8 --input-window-offsets 0,0,0,0 "
            "--input-window-sizes 2,3,7,7 --input-window-strides 1,1,2,-2",
            "maxpool-grad -x px.npy -g pdy.npy --window-size 2,2 --strides 2,2",
            "maxpool-grad -x px16.npy -g pdy16.npy --window-size 3,3 --strides 2,2 --start-padding 1,1 "
            "--end-padding 0,0",
            "resample-grad -g rdy.npy --output-sizes 1,2,4,4 --interpolation-mode linear --scales 1,1,2,2 "
            "--input-pixel-offsets 0,0,-0.5,-0.5 --output-pixel-offsets 0,0,0.5,0.5",
            "resample-grad -g rdy16.npy --output-sizes 6 --interpolation-mode nearest --scales 2 "
            "--input-pixel-offsets 0 --output-pixel-offsets 0",
        };
        std::vector<std::string> jobs;
        for (size_t i = 0; i < ops.size(); ++i) jobs.push_back(fmt::format("{} -o {}{}.npy", ops[i], prefix, i));
        return jobs;
    }

    void write_manifest(const std::string& name, const std::vector<std::string>& lines) {
        testing::write_manifest(h, name, lines);
    }

    // Runs each job as a single command with `extra` flags.
    void run_singly(const std::vector<std::string>& jobs, const Args& extra) {
        for (const auto& job : jobs) {
            Args args = words(job);
            args.insert(args.end(), extra.begin(), extra.end());
            args.push_back("-q");
            auto r = h.run(args);
            ASSERT_EQ(r.exit_code, 0) << job << ": " << r.err;
        }
    }

    void expect_same_files(const std::string& a, const std::string& b, size_t count) {
        for (size_t i = 0; i < count; ++i) {
            const std::string fa = fmt::format("{}{}.npy", a, i), fb = fmt::format("{}{}.npy", b, i);
            const std::string bytes = h.read_bytes(fa);
            EXPECT_GT(bytes.size(), 128u) << fa;
            EXPECT_TRUE(bytes == h.read_bytes(fb)) << fa << " differs from " << fb;
        }
    }
};

TEST_F(Batch, MixedJobsGiveTheBytesOfSingleCommands) {
    write_mixed_inputs();
    const size_t n = mixed_jobs("single").size();
    run_singly(mixed_jobs("gpu"), {});
    run_singly(mixed_jobs("cpu"), {"--cpu"});
    expect_same_files("gpu", "cpu", n);  // the two backends agree bit for bit

    const std::vector<std::pair<std::string, Args>> variants = {
        {"one", {}}, {"two", {"--device", "0,0"}}, {"bcpu", {"--cpu"}}};
    for (const auto& [prefix, flags] : variants) {
        write_manifest(prefix + ".txt", mixed_jobs("b" + prefix));
        Args args = {"batch", prefix + ".txt"};
        args.insert(args.end(), flags.begin(), flags.end());
        auto r = h.run(args);
        ASSERT_EQ(r.exit_code, 0) << prefix << ": " << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_NE(r.out.find(fmt::format("{} jobs: {} succeeded, 0 failed", n, n)), std::string::npos) << r.out;
        expect_same_files("b" + prefix, prefix == "bcpu" ? "cpu" : "gpu", n);
    }
}

// Many jobs of varying sizes and dtypes, so that a worker's overlapped jobs (each started before the previous one
// finishes) grow, shrink and reuse its buffers, with --check and --repeat jobs (not overlapped) in between: every
// output replaces a file of garbage with the bytes of its single command, through one worker and two.
TEST_F(Batch, OverlappedJobsOfVaryingSizesGiveTheBytesOfSingleCommands) {
    const std::vector<std::pair<DType, int64_t>> inputs = {
        {DType::f32, 1000}, {DType::f16, 70001}, {DType::f32, 5}, {DType::i16, 40000}, {DType::f32, 200003}};
    for (size_t i = 0; i < inputs.size(); ++i) {
        const DType type = inputs[i].first;  // not a structured binding: Clang 14 cannot capture one
        const int64_t n = inputs[i].second;
        const auto random = [&] {
            return type == DType::i16 ? random_small_integers(type, {n}, rng) : random_tensor(type, {n}, rng);
        };
        h.write(fmt::format("x{}.npy", i), random());
        h.write(fmt::format("dy{}.npy", i), random());
    }
    std::vector<std::string> jobs;
    for (size_t j = 0; j < 24; ++j) {
        const size_t i = (j * 3 + j / 5) % inputs.size();
        std::string job = j % 3 == 1 ? fmt::format("clip-grad -x x{0}.npy -g dy{0}.npy --min -2 --max 1", i)
                                     : fmt::format("relu-grad -x x{0}.npy -g dy{0}.npy", i);
        if (j == 7) job += " --check";
        if (j == 12) job += " --repeat 2";
        jobs.push_back(job + fmt::format(" -o {{}}{}.npy", j));
    }
    const auto named = [&](const std::string& prefix) {
        std::vector<std::string> out;
        for (const std::string& job : jobs) out.push_back(fmt::format(fmt::runtime(job), prefix));
        return out;
    };
    run_singly(named("single"), {});
    // Single commands on Vulkan; the batch on Vulkan and on Direct3D 12, whose overlapped runs have their bytes.
    const std::vector<std::array<std::string, 3>> runs = {
        {"one", "0", "vulkan"}, {"two", "0,0", "vulkan"}, {"d3d", "0", "d3d12"}};
    for (const auto& [prefix, workers, api] : runs) {
        for (size_t j = 0; j < jobs.size(); ++j) h.write_bytes(fmt::format("{}{}.npy", prefix, j), "garbage");
        write_manifest(prefix + ".txt", named(prefix));
        auto r = h.run({"batch", prefix + ".txt", "--device", workers, "--max-in-flight", "2", "--api", api});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        expect_same_files(prefix, "single", jobs.size());
    }
}

// Small independent GPU jobs are overlapped (each started before the previous one finishes: -v says "starting"),
// also now that every job of a GPU batch tells the backend its device-resident keys, most of them none. A job
// reading an earlier job's output runs on its own (Backend::run), taking that output from device memory.
TEST_F(Batch, IndependentSmallJobsAreOverlappedAndAChainedJobIsNot) {
    for (int i = 0; i < 3; ++i) {
        h.write(fmt::format("x{}.npy", i), random_tensor(DType::f32, {1000}, rng, false));
        h.write(fmt::format("dy{}.npy", i), random_tensor(DType::f32, {1000}, rng, false));
    }
    write_manifest("m.txt", {"relu-grad -x x0.npy -g dy0.npy -o a.npy", "relu-grad -x x1.npy -g dy1.npy -o b.npy",
                             "relu-grad -x x2.npy -g a.npy -o c.npy"});
    for (const char* api : {"vulkan", "d3d12"}) {
        auto r = h.run({"batch", "m.txt", "-v", "--api", api});
        ASSERT_EQ(r.exit_code, 0) << api << ": " << r.err;
        EXPECT_NE(r.err.find("b.npy: starting"), std::string::npos) << api << ": " << r.err;
        EXPECT_EQ(r.err.find("c.npy: starting"), std::string::npos) << api << ": " << r.err;
        EXPECT_NE(r.err.find("c.npy: 1 input(s) taken from device memory"), std::string::npos) << api << ": " << r.err;
    }
}

// A manifest line's --api wins over the batch's; a bad one fails its line alone, naming the flag.
TEST_F(Batch, ALinesApiOverridesTheBatchsApi) {
    h.write("x.npy", random_tensor(DType::f32, {100}, rng, false));
    h.write("dy.npy", random_tensor(DType::f32, {100}, rng, false));
    write_manifest("m.txt", {"relu-grad -x x.npy -g dy.npy -o vk.npy --api vulkan",    // line 1
                             "relu-grad -x x.npy -g dy.npy -o bad.npy --api metal"});  // line 4
    auto r = h.run({"batch", "m.txt", "--api", "d3d12", "--json"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.out.find(R"("line":3,"status":"ok")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("api":"vulkan","kernel":"relu_grad_f32")"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("m.txt line 4: --api"), std::string::npos) << r.err;
    EXPECT_EQ(h.read("vk.npy").info.shape, (Shape{100}));
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "m.txt", "vk.npy", "x.npy"}));
}

TEST_F(Batch, FailedJobsAreNamedByLineAndLeaveTheirOutputsUntouched) {
    const Tensor x = random_tensor(DType::f32, {100}, rng, false), dy = random_tensor(DType::f32, {100}, rng, false);
    h.write("x.npy", x);
    h.write("dy.npy", dy);
    std::vector<double> expected = to_doubles(dy);
    for (size_t i = 0; i < expected.size(); ++i)
        if (!(to_doubles(x)[i] > 0)) expected[i] = 0;
    h.write_bytes("kept.npy", "not touched");
    h.write_bytes("kept2.npy", "not touched either");
    write_manifest("m.txt", {"relu-grad -x x.npy -g dy.npy -o good1.npy --cpu",              // line 3
                             "relu-grad -x missing.npy -g dy.npy -o kept.npy",               // line 4: no such file
                             "clip-grad -x x.npy -g dy.npy -o kept2.npy --min abc --max 1",  // line 5
                             "relu-grad -x x.npy -g dy.npy -o good2.npy --frobnicate",       // line 6
                             "relu-grad -x x.npy -g dy.npy -o good3.npy"});                  // line 7
    auto r = h.run({"batch", "m.txt", "--json"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(h.read_bytes("kept.npy"), "not touched");
    EXPECT_EQ(h.read_bytes("kept2.npy"), "not touched either");
    for (const char* name : {"good1.npy", "good3.npy"}) EXPECT_EQ(to_doubles(h.read(name)), expected) << name;
    for (const std::string needle :
         {"m.txt line 4: ", "missing.npy", "m.txt line 5: ", "--min", "m.txt line 6: ", "--frobnicate"})
        EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " not in " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
    EXPECT_EQ(lines_with_status(r.out, "failed"), (std::vector<int>{4, 5, 6}));
    EXPECT_EQ(summary_field(r.out, "succeeded"), 2);
    EXPECT_EQ(summary_field(r.out, "failed"), 3);
    EXPECT_EQ(summary_field(r.out, "2"), 3);
    EXPECT_EQ(summary_field(r.out, "exit_code"), 2);
    EXPECT_FALSE(std::filesystem::exists(h.dir() / "good2.npy"));
}

// Several reader threads read ahead; what they find is reported in manifest order all the same: failures and
// skips (found by the readers) in line order, and, with one worker, the computed jobs too, for any read-ahead. The
// first job's read is delayed (a test hook), so the later ones are always read first: an outcome published as soon
// as it is read, out of order, fails this every time.
TEST_F(Batch, OutcomesComeInManifestOrder) {
    h.write("x.npy", random_tensor(DType::f32, {5000}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {5000}, rng));
    std::vector<std::string> jobs;
    std::map<std::string, std::vector<int>> expected;  // lines by status; job i is on line i + 3
    for (int i = 0; i < 30; ++i) {
        const bool skipped = i % 7 == 3, failed = !skipped && i % 5 == 2;
        if (skipped) h.write(fmt::format("o{}.npy", i), random_tensor(DType::f32, {5000}, rng));  // complete
        jobs.push_back(fmt::format("relu-grad -x {}.npy -g dy.npy -o o{}.npy", failed ? "missing" : "x", i));
        expected[skipped ? "skipped" : failed ? "failed" : "ok"].push_back(i + 3);
    }
    write_manifest("m.txt", jobs);
    for (const std::string in_flight : {"1", "2", "4"}) {
        for (int i = 0; i < 30; ++i)
            if (i % 7 != 3) std::filesystem::remove(h.dir() / fmt::format("o{}.npy", i));
        auto r = h.run_with_hooks({"batch", "m.txt", "--json", "--skip-existing", "--max-in-flight", in_flight},
                                  "DMLGRAD_TEST_DELAY_FIRST_READ_MS=150");
        EXPECT_EQ(r.exit_code, 2) << r.err;
        for (const auto& [status, lines] : expected)
            EXPECT_EQ(lines_with_status(r.out, status), lines) << status << ", --max-in-flight " << in_flight;
    }
}

TEST_F(Batch, ACheckDifferenceIsExit3AndWritesNothing) {
    h.write("x.npy", random_tensor(DType::f32, {100}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {100}, rng));
    write_manifest("m.txt", {"relu-grad -x x.npy -g dy.npy -o a.npy", "relu-grad -x x.npy -g dy.npy -o b.npy --check"});
    auto r = h.run_with_hooks({"batch", "m.txt"}, "DMLGRAD_TEST_CORRUPT_CHECK=1");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("m.txt line 4: check failed"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(h.dir() / "a.npy"));
    EXPECT_FALSE(std::filesystem::exists(h.dir() / "b.npy"));
}

TEST_F(Batch, AnUnsplittableOrUnknownLineStopsTheBatchBeforeAnyJob) {
    h.write("x.npy", random_tensor(DType::f32, {10}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {10}, rng));
    for (const std::string bad : {"relu-grad -x 'x.npy -g dy.npy -o b.npy", "relu-gard -x x.npy", "relu-grad \\"}) {
        write_manifest("m.txt", {"relu-grad -x x.npy -g dy.npy -o a.npy", bad});
        auto r = h.run({"batch", "m.txt"});
        EXPECT_EQ(r.exit_code, 2) << bad;
        EXPECT_NE(r.err.find("m.txt line 4: "), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(std::filesystem::exists(h.dir() / "a.npy")) << bad;
    }
}

TEST_F(Batch, ShardsCoverEveryJobExactlyOnce) {
    h.write("x.npy", random_tensor(DType::f32, {64}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {64}, rng));
    std::vector<std::string> jobs;
    for (int i = 0; i < 11; ++i) jobs.push_back(fmt::format("relu-grad -x x.npy -g dy.npy -o o{}.npy --cpu", i));
    write_manifest("m.txt", jobs);  // job i is on line i + 3
    for (int n : {1, 2, 3, 5}) {
        std::multiset<int> covered;
        for (int i = 0; i < n; ++i) {
            auto r = h.run({"batch", "m.txt", "--json", "--shard", fmt::format("{}/{}", i, n)});
            ASSERT_EQ(r.exit_code, 0) << r.err;
            for (int line : lines_with_status(r.out, "ok")) {
                EXPECT_EQ((line - 3) % n, i) << "shard " << i << "/" << n << " ran line " << line;
                covered.insert(line);
            }
        }
        EXPECT_EQ(covered.size(), jobs.size()) << n << " shards";
        EXPECT_EQ(std::set<int>(covered.begin(), covered.end()).size(), jobs.size()) << n << " shards";
    }
    for (const std::string bad : {"2/2", "-1/3", "1", "1/0", "a/b"}) {
        auto r = h.run({"batch", "m.txt", "--shard", bad});
        EXPECT_EQ(r.exit_code, 2) << bad;
        EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
    }
}

// Slow jobs (many timed repeats on lavapipe), so that a kill lands part-way.
std::vector<std::string> slow_jobs(int count) {
    std::vector<std::string> jobs;
    for (int i = 0; i < count; ++i)
        jobs.push_back(fmt::format("relu-grad -x x.npy -g dy.npy -o o{}.npy --repeat 400", i));
    return jobs;
}

std::string shell_in(const CliHarness& h, const std::string& command) {
    return fmt::format("cd '{}' && {}", h.dir().string(), command);
}

TEST_F(Batch, SkipExistingResumesABatchKilledPartWay) {
    h.write("x.npy", random_tensor(DType::f32, {1 << 16}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {1 << 16}, rng));
    write_manifest("m.txt", slow_jobs(12));
    ASSERT_EQ(std::system(
                  shell_in(h, fmt::format("'{}' relu-grad -x x.npy -g dy.npy -o expected.npy -q --cpu", DMLGRAD_BINARY))
                      .c_str()),
              0);
    std::system(shell_in(h, fmt::format("('{}' batch m.txt -q & pid=$!; sleep 1; kill -KILL $pid; wait $pid) "
                                        ">/dev/null 2>&1",
                                        DMLGRAD_BINARY))
                    .c_str());
    auto r = h.run({"batch", "m.txt", "--skip-existing", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(lines_with_status(r.out, "ok").size() + lines_with_status(r.out, "skipped").size(), 12u);
    for (int i = 0; i < 12; ++i)
        EXPECT_TRUE(h.read_bytes(fmt::format("o{}.npy", i)) == h.read_bytes("expected.npy")) << i;
    for (const std::string& name : h.listing()) EXPECT_NE(name.front(), '.') << "left behind: " << name;
}

TEST_F(Batch, SigintStopsTakingJobsAndExits130) {
    h.write("x.npy", random_tensor(DType::f32, {1 << 16}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {1 << 16}, rng));
    write_manifest("m.txt", slow_jobs(40));
    // With job control (set -m): a non-interactive shell starts a background job with SIGINT ignored, and an
    // ignored signal stays ignored (batch_signals_test.cpp).
    const int status =
        std::system(shell_in(h, fmt::format("bash -c \"set -m; '{}' batch m.txt --json >out.txt 2>err.txt & "
                                            "pid=\\$!; sleep 1; kill -INT \\$pid; wait \\$pid\"",
                                            DMLGRAD_BINARY))
                        .c_str());
    EXPECT_EQ(WEXITSTATUS(status), 130);
    const std::string out = h.read_bytes("out.txt");
    EXPECT_NE(out.find(R"("interrupted":true)"), std::string::npos) << out;
    EXPECT_GT(summary_field(out, "not_run"), 0);
    EXPECT_NE(h.read_bytes("err.txt").find("interrupted"), std::string::npos);
    for (const std::string& name : h.listing()) EXPECT_NE(name.front(), '.') << "left behind: " << name;
}

TEST_F(Batch, ProgressLineOnATerminalOnly) {
    h.write("x.npy", random_tensor(DType::f32, {64}, rng));
    h.write("dy.npy", random_tensor(DType::f32, {64}, rng));
    write_manifest("m.txt", {"relu-grad -x x.npy -g dy.npy -o a.npy --cpu", "relu-grad -x x.npy -g dy.npy -o b.npy"});
    ASSERT_EQ(
        std::system(shell_in(h, fmt::format("script -qec \"'{}' batch m.txt\" /dev/null >tty.txt 2>&1", DMLGRAD_BINARY))
                        .c_str()),
        0);
    const std::string tty = h.read_bytes("tty.txt");
    EXPECT_NE(tty.find("2/2 jobs, 0 failed"), std::string::npos) << tty;
    auto piped = h.run({"batch", "m.txt"});
    ASSERT_EQ(piped.exit_code, 0);
    EXPECT_EQ(piped.err, "");
    EXPECT_EQ(piped.out.find("jobs/s"), std::string::npos);
}

}  // namespace
}  // namespace dmlgrad::testing
