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

TEST(GpuRun, ReportsStatisticsAndOneTimePerRepeat) {
    vk::VulkanOptions options;
    options.warmup_seconds = 0.3;
    auto backend = vk::make_vulkan_backend(std::nullopt, options);
    SeededRng rng;
    const Shape shape = {100003};
    const Tensor x = random_tensor(DType::f16, shape, rng), dy = random_tensor(DType::f16, shape, rng);
    const Plan plan = ReluGradPlan{DType::f16, shape, element_count(shape)};

    ExecutionStats first, again;
    const Tensor once = run_on(*backend, plan, {&x, &dy}, &first, 1);
    ASSERT_EQ(first.kernel_ms.size(), 1u);
    EXPECT_GT(first.setup_ms, 0.0);  // instance, device and pipeline
    EXPECT_GE(first.upload_ms, 0.0);
    EXPECT_GE(first.download_ms, 0.0);
    EXPECT_GE(first.kernel_ms[0], 0.0);

    const auto start = std::chrono::steady_clock::now();
    const Tensor repeated = run_on(*backend, plan, {&x, &dy}, &again, 5);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(again.kernel_ms.size(), 5u);
    for (double ms : again.kernel_ms) EXPECT_GT(ms, 0.0);
    EXPECT_GE(elapsed, 0.3);  // the warm-up ran
    EXPECT_LT(again.setup_ms, first.setup_ms);  // the device and pipeline were reused
    EXPECT_TRUE(bitwise_equal(once, repeated));
    EXPECT_TRUE(bitwise_equal(run_cpu(plan, {&x, &dy}), repeated));
}

}  // namespace
}  // namespace dmlgrad::testing
