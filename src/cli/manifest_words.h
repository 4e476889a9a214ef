#pragma once
// A manifest line's words, split as a shell splits plain words (no dependencies: unit-tested on its own).
#include <string>
#include <string_view>
#include <vector>

namespace dmlgrad::cli {

// Splits one line into words the way a POSIX shell does for plain words: blanks separate, '...' is literal,
// "..." keeps blanks and takes \ before " \ $ ` as an escape, \ outside quotes escapes the next character, and
// a word starting with # begins a comment. Throws std::invalid_argument naming what is wrong (an unclosed
// quote, a trailing backslash).
std::vector<std::string> split_words(std::string_view line);

}  // namespace dmlgrad::cli
