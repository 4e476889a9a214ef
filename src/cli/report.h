#pragma once
// What one command did and how long each phase took, printed as text or as one JSON object.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"

namespace dmlgrad::cli {

struct KernelSummary {
    double min = 0, median = 0, mean = 0, max = 0, stddev = 0;
    size_t n = 0;
};
KernelSummary summarize(const std::vector<double>& kernel_ms);

struct CheckSummary {
    std::string other_backend;
    std::string other_device;
    bool exact = true;  // bit for bit, or within the summing tolerance
    bool passed = true;
};

struct RunReport {
    std::string op;
    std::string backend;  // "gpu" or "cpu"
    std::string device;
    DType dtype = DType::f32;
    std::vector<std::pair<std::string, Shape>> shapes;  // "input", "input_gradient", "output"
    std::string output_path;
    ExecutionStats stats;
    double load_ms = 0;
    double save_ms = 0;
    double total_ms = 0;
    uint64_t min_bytes = 0;
    std::optional<CheckSummary> check;
};

void print_text_report(const RunReport& report);
// One JSON object, on one line, without a newline. `leading_fields` ("\"line\":3,") are put first.
std::string json_report(const RunReport& report, std::string_view leading_fields = "");

// A JSON string literal, quotes included.
std::string json_string(std::string_view text);

}  // namespace dmlgrad::cli
