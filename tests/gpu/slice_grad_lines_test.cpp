// Slice grad's lines kernel (kernels/slice_grad_lines.hlsl, rows of any length): bit for bit against the CPU on random
// slices of every element size, steps -4..4 on every axis, odd row lengths, offsets, ranks 1-5; and the dispatch's
// choice of it from the geometry.
#include <gtest/gtest.h>

#include "gpu_testing.h"
#include "ops/slice_grad.h"
#include "support/documented_dtypes.h"

namespace dmlgrad::testing {
namespace {

constexpr DeviceLimits kOneBinding{uint64_t(1) << 27, 256, 65535};  // dY and dX bound whole

SliceGradPlan slice_plan(DType type, const Shape& dx, const Shape& dy, const std::vector<int64_t>& offsets,
                         const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
    return plan_slice_grad({dx, offsets, sizes, strides}, {"--input-gradient", "dy.npy", {type, dy}});
}

std::string chosen_kernel(const SliceGradPlan& plan, const DeviceLimits& limits = kOneBinding) {
    return build_slice_grad_program(plan, limits).kernel;
}

// A random slice of rank `rank` whose innermost axis (after the plan merges axes) has a step other than 1 and
// `row_elements` to `row_elements` + 9 elements, not whole uint4s (its window at least row_elements - 11 long, so that
// at least 2 are reached), outer axes of 1-5 with
// steps -4..4, every offset, dY sometimes shorter than the window allows.
SliceGradPlan random_lines_slice(DType type, size_t rank, int64_t row_elements, std::mt19937_64& rng) {
    Shape dx, dy;
    std::vector<int64_t> offsets, sizes, strides;
    for (size_t a = 0; a < rank; ++a) {
        const bool inner = a + 1 == rank;
        int64_t n = inner ? row_elements + int64_t(rng() % 9) : 1 + int64_t(rng() % 5);
        if (inner && n % (16 / int64_t(dtype_size(type))) == 0) ++n;  // not whole uint4s (those take the rows kernel)
        const int64_t offset = int64_t(rng() % uint64_t(inner ? std::min<int64_t>(n, 9) : n));
        const int64_t size = inner ? n - offset - int64_t(rng() % 4) : 1 + int64_t(rng() % uint64_t(n - offset));
        int64_t step = 1 + int64_t(rng() % 4);
        if (inner && step == 1) step = 2 + int64_t(rng() % 3);
        if (inner && step == 2 && dtype_size(type) <= 2) step = 3;  // (the element kernel's word-wise case)
        if (rng() % 2) step = -step;
        const int64_t reachable = 1 + (size - 1) / (step < 0 ? -step : step);
        int64_t k = rng() % 4 == 0 ? 1 + int64_t(rng() % uint64_t(reachable)) : reachable;
        if (inner) k = std::max<int64_t>(k, 2);  // one dY element would make the step 1 (simplified_axes)
        dx.push_back(n), dy.push_back(k), offsets.push_back(offset), sizes.push_back(size), strides.push_back(step);
    }
    return slice_plan(type, dx, dy, offsets, sizes, strides);
}

class SliceGradLines : public ::testing::TestWithParam<DType> {};

TEST_P(SliceGradLines, MatchesCpuOnRandomSlicesOfRanks1To5) {
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    for (size_t rank = 1; rank <= 5; ++rank)
        for (int64_t row : {2 * per_uint4 + 16, 5 * per_uint4 + 19, 37 * per_uint4 + 17}) {
            const SliceGradPlan plan = random_lines_slice(t, rank, row, rng);
            ASSERT_EQ(chosen_kernel(plan), "slice_grad_lines_b" + std::to_string(8 * dtype_size(t)));
            expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
        }
}

TEST_P(SliceGradLines, MatchesCpuOnEveryStepAndOffsetOfOddRows) {
    // Rows of odd length (a uint4 runs into the next row), every step -4..4 but 1 on the rows, every offset of the
    // first uint4; the rows' slice flipped or not; dY shorter than the window allows; a last row ending inside
    // a uint4.
    const DType t = GetParam();
    const int64_t width = 2 * 16 / int64_t(dtype_size(t)) + 15;  // 2 uint4s and 15 elements: 2+ reached
    SeededRng rng;
    for (int64_t step : {-4, -3, -2, -1, 2, 3, 4}) {
        if (step == 2 && dtype_size(t) <= 2) continue;  // the element kernel's word-wise case (ChosenByTheGeometry)
        for (int64_t offset = 0; offset < 9; offset += 2) {
            const int64_t size = width - offset, reach = 1 + (size - 1) / (step < 0 ? -step : step);
            for (int64_t k : {reach, std::max<int64_t>(2, reach - 2)}) {  // (one dY element: step 1)
                const SliceGradPlan plan = slice_plan(t, {5, width}, {2, k}, {1, offset}, {4, size}, {-2, step});
                ASSERT_EQ(chosen_kernel(plan), "slice_grad_lines_b" + std::to_string(8 * dtype_size(t)));
                expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu());
            }
        }
    }
}

TEST_P(SliceGradLines, MatchesCpuSplitIntoDispatches) {
    // kFewGroups: 3 workgroups a dispatch, so the thread base of each is pushed; long rows (several threads each).
    const DType t = GetParam();
    SeededRng rng;
    const SliceGradPlan plan = slice_plan(t, {3, 41, 301}, {2, 14, 100}, {0, 1, 1}, {3, 40, 300}, {2, 3, -3});
    ASSERT_EQ(chosen_kernel(plan, kFewGroups).rfind("slice_grad_lines_b", 0), 0u);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
}

INSTANTIATE_TEST_SUITE_P(AllSizes, SliceGradLines, ::testing::Values(DType::u8, DType::f16, DType::f32, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(SliceGradLines, ChosenByTheGeometry) {
    // Rows not whole uint4s, at least two uint4s long, a step other than 1 on them, dY and dX bound whole.
    EXPECT_EQ(chosen_kernel(slice_plan(DType::i16, {4, 255}, {2, 85}, {0, 1}, {4, 254}, {3, 3})),
              "slice_grad_lines_b16");
    EXPECT_EQ(chosen_kernel(slice_plan(DType::u8, {8, 63}, {4, 32}, {0, 0}, {8, 63}, {2, -2})), "slice_grad_lines_b8");
    // Rows of whole uint4s keep the rows layout on Vulkan.
    EXPECT_EQ(chosen_kernel(slice_plan(DType::u8, {8, 64}, {4, 32}, {0, 0}, {8, 64}, {2, 2})), "slice_grad_rows_b8");
    // A step of 1 on the rows (runs of dY), rows shorter than two uint4s, dY beyond a binding: the element kernel.
    EXPECT_EQ(chosen_kernel(slice_plan(DType::i16, {4, 255}, {2, 250}, {0, 1}, {4, 250}, {3, 1})), "slice_grad_b16");
    EXPECT_EQ(chosen_kernel(slice_plan(DType::f32, {9, 7}, {3, 3}, {0, 0}, {9, 7}, {3, 3})), "slice_grad_b32");
    // A step of 2 on 8- and 16-bit rows (the element kernel spreads whole words); on 32-bit rows the lines kernel.
    EXPECT_EQ(chosen_kernel(slice_plan(DType::u8, {8, 63}, {4, 32}, {0, 0}, {8, 63}, {2, 2})), "slice_grad_b8");
    EXPECT_EQ(chosen_kernel(slice_plan(DType::f32, {8, 63}, {4, 32}, {0, 0}, {8, 63}, {2, 2})), "slice_grad_lines_b32");
    const SliceGradPlan big_dy = slice_plan(DType::u8, {8, 4099}, {8, 2050}, {0, 0}, {8, 4099}, {1, 2});
    EXPECT_EQ(chosen_kernel(big_dy, kTinyLimits), "slice_grad_b8");
}

}  // namespace
}  // namespace dmlgrad::testing
