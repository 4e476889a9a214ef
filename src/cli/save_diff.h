#pragma once
// On a failed comparison, what a user needs to act: --save-diff's files (the result, an element-wise error map
// and a mask of the elements beyond the rule) and a one-line command that reproduces the case.
#include <string>
#include <vector>

#include "core/compare.h"

namespace dmlgrad::cli {

// PREFIX.result.npy, PREFIX.<label>-error.npy (float64 |result - reference|: 0 where the two agree by the
// formula, NaN for a NaN or infinity mismatch) and PREFIX.<label>-beyond.npy (uint8, 1 where the rule fails).
// Each file appears complete or not at all. Throws RuntimeFailure.
void save_result(const std::string& prefix, const Tensor& result);
void save_error_map(const std::string& prefix, std::string_view label, const Tensor& result, const Tensor& reference,
                    const Tolerance& tolerance);
// --save-diff's folder must exist: checked before any work. Throws UsageError.
void require_save_diff_folder(const std::string& prefix);

// "cd '/home/me/run' && dmlgrad relu-grad -x x.npy ...": `words` are the subcommand and its flags, each quoted for
// a POSIX shell where it needs it.
std::string reproducer_line(const std::vector<std::string>& words);

}  // namespace dmlgrad::cli
