#pragma once
// What one command did and how long each phase took, printed as text or as one JSON object.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/compare.h"
#include "core/timing_summary.h"
#include "ops/backend.h"

namespace dmlgrad::cli {

// The kernel's timed executions (core/timing_summary.h).
using KernelSummary = TimingSummary;

// One comparison of the result: --check (against the other backend) or --compare (against a file).
struct ComparisonSummary {
    std::string against;  // --check: "cpu" or "gpu"; --compare: the reference's path
    std::string device;   // --check: the other backend's device
    Tolerance tolerance;  // exact(): bit for bit
    Comparison diff;
    std::vector<std::string> warnings;  // why a pass would prove little (cli/mistrust.h)
    std::string description;            // one line: the count, the first index, both values ("" when passed)
    bool passed() const { return diff.passed(); }
    bool mistrusted() const { return passed() && !warnings.empty(); }
};

// --deterministic: `runs` separate runs, each compared bit for bit with the first.
struct DeterminismSummary {
    int runs = 0;
    int first_differing_run = 0;  // 0: every run identical; else the first run (2, 3, ...) that was not
    uint64_t differing = 0;       // elements of that run that differ
    uint64_t first_index = 0;     // the first of them
    bool identical() const { return first_differing_run == 0; }
};

struct RunReport {
    std::string op;
    std::string backend;  // "gpu" or "cpu"
    std::string device;
    std::string api;  // the GPU API: "vulkan" or "d3d12" ("" on the CPU)
    DType dtype = DType::f32;
    std::vector<std::pair<std::string, Shape>> shapes;             // "input", "input_gradient", "output"
    std::vector<std::pair<std::string, std::string>> input_paths;  // "input", "input_gradient"
    std::string parameters_json;  // the operator's resolved DirectML parameters, a JSON object
    std::string output_path;
    ExecutionStats stats;
    double load_ms = 0;
    double save_ms = 0;
    double total_ms = 0;
    uint64_t min_bytes = 0;
    std::optional<ComparisonSummary> check, compare;
    std::optional<DeterminismSummary> determinism;
    std::string reproducer;  // on a failed comparison: the command line that reproduces it
    bool passed() const {
        return (!check || check->passed()) && (!compare || compare->passed()) &&
               (!determinism || determinism->identical());
    }
    // Passed, but a comparison proves little.
    bool mistrusted() const {
        return passed() && ((check && check->mistrusted()) || (compare && compare->mistrusted()));
    }
};

// The human-readable report, on `out` (standard error when the result itself goes to standard output).
void print_text_report(const RunReport& report, std::FILE* out = stdout);
// One JSON object, on one line, without a newline. `leading_fields` ("\"line\":3,") are put first.
std::string json_report(const RunReport& report, std::string_view leading_fields = "");

// A JSON string literal, quotes included, valid whatever the bytes: control characters are escaped and each byte
// that is not part of valid UTF-8 becomes U+FFFD.
std::string json_string(std::string_view text);

}  // namespace dmlgrad::cli
