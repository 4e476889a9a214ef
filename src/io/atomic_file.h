#pragma once
// An output file that appears complete or not at all. It is created unnamed in the target folder (O_TMPFILE) and
// linked into place by commit(), so no interruption, not even SIGKILL, can leave a temporary file behind. Where
// the file system has no O_TMPFILE, a hidden named temporary is used instead, removed by the destructor or, on
// SIGINT/SIGTERM/SIGHUP, by the handler of core/fatal_signals.
//
// The target: a regular file is replaced, keeping its mode, owner and group where the process may set them; a
// symbolic link to a regular file is written through (the link stays, its target is replaced next to it);
// anything else that exists (device, FIFO, socket, folder, a link to one or to nothing) is a UsageError, untouched.
//
// What commit() leaves to the destructor: the mapping (unmapping 1 GiB took ~18 ms on the H100 machine) and the
// replaced file's storage (freeing a replaced 1 GiB file's pages and blocks took ~64 ms there, inside rename()): the
// file is held open across the rename, so that its last reference, and the freeing, go with this object. The
// single command destroys it on another thread while it reports (cli/background_release.h).
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

namespace dmlgrad {

class AtomicFile {
public:
    // Checks the target and creates the temporary file. Throws UsageError for a target that must not be replaced,
    // RuntimeFailure (naming `target`) when the file cannot be created.
    explicit AtomicFile(std::filesystem::path target);
    ~AtomicFile();  // removes the temporary file unless committed
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(std::span<const std::byte> bytes);  // throws RuntimeFailure
    void commit();                                 // links into place and closes; throws RuntimeFailure

    // Reserves `size` bytes on disk and maps the whole file for writing, so several threads can fill it at once
    // (buffered write() serializes on the file). Empty when the file system cannot reserve space up front: then
    // a full disk would only show as SIGBUS on a mapped write, so the caller writes with write() instead.
    // The mapping lives until destruction. Throws RuntimeFailure when the disk is full.
    std::span<std::byte> map(uint64_t size);

private:
    std::filesystem::path target_;     // the name given, for messages
    std::filesystem::path final_;      // the file replaced: target_ with symbolic links resolved
    std::filesystem::path temporary_;  // the named temporary (empty while the file is unnamed or after commit)
    int fd_ = -1;
    int watch_slot_ = -1;
    int replaced_ = -1;  // the file a commit replaced, held open (O_PATH) until destruction
    bool unnamed_ = false;
    bool committed_ = false;
    void* mapping_ = nullptr;
    uint64_t mapping_bytes_ = 0;
    void unmap();
    void create_named(const std::filesystem::path& folder);
    void keep_attributes(const struct stat& old);
    void link_into_place();
    void rename_into_place(const std::filesystem::path& from);
    void hold_replaced();
    void discard();
};

}  // namespace dmlgrad
