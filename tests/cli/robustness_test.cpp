// The binary where its streams, limits and outputs are hostile: closed or full stderr and stdout, --repeat past
// its maximum, control characters in paths, outputs that are not regular files, signals during a run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

// The findings: --repeat 2147483647 ran for hours with memory growing; --repeat 0x10 was 16; --repeat 1e3 was
// told "must be between 1 and 100000" (it is 1000, only not written as an integer).
TEST_F(Robustness, RepeatIsADecimalNumberUpToADocumentedMaximum) {
    for (const char* n : {"100001", "2147483647", "2147483648", "0", "-1"}) {
        auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--repeat", n});
        EXPECT_EQ(r.exit_code, 2) << n;
        EXPECT_EQ(r.err, "dmlgrad: error: --repeat: must be between 1 and 100000\n") << n;
    }
    for (const std::string n : {"0x10", "1e3", "+-5", "5x", "2.0"}) {
        auto r = h.run({"relu-grad", "-x", "x.npy", "-g", "dy.npy", "-o", "dx.npy", "--cpu", "--repeat", n});
        EXPECT_EQ(r.exit_code, 2) << n;
        EXPECT_EQ(r.err, "dmlgrad: error: --repeat: '" + n +
                             "' is not an integer (decimal digits, e.g. 1000; from 1 to 100000)\n")
            << n;
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

// The finding: -o on a link to /proc/self/fd/1 replaced the link, or wrote the result onto the terminal.
TEST_F(Robustness, OutputLinkToStandardOutputOnADeviceIsExit2AndUntouched) {
    fs::create_symlink("/proc/self/fd/1", h.path("dx.npy"));
    EXPECT_EQ(run_raw("", ">/dev/null 2>err.txt"), 2);
    EXPECT_NE(h.read_bytes("err.txt").find("a character device"), std::string::npos) << h.read_bytes("err.txt");
    EXPECT_TRUE(fs::is_symlink(h.path("dx.npy")));
    EXPECT_EQ(fs::read_symlink(h.path("dx.npy")), "/proc/self/fd/1");
    EXPECT_EQ(h.listing(), (std::vector<std::string>{"dx.npy", "dy.npy", "err.txt", "x.npy"}));
}

// Whether `folder`'s file system creates unnamed files (O_TMPFILE): then even SIGKILL leaves nothing behind.
bool has_unnamed_files(const fs::path& folder) {
    const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR, 0600);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

// Runs dmlgrad with `args` in `folder` (output to /dev/null), sends it `signal` after a second, returns its
// wait status. Forked by hand: a shell starts background jobs with SIGINT ignored.
int run_and_signal(const fs::path& folder, const std::vector<std::string>& args, int signal) {
    std::vector<std::string> words{DMLGRAD_BINARY};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
        const int null = ::open("/dev/null", O_WRONLY);
        if (null < 0 || ::dup2(null, 1) < 0 || ::dup2(null, 2) < 0 || ::chdir(folder.c_str()) != 0) ::_exit(126);
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::sleep(1);
    ::kill(pid, signal);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

// The findings: SIGINT, SIGTERM or SIGKILL during a run left its temporary output (.dx.npy.XXXXXX.tmp) behind.
// The signal arrives while the result is being computed into the output file (1 MiB: written in place; the
// 100000 repeats take about 10 s).
TEST_F(Robustness, ASignalDuringARunKeepsTheOldOutputAndLeavesNoTemporary) {
    SeededRng rng;
    h.write("big_x.npy", random_tensor(DType::f32, {1 << 18}, rng));
    h.write("big_dy.npy", random_tensor(DType::f32, {1 << 18}, rng));
    const bool unnamed = has_unnamed_files(h.dir());
    for (int signal : {SIGINT, SIGTERM, SIGKILL}) {
        if (signal == SIGKILL && !unnamed) continue;  // a named temporary cannot outlive SIGKILL
        h.write_bytes("dx.npy", "precious");
        const int status = run_and_signal(
            h.dir(),
            {"relu-grad", "-x", "big_x.npy", "-g", "big_dy.npy", "-o", "dx.npy", "--cpu", "--repeat", "100000"},
            signal);
        if (signal == SIGKILL) {
            EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
        } else {
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + signal) << signal << ": " << status;
        }
        EXPECT_TRUE(h.read_bytes("dx.npy") == "precious") << signal;
        EXPECT_EQ(h.listing(), (std::vector<std::string>{"big_dy.npy", "big_x.npy", "dx.npy", "dy.npy", "x.npy"}))
            << signal;
    }
}

}  // namespace
}  // namespace dmlgrad::testing
