#pragma once
// A file written unnamed (or, where the file system cannot, under a hidden temporary name) in the target folder
// and renamed into place on commit(), so readers never see a partial file, a failed write leaves the target as
// it was, and an interrupted process leaves nothing behind.
#include <cstdint>
#include <filesystem>
#include <span>

namespace dmlgrad {

class AtomicFile {
public:
    // Creates the temporary file. Throws RuntimeFailure (naming `target`) if it cannot.
    explicit AtomicFile(std::filesystem::path target);
    ~AtomicFile();  // removes the temporary file unless committed
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(std::span<const std::byte> bytes);  // throws RuntimeFailure
    void commit();                                 // unmaps, closes and renames; throws RuntimeFailure

    // Reserves `size` bytes on disk and maps the whole file for writing, so several threads can fill it at once
    // (buffered write() serializes on the file). Empty when the file system cannot reserve space up front: then
    // a full disk would only show as SIGBUS on a mapped write, so the caller writes with write() instead.
    // The mapping lives until commit() or destruction. Throws RuntimeFailure when the disk is full.
    std::span<std::byte> map(uint64_t size);

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;  // empty while the file is unnamed (O_TMPFILE)
    int fd_ = -1;
    bool committed_ = false;
    void* mapping_ = nullptr;
    uint64_t mapping_bytes_ = 0;
    void unmap();
    void link_unnamed();
};

}  // namespace dmlgrad
