#include "io/standard_streams.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

bool g_standard_input_closed = false;  // set once, by hold_closed_standard_input() before any thread starts

// Standard input as given: a regular file at offset 0 as it is; from any other offset (a caller read the first
// array of the file) and anything but a regular file, what is left of it, copied into memory.
int open_standard_input() {
    struct stat st {};
    if (g_standard_input_closed || ::fstat(STDIN_FILENO, &st) != 0) throw UsageError("standard input is closed");
    if (S_ISDIR(st.st_mode)) throw UsageError("standard input is a folder, not a .npy file");
    const int access = ::fcntl(STDIN_FILENO, F_GETFL) & O_ACCMODE;
    if (access == O_WRONLY) throw UsageError("standard input is open for writing only; it cannot be read");
    if (S_ISREG(st.st_mode) && ::lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) return STDIN_FILENO;
    return copy_standard_input_to_memory();
}

}  // namespace

void hold_closed_standard_input() {
    if (::fcntl(STDIN_FILENO, F_GETFD) != -1) return;
    g_standard_input_closed = true;
    const int null = ::open("/dev/null", O_RDONLY);  // the lowest free descriptor: 0
    if (null > STDIN_FILENO) ::close(null);          // 0 was taken meanwhile: nothing to hold
}

bool standard_input_closed() { return g_standard_input_closed; }

int standard_input_fd() {
    // A function-local static, not std::call_once: an exception cannot unwind through glibc's pthread_once when
    // libgcc is linked statically (the process aborted). A throw here leaves it unset, to be tried again.
    static const int fd = open_standard_input();
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
