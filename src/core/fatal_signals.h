#pragma once
// What a fatal signal must clean up before the process ends: named temporary outputs (removed on SIGINT, SIGTERM,
// SIGHUP and SIGBUS) and mapped inputs (a SIGBUS inside one means the file shrank under us: one line, exit 1).
// Everything here is async-signal-safe on the handler's side: fixed slots, atomics, no allocation.
#include <cstddef>
#include <string_view>

namespace dmlgrad {

// Removed by the handler if a signal ends the run while registered. Returns a slot for forget_temporary(), or
// -1 when every slot is taken (the file is then only removed by normal unwinding).
int watch_temporary(std::string_view path);
void forget_temporary(int slot);

// A SIGBUS on an address in [begin, begin + bytes) prints `message` (one line, newline added) and exits 1.
void watch_mapping(const void* begin, size_t bytes, std::string_view message);
void forget_mapping(const void* begin);

// Installs the handlers (once; later calls do nothing). SIGINT ends with 130, SIGTERM 143, SIGHUP 129. A signal
// ignored when the process started (nohup, `&` in a script) stays ignored.
void install_fatal_signal_handlers();

// Puts the handler that ends the process back on `signal` (one of the three), for a handler of its own that lets
// a second signal end the process at once. Async-signal-safe.
void restore_fatal_signal_handler(int signal);

// Whether `signal` is ignored now (SIG_IGN).
bool signal_ignored(int signal);

}  // namespace dmlgrad
