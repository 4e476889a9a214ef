// How many workers `--device all` and the default start per GPU: by hand from the rule in cli/batch_workers.h (one
// worker per 8 CPUs of the affinity mask, shared among the GPUs, from 1 to 2 per GPU).
#include <gtest/gtest.h>

#include "cli/batch_workers.h"

namespace dmlgrad::cli {
namespace {

TEST(WorkersPerGpu, FollowsTheCpusPerGpu) {
    EXPECT_EQ(workers_per_gpu(2, 1), 1u);   // this build machine: one worker, as before
    EXPECT_EQ(workers_per_gpu(15, 1), 1u);  // below 16 CPUs a second worker would share the reader's cores
    EXPECT_EQ(workers_per_gpu(16, 1), 2u);  // the one-GPU H100 machine
    EXPECT_EQ(workers_per_gpu(32, 2), 2u);  // the 2 x H200 host of the issue: --device all is 0,1,0,1
    EXPECT_EQ(workers_per_gpu(24, 2), 1u);
    EXPECT_EQ(workers_per_gpu(64, 4), 2u);
    EXPECT_EQ(workers_per_gpu(128, 8), 2u);
    EXPECT_EQ(workers_per_gpu(512, 2), 2u);  // never more than two per GPU
    EXPECT_EQ(workers_per_gpu(1, 8), 1u);    // at least one per GPU
    EXPECT_EQ(workers_per_gpu(32, 0), 1u);   // no GPU listed: the jobs fail on their own
}

}  // namespace
}  // namespace dmlgrad::cli
