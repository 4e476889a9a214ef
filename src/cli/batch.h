#pragma once
// `dmlgrad batch MANIFEST`: many operator jobs in one process, paying the device set-up once per worker.
#include <string>

namespace dmlgrad::cli {

struct BatchOptions {
    std::string manifest;  // a path, or "-" for standard input
    bool cpu = false;
    std::string devices;  // "" (the preferred device), "all", or indices "0,1,3" (one worker each; repeats allowed)
    std::string api;      // --api: the GPU API of lines that name none ("" : Vulkan)
    bool quiet = false, verbose = false, json = false;
    std::string shard;  // "I/N": only the jobs whose 0-based index is I mod N
    bool skip_existing = false;
    bool fail_fast = false;
    int max_in_flight = 4;  // jobs read ahead of the workers, and computed jobs waiting to be saved
};

// Returns the exit status: 0 when every job succeeded (or was skipped); else 1 if a job failed at run time,
// else 3 if a --check differed, else 2; 128 + the signal when interrupted. Throws UsageError for problems
// found before any job runs (the manifest, the batch's own flags).
int run_batch(const BatchOptions& options);

}  // namespace dmlgrad::cli
