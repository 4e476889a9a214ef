// AtomicFile (and save_npy through it): the target appears whole or not at all, and nothing is left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/npy.h"
#include "support/tensor_testing.h"

namespace dmlgrad {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
protected:
    AtomicFileTest() {
        std::string pattern = (fs::temp_directory_path() / "dmlgrad-atomic-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
    }
    ~AtomicFileTest() override {
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
        fs::remove_all(dir_);
    }

    fs::path dir_;

    std::set<std::string> entries(const fs::path& folder) const {
        std::set<std::string> names;
        for (const auto& e : fs::directory_iterator(folder)) names.insert(e.path().filename().string());
        return names;
    }
    std::set<std::string> entries() const { return entries(dir_); }
};

void write_file(const fs::path& file, std::string_view bytes) {
    std::ofstream(file, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_file(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

// Passes when `f` throws exactly RuntimeFailure with the one-line message "<target>: ...<text>...".
template <class F>
::testing::AssertionResult runtime_failure(F&& f, const fs::path& target, std::string_view text) {
    try {
        f();
    } catch (const RuntimeFailure& e) {
        std::string_view message = e.what();
        std::string prefix = target.string() + ": ";
        if (message.substr(0, prefix.size()) != prefix)
            return ::testing::AssertionFailure() << "message does not start with '" << prefix << "': " << message;
        if (message.find(text) == std::string_view::npos)
            return ::testing::AssertionFailure() << "message lacks '" << text << "': " << message;
        if (message.find('\n') != std::string_view::npos)
            return ::testing::AssertionFailure() << "message is not one line: " << message;
        return ::testing::AssertionSuccess();
    } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << "threw another class than RuntimeFailure: " << e.what();
    }
    return ::testing::AssertionFailure() << "nothing thrown";
}

// Lowers the file size limit for its lifetime, so writes past it fail with EFBIG (root included).
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        ::getrlimit(RLIMIT_FSIZE, &saved_);
        previous_handler_ = ::signal(SIGXFSZ, SIG_IGN);  // else the process is killed instead of write() failing
        rlimit lowered = saved_;
        lowered.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &lowered);
    }
    ~FileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &saved_);
        ::signal(SIGXFSZ, previous_handler_);
    }

private:
    rlimit saved_{};
    sighandler_t previous_handler_;
};

TEST_F(AtomicFileTest, CommitWritesTheTargetAndLeavesNothingElse) {
    const fs::path target = dir_ / "out.bin";
    {
        AtomicFile f(target);
        f.write(bytes_of("hello, "));
        f.write(bytes_of(""));
        f.write(bytes_of("world"));
        f.commit();
    }
    EXPECT_EQ(read_file(target), "hello, world");
    EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
}

// The file is unnamed until commit (O_TMPFILE, which tmpfs and ext4 have): nothing to find, nothing a SIGKILL
// could leave. Where the file system lacks O_TMPFILE, a hidden ".<name>.XXXXXX.tmp" stands in.
TEST_F(AtomicFileTest, NothingIsVisibleWhileWriting) {
    const fs::path target = dir_ / "out.npy";
    AtomicFile f(target);
    f.write(bytes_of("partial"));
    auto names = entries();
    for (const std::string& name : names) {
        EXPECT_TRUE(name.starts_with(".out.npy.")) << name;
        EXPECT_TRUE(name.ends_with(".tmp")) << name;
    }
    EXPECT_LE(names.size(), 1u);
    EXPECT_FALSE(fs::exists(target));  // readers never see a partial target
    f.commit();
    EXPECT_EQ(entries(), (std::set<std::string>{"out.npy"}));
}

TEST_F(AtomicFileTest, SymlinkToARegularFileIsWrittenThrough) {
    fs::create_directory(dir_ / "real");
    write_file(dir_ / "real" / "target.npy", "old");
    fs::create_symlink("real/target.npy", dir_ / "link.npy");
    AtomicFile f(dir_ / "link.npy");
    f.write(bytes_of("new"));
    f.commit();
    EXPECT_TRUE(fs::is_symlink(dir_ / "link.npy"));
    EXPECT_EQ(read_file(dir_ / "real" / "target.npy"), "new");
    EXPECT_EQ(entries(dir_ / "real"), (std::set<std::string>{"target.npy"}));
    EXPECT_EQ(entries(), (std::set<std::string>{"link.npy", "real"}));
}

// Passes when constructing an AtomicFile on `target` throws UsageError naming it, on one line.
::testing::AssertionResult refused(const fs::path& target, std::string_view text) {
    try {
        AtomicFile f(target);
    } catch (const UsageError& e) {
        std::string_view message = e.what();
        if (!message.starts_with(target.string() + ": ") || message.find(text) == std::string_view::npos ||
            message.find('\n') != std::string_view::npos)
            return ::testing::AssertionFailure() << "unexpected message: " << message;
        return ::testing::AssertionSuccess();
    } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << "threw another class than UsageError: " << e.what();
    }
    return ::testing::AssertionFailure() << "nothing thrown";
}

