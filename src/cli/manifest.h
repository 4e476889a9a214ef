#pragma once
// A batch manifest: one job a line, each the words of an operator subcommand as typed on a shell command line.
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dmlgrad::cli {

struct ManifestLine {
    int number = 0;  // 1-based line number in the manifest
    std::vector<std::string> words;
};

// Splits one line into words the way a POSIX shell does for plain words: blanks separate, '...' is literal,
// "..." keeps blanks and takes \ before " \ $ ` as an escape, \ outside quotes escapes the next character, and
// a word starting with # begins a comment. Throws std::invalid_argument naming what is wrong (an unclosed
// quote, a trailing backslash).
std::vector<std::string> split_words(std::string_view line);

// Every job line of the manifest (blank and comment lines skipped; a leading word `dmlgrad` dropped, so a shell
// script of dmlgrad calls is a manifest as it is). Throws UsageError naming the line when one cannot be split
// or does not start with an operator subcommand: found before any job runs.
std::vector<ManifestLine> read_manifest(std::istream& in, const std::string& name);

}  // namespace dmlgrad::cli
