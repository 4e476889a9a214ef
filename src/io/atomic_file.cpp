#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <random>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/fatal_signals.h"
#include "core/printable.h"

namespace dmlgrad {
namespace {

namespace fs = std::filesystem;

// One write() moves at most this much (Linux caps single transfers just under 2 GiB anyway).
constexpr size_t kMaxTransfer = size_t{1} << 30;

// Every failure: one line naming the target, what failed and the errno text.
[[noreturn]] void fail(const fs::path& target, std::string_view what, int error) {
    throw RuntimeFailure(
        fmt::format("{}: {}: {}", printable_path(target), what, std::generic_category().message(error)));
}

// "XXXXXX" as mkstemp would fill it.
std::string random_tag() {
    static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device device;
    std::uniform_int_distribution<size_t> pick(0, sizeof(kChars) - 2);
    std::string tag(6, ' ');
    for (char& c : tag) c = kChars[pick(device)];
    return tag;
}

// ".<name>.XXXXXX.tmp" next to `file`, within NAME_MAX (255) even for a name near that limit.
fs::path hidden_name(const fs::path& file) {
    std::string name = file.filename().string();
    name.resize(std::min<size_t>(name.size(), 200));
    return file.parent_path() / fmt::format(".{}.{}.tmp", name, random_tag());
}

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// The file to replace: `target` itself, or what its symbolic links lead to. Refuses every existing target that is
// not a regular file. `old` receives the status of the file replaced (nullopt when there is none).
fs::path resolve_target(const fs::path& target, std::optional<struct stat>& old) {
    const std::string shown = printable_path(target);
    struct stat st {};
    if (::lstat(target.c_str(), &st) != 0) {
        if (errno == ENOENT) return target;
        fail(target, "cannot check the output", errno);
    }
    if (S_ISLNK(st.st_mode)) {
        if (::stat(target.c_str(), &st) != 0) {
            if (errno == ELOOP)
                throw UsageError(fmt::format("{}: a loop of symbolic links; refusing to write through it", shown));
            throw UsageError(fmt::format("{}: a symbolic link to nothing; refusing to write through it", shown));
        }
    }
    if (!S_ISREG(st.st_mode))
        throw UsageError(
            fmt::format("{}: the output exists and is {}; refusing to replace it", shown, kind_of(st.st_mode)));
    old = st;
    char resolved[PATH_MAX];
    if (::realpath(target.c_str(), resolved) == nullptr) fail(target, "cannot resolve the output's path", errno);
    return resolved;
}

std::string proc_fd_path(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

}  // namespace

// Opened read-write: a shared writable mapping (map()) needs it. The file is created with mode 0666, so the kernel
// applies the umask and any default ACL of the folder exactly as for a plain open(): no fchmod needed for a new file,
// and no umask() call, which would race with other threads.
AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
    std::string name = target_.filename().string();
    if (name.empty() || name == "." || name == "..") fail(target_, "cannot write", EISDIR);
    std::optional<struct stat> old;
    final_ = resolve_target(target_, old);
    if (final_.parent_path().empty()) final_ = fs::path(".") / final_;
    const fs::path folder = final_.parent_path();
    install_fatal_signal_handlers();
    // linkat() of an unnamed file goes through /proc/self/fd (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
    if (::access("/proc/self/fd", X_OK) == 0) {
        do fd_ = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
        while (fd_ < 0 && errno == EINTR);
    }
    unnamed_ = fd_ >= 0;
    if (!unnamed_) {
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT && errno != 0)
            fail(target_, fmt::format("cannot create a temporary file in '{}'", printable_path(folder)), errno);
        create_named(folder);
    }
    if (old) keep_attributes(*old);
}

void AtomicFile::create_named(const fs::path& folder) {
    constexpr int kAttempts = 100;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        fs::path candidate = hidden_name(final_);
        watch_slot_ = watch_temporary(candidate.native());  // before creation: no window without a handler
        fd_ = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd_ >= 0) {
            temporary_ = std::move(candidate);
            return;
        }
        int error = errno;
        forget_temporary(std::exchange(watch_slot_, -1));
        if (error != EEXIST && error != EINTR)
            fail(target_, fmt::format("cannot create a temporary file in '{}'", printable_path(folder)), error);
    }
    fail(target_, fmt::format("cannot create a temporary file in '{}'", printable_path(folder)), EEXIST);
}

// Owner and group first: chown clears set-user-ID bits, which the mode then restores. Each step may fail for lack
// of permission (another user's file); the new file then keeps what the process gives it.
void AtomicFile::keep_attributes(const struct stat& old) {
    if (::fchown(fd_, old.st_uid, old.st_gid) != 0) (void)!::fchown(fd_, static_cast<uid_t>(-1), old.st_gid);
    (void)::fchmod(fd_, old.st_mode & 07777);
}

AtomicFile::~AtomicFile() {
    unmap();
    if (!committed_) discard();
    if (replaced_ >= 0) ::close(replaced_);  // the replaced file's last reference, usually: its storage is freed here
}

// Closes the file and removes its name (if it has one), keeping errno as the caller saw it.
void AtomicFile::discard() {
    int saved = errno;
    if (fd_ >= 0) ::close(fd_);
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
    forget_temporary(std::exchange(watch_slot_, -1));
    fd_ = -1;
    temporary_.clear();
    errno = saved;
}

