#pragma once
// What one command did and how long each phase took, printed as text or as one JSON object.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/compare.h"
#include "ops/backend.h"

namespace dmlgrad::cli {

struct KernelSummary {
    double min = 0, median = 0, mean = 0, max = 0, stddev = 0;
    size_t n = 0;
};
KernelSummary summarize(const std::vector<double>& kernel_ms);

// One comparison of the result: --check (against the other backend) or --compare (against a file).
struct ComparisonSummary {
    std::string against;  // --check: "cpu" or "gpu"; --compare: the reference's path
    std::string device;   // --check: the other backend's device
    Tolerance tolerance;  // exact(): bit for bit
    bool passed = true;
    uint64_t differing = 0;    // elements beyond the tolerance
    uint64_t first_index = 0;  // the first of them (row-major)
    std::string description;   // one line: the count, the first index, both values ("" when passed)
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
    bool passed() const { return (!check || check->passed) && (!compare || compare->passed); }
};

// The human-readable report, on `out` (standard error when the result itself goes to standard output).
void print_text_report(const RunReport& report, std::FILE* out = stdout);
// One JSON object, on one line, without a newline. `leading_fields` ("\"line\":3,") are put first.
std::string json_report(const RunReport& report, std::string_view leading_fields = "");

// A JSON string literal, quotes included, valid whatever the bytes: control characters are escaped and each byte
// that is not part of valid UTF-8 becomes U+FFFD.
std::string json_string(std::string_view text);

}  // namespace dmlgrad::cli
