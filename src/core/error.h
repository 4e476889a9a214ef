#pragma once
// The two failure classes of dmlgrad, each mapped to one exit code by the CLI.
#include <stdexcept>
#include <string>

namespace dmlgrad {

// Something wrong in what the user gave: flags, parameter values, files. Exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A failure while running: no device, out of memory, a write that failed. Exit code 1.
struct RuntimeFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace dmlgrad
