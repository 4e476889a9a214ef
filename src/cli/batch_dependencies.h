#pragma once
// A manifest as a program: which jobs feed which through their files. Files are compared by identity, not by
// their spelling: the folder entry a path reaches, whatever symbolic links, "." or ".." lead there.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dmlgrad::cli {

// The folder entry a path names once its symbolic links are followed: the folder's device and inode, and the
// name in it (with no such folder, the normalised absolute path). An output replaces that entry, so this is what
// a later reader of the same file reaches. Two hard links are two entries: replacing one leaves the other the old
// content, as a shell script running the jobs one after another would.
struct FileIdentity {
    uint64_t device = 0, inode = 0;
    std::string name;
    auto operator<=>(const FileIdentity&) const = default;
};

FileIdentity file_identity(const std::string& path);

// The identity as one string: what names a job's output kept in device memory (ops/backend.h's ResidentTensors).
std::string identity_key(const FileIdentity& identity);

// The files one job reads (-x, -g, --compare) and writes (-o), as paths.
struct JobFiles {
    int line = 0;  // in the manifest, for messages
    std::vector<std::string> reads;
    std::string writes;
};

// For each job, the earlier jobs whose output it reads (for each input, the last earlier job writing it). Throws
// UsageError naming both lines when two jobs write one file (which of them the file would hold is a race), or
// naming the line when a job writes the manifest itself.
std::vector<std::vector<size_t>> find_producers(const std::vector<JobFiles>& jobs, const std::string& manifest);

}  // namespace dmlgrad::cli
