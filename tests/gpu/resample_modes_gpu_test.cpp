// Resample grad with the frameworks' tap rules (PyTorch's float32 products, ONNX's exact coordinates) on the GPU:
// bit for bit equal to the CPU reference on random sizes, scale factors and modes, fp32 and fp16, including the
// small-limit split path. The GPU kernels take any tap tables whose per-dX lists are contiguous and move forward
// in dY; these are tables no DirectML parameters produce.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_testing.h"
#include "ops/resample_grad.h"

namespace dmlgrad::testing {
namespace {

constexpr DType kTypes[] = {DType::f32, DType::f16};

ResampleGradPlan plan_of(DType type, const Shape& dy_shape, const Shape& dx_shape, ResampleFramework framework) {
    ResampleGradDesc desc;
    desc.output_sizes = dx_shape;
    desc.framework = std::move(framework);
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, dy_shape}});
}

void expect_matches_cpu(Backend& backend, const ResampleGradPlan& plan, std::mt19937_64& rng) {
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng), backend);
}

int64_t size_in(std::mt19937_64& rng, int64_t max) { return 1 + int64_t(rng() % uint64_t(max)); }

// lavapipe ends every loop of an invocation once it has run 65535 iterations in all, so an fp16 thread's two
// elements and their exact recomputation (a NaN sum) must stay below that: dY shrinks, the axis that downscales
// most first, until every dX element has at most kMaxTaps taps (at most 2 ceil(dY / dX) + 2 per axis).
constexpr int64_t kMaxTaps = 8192;

int64_t taps_bound(const Shape& dy, const Shape& dx, size_t& widest) {
    int64_t taps = 1, most = 0;
    for (size_t a = 0; a < dy.size(); ++a) {
        const int64_t per_axis = 2 * ((dy[a] + dx[a] - 1) / dx[a]) + 2;
        taps *= per_axis;
        if (per_axis > most) most = per_axis, widest = a;
    }
    return taps;
}

void fit_lavapipe_loops(Shape& dy, const Shape& dx) {
    size_t widest = 0;
    while (taps_bound(dy, dx, widest) > kMaxTaps && dy[widest] > 1) dy[widest] = (dy[widest] + 1) / 2;
}

class ResampleModesGpu : public ::testing::TestWithParam<DType> {};

TEST_P(ResampleModesGpu, TorchModesMatchCpu) {
    SeededRng rng;
    const double factors[] = {0.3, 0.5, 0.7, 1.2, 1.5, 1.7, 2.0, 2.5, 3.0, 1.0 / 3.0};
    for (TorchMode mode : {TorchMode::nearest, TorchMode::nearest_exact, TorchMode::linear, TorchMode::bilinear})
        for (int trial = 0; trial < 12; ++trial) {
            const size_t rank = mode == TorchMode::linear ? 3 : mode == TorchMode::bilinear ? 4 : 3 + trial % 2;
            TorchInterpolate torch{mode, torch_interpolation(mode) == InterpolationMode::linear && trial % 3 == 0, {}};
            Shape dx = {size_in(rng, 3), size_in(rng, 4)}, dy = dx;
            for (size_t s = 2; s < rank; ++s) {
                dx.push_back(size_in(rng, 40));
                if (trial % 2) {  // PyTorch's output size: floor(size * factor), at least 1
                    double factor = factors[rng() % std::size(factors)];
                    if (std::floor(double(dx.back()) * factor) < 1) factor = 2.0;
                    torch.scale_factors.push_back(factor);
                    dy.push_back(int64_t(std::floor(double(dx.back()) * factor)));
                } else {
                    dy.push_back(size_in(rng, 40));
                }
            }
            expect_matches_cpu(gpu(), plan_of(GetParam(), dy, dx, torch), rng);
        }
}

TEST_P(ResampleModesGpu, OnnxModesMatchCpu) {
    SeededRng rng;
    const OnnxCoordinateMode coordinates[] = {
        OnnxCoordinateMode::half_pixel,           OnnxCoordinateMode::pytorch_half_pixel,
        OnnxCoordinateMode::align_corners,        OnnxCoordinateMode::asymmetric,
        OnnxCoordinateMode::tf_half_pixel_for_nn, OnnxCoordinateMode::half_pixel_symmetric};
    const OnnxNearestMode nearest[] = {OnnxNearestMode::round_prefer_floor, OnnxNearestMode::round_prefer_ceil,
                                       OnnxNearestMode::floor, OnnxNearestMode::ceil};
    for (OnnxCoordinateMode c : coordinates)
        for (int trial = 0; trial < 6; ++trial) {
            const OnnxResize onnx{trial % 3 == 0 ? InterpolationMode::linear : InterpolationMode::nearest, c,
                                  nearest[rng() % std::size(nearest)]};
            const size_t rank = 1 + size_t(trial) % 4;
            Shape dx, dy;
            for (size_t d = 0; d < rank; ++d) {
                dx.push_back(size_in(rng, 24));
                dy.push_back(rank >= 3 && d < 2 && rng() % 2 ? dx.back() : size_in(rng, 24));
            }
            fit_lavapipe_loops(dy, dx);
            expect_matches_cpu(gpu(), plan_of(GetParam(), dy, dx, onnx), rng);
        }
}

TEST_P(ResampleModesGpu, SplitPathMatchesCpu) {
    // 4 KiB bindings: the dX range is cut into chunks, each with its own dY window from the tables.
    SeededRng rng;
    Backend& tiny = gpu_with_limits(kTinyLimits);
    const TorchInterpolate bilinear{TorchMode::bilinear, false, {}}, nearest{TorchMode::nearest, false, {}};
    expect_matches_cpu(tiny, plan_of(GetParam(), {2, 3, 30, 46}, {2, 3, 14, 21}, bilinear), rng);
    expect_matches_cpu(tiny, plan_of(GetParam(), {1, 2, 50}, {1, 2, 7}, nearest), rng);
    expect_matches_cpu(tiny,
                       plan_of(GetParam(), {40, 33}, {17, 9},
                               OnnxResize{InterpolationMode::linear, OnnxCoordinateMode::align_corners,
                                          OnnxNearestMode::round_prefer_floor}),
                       rng);
}

INSTANTIATE_TEST_SUITE_P(BothTypes, ResampleModesGpu, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace dmlgrad::testing
