#pragma once
// The straight pass of one operator command: headers -> plan -> load -> run (-> check) -> save -> report.
#include "cli/operator_command.h"
#include "cli/options.h"

namespace dmlgrad::cli {

// Returns the exit code (0, or 3 when --check finds a difference). Throws UsageError / RuntimeFailure.
int run_operator(OperatorCommand command, const CommonOptions& options);

void configure_logging(Verbosity verbosity);

}  // namespace dmlgrad::cli
