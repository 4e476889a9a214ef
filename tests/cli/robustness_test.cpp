// The binary where its streams, limits and outputs are hostile: closed or full stderr and stdout, --repeat past
// its maximum, control characters in paths, outputs that are not regular files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli/cli_harness.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

namespace fs = std::filesystem;

class Robustness : public ::testing::Test {
protected:
    CliHarness h;

    Robustness() {
        SeededRng rng;
        h.write("x.npy", random_tensor(DType::f32, {64}, rng));
        h.write("dy.npy", random_tensor(DType::f32, {64}, rng));
    }

    // Runs relu-grad on the CPU with `extra` flags and the shell redirections `redirect`; returns the exit code.
    int run_raw(const std::string& extra, const std::string& redirect) const {
        std::string command = fmt::format("cd '{}' && '{}' relu-grad -x x.npy -g dy.npy -o dx.npy --cpu {} {}",
                                          h.dir().string(), DMLGRAD_BINARY, extra, redirect);
        int status = std::system(command.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
};

// The finding: a usage error with stderr closed or full aborted (exit 134).
TEST_F(Robustness, UsageErrorWithStderrClosedOrFullStillExits2) {
    EXPECT_EQ(run_raw("--repeat 100001", "2>&-"), 2);
    EXPECT_EQ(run_raw("--repeat 100001", "2>/dev/full"), 2);
    EXPECT_EQ(run_raw("--no-such-flag", "2>/dev/full"), 2);
    EXPECT_EQ(run_raw("", "2>/dev/full"), 0);  // a success stays one
}

// The finding: `--json >/dev/full` exited 0 and the report was lost.
TEST_F(Robustness, ReportThatCannotBeWrittenIsExit1) {
    EXPECT_EQ(run_raw("--json", ">/dev/full 2>/dev/null"), 1);
    EXPECT_EQ(run_raw("", ">/dev/full 2>/dev/null"), 1);
    EXPECT_EQ(run_raw("--json", ">/dev/null"), 0);
}

// The findings: --repeat 2147483647 ran for hours with memory growing; --repeat 0x10 was 16.
TEST_F(Robustness, RepeatIsADecimalNumberUpToADocumentedMaximum) {
    for (const char* n : {"100001", "2147483647", "2147483648", "0", "-1", "0x10", "1e3", "+-5", "5x"}) {
        auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--repeat", n});
        EXPECT_EQ(r.exit_code, 2) << n;
        EXPECT_EQ(r.err, "dmlgrad: error: --repeat: must be between 1 and 100000\n") << n;
    }
    auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--repeat", "3", "-q"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The finding: a path with a newline made the one-line error two lines.
TEST_F(Robustness, ControlCharactersInPathsAreEscaped) {
    auto r = h.run({"relu-grad", "-x", "no\nsuch.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("no\\x0asuch.npy"), std::string::npos) << r.err;
    r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "a\tb\x1b/dx.npy", "--cpu"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("a\\x09b\\x1b"), std::string::npos) << r.err;
}

// The finding: -o on a FIFO or a link to a device replaced it with a regular file.
TEST_F(Robustness, OutputThatIsNotARegularFileIsExit2AndUntouched) {
    ASSERT_EQ(::mkfifo(h.path("fifo.npy").c_str(), 0644), 0);
    fs::create_symlink("/dev/null", h.path("null.npy"));
    for (const char* out : {"fifo.npy", "null.npy"}) {
        auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", out, "--cpu"});
        EXPECT_EQ(r.exit_code, 2) << out;
        EXPECT_NE(r.err.find(out), std::string::npos) << r.err;
    }
    EXPECT_TRUE(fs::is_fifo(h.path("fifo.npy")));
    EXPECT_TRUE(fs::is_symlink(h.path("null.npy")));
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dy.npy", "fifo.npy", "null.npy", "x.npy"}));
}

}  // namespace
}  // namespace dmlgrad::testing
