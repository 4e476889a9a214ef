// Resample grad fp16: NaNs (payloads, inf - inf), infinities and subnormal halves on every nearest kernel path
// (the block kernel, strips and the walk, each on its fast and its general code, the planes and the chunked runs) and
// on the linear strips' own paths (dY rows walked once for the four strip rows, one-tap sums made once for equal taps),
// bit for bit against the CPU. These sums are the ones a kernel makes again (NaN sums on bits, subnormal halves
// converted by hand): on the H100 the fp16 strips once wrote 0 for every sum made again, which lavapipe never showed
// (see run_strip in kernels/resample_grad_strips_f16.hlsl). The dY values are dense in specials, so every element
// slot of a thread (the eight sums of a strip, both halves of a word, the four of a block) meets them, next to
// elements that need no redo.
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"

namespace dmlgrad::testing {
namespace {

constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};

// One fp16 path: the plan's dX shape, per-axis scales and offsets, the kernel it must take, and the mode.
struct Path {
    const char* name;
    Shape dx;
    std::vector<float> scales;
    float in_offset;  // every axis's input pixel offset (the output's is its negation)
    DeviceLimits limits;
    std::string kernel;
    InterpolationMode mode = InterpolationMode::nearest;
};

ResampleGradPlan plan_of(const Path& p) {
    ResampleGradDesc desc{p.dx, p.mode, RoundingDirection::decreasing, p.scales, {}, {}};
    Shape dy;
    for (size_t a = 0; a < p.dx.size(); ++a) {
        dy.push_back(int64_t(float(p.dx[a]) * p.scales[a]));
        desc.input_pixel_offsets.push_back(p.in_offset);
        desc.output_pixel_offsets.push_back(-p.in_offset);
    }
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {DType::f16, dy}});
}

const Path kPaths[] = {
    // Integer factors, offsets 0: the block kernel, rows of whole uint4s and rows of any length.
    {"block, aligned rows", {2, 3, 8, 16}, {1, 1, 2, 2}, 0.0f, kRoomy, "resample_grad_block_x2_f16"},
    {"block, any rows", {3, 5, 7, 13}, {1, 1, 2, 3}, 0.0f, kRoomy, "resample_grad_block_x3_f16"},
    // Half-pixel offsets (DirectML's default): the general gather. Even rows in one chunk take strips, odd rows
    // the walk, rows shorter than the walk's the planes, split tensors runs; 2x has at most FEW_TAPS taps per axis (the
    // fast code), 5x on axis 2 more (the
    // strips' general code), 1.5x on the outer axes two taps (the walk: its fast code, and the general code of a
    // last thread of fewer elements).
    {"strips, fast", {4, 15, 10}, {1, 2, 2}, -0.5f, kRoomy, "resample_grad_nearest_f16_strips"},
    {"strips, general", {3, 4, 8, 8}, {1, 1, 5, 2.5f}, -0.5f, kRoomy, "resample_grad_nearest_f16_strips"},
    {"planes, short rows", {3, 4, 8, 5}, {1, 1, 5, 1.5f}, -0.5f, kRoomy, "resample_grad_nearest_f16_planes"},
    {"walk, fast", {4, 15, 11}, {1, 2, 2}, -0.5f, kRoomy, "resample_grad_nearest_f16_walk_words_ahead"},
    {"walk, last thread",
     {3, 4, 5, 11},
     {1.5f, 1.5f, 1.5f, 1.5f},
     -0.5f,
     kRoomy,
     "resample_grad_nearest_f16_walk_words_ahead"},
    {"walk, several taps",
     {3, 4, 8, 9},
     {1.5f, 1.5f, 1.5f, 1.5f},
     -0.5f,
     kRoomy,
     "resample_grad_nearest_f16_walk_words_ahead"},
    {"runs, chunked", {2, 3, 19, 21}, {1, 1, 2, 2}, -0.5f, kTinyLimits, "resample_grad_nearest_f16"},
    // Linear, half-pixel: strips that walk their dY rows once (2x, 1.5x; partial strips of 3 rows; dX of 2^20
    // elements and more, as smaller take the word walk), and one-tap strips (0.5x: both halves of a word and rows in
    // pairs from one sum).
    {"linear strips, 2x",
     {4, 1023, 258},
     {1, 2, 2},
     -0.5f,
     kRoomy,
     "resample_grad_linear_f16_strips",
     InterpolationMode::linear},
    {"linear strips, 1.5x",
     {1, 4, 511, 514},
     {1, 1, 1.5f, 1.5f},
     -0.5f,
     kRoomy,
     "resample_grad_linear_f16_strips",
     InterpolationMode::linear},
    {"linear strips, one tap",
     {2, 3, 16, 12},
     {1, 1, 0.5f, 0.5f},
     -0.5f,
     kRoomy,
     "resample_grad_linear_f16_strips_one_tap",
     InterpolationMode::linear},
};

// A quarter of the halves special (NaNs with payloads, infinities, subnormals, -0), the rest normal.
Tensor dense_specials(const Shape& shape, std::mt19937_64& rng) {
    const uint64_t specials[] = {0x7E00, 0x7C01, 0xFE55, 0x7C00, 0xFC00, 0x0001, 0x8001, 0x03FF, 0x8200, 0x8000};
    std::vector<uint64_t> bits(element_count(shape));
    for (uint64_t& b : bits)
        b = rng() % 4 == 0 ? specials[rng() % std::size(specials)]
                           : ((rng() % 2) << 15) | ((1 + rng() % 24) << 10) | (rng() % 0x400);  // 2^-14 .. 2^9
    return tensor_from_bits(DType::f16, shape, bits);
}

TEST(ResampleSpecialsGpu, EveryFp16PathMatchesCpuOnNansInfinitiesAndSubnormals) {
    SeededRng rng;
    for (const Path& path : kPaths) {
        SCOPED_TRACE(path.name);
        const ResampleGradPlan plan = plan_of(path);
        SCOPED_TRACE(describe(plan));
        ASSERT_EQ(build_resample_grad_program(plan, path.limits).kernel, path.kernel);
        for (int round = 0; round < 3; ++round)
            expect_gpu_matches_cpu(plan, dense_specials(plan.dy_shape, rng), gpu_with_limits(path.limits));
    }
}

}  // namespace
}  // namespace dmlgrad::testing
