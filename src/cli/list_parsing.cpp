#include "cli/list_parsing.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <type_traits>

#include "cli/options.h"
#include "core/error.h"
#include "core/number_text.h"

namespace dmlgrad::cli {
namespace {

std::vector<std::string_view> split(std::string_view flag, std::string_view text) {
    std::vector<std::string_view> items;
    if (text.empty()) return items;
    size_t begin = 0;
    while (true) {
        size_t comma = text.find(',', begin);
        std::string_view item = text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin);
        if (item.empty()) throw UsageError(fmt::format("{} {}: empty entry in the list", flag, text));
        items.push_back(item);
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
    }
    return items;
}

template <class T>
std::vector<T> parse_list(std::string_view flag, std::string_view text) {
    constexpr bool kInteger = std::is_integral_v<T>;
    std::vector<T> values;
    for (std::string_view item : split(flag, text)) {
        std::string_view digits = without_plus(item);
        T v{};
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (kInteger && ec == std::errc::result_out_of_range)
            throw UsageError(fmt::format("{} {}: '{}' is out of the 64-bit integer range", flag, text, item));
        if (ec != std::errc() || end != digits.data() + digits.size())
            throw UsageError(
                fmt::format("{} {}: '{}' is not {}", flag, text, item, kInteger ? "an integer" : "a number"));
        values.push_back(v);
    }
    return values;
}

}  // namespace

std::vector<int64_t> parse_int_list(std::string_view flag, std::string_view text) {
    return parse_list<int64_t>(flag, text);
}

std::vector<float> parse_float_list(std::string_view flag, std::string_view text) {
    return parse_list<float>(flag, text);
}

std::vector<double> parse_double_list(std::string_view flag, std::string_view text) {
    return parse_list<double>(flag, text);
}

Decimal parse_tolerance(std::string_view flag, std::string_view text) {
    std::optional<Decimal> value = parse_decimal(text);
    if (!value) throw UsageError(fmt::format("{} {}: must be a finite number, at least 0", flag, text));
    return std::move(*value);
}

std::string check_repeat(const std::string& text) {
    std::string_view digits = without_plus(text);
    int64_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    const std::string_view magnitude = digits.starts_with('-') ? digits.substr(1) : digits;
    const bool integer = !magnitude.empty() &&
                         std::all_of(magnitude.begin(), magnitude.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!integer)
        return fmt::format("'{}' is not an integer (decimal digits, e.g. 1000; from 1 to {})", text, kMaxRepeat);
    if (ec == std::errc() && end == digits.data() + digits.size() && n >= 1 && n <= kMaxRepeat) return "";
    return fmt::format("must be between 1 and {}", kMaxRepeat);
}

}  // namespace dmlgrad::cli
