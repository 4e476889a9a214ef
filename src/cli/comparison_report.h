#pragma once
// The diff report of one --check or --compare (cli/report.h's ComparisonSummary), as text lines and as JSON.
#include <string>
#include <string_view>

#include "cli/report.h"

namespace dmlgrad::cli {

// "  compare  ..." and, on a difference, the lines that follow it (each ending in a newline). `label` is "check"
// or "compare".
std::string comparison_text(const ComparisonSummary& c, std::string_view label);
// One JSON object; `against_key` is "backend" (--check) or "reference" (--compare).
std::string comparison_json(const ComparisonSummary& c, std::string_view against_key);

// --deterministic's line and object.
std::string determinism_text(const DeterminismSummary& d);
std::string determinism_json(const DeterminismSummary& d);

// A JSON number, or null for NaN and the infinities (JSON has neither).
std::string json_number(double v);

}  // namespace dmlgrad::cli
