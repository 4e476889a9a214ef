// Tensors beyond the device's per-binding limit (lavapipe: 128 MiB) at the device's real limits: the window
// paths that small-limit tests cover in miniature, here as the device sees them.
#include <gtest/gtest.h>

#include "gpu_testing.h"

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
    const Tensor expected = run_cpu(plan, {&x, &dy});
    EXPECT_TRUE(bitwise_equal(expected, run_on(gpu(), plan, {&x, &dy})));
    // The discrete-GPU path: 16 MiB staging chunks, the ring of four wrapping around both ways.
    EXPECT_TRUE(bitwise_equal(expected, run_on(gpu_with_staging(), plan, {&x, &dy})));
}

TEST(LargeTensorGpu, SliceGradDxBeyond128MiB) {
    // dX 144 MB, dY bound whole: dX windows.
    SeededRng rng;
    const SliceGradPlan plan{DType::f32, {3, 3001, 4001}, {2, 1501, 1334}, {2, 0, 4000}, {-1, 2, -3}};
    const Tensor dy = random_bits(DType::f32, plan.dy_shape, rng);
    ASSERT_GT(element_count(plan.dx_shape) * 4, 128 * kMiB);
    EXPECT_TRUE(bitwise_equal(run_cpu(plan, {&dy}), run_on(gpu(), plan, {&dy})));
}

TEST(LargeTensorGpu, SliceGradDyBeyond128MiB) {
    // dY 150 MB: box chunks, each binding its own dY window; reversed outer and inner axes.
    SeededRng rng;
    const SliceGradPlan plan{DType::u64, {3, 2500, 2501}, {3, 2500, 2500}, {2, 0, 2500}, {-1, 1, -1}};
    const Tensor dy = random_bits(DType::u64, plan.dy_shape, rng);
    ASSERT_GT(element_count(plan.dy_shape) * 8, 128 * kMiB);
    EXPECT_TRUE(bitwise_equal(run_cpu(plan, {&dy}), run_on(gpu(), plan, {&dy})));
}

}  // namespace
}  // namespace dmlgrad::testing
