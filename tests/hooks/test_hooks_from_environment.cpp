// The test hooks of the test binaries and of dmlgrad_test_hooks: read from the environment (see
// src/test_hooks/test_hooks.h).
#include <charconv>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "test_hooks/test_hooks.h"

namespace dmlgrad::test_hooks {

bool corrupt_check() { return std::getenv("DMLGRAD_TEST_CORRUPT_CHECK") != nullptr; }

namespace {

// The number of `what` in `variable`, 0 when it is not set.
uint64_t number_from_environment(const char* variable, const char* what) {
    const char* text = std::getenv(variable);
    if (!text) return 0;
    const std::string_view digits(text);
    uint64_t number = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (ec != std::errc() || end != digits.data() + digits.size())
        throw UsageError(fmt::format("{}={}: expected a number of {}", variable, digits, what));
    return number;
}

}  // namespace

int corrupt_repeat() { return int(number_from_environment("DMLGRAD_TEST_CORRUPT_REPEAT", "runs")); }

uint64_t gpu_allocation_cap() { return number_from_environment("DMLGRAD_TEST_GPU_ALLOCATION_CAP", "bytes"); }

uint64_t first_read_delay_ms() { return number_from_environment("DMLGRAD_TEST_DELAY_FIRST_READ_MS", "milliseconds"); }

}  // namespace dmlgrad::test_hooks
