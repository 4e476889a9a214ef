// Device listing, device choice, statistics and repeated timing, on the tested API (gpu_testing.h).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <regex>

#include "core/error.h"
#include "gpu/gpu.h"
#include "gpu_testing.h"

namespace dmlgrad::testing {
namespace {

TEST(GpuDevices, ListsAtLeastOneDescribedDevice) {
    // No device at all is a failure here, not a skip: CI has lavapipe (and vkd3d).
    const std::vector<GpuDeviceInfo> devices = list_gpu_devices(tested_api());
    ASSERT_FALSE(devices.empty());
    for (size_t i = 0; i < devices.size(); ++i) {
        const GpuDeviceInfo& d = devices[i];
        EXPECT_EQ(d.index, int(i));
        EXPECT_FALSE(d.name.empty());
        EXPECT_TRUE(d.type == "discrete" || d.type == "integrated" || d.type == "virtual" || d.type == "cpu" ||
                    d.type == "other")
            << d.type;
        EXPECT_FALSE(d.driver.empty());
        // Vulkan's version; for Direct3D 12, the feature level and the Vulkan version under vkd3d.
        EXPECT_TRUE(std::regex_search(d.api_version, std::regex(R"(\d+\.\d+\.\d+)"))) << d.api_version;
        EXPECT_GT(d.memory_bytes, 0u);
        std::cout << "[ device   ] " << d.index << ": " << d.name << " (" << d.type << "), " << d.driver << ", "
                  << d.api_version << ", " << d.memory_bytes / (1 << 20) << " MiB\n";
    }
}

TEST(GpuDevices, ExplicitIndexSelectsThatDevice) {
    const std::vector<GpuDeviceInfo> devices = list_gpu_devices(tested_api());
    ASSERT_FALSE(devices.empty());
    auto backend = make_gpu_backend(0, tested_api());
    EXPECT_EQ(backend->kind(), "gpu");
    EXPECT_EQ(backend->device_name(), devices[0].name);
}

TEST(GpuDevices, BadIndexIsAUsageError) {
    const int count = int(list_gpu_devices(tested_api()).size());
    EXPECT_THROW(make_gpu_backend(count, tested_api()), UsageError);
    EXPECT_THROW(make_gpu_backend(-1, tested_api()), UsageError);
    try {
        make_gpu_backend(count + 5, tested_api());
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos) << e.what();
    }
}

// Milliseconds since `start`.
double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Every phase of `stats` was timed (a phase left at 0 was not), and together they fit in `wall_ms`, the host time
// around the run (a phase in the wrong unit or counted twice does not).
void expect_phases_within(const ExecutionStats& stats, double wall_ms) {
    EXPECT_GT(stats.setup_ms, 0.0);
    EXPECT_GT(stats.upload_ms, 0.0);
    EXPECT_GT(stats.download_ms, 0.0);
    double kernels_ms = 0;
    for (double ms : stats.kernel_ms) {
        EXPECT_GT(ms, 0.0);
        kernels_ms += ms;
    }
    EXPECT_LE(stats.setup_ms + stats.upload_ms + kernels_ms + stats.download_ms, wall_ms);
}

TEST(GpuRun, ReportsStatisticsAndOneTimePerRepeat) {
    SeededRng rng;
    const Shape shape = {100003};
    const Tensor x = random_tensor(DType::f16, shape, rng), dy = random_tensor(DType::f16, shape, rng);
    const Plan plan = ReluGradPlan{DType::f16, shape, element_count(shape)};

    // The first run reports the instance and device creation (in the constructor) as set-up.
    GpuBackendOptions options;
    options.warmup_seconds = 0.3;
    auto start = std::chrono::steady_clock::now();
    auto backend = make_gpu_backend(std::nullopt, tested_api(), options);
    const double construction_ms = ms_since(start);
    ExecutionStats first, again;
    const Tensor once = run_on(*backend, plan, {&x, &dy}, &first, 1);
    ASSERT_EQ(first.kernel_ms.size(), 1u);
    EXPECT_EQ(first.kernel, "relu_grad_f16");  // what --json and -v name
    expect_phases_within(first, ms_since(start));
    EXPECT_GE(first.setup_ms, construction_ms / 2);  // the constructor's time, less the allocation around it

    // A repeated run: the warm-up (0.3 s) before the timed executions, one time each; the set-up done.
    start = std::chrono::steady_clock::now();
    const Tensor repeated = run_on(*backend, plan, {&x, &dy}, &again, 5);
    const double repeated_ms = ms_since(start);
    ASSERT_EQ(again.kernel_ms.size(), 5u);
    expect_phases_within(again, repeated_ms);
    EXPECT_GE(repeated_ms, 300.0);
    EXPECT_TRUE(bitwise_equal(once, repeated));
    EXPECT_TRUE(bitwise_equal(run_cpu(plan, {&x, &dy}), repeated));
}

// Runs of varying operators, dtypes and sizes through OverlappedRuns, each started before the previous one
// finishes (the batch worker's order), on fresh random inputs with poisoned outputs: every result has the CPU
// backend's bits. Sizes go up and down, so each frame's buffers are reused, grown and reused again.
void expect_overlapped_runs_match_cpu(Backend& backend) {
    SeededRng rng;
    OverlappedRuns& overlapped = *backend.overlapped_runs();
    struct Job {
        Plan plan;
        std::vector<Tensor> inputs;
        Tensor output;
    };
    const auto relu = [](DType type, const Shape& shape) { return ReluGradPlan{type, shape, element_count(shape)}; };
    const auto clip = [](const Shape& shape) {  // [-1, 1] in float32 bits
        return ClipGradPlan{DType::f32, shape, element_count(shape), 0xBF800000u, 0x3F800000u};
    };
    const std::vector<Plan> plans = {relu(DType::f32, {100003}),
                                     relu(DType::f16, {17}),
                                     clip({3, 70000}),
                                     relu(DType::f32, {5, 7}),
                                     clip({262144}),
                                     relu(DType::f16, {300001}),
                                     relu(DType::f32, {1000}),
                                     relu(DType::f32, {1 << 18}),
                                     clip({9})};
    std::vector<Job> jobs;
    for (const Plan& plan : plans) {
        Job job{plan, {}, Tensor(plan_output_info(plan))};
        for (const TensorInfo& info : plan_input_infos(plan))
            job.inputs.push_back(random_tensor(info.dtype, info.shape, rng));
        poison(job.output);
        jobs.push_back(std::move(job));
    }
    const auto pointers = [](const Job& job) {
        std::vector<const Tensor*> p;
        for (const Tensor& t : job.inputs) p.push_back(&t);
        return p;
    };
    for (size_t k = 0; k <= jobs.size(); ++k) {
        if (k < jobs.size()) {
            ASSERT_TRUE(overlapped.can_start(jobs[k].plan, pointers(jobs[k]), jobs[k].output, RunOptions{1}));
            overlapped.start(jobs[k].plan, pointers(jobs[k]), jobs[k].output);
        }
        if (k == 0) continue;
        const ExecutionStats stats = overlapped.finish();
        Job& done = jobs[k - 1];
        ASSERT_EQ(stats.kernel_ms.size(), 1u);
        EXPECT_TRUE(bitwise_equal(run_cpu(done.plan, pointers(done)), done.output)) << describe(done.plan);
    }
    // Nothing started: run() works as before; with a run started it is a caller's bug.
    expect_gpu_matches_cpu(jobs[0].plan, pointers(jobs[0]), backend);
    overlapped.start(jobs[1].plan, pointers(jobs[1]), jobs[1].output);
    EXPECT_THROW(run_on(backend, jobs[2].plan, pointers(jobs[2])), std::logic_error);
    overlapped.finish();
    EXPECT_THROW(overlapped.finish(), std::logic_error);
}

TEST(GpuDeviceOverlappedRuns, MatchTheCpuInMappedMemory) { expect_overlapped_runs_match_cpu(gpu()); }

TEST(GpuDeviceOverlappedRuns, MatchTheCpuThroughStagingBuffers) {
    expect_overlapped_runs_match_cpu(gpu_with_staging());
}

TEST(GpuDeviceOverlappedRuns, OnlyForSingleRunsOfSmallTensors) {
    auto& overlapped = dynamic_cast<OverlappedRuns&>(gpu());
    const Shape small = {1 << 10}, large = {(16 << 20) / 4 + 1};  // one float32 more than a staging chunk
    const Tensor x(TensorInfo{DType::f32, small}), big(TensorInfo{DType::f32, large});
    const Plan plan = ReluGradPlan{DType::f32, small, element_count(small)};
    const Plan big_plan = ReluGradPlan{DType::f32, large, element_count(large)};
    EXPECT_TRUE(overlapped.can_start(plan, std::vector<const Tensor*>{&x, &x}, x, RunOptions{1}));
    EXPECT_FALSE(overlapped.can_start(plan, std::vector<const Tensor*>{&x, &x}, x, RunOptions{2}));
    EXPECT_FALSE(overlapped.can_start(big_plan, std::vector<const Tensor*>{&big, &big}, big, RunOptions{1}));
}

}  // namespace
}  // namespace dmlgrad::testing
