#pragma once
// What a mistyped command line most likely meant: the nearest subcommand or flag, PyTorch's names for dmlgrad's
// flags, a numpy slice the shell split into words, a flag put before the subcommand. Each returns the one-line
// message, or nothing when it has no better guess than CLI11's own words.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dmlgrad::cli {

// The name in `names` nearest to `word` within a typo's distance (a prefix of three letters or more counts as one
// typo), or "" when none is.
std::string_view closest_name(std::string_view word, const std::vector<std::string_view>& names);

// "--kernel-size is not a flag of maxpool-grad; did you mean --window-size? (PyTorch's kernel_size)".
// `flags` are the subcommand's long flags ("--window-size", ...). `unknown` may carry "=value".
std::string unknown_flag_message(std::string_view subcommand, std::string_view unknown,
                                 const std::vector<std::string_view>& flags);

// `--slice [:, :, 1:, ::2]` typed without quotes reaches dmlgrad as several words: the message asks for quotes.
// `args` are the words after the program name.
std::optional<std::string> unquoted_slice_message(const std::vector<std::string>& args);

// `dmlgrad --cpu relu-grad ...`: an operator's flag before the subcommand.
std::optional<std::string> flag_before_subcommand_message(const std::vector<std::string>& args);

}  // namespace dmlgrad::cli
