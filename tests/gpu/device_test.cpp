// Device listing, device choice, statistics and repeated timing.
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
    // No Vulkan device at all is a failure here, not a skip: CI has lavapipe.
    const std::vector<GpuDeviceInfo> devices = list_gpu_devices();
    ASSERT_FALSE(devices.empty());
    for (size_t i = 0; i < devices.size(); ++i) {
        const GpuDeviceInfo& d = devices[i];
        EXPECT_EQ(d.index, int(i));
        EXPECT_FALSE(d.name.empty());
        EXPECT_TRUE(d.type == "discrete" || d.type == "integrated" || d.type == "virtual" || d.type == "cpu" ||
                    d.type == "other")
            << d.type;
        EXPECT_FALSE(d.driver.empty());
        EXPECT_TRUE(std::regex_match(d.api_version, std::regex(R"(\d+\.\d+\.\d+)"))) << d.api_version;
        EXPECT_GT(d.memory_bytes, 0u);
        std::cout << "[ device   ] " << d.index << ": " << d.name << " (" << d.type << "), " << d.driver << ", Vulkan "
                  << d.api_version << ", " << d.memory_bytes / (1 << 20) << " MiB\n";
    }
}

TEST(GpuDevices, ExplicitIndexSelectsThatDevice) {
    const std::vector<GpuDeviceInfo> devices = list_gpu_devices();
    ASSERT_FALSE(devices.empty());
    auto backend = make_gpu_backend(0);
    EXPECT_EQ(backend->kind(), "gpu");
    EXPECT_EQ(backend->device_name(), devices[0].name);
}

TEST(GpuDevices, BadIndexIsAUsageError) {
    const int count = int(list_gpu_devices().size());
    EXPECT_THROW(make_gpu_backend(count), UsageError);
    EXPECT_THROW(make_gpu_backend(-1), UsageError);
    try {
        make_gpu_backend(count + 5);
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
    vk::VulkanOptions options;
    options.warmup_seconds = 0.3;
    auto start = std::chrono::steady_clock::now();
    auto backend = vk::make_vulkan_backend(std::nullopt, options);
    const double construction_ms = ms_since(start);
    ExecutionStats first, again;
    const Tensor once = run_on(*backend, plan, {&x, &dy}, &first, 1);
    ASSERT_EQ(first.kernel_ms.size(), 1u);
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

}  // namespace
}  // namespace dmlgrad::testing