// The finding: -o on a device, a FIFO or a link to one turned it into a regular file.
TEST_F(AtomicFileTest, ExistingOutputsThatAreNotRegularFilesAreRefusedUntouched) {
    ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
    fs::create_directory(dir_ / "folder");
    fs::create_symlink("/dev/null", dir_ / "to-null");
    fs::create_symlink("folder", dir_ / "to-folder");
    fs::create_symlink("nothing", dir_ / "dangling");
    EXPECT_TRUE(refused("/dev/null", "a character device"));
    EXPECT_TRUE(refused(dir_ / "fifo", "a FIFO"));
    EXPECT_TRUE(refused(dir_ / "folder", "a folder"));
    EXPECT_TRUE(refused(dir_ / "to-null", "a character device"));
    EXPECT_TRUE(refused(dir_ / "to-folder", "a folder"));
    EXPECT_TRUE(refused(dir_ / "dangling", "a symbolic link to nothing"));
    EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    EXPECT_TRUE(fs::is_symlink(dir_ / "to-null"));
    EXPECT_TRUE(fs::is_symlink(dir_ / "dangling"));
    EXPECT_EQ(entries(), (std::set<std::string>{"dangling", "fifo", "folder", "to-folder", "to-null"}));
}

// The finding: a loop of symbolic links was called "a symbolic link to nothing".
TEST_F(AtomicFileTest, ALoopOfSymbolicLinksIsNamedAsSuch) {
    fs::create_symlink("loop-b", dir_ / "loop-a");
    fs::create_symlink("loop-a", dir_ / "loop-b");
    EXPECT_TRUE(refused(dir_ / "loop-a", "a loop of symbolic links"));
    EXPECT_EQ(entries(), (std::set<std::string>{"loop-a", "loop-b"}));
}

