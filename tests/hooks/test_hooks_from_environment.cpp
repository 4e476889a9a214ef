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

int corrupt_repeat() {
    const char* text = std::getenv("DMLGRAD_TEST_CORRUPT_REPEAT");
    return text ? std::atoi(text) : 0;
}

uint64_t gpu_allocation_cap() {
    const char* text = std::getenv("DMLGRAD_TEST_GPU_ALLOCATION_CAP");
    if (!text) return 0;
    const std::string_view digits(text);
    uint64_t cap = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cap);
    if (ec != std::errc() || end != digits.data() + digits.size())
        throw UsageError(fmt::format("DMLGRAD_TEST_GPU_ALLOCATION_CAP={}: expected a number of bytes", digits));
    return cap;
}

}  // namespace dmlgrad::test_hooks
