#include "cli/manifest_words.h"

#include <fmt/format.h>

#include <stdexcept>

namespace dmlgrad::cli {
namespace {

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

}  // namespace dmlgrad::cli