void AtomicFile::unmap() {
    if (mapping_) ::munmap(mapping_, mapping_bytes_);
    mapping_ = nullptr;
}

namespace {

// Takes each page's write fault now, by whoever creates the output (a batch's reader thread), rather than one by
// one in the thread that fills it (1 MiB: 256 faults, about half the time of a small job's download). MAP_POPULATE
// is not enough: file systems that track dirty pages map populated shared pages read-only until the first write.
// The reserved bytes read as zeros, so writing a zero changes nothing. MADV_POPULATE_WRITE (Linux 5.14) takes the
// same faults inside the kernel, without a trap per page; older kernels refuse it, and the pages are touched.
void touch_for_writing(std::span<std::byte> bytes) {
    if (::madvise(bytes.data(), bytes.size(), MADV_POPULATE_WRITE) == 0) return;
    static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    for (size_t offset = 0; offset < bytes.size(); offset += page)
        reinterpret_cast<volatile std::byte&>(bytes[offset]) = std::byte{0};
}

}  // namespace

std::span<std::byte> AtomicFile::map(uint64_t size) {
    if (fd_ < 0 || mapping_)
        throw RuntimeFailure(fmt::format("{}: map after commit or twice", printable_path(target_)));
    if (::fallocate(fd_, 0, 0, static_cast<off_t>(size)) != 0) {
        if (errno == EOPNOTSUPP || errno == ENOSYS) return {};  // no reservation on this file system
        int error = errno;
        discard();
        fail(target_, "cannot reserve space", error);
    }
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return {};  // write() then rewrites the reserved bytes from offset 0
    mapping_ = p;
    mapping_bytes_ = size;
    const std::span<std::byte> bytes{static_cast<std::byte*>(p), size};
    touch_for_writing(bytes);
    return bytes;
}

void AtomicFile::write(std::span<const std::byte> bytes) {
    if (fd_ < 0)
        throw RuntimeFailure(fmt::format("{}: write after commit or after a failed write", printable_path(target_)));
    while (!bytes.empty()) {
        ssize_t n = ::write(fd_, bytes.data(), std::min(bytes.size(), kMaxTransfer));
        if (n < 0) {
            if (errno == EINTR) continue;
            int error = errno;
            discard();  // removed now, not only when the object dies
            fail(target_, "cannot write", error);
        }
        bytes = bytes.subspan(static_cast<size_t>(n));  // a short write just continues
    }
}

// A reference to the file about to be replaced, if there is one. O_PATH needs no permission to read it; a failure
// only means the storage is freed inside rename(), as without it.
void AtomicFile::hold_replaced() {
    if (replaced_ < 0) replaced_ = ::open(final_.c_str(), O_PATH | O_CLOEXEC);
}

// rename() over the target; the source name is watched by the signal handler until it is gone.
void AtomicFile::rename_into_place(const fs::path& from) {
    hold_replaced();
    if (::rename(from.c_str(), final_.c_str()) != 0) {
        int error = errno;
        ::unlink(from.c_str());
        forget_temporary(std::exchange(watch_slot_, -1));
        discard();
        fail(target_, "cannot rename the temporary file into place", error);
    }
    forget_temporary(std::exchange(watch_slot_, -1));
}

// A new target gets the unnamed file's first name directly. linkat() cannot replace an existing file, so a
// replaced target is linked to a hidden name first and renamed over the target: between the two calls a
// SIGINT/SIGTERM/SIGHUP removes the hidden name; only SIGKILL or a power cut in those microseconds leaves it.
void AtomicFile::link_into_place() {
    const std::string source = proc_fd_path(fd_);
    if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, final_.c_str(), AT_SYMLINK_FOLLOW) == 0) return;
    if (errno != EEXIST) fail(target_, "cannot link the new file into place", errno);
    constexpr int kAttempts = 100;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        fs::path hidden = hidden_name(final_);
        watch_slot_ = watch_temporary(hidden.native());
        if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, hidden.c_str(), AT_SYMLINK_FOLLOW) == 0)
            return rename_into_place(hidden);
        int error = errno;
        forget_temporary(std::exchange(watch_slot_, -1));
        if (error != EEXIST) fail(target_, "cannot link the new file into place", error);
    }
    fail(target_, "cannot link the new file into place", EEXIST);
}

// No fsync: the rename already guarantees readers never see a partial file while the system runs, and flushing
// a gigabyte to disk before every exit would dominate the save time. Durability across a power cut is not a goal.
void AtomicFile::commit() {
    if (fd_ < 0)
        throw RuntimeFailure(fmt::format("{}: commit after commit or after a failed write", printable_path(target_)));
    if (unnamed_) {
        try {
            link_into_place();
        } catch (...) {
            discard();
            throw;
        }
    }
    // close() reports delayed write errors on some file systems (NFS). It frees the descriptor even when it
    // fails (EINTR included on Linux), so it is never retried. (An unnamed file is in place already by now; a
    // delayed error there is reported but the file stays.)
    if (::close(std::exchange(fd_, -1)) != 0) {
        int error = errno;
        discard();
        fail(target_, "cannot write", error);
    }
    if (!unnamed_) rename_into_place(std::exchange(temporary_, {}));
    temporary_.clear();
    committed_ = true;
}

}  // namespace dmlgrad
