// core/fatal_signals: a signal that ends the run removes the named temporary files, ends with 128 + signal, and a
// SIGBUS in a mapped input that shrank is one line and exit 1. Each case runs in a forked child.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/fatal_signals.h"
#include "io/npy.h"
#include "support/tensor_testing.h"

namespace dmlgrad {
namespace {

namespace fs = std::filesystem;

class FatalSignalsTest : public ::testing::Test {
protected:
    FatalSignalsTest() {
        std::string pattern = (fs::temp_directory_path() / "dmlgrad-signals-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
    }
    ~FatalSignalsTest() override { fs::remove_all(dir_); }
    fs::path dir_;
};

// Runs `body` in a child whose stderr goes to `err_file`; returns its exit status (-signal if killed).
template <class F>
int in_child(F&& body, const fs::path& err_file) {
    pid_t pid = ::fork();
    if (pid == 0) {
        FILE* f = std::freopen(err_file.c_str(), "w", stderr);
        (void)f;
        body();
        ::_exit(77);  // body was meant to end the process
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

std::string slurp(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(FatalSignalsTest, TerminationSignalsRemoveWatchedTemporariesAndExitWith128PlusSignal) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        const fs::path temporary = dir_ / ".out.npy.abcdef.tmp";
        int status = in_child(
            [&] {
                std::ofstream(temporary) << "partial";
                watch_temporary(temporary.native());
                ::raise(sig);
            },
            dir_ / "err");
        EXPECT_EQ(status, 128 + sig) << "signal " << sig;
        EXPECT_FALSE(fs::exists(temporary)) << "signal " << sig;
    }
}

TEST_F(FatalSignalsTest, ForgottenTemporaryIsKept) {
    const fs::path kept = dir_ / "kept";
    int status = in_child(
        [&] {
            std::ofstream(kept) << "committed";
            forget_temporary(watch_temporary(kept.native()));
            ::raise(SIGTERM);
        },
        dir_ / "err");
    EXPECT_EQ(status, 143);
    EXPECT_TRUE(fs::exists(kept));
}

// The finding: an input rewritten while mapped killed the process with SIGBUS (exit 135, no message).
TEST_F(FatalSignalsTest, MappedInputThatShrinksIsOneLineAndExit1) {
    testing::SeededRng rng;
    const fs::path input = dir_ / "x.npy";
    const fs::path temporary = dir_ / ".dx.npy.abcdef.tmp";
    save_npy(input, testing::random_tensor(DType::f32, {1 << 20}, rng));  // 4 MiB: mapped, not read
    int status = in_child(
        [&] {
            std::ofstream(temporary) << "partial";
            watch_temporary(temporary.native());
            Tensor t = load_npy(input, PayloadAccess::map_read_only);
            fs::resize_file(input, 100);
            volatile uint64_t sum = 0;
            for (size_t i = 0; i < t.bytes(); i += 4096) sum = sum + static_cast<uint8_t>(t.span()[i]);
        },
        dir_ / "err");
    EXPECT_EQ(status, 1);
    EXPECT_EQ(slurp(dir_ / "err"), "dmlgrad: error: " + input.string() + " changed while being read\n");
    EXPECT_FALSE(fs::exists(temporary));
}

}  // namespace
}  // namespace dmlgrad
