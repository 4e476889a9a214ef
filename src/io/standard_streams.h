#pragma once
// "-" as a path, as Unix tools take it: standard input for one input tensor, standard output for the result.
#include <cstddef>
#include <filesystem>
#include <span>

namespace dmlgrad {

inline bool is_standard_stream(const std::filesystem::path& path) { return path == "-"; }

// First thing in main, before any thread: where standard input is closed, /dev/null takes descriptor 0, so that no
// file opened later (a GPU driver's threads open theirs while a batch reads its manifest) becomes standard input;
// standard_input_closed() then says it was closed.
void hold_closed_standard_input();
bool standard_input_closed();

// A descriptor holding standard input from its current position that pread() and mmap() can use: standard input
// itself when it is a regular file at offset 0 (`< x.npy`), else a memory file it is copied into on the first call
// (a pipe can be read only once, and the header is read before the payload). Owned by this module: dup() it to
// keep it. Throws UsageError (a folder, a write-only or closed stream) or RuntimeFailure (a failed read).
int standard_input_fd();

// Throws UsageError when standard output is a terminal: a .npy is binary, and the user surely meant a file.
void require_standard_output_not_terminal();

// Writes every byte to standard output. Throws RuntimeFailure (a closed pipe, a full disk).
void write_standard_output(std::span<const std::byte> bytes);

}  // namespace dmlgrad
