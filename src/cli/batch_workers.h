#pragma once
// How many workers a batch starts on each GPU when the user names no list.
#include <cstddef>

namespace dmlgrad::cli {

// Workers per GPU for `--device all` and the default: one job's host work (reading, copying into staging,
// writing) leaves its GPU idle most of the time, so on a host with CPUs to spare a second worker per GPU keeps it
// busy (on a 2 x H200, 32-CPU host, `--device 0,0` ran heavy jobs 2.36x as fast as `--device 0`). One worker per
// kCpusPerWorker CPUs of the affinity mask, shared among the GPUs: at least one per GPU, at most kMostWorkersPerGpu.
inline constexpr unsigned kCpusPerWorker = 8;
inline constexpr unsigned kMostWorkersPerGpu = 2;
unsigned workers_per_gpu(unsigned cpus, size_t gpus);

}  // namespace dmlgrad::cli
