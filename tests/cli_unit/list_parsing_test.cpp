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
    EXPECT_TRUE(parse_int_list("--strides", "").empty());                     // the default applies
    EXPECT_EQ(parse_int_list("--strides", "+1"), (std::vector<int64_t>{1}));  // one leading '+' is allowed
    EXPECT_EQ(parse_int_list("--strides", "-0,+0"), (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(parse_int_list("--strides", "+9223372036854775807"), (std::vector<int64_t>{INT64_MAX}));
}

TEST(ListParsing, IntegerListsReject) {
    for (const char* text : {"3x", "1,,2", " 1",   "1 ",  "1, 2", ",1",  "1,",  ",",   "+-1",  "-+1", "++1", "--1",
                             "+",  "-",    "0x10", "1.0", "1e3",  "inf", "nan", "\t1", "1,2,", ",,",  "+ 1", "1;2"})
        EXPECT_TRUE(rejected(parse_int_list, text, {"--strides", text})) << "'" << text << "'";
    for (const char* text : {"9223372036854775808", "-9223372036854775809", "99999999999999999999999",
                             "18446744073709551616", "+9223372036854775808", "1,18446744073709551615"})
        EXPECT_TRUE(rejected(parse_int_list, text, {"--strides", text, "64-bit"})) << text;
    // A newline is refused too; the message quotes it raw, and print_error_line escapes it to keep one line.
    EXPECT_THROW(parse_int_list("--strides", "1\n"), UsageError);
    EXPECT_THROW(parse_float_list("--scales", "1\n"), UsageError);
    EXPECT_TRUE(rejected(parse_int_list, "1,,2", {"empty entry"}));
    EXPECT_TRUE(rejected(parse_int_list, "1,3x", {"'3x' is not an integer"}));
}

TEST(ListParsing, FloatListsAccept) {
    EXPECT_EQ(parse_float_list("--scales", "0.5,+2,-1e-3,3"), (std::vector<float>{0.5f, 2.0f, -1e-3f, 3.0f}));
    EXPECT_EQ(parse_float_list("--scales", "0.1"), (std::vector<float>{0.1f}));  // one rounding, to float
    EXPECT_TRUE(parse_float_list("--scales", "").empty());
    EXPECT_EQ(parse_float_list("--scales", "+1"), (std::vector<float>{1.0f}));
    const std::vector<float> zero = parse_float_list("--scales", "-0");
    ASSERT_EQ(zero.size(), 1u);
    EXPECT_TRUE(zero[0] == 0.0f && std::signbit(zero[0]));                                         // the sign is kept
    EXPECT_EQ(parse_float_list("--scales", "3.4028234e38"), (std::vector<float>{3.4028234e38f}));  // FLT_MAX
}

TEST(ListParsing, FloatListsReject) {
    for (const char* text : {"3x", "1,,2", " 1", "1 ", "+-1", "-+1", "++1",  "--1",  "+",     "0x1p3", "1e",
                             ".",  "1,",   ",",  ",1", "1,,", "\t1", "0.5 ", "1e39", "-1e39", "1e400"})
        EXPECT_TRUE(rejected(parse_float_list, text, {"--strides", text})) << "'" << text << "'";
    EXPECT_TRUE(rejected(parse_float_list, "0.5,,2", {"empty entry"}));
    EXPECT_TRUE(rejected(parse_float_list, "0.5,2x", {"'2x' is not a number"}));
}

}  // namespace
}  // namespace dmlgrad::cli
