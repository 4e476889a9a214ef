#pragma once
// NumPy .npy files: versions 1.0, 2.0 and 3.0 read; version 1.0 written (2.0 when a header needs it, as numpy).
#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/tensor.h"
#include "io/atomic_file.h"

namespace dmlgrad {

// Where the payload starts and what it holds. Big-endian and Fortran-order files are accepted and converted
// on load (so `info` is always the little-endian, C-order view).
struct NpyHeader {
    TensorInfo info;
    uint64_t payload_offset = 0;
    bool big_endian = false;
    bool fortran_order = false;
};

// Reads and checks the header only: a fast way to validate shapes before reading payloads.
// Throws UsageError ("<path>: <rule>") for a missing, malformed, truncated or unsupported file.
NpyHeader read_npy_header(const std::filesystem::path& path);

enum class PayloadAccess {
    copy,           // the payload is read into memory of its own
    map_read_only,  // large little-endian C-order payloads are mapped from the page cache instead: no copy, and
                    // the tensor's memory is read-only (a write to it faults). Other files are read as with copy.
};

// Reads the whole tensor (header checks as above; payload length checked against the file size).
Tensor load_npy(const std::filesystem::path& path, PayloadAccess access = PayloadAccess::copy);

// The bytes of a version 1.0 header (magic included), padded with spaces so the payload starts at a multiple of 64.
std::string npy_header_bytes(const TensorInfo& info);

// Writes `tensor` atomically: to a temporary file in the target folder, then renamed into place.
// Throws RuntimeFailure when the write fails; the target is then untouched and no temporary file is left.
void save_npy(const std::filesystem::path& path, const Tensor& tensor);

// An output .npy whose tensor is filled in place and then committed: for large outputs the tensor's memory is a
// shared mapping of the temporary file, so the result goes straight into the page cache from as many threads as
// write it, and commit() only renames. Small outputs, or file systems that cannot reserve space, use ordinary
// memory written out by commit(). Destroyed uncommitted, it leaves nothing behind. The path "-" is standard
// output: the tensor is then written there by commit(), all at once.
class NpyOutput {
public:
    NpyOutput(const std::filesystem::path& path, TensorInfo info);  // throws RuntimeFailure (cannot create)
    Tensor& tensor() { return tensor_; }
    bool written_in_place() const { return mapped_; }  // the tensor is the file's own mapping (large outputs)
    void commit();                                     // throws RuntimeFailure

private:
    std::optional<AtomicFile> file_;  // none for standard output; declared first: the tensor may borrow its mapping
    Tensor tensor_;
    bool mapped_ = false;
};

}  // namespace dmlgrad
