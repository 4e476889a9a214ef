// Tensors beyond the device's per-binding limit (lavapipe: 128 MiB) at the device's real limits: the window
// paths that small-limit tests cover in miniature, here as the device sees them.
#include <gtest/gtest.h>

#include "gpu_testing.h"
#include "ops/slice_grad.h"

namespace dmlgrad::testing {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20;

TEST(LargeTensorGpu, ReluGradBeyond128MiB) {
    SeededRng rng;
    const Shape shape = {34000001};  // 136 MB per tensor, odd count
    const Tensor x = random_bits(DType::f32, shape, rng);
    const Tensor dy = random_bits(DType::f32, shape, rng);
    ASSERT_GT(x.bytes(), 128 * kMiB);
    const Plan plan = ReluGradPlan{DType::f32, shape, element_count(shape)};
    expect_gpu_matches_cpu(plan, x, dy);
    // The discrete-GPU path: 16 MiB staging chunks, the ring of four wrapping around both ways.
    expect_gpu_matches_cpu(plan, x, dy, gpu_with_staging());
}

TEST(LargeTensorGpu, SliceGradDxBeyond128MiB) {
    // dX 144 MB, dY bound whole: dX windows.
    SeededRng rng;
    const SliceGradPlan plan = plan_slice_grad({{3, 3001, 4001}, {1, 0, 0}, {2, 3001, 4001}, {-1, 2, -3}},
                                               {"--input-gradient", "dy.npy", {DType::f32, {2, 1501, 1334}}});
    const Tensor dy = random_bits(DType::f32, plan.dy_shape, rng);
    ASSERT_GT(element_count(plan.dx_shape) * 4, 128 * kMiB);
    expect_gpu_matches_cpu(plan, dy);
}

TEST(LargeTensorGpu, SliceGradDyBeyond128MiB) {
    // dY 150 MB: box chunks, each binding its own dY window; reversed outer and inner axes.
    SeededRng rng;
    const SliceGradPlan plan = plan_slice_grad({{3, 2500, 2501}, {0, 0, 1}, {3, 2500, 2500}, {-1, 1, -1}},
                                               {"--input-gradient", "dy.npy", {DType::u64, {3, 2500, 2500}}});
    const Tensor dy = random_bits(DType::u64, plan.dy_shape, rng);
    ASSERT_GT(element_count(plan.dy_shape) * 8, 128 * kMiB);
    expect_gpu_matches_cpu(plan, dy);
}

}  // namespace
}  // namespace dmlgrad::testing
