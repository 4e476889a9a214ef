#pragma once
// What the batch tests share: manifests written into the harness's folder, and readers of --json output.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_harness.h"

namespace dmlgrad::testing {

using Args = std::vector<std::string>;

// Splits on blanks (the test manifests hold no quotes).
inline Args words(const std::string& line) {
    Args out;
    std::istringstream in(line);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// A comment and a blank line, then `lines`: job i is on line i + 3.
inline void write_manifest(const CliHarness& h, const std::string& name, const std::vector<std::string>& lines) {
    std::string text = "# a comment, then a blank line\n\n";
    for (const auto& l : lines) text += l + "\n";
    h.write_bytes(name, text);
}

// The "line" of every {"line":N,"status":STATUS,...} object in --json output.
inline std::vector<int> lines_with_status(const std::string& json, const std::string& status) {
    std::vector<int> lines;
    std::istringstream in(json);
    for (std::string row; std::getline(in, row);) {
        if (row.find(R"("status":")" + status + "\"") == std::string::npos) continue;
        lines.push_back(std::stoi(row.substr(row.find(R"("line":)") + 7)));
    }
    return lines;
}

// The integer after "key": in the summary line of --json output.
inline long summary_field(const std::string& json, const std::string& key) {
    const size_t summary = json.find(R"({"summary":)");
    EXPECT_NE(summary, std::string::npos) << json;
    const size_t at = json.find("\"" + key + "\":", summary);
    EXPECT_NE(at, std::string::npos) << key << " in " << json;
    return at == std::string::npos ? -1 : std::stol(json.substr(at + key.size() + 3));
}

}  // namespace dmlgrad::testing
