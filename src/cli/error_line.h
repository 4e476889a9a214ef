#pragma once
// The one line an error prints on stderr. Written with write(2), ignoring failure: a closed or full stderr must
// not change the exit code (fmt::print would throw, and a throw from a catch block aborts).
#include <string_view>

namespace dmlgrad {

// Prints "dmlgrad: error: <message>\n" with control characters escaped (core/printable.h).
void print_error_line(std::string_view message);

}  // namespace dmlgrad
