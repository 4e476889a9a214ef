#pragma once
// How a batch stops early: SIGINT, SIGTERM, SIGHUP (and a closed standard output, which BatchReporter notices).

namespace dmlgrad::cli {

// Installs the stop handlers (docs/BATCH.md, "Memory, overlap and interruption"): first thing in a batch.
void install_stop_handlers();

// The stop signal received, 0 while none.
int stop_signal();

}  // namespace dmlgrad::cli
