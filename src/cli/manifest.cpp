#include "cli/manifest.h"

#include <fmt/format.h>

#include "cli/command_line.h"
#include "core/error.h"

namespace dmlgrad::cli {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Appends the quoted text that starts after the opening quote at `i`; returns the index after the closing one.
size_t take_quoted(std::string_view line, size_t i, char quote, std::string& word) {
    for (; i < line.size(); ++i) {
        const char c = line[i];
        if (c == quote) return i + 1;
        if (quote == '"' && c == '\\' && i + 1 < line.size() &&
            std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos)
            ++i;
        word += line[i];
    }
    throw std::invalid_argument(fmt::format("unclosed {} quote", quote == '"' ? "double" : "single"));
}

}  // namespace

std::vector<std::string> split_words(std::string_view line) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_blank(line[i])) ++i;
        if (i == line.size() || line[i] == '#') break;
        std::string word;
        while (i < line.size() && !is_blank(line[i])) {
            const char c = line[i++];
            if (c == '\'' || c == '"') {
                i = take_quoted(line, i, c, word);
            } else if (c == '\\') {
                if (i == line.size()) throw std::invalid_argument("ends with a backslash");
                word += line[i++];
            } else {
                word += c;
            }
        }
        words.push_back(std::move(word));
    }
    return words;
}

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
