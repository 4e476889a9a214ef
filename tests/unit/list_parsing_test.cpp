// The command line's comma-separated lists: the one number grammar (core/number_text.h), every rejection one
// line naming the flag, the whole text and the entry.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cli/list_parsing.h"
#include "core/error.h"

namespace dmlgrad::cli {
namespace {

// Passes when parsing `text` throws UsageError whose one-line message contains each of `needles`.
template <class F>
::testing::AssertionResult rejected(F&& parse, const std::string& text, std::initializer_list<std::string> needles) {
    try {
        parse("--strides", text);
    } catch (const UsageError& e) {
        std::string message = e.what();
        if (message.find('\n') != std::string::npos) return ::testing::AssertionFailure() << "two lines: " << message;
        for (const auto& n : needles)
            if (message.find(n) == std::string::npos)
                return ::testing::AssertionFailure() << "'" << n << "' not in: " << message;
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "'" << text << "' was accepted";
}

TEST(ListParsing, IntegerListsAccept) {
    EXPECT_EQ(parse_int_list("--strides", "3"), (std::vector<int64_t>{3}));
    EXPECT_EQ(parse_int_list("--strides", "1,-2,+3,0"), (std::vector<int64_t>{1, -2, 3, 0}));
    EXPECT_EQ(parse_int_list("--strides", "-9223372036854775808,9223372036854775807"),
              (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
    EXPECT_TRUE(parse_int_list("--strides", "").empty());  // the default applies
}

TEST(ListParsing, IntegerListsReject) {
    for (const char* text : {"3x", "1,,2", " 1", "1 ", "1, 2", ",1", "1,", ",", "+-1", "-+1", "++1", "--1", "+",
                             "-", "0x10", "1.0", "1e3", "inf", "nan"})
        EXPECT_TRUE(rejected(parse_int_list, text, {"--strides", text})) << "'" << text << "'";
    for (const char* text : {"9223372036854775808", "-9223372036854775809", "99999999999999999999999"})
        EXPECT_TRUE(rejected(parse_int_list, text, {"--strides", text, "64-bit"})) << text;
    EXPECT_TRUE(rejected(parse_int_list, "1,,2", {"empty entry"}));
    EXPECT_TRUE(rejected(parse_int_list, "1,3x", {"'3x' is not an integer"}));
}

TEST(ListParsing, FloatListsAccept) {
    EXPECT_EQ(parse_float_list("--scales", "0.5,+2,-1e-3,3"), (std::vector<float>{0.5f, 2.0f, -1e-3f, 3.0f}));
    EXPECT_EQ(parse_float_list("--scales", "0.1"), (std::vector<float>{0.1f}));  // one rounding, to float
    EXPECT_TRUE(parse_float_list("--scales", "").empty());
}

TEST(ListParsing, FloatListsReject) {
    for (const char* text : {"3x", "1,,2", " 1", "1 ", "+-1", "--1", "0x1p3", "1e", ".", "1,"})
        EXPECT_TRUE(rejected(parse_float_list, text, {"--strides", text})) << "'" << text << "'";
}

}  // namespace
}  // namespace dmlgrad::cli
