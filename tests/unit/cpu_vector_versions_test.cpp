// The CPU reference's AVX2 and baseline versions of its vector loops (cpu/vector_dispatch.h) give the same bits:
// max-pool and resample grads on random geometries, with special values, run both ways.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cpu/kernels.h"
#include "cpu/vector_dispatch.h"
#include "ops/maxpool_grad.h"
#include "ops/resample_grad.h"
#include "support/tensor_testing.h"

namespace dmlgrad {
namespace {

using testing::bitwise_equal;
using testing::poison;
using testing::random_tensor;

// The CPU's choice of version for the life of a test, restored after.
class WideVectors {
public:
    explicit WideVectors(bool allowed) : before_(cpu::wide_vectors_allowed().exchange(allowed)) {}
    ~WideVectors() { cpu::wide_vectors_allowed() = before_; }

private:
    bool before_;
};

bool cpu_has_avx2() {
#if defined(__x86_64__)
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

template <class Run>
Tensor run_version(bool wide, const TensorInfo& info, Run run) {
    WideVectors choice(wide);
    Tensor dx(info);
    poison(dx);
    run(dx);
    return dx;
}

int64_t between(std::mt19937_64& rng, int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
}

// Rows of 20 to 70 elements: long enough for the vector loops and the regular runs, with ragged ends.
TEST(CpuVectorVersions, MaxPoolGradSameBits) {
    if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2: the baseline version is the only one";
    testing::SeededRng rng;
    for (int round = 0; round < 24; ++round) {
        const size_t rank = round % 3 == 2 ? 3 : 2;
        const DType type = round % 2 ? DType::f16 : DType::f32;
        Shape x_shape{2, 3};
        std::vector<int64_t> window, strides, padding, dilations;
        for (size_t a = 0; a < rank; ++a) {
            window.push_back(between(rng, 1, 4));
            strides.push_back(between(rng, 1, 3));
            dilations.push_back(between(rng, 1, 2));
            padding.push_back(between(rng, 0, (window.back() - 1) * dilations.back() / 2));
            const int64_t extent = (window.back() - 1) * dilations.back() + 1;  // every window fits the input
            x_shape.push_back(std::max(extent, a + 1 == rank ? between(rng, 20, 70) : between(rng, 4, 12)));
        }
        Shape dy_shape{2, 3};
        for (size_t a = 0; a < rank; ++a)
            dy_shape.push_back((x_shape[a + 2] + 2 * padding[a] - (window[a] - 1) * dilations[a] - 1) / strides[a] + 1);
        const Tensor x = random_tensor(type, x_shape, rng), dy = random_tensor(type, dy_shape, rng);
        const MaxPoolGradPlan plan =
            plan_maxpool_grad({window, strides, padding, padding, dilations}, {"--input", "x.npy", x.info},
                              {"--input-gradient", "dy.npy", dy.info});
        const auto run = [&](Tensor& dx) { cpu::maxpool_grad(plan, x, dy, dx); };
        EXPECT_TRUE(bitwise_equal(run_version(false, x.info, run), run_version(true, x.info, run)))
            << "round " << round;
    }
}

TEST(CpuVectorVersions, ResampleGradSameBits) {
    if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2: the baseline version is the only one";
    testing::SeededRng rng;
    const float scales[] = {0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f};
    for (int round = 0; round < 28; ++round) {
        const DType type = round % 2 ? DType::f16 : DType::f32;
        const InterpolationMode mode = round % 4 < 2 ? InterpolationMode::linear : InterpolationMode::nearest;
        const float sh = scales[between(rng, 0, 6)], sw = scales[between(rng, 0, 6)];
        const Shape dx_shape{2, 3, between(rng, 4, 20), between(rng, 20, 70)};
        const Shape dy_shape{2, 3, std::max<int64_t>(1, int64_t(float(dx_shape[2]) * sh)),
                             std::max<int64_t>(1, int64_t(float(dx_shape[3]) * sw))};
        const Tensor dy = random_tensor(type, dy_shape, rng);
        const ResampleGradDesc desc{
            dx_shape, mode, RoundingDirection::decreasing, {1, 1, sh, sw}, {0, 0, -0.5f, -0.5f}, {0, 0, 0.5f, 0.5f}};
        const ResampleGradPlan plan = plan_resample_grad(desc, {"--input-gradient", "dy.npy", dy.info});
        const TensorInfo dx_info{type, dx_shape};
        const auto run = [&](Tensor& dx) { cpu::resample_grad(plan, dy, dx); };
        EXPECT_TRUE(bitwise_equal(run_version(false, dx_info, run), run_version(true, dx_info, run)))
            << "round " << round << ", scales " << sh << " x " << sw;
    }
}

}  // namespace
}  // namespace dmlgrad
