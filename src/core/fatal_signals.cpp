#include "core/fatal_signals.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

namespace dmlgrad {
namespace {

// A slot is free (0), being filled or emptied (1), or live (2); the handler reads live slots only.
constexpr int kFree = 0, kBusy = 1, kLive = 2;
constexpr size_t kText = 4096 + 256;

struct TemporarySlot {
    std::atomic<int> state{kFree};
    char path[kText];
};

struct MappingSlot {
    std::atomic<int> state{kFree};
    const char* begin = nullptr;
    size_t bytes = 0;
    char message[kText];
    size_t message_size = 0;
};

std::array<TemporarySlot, 16> temporaries;
std::array<MappingSlot, 16> mappings;

template <class Slot>
int claim(std::array<Slot, 16>& slots) {
    for (size_t i = 0; i < slots.size(); ++i) {
        int expected = kFree;
        if (slots[i].state.compare_exchange_strong(expected, kBusy)) return static_cast<int>(i);
    }
    return -1;
}

void copy_text(char (&to)[kText], std::string_view text) {
    size_t n = std::min(text.size(), kText - 1);
    std::memcpy(to, text.data(), n);
    to[n] = '\0';
}

void remove_temporaries() {
    for (auto& slot : temporaries)
        if (slot.state.load() == kLive) ::unlink(slot.path);
}

void write_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w <= 0) return;  // stderr closed or full: the exit code still says what happened
        p += w;
        n -= static_cast<size_t>(w);
    }
}

const MappingSlot* mapping_holding(const void* address) {
    auto* a = static_cast<const char*>(address);
    for (auto& slot : mappings)
        if (slot.state.load() == kLive && a >= slot.begin && a < slot.begin + slot.bytes) return &slot;
    return nullptr;
}

void on_termination(int signal) {
    remove_temporaries();
    ::_exit(128 + signal);
}

void on_bus_error(int signal, siginfo_t* info, void*) {
    remove_temporaries();
    if (const MappingSlot* slot = mapping_holding(info->si_addr)) {
        write_all(STDERR_FILENO, slot->message, slot->message_size);
        ::_exit(1);
    }
    // Not an input of ours: die of the signal as before, without the temporary file.
    ::signal(signal, SIG_DFL);
    ::raise(signal);
}

}  // namespace

int watch_temporary(std::string_view path) {
    install_fatal_signal_handlers();
    int i = claim(temporaries);
    if (i < 0) return -1;
    copy_text(temporaries[i].path, path);
    temporaries[i].state.store(kLive);
    return i;
}

void forget_temporary(int slot) {
    if (slot >= 0) temporaries[slot].state.store(kFree);
}

void watch_mapping(const void* begin, size_t bytes, std::string_view message) {
    install_fatal_signal_handlers();
    int i = claim(mappings);
    if (i < 0) return;  // a SIGBUS there then ends the process as the signal does
    MappingSlot& slot = mappings[i];
    slot.begin = static_cast<const char*>(begin);
    slot.bytes = bytes;
    std::string_view line = message.substr(0, kText - 2);
    std::memcpy(slot.message, line.data(), line.size());
    slot.message[line.size()] = '\n';
    slot.message_size = line.size() + 1;
    slot.state.store(kLive);
}

void forget_mapping(const void* begin) {
    for (auto& slot : mappings)
        if (slot.state.load() == kLive && slot.begin == begin) slot.state.store(kFree);
}

void restore_fatal_signal_handler(int signal) {
    struct sigaction action {};
    sigemptyset(&action.sa_mask);
    action.sa_handler = on_termination;
    ::sigaction(signal, &action, nullptr);
}

bool signal_ignored(int signal) {
    struct sigaction old {};
    return ::sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN;
}

void install_fatal_signal_handlers() {
    // A function-local static, not std::call_once: its pthread_once cannot carry an exception through the statically
    // linked libgcc (the process aborts), so the project does not use it.
    static const bool installed = [] {
        for (int s : {SIGINT, SIGTERM, SIGHUP}) {
            // A signal ignored when we started (nohup, a background job's SIGINT) stays ignored.
            if (!signal_ignored(s)) restore_fatal_signal_handler(s);
        }
        struct sigaction bus {};
        sigemptyset(&bus.sa_mask);
        bus.sa_sigaction = on_bus_error;
        bus.sa_flags = SA_SIGINFO;
        ::sigaction(SIGBUS, &bus, nullptr);
        return true;
    }();
    (void)installed;
}

}  // namespace dmlgrad
