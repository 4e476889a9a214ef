#pragma once
// A batch manifest: one job a line, each the words of an operator subcommand as typed on a shell command line.
#include <istream>
#include <string>
#include <vector>

namespace dmlgrad::cli {

struct ManifestLine {
    int number = 0;  // 1-based line number in the manifest
    std::vector<std::string> words;
};

// Every job line of the manifest (blank and comment lines skipped; a leading word `dmlgrad` dropped, so a shell
// script of dmlgrad calls is a manifest as it is; a UTF-8 byte-order mark before line 1 skipped). Throws
// UsageError naming the line when one holds a NUL byte, cannot be split (cli/manifest_words.h) or does not start
// with an operator subcommand, or when the manifest cannot be read: found before any job runs.
std::vector<ManifestLine> read_manifest(std::istream& in, const std::string& name);

}  // namespace dmlgrad::cli