// The finding: a replaced 600 file came back 644 (and owned by whoever ran the tool).
TEST_F(AtomicFileTest, ReplacedFileKeepsItsModeOwnerAndGroup) {
    const fs::path target = dir_ / "out.npy";
    for (mode_t mode : {0600, 0640, 0751}) {
        write_file(target, "old");
        ASSERT_EQ(::chmod(target.c_str(), mode), 0);
        const bool root = ::geteuid() == 0;
        if (root) {
            ASSERT_EQ(::chown(target.c_str(), 4242, 4343), 0);
        }
        AtomicFile f(target);
        f.write(bytes_of("new"));
        f.commit();
        struct stat st {};
        ASSERT_EQ(::stat(target.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, mode);
        if (root) {
            EXPECT_EQ(st.st_uid, 4242u);
            EXPECT_EQ(st.st_gid, 4343u);
        }
        EXPECT_EQ(read_file(target), "new");
    }
}

// The special bits too (set-user-ID, set-group-ID, sticky), which a chown of the new file clears: the mode is
// set after the owner.
TEST_F(AtomicFileTest, ReplacedFileKeepsItsSetUserIdSetGroupIdAndStickyBits) {
    const fs::path target = dir_ / "out.npy";
    for (mode_t mode : {04755, 02750, 01644, 06711}) {
        write_file(target, "old");
        ASSERT_EQ(::chmod(target.c_str(), mode), 0);
        struct stat before {};
        ASSERT_EQ(::stat(target.c_str(), &before), 0);
        ASSERT_EQ(before.st_mode & 07777, mode) << std::oct << mode << ": the file system keeps the bits";
        AtomicFile f(target);
        f.write(bytes_of("new"));
        f.commit();
        struct stat st {};
        ASSERT_EQ(::stat(target.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, mode) << std::oct << mode;
        EXPECT_EQ(read_file(target), "new");
    }
}

TEST_F(AtomicFileTest, DestructorWithoutCommitRemovesTheTemporary) {
    const fs::path target = dir_ / "out.bin";
    {
        AtomicFile f(target);
        f.write(bytes_of("abandoned"));
    }
    EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, AbandonedOverwriteKeepsTheOldTarget) {
    const fs::path target = dir_ / "out.bin";
    write_file(target, "old");
    {
        AtomicFile f(target);
        f.write(bytes_of("new"));
    }
    EXPECT_EQ(read_file(target), "old");
    EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
}

TEST_F(AtomicFileTest, OverwritesAnExistingLongerFile) {
    const fs::path target = dir_ / "out.bin";
    write_file(target, "an old and much longer content");
    AtomicFile f(target);
    f.write(bytes_of("new"));
    f.commit();
    EXPECT_EQ(read_file(target), "new");
    EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
}

// The number of this process's descriptors open on a file whose name is gone ("... (deleted)") and was `file`.
int open_deleted(const fs::path& file) {
    int count = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const std::string link = fs::read_symlink(e.path(), ec).string();
        if (!ec && link == file.string() + " (deleted)") ++count;
    }
    return count;
}

// The replaced file's storage is freed when the AtomicFile is destroyed (the single command does that on another
// thread), not inside commit(): the object holds the old file until then, and only until then.
TEST_F(AtomicFileTest, ReplacedFileIsHeldUntilDestruction) {
    const fs::path target = dir_ / "out.bin";
    write_file(target, "old");
    {
        AtomicFile f(target);
        f.write(bytes_of("new"));
        f.commit();
        EXPECT_EQ(read_file(target), "new");
        EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
        EXPECT_EQ(open_deleted(target), 1);
    }
    EXPECT_EQ(open_deleted(target), 0);
    EXPECT_EQ(read_file(target), "new");
}

TEST_F(AtomicFileTest, RelativeTargetInTheCurrentFolder) {
    const fs::path previous = fs::current_path();
    fs::current_path(dir_);
    {
        AtomicFile f("plain.bin");
        f.write(bytes_of("x"));
        f.commit();
    }
    fs::current_path(previous);
    EXPECT_EQ(read_file(dir_ / "plain.bin"), "x");
    EXPECT_EQ(entries(), std::set<std::string>{"plain.bin"});
}

TEST_F(AtomicFileTest, TargetNameNearTheFileNameLimit) {
    const std::string name(250, 'n');  // the temporary's name must still fit in 255 bytes
    AtomicFile f(dir_ / name);
    f.write(bytes_of("x"));
    f.commit();
    EXPECT_EQ(entries(), std::set<std::string>{name});
}

TEST_F(AtomicFileTest, MissingFolderFailsAndCreatesNothing) {
    const fs::path target = dir_ / "missing" / "out.bin";
    EXPECT_TRUE(runtime_failure([&] { AtomicFile f(target); }, target, "No such file or directory"));
    EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, TargetWithoutAFileNameFails) {
    const fs::path target = dir_.string() + "/";
    EXPECT_TRUE(runtime_failure([&] { AtomicFile f(target); }, target, "Is a directory"));
    EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, FailedWriteKeepsTheTargetAndRemovesTheTemporaryAtOnce) {
    const fs::path target = dir_ / "out.bin";
    write_file(target, "original");
    const std::string big(1 << 20, 'x');
    {
        AtomicFile f(target);
        {
            FileSizeLimit limit(64 * 1024);
            EXPECT_TRUE(runtime_failure([&] { f.write(bytes_of(big)); }, target, "cannot write: File too large"));
        }
        // Gone already, before the object is destroyed; and the object refuses to go on.
        EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
        EXPECT_TRUE(runtime_failure([&] { f.commit(); }, target, "after a failed write"));
    }
    EXPECT_EQ(read_file(target), "original");
    EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
}

TEST_F(AtomicFileTest, SaveNpyFailingMidwayKeepsTheTarget) {
    const fs::path target = dir_ / "out.npy";
    write_file(target, "original");
    std::mt19937_64 rng(1);
    Tensor t = testing::random_tensor(DType::f32, {256, 256}, rng);  // 256 KiB
    {
        FileSizeLimit limit(100 * 1024);
        EXPECT_TRUE(runtime_failure([&] { save_npy(target, t); }, target, "File too large"));
    }
    EXPECT_EQ(read_file(target), "original");
    EXPECT_EQ(entries(), std::set<std::string>{"out.npy"});
}

TEST_F(AtomicFileTest, FailedRenameKeepsTheTargetAndRemovesTheTemporary) {
    const fs::path target = dir_ / "out";
    AtomicFile f(target);
    f.write(bytes_of("data"));
    fs::create_directory(target);  // appears after the check: the rename over it fails
    write_file(target / "inside", "kept");
    EXPECT_TRUE(runtime_failure([&] { f.commit(); }, target, "cannot rename the temporary file into place"));
    EXPECT_EQ(entries(), std::set<std::string>{"out"});
    EXPECT_EQ(read_file(target / "inside"), "kept");
}

TEST_F(AtomicFileTest, WriteOrCommitAfterCommitFails) {
    const fs::path target = dir_ / "out.bin";
    AtomicFile f(target);
    f.commit();
    EXPECT_TRUE(runtime_failure([&] { f.write(bytes_of("late")); }, target, "write after commit"));
    EXPECT_TRUE(runtime_failure([&] { f.commit(); }, target, "commit after commit"));
    EXPECT_EQ(read_file(target), "");
}

TEST_F(AtomicFileTest, FileModeFollowsTheUmask) {
    for (mode_t mask : {mode_t(022), mode_t(027), mode_t(0)}) {
        const mode_t previous = ::umask(mask);
        const fs::path target = dir_ / "out.bin";
        {
            AtomicFile f(target);
            f.commit();
        }
        ::umask(previous);
        struct stat st {};
        ASSERT_EQ(::stat(target.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0666 & ~mask) << std::oct << "umask " << mask;
        fs::remove(target);  // a new file each time: a replaced one keeps its old mode
    }
}

TEST_F(AtomicFileTest, LargeWriteInOneCall) {
    std::string big(24 << 20, '\0');  // 24 MiB in one write() loop
    for (size_t i = 0; i < big.size(); i += 4096) big[i] = char(i >> 12);
    const fs::path target = dir_ / "big.bin";
    AtomicFile f(target);
    f.write(bytes_of(big));
    f.commit();
    EXPECT_TRUE(read_file(target) == big);
}

}  // namespace
}  // namespace dmlgrad
