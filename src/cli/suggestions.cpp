#include "cli/suggestions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cli/command_line.h"

namespace dmlgrad::cli {
namespace {

// Edits (insertions, deletions, substitutions) between two words.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// PyTorch's (and a few habitual) names for dmlgrad's flags, written as flags: nn.MaxPool2d's kernel_size, stride,
// padding, dilation; F.interpolate's size and mode; autograd's grad_output.
struct ForeignName {
    std::string_view name, meant, origin;
};
constexpr ForeignName kForeignNames[] = {
    {"--kernel-size", "--window-size", "PyTorch's kernel_size"},
    {"--stride", "--strides", "PyTorch's stride"},
    {"--padding", "--start-padding and --end-padding",
     "PyTorch's padding=P pads both ends: --start-padding P,P --end-padding P,P"},
    {"--dilation", "--dilations", "PyTorch's dilation"},
    {"--size", "--output-sizes", "dX's whole shape, N and C included"},
    {"--mode", "--torch-mode", "PyTorch's mode"},
    {"--grad-output", "--input-gradient", "PyTorch's grad_output is dY"},
};

// "--Kernel_Size=3" -> "--kernel-size": the flag's name in dmlgrad's spelling, without a value.
std::string normalized_flag(std::string_view typed) {
    std::string name = typed.starts_with("--") ? "" : "-";  // -stride -> --stride
    for (char c : typed.substr(0, typed.find('=')))
        name += c == '_' ? '-' : char(std::tolower(static_cast<unsigned char>(c)));
    return name;
}

bool has_flag(const std::vector<std::string_view>& flags, std::string_view flag) {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

// The flag a foreign name stands for, when this subcommand has it (its first word, for "A and B").
const ForeignName* foreign_name(std::string_view name, const std::vector<std::string_view>& flags) {
    for (const ForeignName& f : kForeignNames)
        if (f.name == name && has_flag(flags, f.meant.substr(0, f.meant.find(' ')))) return &f;
    return nullptr;
}

}  // namespace

std::string_view closest_name(std::string_view word, const std::vector<std::string_view>& names) {
    std::string_view best;
    size_t best_distance = word.size() / 2 + 1;  // further than that is a different word, not a typo
    for (std::string_view name : names) {
        const size_t d = word.size() >= 3 && name.starts_with(word) ? 1 : edit_distance(word, name);
        if (d < best_distance) best = name, best_distance = d;
    }
    return best;
}

std::string unknown_flag_message(std::string_view subcommand, std::string_view unknown,
                                 const std::vector<std::string_view>& flags) {
    const std::string typed(unknown.substr(0, unknown.find('=')));
    const std::string message = fmt::format("{} is not a flag of {}", typed, subcommand);
    const std::string name = normalized_flag(unknown);
    if (const ForeignName* f = foreign_name(name, flags))
        return fmt::format("{}; did you mean {}? ({})", message, f->meant, f->origin);
    if (name != typed && has_flag(flags, name)) return fmt::format("{}; did you mean {}?", message, name);
    // Measured without the dashes, which every flag shares.
    std::vector<std::string_view> bare;
    for (std::string_view flag : flags) bare.push_back(flag.substr(2));
    const std::string_view best = closest_name(std::string_view(name).substr(2), bare);
    return best.empty() ? message : fmt::format("{}; did you mean --{}?", message, best);
}

std::optional<std::string> unquoted_slice_message(const std::vector<std::string>& args) {
    const auto flag = std::find(args.begin(), args.end(), "--slice");
    if (flag == args.end() || flag + 1 == args.end() || !(flag + 1)->starts_with('[')) return std::nullopt;
    std::string slice;
    for (auto word = flag + 1; word != args.end(); ++word) {
        if (!slice.empty()) slice += ' ';
        slice += *word;
        if (word->find(']') != std::string::npos) break;
    }
    if (slice == *(flag + 1)) return std::nullopt;  // one word: the shell left it whole
    return fmt::format("--slice: the shell split the slice into words; quote the slice: --slice \"{}\"", slice);
}

std::optional<std::string> flag_before_subcommand_message(const std::vector<std::string>& args) {
    if (args.empty() || !args[0].starts_with('-') || args[0] == "--help" || args[0] == "-h" || args[0] == "--version")
        return std::nullopt;
    const auto subcommand = std::find_if(args.begin(), args.end(), [](const std::string& w) {
        return is_operator_name(w) || w == "batch" || w == "devices";
    });
    if (subcommand == args.end()) return std::nullopt;
    return fmt::format("{} goes after the subcommand: dmlgrad {} ... {}", args[0], *subcommand, args[0]);
}

}  // namespace dmlgrad::cli
