#include "io/standard_streams.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace dmlgrad {
namespace {

std::string errno_text(int error) { return std::generic_category().message(error); }

void write_all(int fd, const std::byte* data, size_t size, const char* what) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw RuntimeFailure(fmt::format("cannot write {}: {}", what, errno_text(errno)));
        }
        data += n;
        size -= size_t(n);
    }
}

int copy_standard_input_to_memory() {
    const int memory = ::memfd_create("dmlgrad-stdin", MFD_CLOEXEC);
    if (memory < 0) throw RuntimeFailure(fmt::format("cannot hold standard input: {}", errno_text(errno)));
    std::vector<std::byte> piece(size_t(1) << 20);
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, piece.data(), piece.size());
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw RuntimeFailure(fmt::format("cannot read standard input: {}", errno_text(errno)));
        }
        write_all(memory, piece.data(), size_t(n), "standard input into memory");
    }
    return memory;
}

}  // namespace

int standard_input_fd() {
    static std::once_flag once;
    static int fd = -1;
    std::call_once(once, [] {
        struct stat st {};
        const bool regular = ::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
        fd = regular ? STDIN_FILENO : copy_standard_input_to_memory();
    });
    return fd;
}

void require_standard_output_not_terminal() {
    if (::isatty(STDOUT_FILENO))
        throw UsageError("--output -: standard output is a terminal; redirect it to a file or a pipe");
}

void write_standard_output(std::span<const std::byte> bytes) {
    write_all(STDOUT_FILENO, bytes.data(), bytes.size(), "the result to standard output");
}

}  // namespace dmlgrad
