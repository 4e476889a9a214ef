// Kernel bandwidth on the cases of GPU.md's peer table. Disabled by default (it is a measurement, not a check);
// on the GPU machine: dmlgrad_gpu_tests --gtest_also_run_disabled_tests --gtest_filter='GpuBench.*'
// DMLGRAD_BENCH_SCALE=k divides the sizes by 2^k (to try it on lavapipe).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "gpu_testing.h"

namespace dmlgrad::testing {
namespace {

int64_t scaled(int64_t n) {
    const char* s = std::getenv("DMLGRAD_BENCH_SCALE");
    return std::max<int64_t>(1, n >> (s ? std::atoi(s) : 0));
}

void bench(const char* name, const Plan& plan, const std::vector<const Tensor*>& inputs, bool check) {
    ExecutionStats stats;
    const Tensor out = run_on(gpu(), plan, inputs, &stats, 20);
    std::vector<double> ms = stats.kernel_ms;
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("[ bench    ] %-36s median %7.3f ms (min %7.3f, max %7.3f) %7.1f GB/s  setup %.0f, upload %.0f, "
                "download %.0f ms\n",
                name, median, ms.front(), ms.back(), double(plan_min_bytes(plan)) / (median * 1e6), stats.setup_ms,
                stats.upload_ms, stats.download_ms);
    if (check) {
        EXPECT_TRUE(bitwise_equal(run_cpu(plan, inputs), out));
    }
}

TEST(GpuBench, DISABLED_Bandwidth) {
    std::mt19937_64 rng(1);
    std::printf("[ bench    ] device: %s\n", gpu().device_name().c_str());
    const Shape flat = {scaled(int64_t(1) << 28)};
    for (DType t : {DType::f32, DType::f16}) {
        const Tensor x = random_bits(t, flat, rng), dy = random_bits(t, flat, rng);
        bench(t == DType::f32 ? "relu-grad f32 256M" : "relu-grad f16 256M",
              ReluGradPlan{t, flat, element_count(flat)}, {&x, &dy}, true);
        bench(t == DType::f32 ? "clip-grad f32 256M" : "clip-grad f16 256M",
              ClipGradPlan{t, flat, element_count(flat), t == DType::f32 ? 0xBF800000u : 0xBC00u,
                           t == DType::f32 ? 0x3F800000u : 0x3C00u},
              {&x, &dy}, true);
    }
    const int64_t n = scaled(32);
    const SliceGradPlan slice{DType::f32, {n, 64, 256, 256}, {n, 64, 128, 128}, {0, 0, 0, 0}, {1, 1, 2, 2}};
    const Tensor dy = random_bits(DType::f32, slice.dy_shape, rng);
    bench("slice-grad f32 [:, :, ::2, ::2]", slice, {&dy}, true);
    const SliceGradPlan neg{DType::f32, {n, 64, 256, 256}, {n, 64, 128, 128}, {0, 0, 255, 255}, {1, 1, -2, -2}};
    bench("slice-grad f32 [:, :, ::-2, ::-2]", neg, {&dy}, true);
    const SliceGradPlan crop{DType::f16, {n, 64, 256, 256}, {n, 64, 250, 250}, {0, 0, 3, 3}, {1, 1, 1, 1}};
    const Tensor dyh = random_bits(DType::f16, crop.dy_shape, rng);
    bench("slice-grad f16 [:, :, 3:253, 3:253]", crop, {&dyh}, true);
    const SliceGradPlan crop8{DType::u8, {n, 64, 256, 256}, {n, 64, 250, 250}, {0, 0, 3, 3}, {1, 1, 1, 1}};
    const Tensor dy8 = random_bits(DType::u8, crop8.dy_shape, rng);
    bench("slice-grad u8 [:, :, 3:253, 3:253]", crop8, {&dy8}, true);
    // References: the kernel as a plain copy (dY == dX) and as a plain zero fill (dY one element).
    const SliceGradPlan copy{DType::f32, {n * 64 * 256 * 256}, {n * 64 * 256 * 256}, {0}, {1}};
    const Tensor dyc = random_bits(DType::f32, copy.dy_shape, rng);
    bench("slice-grad f32 as a 512 MiB copy", copy, {&dyc}, false);
    const SliceGradPlan fill{DType::f32, {n * 64 * 256 * 256}, {1}, {7}, {1}};
    const Tensor dy1 = random_bits(DType::f32, fill.dy_shape, rng);
    bench("slice-grad f32 as a 512 MiB zero fill", fill, {&dy1}, false);
    // Where the time of strided slices goes: the inner stride alone, the outer stride alone.
    const SliceGradPlan flat2{DType::f32, {n * 64 * 256 * 256}, {n * 32 * 256 * 256}, {0}, {2}};
    const Tensor dyf = random_bits(DType::f32, flat2.dy_shape, rng);
    bench("slice-grad f32 rank 1 ::2", flat2, {&dyf}, false);
    const SliceGradPlan rows2{DType::f32, {n, 64, 256, 256}, {n, 64, 128, 256}, {0, 0, 0, 0}, {1, 1, 2, 1}};
    bench("slice-grad f32 [:, :, ::2, :]", rows2, {&dyf}, false);
    const SliceGradPlan cols2{DType::f32, {n, 64, 256, 256}, {n, 64, 256, 128}, {0, 0, 0, 0}, {1, 1, 1, 2}};
    bench("slice-grad f32 [:, :, :, ::2]", cols2, {&dyf}, false);
    // Clip again, after the slices: is a slow median a clock effect?
    const Tensor x = random_bits(DType::f32, flat, rng), dy2 = random_bits(DType::f32, flat, rng);
    bench("clip-grad f32 256M again", ClipGradPlan{DType::f32, flat, element_count(flat), 0xBF800000u, 0x3F800000u},
          {&x, &dy2}, false);
}

}  // namespace
}  // namespace dmlgrad::testing
