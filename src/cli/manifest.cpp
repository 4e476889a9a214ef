#include "cli/manifest.h"

#include <fmt/format.h>

#include <stdexcept>

#include "cli/command_line.h"
#include "cli/manifest_words.h"
#include "core/error.h"

namespace dmlgrad::cli {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

}  // namespace

std::vector<ManifestLine> read_manifest(std::istream& in, const std::string& name) {
    std::vector<ManifestLine> jobs;
    std::string text;
    for (int number = 1; std::getline(in, text); ++number) {
        // An editor's UTF-8 byte-order mark is not part of the first word.
        if (number == 1 && text.starts_with(kByteOrderMark)) text.erase(0, kByteOrderMark.size());
        // A NUL would end the path where the system reads it (`-o victim\0.npy` writes `victim`).
        if (const size_t nul = text.find('\0'); nul != std::string::npos)
            throw UsageError(fmt::format("{} line {}: a NUL byte at column {}", name, number, nul + 1));
        std::vector<std::string> words;
        try {
            words = split_words(text);
        } catch (const std::invalid_argument& e) {
            throw UsageError(fmt::format("{} line {}: {}", name, number, e.what()));
        }
        if (!words.empty() && words.front() == "dmlgrad") words.erase(words.begin());
        if (words.empty()) continue;
        if (!is_operator_name(words.front()))
            throw UsageError(
                fmt::format("{} line {}: {}", name, number, unknown_subcommand_message(words.front(), true)));
        jobs.push_back({number, std::move(words)});
    }
    if (in.bad()) throw UsageError(fmt::format("{}: the manifest cannot be read", name));
    return jobs;
}

}  // namespace dmlgrad::cli
