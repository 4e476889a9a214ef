#include "cli/error_line.h"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "core/printable.h"

namespace dmlgrad {

void print_error_line(std::string_view message) {
    std::string line = "dmlgrad: error: " + escape_controls(message) + "\n";
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
        ssize_t n = ::write(STDERR_FILENO, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        left -= static_cast<size_t>(n);
    }
}

}  // namespace dmlgrad
