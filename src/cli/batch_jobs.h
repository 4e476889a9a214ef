#pragma once
// A batch before it runs: the manifest read, its lines parsed into jobs, the jobs that feed each other linked,
// the shard picked and the workers' devices named. Every problem found here is a UsageError: nothing has run.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/batch.h"
#include "cli/command_line.h"
#include "cli/manifest.h"
#include "core/tensor.h"

namespace dmlgrad::cli {

// A manifest line parsed into its request, or the usage error that stops it.
struct BatchJob {
    int line = 0;
    std::optional<OperatorRequest> request;
    std::string error;
    std::vector<size_t> producers;  // the earlier jobs (indices in the batch) whose outputs this job reads
    // Device-resident hand-over (ops/backend.h's ResidentTensors): for each operator input, the key of the earlier
    // job's output it is ("" if none); and this job's output's key if a later job takes it as an operator input.
    std::vector<std::string> input_keys;
    std::string output_key;
};

struct Shard {
    uint64_t index = 0, count = 1;
};

Shard parse_shard(const std::string& text);

// The manifest's lines: `path`, or standard input for "-".
std::vector<ManifestLine> load_manifest(const std::string& path);

// The shard's jobs. Throws UsageError when two lines (of any shard) write one file.
std::vector<BatchJob> parse_jobs(const std::vector<ManifestLine>& lines, const BatchOptions& options,
                                 const Shard& shard, const std::string& manifest);

// Why an existing output is not one --skip-existing may count as done ("" when it is).
std::string incomplete_output_reason(const std::string& path, const TensorInfo& expected);

// One device index per worker (std::nullopt: the preferred device). Throws UsageError for an index that is not one
// (require_devices_present checks that the machine has it).
std::vector<std::optional<int>> worker_devices(const BatchOptions& options);
// Throws UsageError naming a --device index this machine does not have. Called once the workers' devices are being
// made, so that the instance it lists devices with is made beside theirs (~0.1 s on an H100, not added to the wall).
void require_devices_present(const std::vector<std::optional<int>>& devices, const BatchOptions& options);

}  // namespace dmlgrad::cli
