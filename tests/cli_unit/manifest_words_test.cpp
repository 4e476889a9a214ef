// The manifest's word splitter against what a POSIX shell (dash, bash) makes of the same plain words: each
// expected list below is what `printf '[%s]'` printed for the line in bash.
#include <gtest/gtest.h>

#include <stdexcept>

#include "cli/manifest_words.h"

namespace dmlgrad::cli {
namespace {

using Words = std::vector<std::string>;

TEST(ManifestWords, BlanksSeparateAndACommentEndsTheLine) {
    EXPECT_EQ(split_words("  relu-grad\t-x a.npy   -o\tb.npy\r"), (Words{"relu-grad", "-x", "a.npy", "-o", "b.npy"}));
    EXPECT_EQ(split_words("a #b c"), (Words{"a"}));
    EXPECT_EQ(split_words("a#b c"), (Words{"a#b", "c"}));  // # only starts a comment at a word's start
    EXPECT_EQ(split_words("# all comment"), Words{});
    EXPECT_EQ(split_words(""), Words{});
}

// Inside '...' every byte is literal, the backslash included: 'a\b' is the three bytes a, \, b.
TEST(ManifestWords, SingleQuotesKeepBackslashesLiterally) {
    EXPECT_EQ(split_words(R"(-x 'dir\name.npy')"), (Words{"-x", R"(dir\name.npy)"}));
    EXPECT_EQ(split_words(R"('a\\b' 'c\')"), (Words{R"(a\\b)", R"(c\)"}));
    EXPECT_EQ(split_words(R"('a "b" $c')"), (Words{R"(a "b" $c)"}));
}

// Inside "..." a backslash escapes only " \ $ `; before anything else it stays.
TEST(ManifestWords, DoubleQuotesEscapeOnlyFourCharacters) {
    EXPECT_EQ(split_words(R"("a\"b" "c\\d" "e\$f" "g\`h" "i\nj")"),
              (Words{R"(a"b)", R"(c\d)", "e$f", "g`h", R"(i\nj)"}));
    EXPECT_EQ(split_words(R"("layer 2/x.npy")"), (Words{"layer 2/x.npy"}));
}

TEST(ManifestWords, ABackslashOutsideQuotesEscapesTheNextCharacter) {
    EXPECT_EQ(split_words(R"(a\ b c\'d \#e)"), (Words{"a b", "c'd", "#e"}));
    EXPECT_EQ(split_words(R"(x'y z'"w")"), (Words{"xy zw"}));  // quoted parts join their word
}

TEST(ManifestWords, UnclosedQuotesAndATrailingBackslashAreRefused) {
    for (const char* line : {"a 'b", R"(a "b)", R"(a "b\")", "a \\"})
        EXPECT_THROW(split_words(line), std::invalid_argument) << line;
}

}  // namespace
}  // namespace dmlgrad::cli
