#pragma once
// The one grammar of every number on the command line (list entries and clip bounds alike): an optional single
// sign, then what std::from_chars reads in decimal (digits; for floats also '.', an exponent, inf). No blanks,
// no hexadecimal, no second sign ("+-5"). from_chars takes '-' but not '+', hence this helper.
#include <string_view>

namespace dmlgrad {

// `text` without one leading '+', unless a sign follows it (then from_chars refuses the text as it stands).
inline std::string_view without_plus(std::string_view text) {
    if (text.size() >= 2 && text[0] == '+' && text[1] != '-' && text[1] != '+') return text.substr(1);
    return text;
}

}  // namespace dmlgrad
