#pragma once
// Comma-separated per-axis lists from the command line, each entry a number of core/number_text.h's grammar (no
// blanks). Each throws UsageError naming the flag and the value.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tolerance.h"

namespace dmlgrad::cli {

// "" gives an empty list (the parameter's default applies).
std::vector<int64_t> parse_int_list(std::string_view flag, std::string_view text);
std::vector<float> parse_float_list(std::string_view flag, std::string_view text);
std::vector<double> parse_double_list(std::string_view flag, std::string_view text);

// --rtol / --atol: a finite number >= 0, of the same grammar, kept as the exact decimal typed (core/tolerance.h).
// Throws UsageError naming the flag.
Decimal parse_tolerance(std::string_view flag, std::string_view text);

// --repeat's check (a CLI11 validator): "" for a decimal integer from 1 to kMaxRepeat, else the message.
// CLI11 alone would take hexadecimal ("0x10") and report an overflow in its own words.
std::string check_repeat(const std::string& text);

}  // namespace dmlgrad::cli
