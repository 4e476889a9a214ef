#pragma once
// A file written under a temporary name in the target folder and renamed into place on commit(), so readers
// never see a partial file and a failed write leaves the target as it was.
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
    void commit();                                 // flushes, closes and renames; throws RuntimeFailure

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    int fd_ = -1;
    bool committed_ = false;
};

}  // namespace dmlgrad
