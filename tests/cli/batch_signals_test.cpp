// A batch and the outside world: a closed standard output stops it cleanly (with and without O_TMPFILE), signals
// ignored at start stay ignored, and a stop signal at any time (while the manifest is still being read, too)
// leads to the summary and 128 + the signal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "cli/batch_testing.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

class BatchSignals : public ::testing::Test {
protected:
    CliHarness h;
    SeededRng rng;

    void SetUp() override {
        h.write("x.npy", random_tensor(DType::f32, {20000}, rng));
        h.write("dy.npy", random_tensor(DType::f32, {20000}, rng));
        std::vector<std::string> jobs;
        for (int i = 0; i < 24; ++i) jobs.push_back(fmt::format("relu-grad -x x.npy -g dy.npy -o o{}.npy", i));
        write_manifest(h, "m.txt", jobs);
        ASSERT_EQ(h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "expected.npy", "--cpu", "-q"}).exit_code,
                  0);
    }

    // Runs `script` with bash in the scratch folder; returns its exit status.
    int bash(const std::string& script) const {
        const std::string command = fmt::format("cd '{}' && bash -c '{}'", h.dir().string(), script);
        const int status = std::system(command.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    // Every output there is complete, and no temporary file is left.
    void expect_outputs_complete(const std::string& how) {
        const std::string expected = h.read_bytes("expected.npy");
        for (const std::string& name : h.listing()) {
            EXPECT_NE(name.front(), '.') << how << ": left behind: " << name;
            if (name.front() != 'o' || !name.ends_with(".npy")) continue;
            EXPECT_TRUE(h.read_bytes(name) == expected) << how << ": " << name << " is not complete";
        }
    }
};

// Standard output is a pipe whose reader is gone before the batch writes (the reader, `true`, exits at once; the
// batch starts 0.2 s later): the first write fails with EPIPE, the batch stops taking jobs, finishes those in
// flight, says so on stderr and exits 1. With /proc hidden (a private mount namespace), outputs are named
// temporary files, the fallback of file systems without O_TMPFILE: none may be left either.
TEST_F(BatchSignals, AClosedStandardOutputStopsTheBatchCleanly) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the O_TMPFILE fallback is reached by unshare -m (hiding /proc)";
    const std::string batch = fmt::format(
        "(sleep 0.2; exec {} batch m.txt --json FLAGS 2>err.txt) | true; exit ${{PIPESTATUS[0]}}", DMLGRAD_BINARY);
    const std::string hide_proc = "mount -t tmpfs none /proc && test ! -e /proc/self/fd || exit 99; ";
    for (const std::string flags : {"--cpu", "", "--device 0,0"}) {
        for (const bool hidden : {false, true}) {
            const std::string how = fmt::format("{} {}", flags, hidden ? "(no /proc)" : "");
            std::string script = batch;
            script.replace(script.find("FLAGS"), 5, flags);
            h.write_bytes("run.sh", (hidden ? hide_proc : "") + script + "\n");
            const int status = bash(hidden ? "unshare -m bash run.sh" : "bash run.sh");
            ASSERT_NE(status, 99) << "could not hide /proc";
            EXPECT_EQ(status, 1) << how << ": " << h.read_bytes("err.txt");
            EXPECT_NE(h.read_bytes("err.txt").find("cannot write to standard output: the batch stopped"),
                      std::string::npos)
                << how << ": " << h.read_bytes("err.txt");
            expect_outputs_complete(how);
            for (int i = 0; i < 24; ++i) std::filesystem::remove(h.dir() / fmt::format("o{}.npy", i));
        }
    }
}

// nohup and `&` in a script start the batch with signals ignored: they stay ignored, and the batch runs to its end.
// The jobs are slow (a timed run on lavapipe takes about 0.3 s to set up) and the first job's read is held for 0.3 s (a
// test hook), so the signals arrive while the batch runs, with or without the hook.
TEST_F(BatchSignals, SignalsIgnoredAtStartStayIgnored) {
    std::vector<std::string> jobs;
    for (int i = 0; i < 3; ++i) jobs.push_back(fmt::format("relu-grad -x x.npy -g dy.npy -o o{}.npy --repeat 2", i));
    write_manifest(h, "slow.txt", jobs);
    const int status = bash(fmt::format(
        "(trap \"\" INT TERM HUP; DMLGRAD_TEST_DELAY_FIRST_READ_MS=300 exec {} batch slow.txt --json >out.txt) & "
        "pid=$!; sleep 0.2; kill -INT $pid; kill -TERM $pid; kill -HUP $pid; wait $pid",
        DMLGRAD_HOOKED_BINARY));
    EXPECT_EQ(status, 0);
    const std::string out = h.read_bytes("out.txt");
    EXPECT_EQ(summary_field(out, "succeeded"), 3) << out;
    EXPECT_NE(out.find(R"("interrupted":false)"), std::string::npos) << out;
    expect_outputs_complete("ignored signals");
}

// A stop signal while the manifest is still coming (on a pipe, 0.6 s late) is not lost: no job runs, and the
// summary says so, with 128 + the signal. SIGHUP (the terminal gone) stops a running batch as SIGTERM does.
TEST_F(BatchSignals, AStopSignalAtAnyTimeLeadsToTheSummary) {
    const int early =
        bash(fmt::format("(sleep 0.6; cat m.txt) | {} batch - --json >out.txt 2>err.txt & "
                         "pid=$!; sleep 0.2; kill -TERM $pid; wait $pid",
                         DMLGRAD_BINARY));
    EXPECT_EQ(early, 143);
    std::string out = h.read_bytes("out.txt");
    EXPECT_NE(out.find(R"("interrupted":true)"), std::string::npos) << out;
    EXPECT_EQ(summary_field(out, "not_run"), 24) << out;
    EXPECT_NE(h.read_bytes("err.txt").find("interrupted by signal 15"), std::string::npos);

    const int hangup =
        bash(fmt::format("DMLGRAD_TEST_DELAY_FIRST_READ_MS=800 {} batch m.txt --json >out.txt 2>err.txt & "
                         "pid=$!; sleep 0.3; kill -HUP $pid; wait $pid",
                         DMLGRAD_HOOKED_BINARY));
    EXPECT_EQ(hangup, 129);
    out = h.read_bytes("out.txt");
    EXPECT_NE(out.find(R"("interrupted":true)"), std::string::npos) << out;
    EXPECT_GT(summary_field(out, "not_run"), 0) << out;
    expect_outputs_complete("SIGHUP");
}

}  // namespace
}  // namespace dmlgrad::testing
