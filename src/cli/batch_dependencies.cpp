#include "cli/batch_dependencies.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/printable.h"

namespace dmlgrad::cli {

namespace fs = std::filesystem;

FileIdentity file_identity(const std::string& path) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec).lexically_normal();
    // Symbolic links, "." and ".." resolved as far as the path exists.
    fs::path entry = fs::weakly_canonical(absolute, ec);
    if (ec) entry = absolute;
    struct stat folder {};
    if (::stat(entry.parent_path().c_str(), &folder) == 0)
        return {uint64_t(folder.st_dev), uint64_t(folder.st_ino), entry.filename().string()};
    return {0, 0, entry.string()};
}

std::string identity_key(const FileIdentity& identity) {
    return fmt::format("{}:{}:{}", identity.device, identity.inode, identity.name);
}

namespace {

// A job's output replacing the manifest would leave the user a result where their list of jobs was.
void refuse_writing_the_manifest(const JobFiles& job, const std::string& manifest) {
    if (manifest == "-" || file_identity(job.writes) != file_identity(manifest)) return;
    throw UsageError(
        fmt::format("{} line {}: writes {}, the manifest itself", manifest, job.line, printable_path(job.writes)));
}

}  // namespace

std::vector<std::vector<size_t>> find_producers(const std::vector<JobFiles>& jobs, const std::string& manifest) {
    std::map<FileIdentity, size_t> writer;  // each output's job
    std::vector<std::vector<size_t>> producers(jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
        for (const std::string& input : jobs[j].reads) {
            const auto it = writer.find(file_identity(input));
            if (it != writer.end() &&
                std::find(producers[j].begin(), producers[j].end(), it->second) == producers[j].end())
                producers[j].push_back(it->second);
        }
        if (jobs[j].writes.empty()) continue;  // a line that did not parse: it writes nothing
        refuse_writing_the_manifest(jobs[j], manifest);
        const auto [it, added] = writer.emplace(file_identity(jobs[j].writes), j);
        if (!added)
            throw UsageError(
                fmt::format("{} line {}: writes {}, which line {} writes too (the result would depend on "
                            "which job finishes last)",
                            manifest, jobs[j].line, printable_path(jobs[j].writes), jobs[it->second].line));
    }
    return producers;
}

}  // namespace dmlgrad::cli
