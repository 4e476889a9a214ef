#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"

namespace dmlgrad {
namespace {

namespace fs = std::filesystem;

// One write() moves at most this much (Linux caps single transfers just under 2 GiB anyway).
constexpr size_t kMaxTransfer = size_t{1} << 30;

// Every failure: one line naming the target, what failed and the errno text.
[[noreturn]] void fail(const fs::path& target, std::string_view what, int error) {
    throw RuntimeFailure(fmt::format("{}: {}: {}", target.string(), what, std::generic_category().message(error)));
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

// Closes `fd` (if open) and unlinks `temporary` (if set), keeping errno as the caller saw it.
void discard(int& fd, fs::path& temporary) {
    int saved = errno;
    if (fd >= 0) ::close(fd);
    if (!temporary.empty()) ::unlink(temporary.c_str());
    fd = -1;
    temporary.clear();
    errno = saved;
}

fs::path folder_of(const fs::path& target) {
    fs::path folder = target.parent_path();
    return folder.empty() ? fs::path(".") : folder;
}

// A free hidden name next to the target, ".<name>.XXXXXX.tmp", created with O_EXCL (retried on a clash) and
// opened for reading too (a shared writable mapping needs it); returns the name and sets `fd`.
fs::path claim_hidden_name(const fs::path& target, int& fd) {
    std::string name = target.filename().string();
    name.resize(std::min<size_t>(name.size(), 200));  // keep the hidden name within NAME_MAX (255)
    const fs::path folder = folder_of(target);
    constexpr int kAttempts = 100;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        fs::path candidate = folder / fmt::format(".{}.{}.tmp", name, random_tag());
        fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) return candidate;
        if (errno != EEXIST && errno != EINTR)
            fail(target, fmt::format("cannot create a temporary file in '{}'", folder.string()), errno);
    }
    fail(target, fmt::format("cannot create a temporary file in '{}'", folder.string()), EEXIST);
}

}  // namespace

// The file is created unnamed in the target folder (O_TMPFILE) where the file system allows it, so nothing is
// left behind whatever ends the process, SIGKILL and power cuts included; it gets a name only in commit().
// Elsewhere it is created under a hidden name as mkstemp() would (O_EXCL, random name, retried on a clash).
// Either way with mode 0666, so the kernel applies the umask and any default ACL of the folder exactly as for
// a plain open(): no fchmod needed, and no umask() call, which would race with other threads creating files.
AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
    const std::string name = target_.filename().string();
    if (name.empty() || name == "." || name == "..") fail(target_, "cannot write", EISDIR);
    fd_ = ::open(folder_of(target_).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        fail(target_, fmt::format("cannot create a temporary file in '{}'", folder_of(target_).string()), errno);
    temporary_ = claim_hidden_name(target_, fd_);
}

AtomicFile::~AtomicFile() {
    unmap();
    if (!committed_) discard(fd_, temporary_);
}

void AtomicFile::unmap() {
    if (mapping_) ::munmap(mapping_, mapping_bytes_);
    mapping_ = nullptr;
}

std::span<std::byte> AtomicFile::map(uint64_t size) {
    if (fd_ < 0 || mapping_) throw RuntimeFailure(fmt::format("{}: map after commit or twice", target_.string()));
    if (::fallocate(fd_, 0, 0, static_cast<off_t>(size)) != 0) {
        if (errno == EOPNOTSUPP || errno == ENOSYS) return {};  // no reservation on this file system
        int error = errno;
        discard(fd_, temporary_);
        fail(target_, "cannot reserve space", error);
    }
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return {};  // write() then rewrites the reserved bytes from offset 0
    mapping_ = p;
    mapping_bytes_ = size;
    return {static_cast<std::byte*>(p), size};
}

void AtomicFile::write(std::span<const std::byte> bytes) {
    if (fd_ < 0) throw RuntimeFailure(fmt::format("{}: write after commit or after a failed write", target_.string()));
    while (!bytes.empty()) {
        ssize_t n = ::write(fd_, bytes.data(), std::min(bytes.size(), kMaxTransfer));
        if (n < 0) {
            if (errno == EINTR) continue;
            discard(fd_, temporary_);  // removed now, not only when the object dies
            fail(target_, "cannot write", errno);
        }
        bytes = bytes.subspan(static_cast<size_t>(n));  // a short write just continues
    }
}

// Names an unnamed (O_TMPFILE) file: link() cannot replace an existing target, so it is linked under a free
// hidden name and renamed over the target like a named temporary.
void AtomicFile::link_unnamed() {
    int placeholder = -1;
    fs::path hidden = claim_hidden_name(target_, placeholder);
    ::close(placeholder);
    ::unlink(hidden.c_str());
    const std::string self = fmt::format("/proc/self/fd/{}", fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, hidden.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        int error = errno;
        discard(fd_, temporary_);
        fail(target_, "cannot give the new file a name", error);
    }
    temporary_ = std::move(hidden);
}

// No fsync: the rename already guarantees readers never see a partial file while the system runs, and flushing
// a gigabyte to disk before every exit would dominate the save time. Durability across a power cut is not a goal.
void AtomicFile::commit() {
    if (fd_ < 0) throw RuntimeFailure(fmt::format("{}: commit after commit or after a failed write", target_.string()));
    unmap();
    if (temporary_.empty()) link_unnamed();
    // close() reports delayed write errors on some file systems (NFS). It frees the descriptor even when it
    // fails (EINTR included on Linux), so it is never retried.
    int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
        discard(fd_, temporary_);
        fail(target_, "cannot write", errno);
    }
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
        discard(fd_, temporary_);
        fail(target_, "cannot rename the temporary file into place", errno);
    }
    temporary_.clear();
    committed_ = true;
}

}  // namespace dmlgrad
