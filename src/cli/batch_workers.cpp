#include "cli/batch_workers.h"

#include <algorithm>

namespace dmlgrad::cli {

unsigned workers_per_gpu(unsigned cpus, size_t gpus) {
    if (gpus == 0) return 1;
    return std::clamp<unsigned>(unsigned(cpus / (kCpusPerWorker * gpus)), 1, kMostWorkersPerGpu);
}

}  // namespace dmlgrad::cli
