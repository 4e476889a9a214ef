#include "cli/batch_stop.h"

#include <signal.h>

#include <atomic>
#include <csignal>

#include "core/fatal_signals.h"

namespace dmlgrad::cli {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int signal) {
    g_stop_signal.store(signal);
    restore_fatal_signal_handler(signal);  // a second signal ends the process at once
}

}  // namespace

// SIGINT, SIGTERM and SIGHUP stop the batch taking new jobs; the jobs in flight finish and the summary is printed.
// Installed over the single command's handlers (core/fatal_signals, which end the process at once), which are
// installed first so that the first output file does not install them again over these; SIGBUS keeps its. A
// signal ignored when the batch started stays ignored. SIGPIPE is ignored: a closed standard output shows as a
// failed write, which stops the batch as cleanly (BatchReporter::output_closed).
void install_stop_handlers() {
    install_fatal_signal_handlers();
    std::signal(SIGPIPE, SIG_IGN);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    action.sa_flags = SA_RESTART;  // the manifest's read from a pipe goes on, rather than end at the signal
    sigemptyset(&action.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP})
        if (!signal_ignored(s)) sigaction(s, &action, nullptr);
}

int stop_signal() { return g_stop_signal.load(); }

}  // namespace dmlgrad::cli
