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

// Installs the handlers (once; later calls do nothing). SIGINT ends with 130, SIGTERM 143, SIGHUP 129.
void install_fatal_signal_handlers();

}  // namespace dmlgrad
