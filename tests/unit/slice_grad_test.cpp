// Slice grad: docs/OPERATORS.md section 3 worked examples, every validation rule, and the CPU kernel against a naive
// scatter on random windows (negative and mixed strides, every dtype, ranks 1-8).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/kernels.h"
#include "ops/slice_grad.h"
#include "support/documented_dtypes.h"
#include "support/tensor_testing.h"
#include "support/validation_testing.h"

namespace dmlgrad {
namespace {

using testing::bitwise_equal;
using testing::expect_usage_error;
using testing::operand;
using testing::poison;
using testing::random_shape;
using testing::random_tensor;
using testing::tensor_from;

Operand gradient(DType type, Shape shape) { return Operand{"--input-gradient", "dy.npy", TensorInfo{type, shape}}; }

Tensor run_slice_grad(const SliceGradDesc& desc, const Tensor& dy) {
    const SliceGradPlan plan = plan_slice_grad(desc, Operand{"--input-gradient", "dy.npy", dy.info});
    Tensor dx(TensorInfo{plan.dtype, plan.dx_shape});
    poison(dx);
    cpu::slice_grad(plan, dy, dx);
    return dx;
}

void expect_plan_rejected(const SliceGradDesc& desc, const Operand& dy, const std::vector<std::string>& parts) {
    expect_usage_error([&] { plan_slice_grad(desc, dy); }, parts);
}

// ---- worked examples (docs/OPERATORS.md 3.3) ----

TEST(SliceGradExamples, S1SeedWindowOfFullSize) {
    Tensor dy = tensor_from(DType::f32, {2, 2}, {1, 2, 3, 4});
    const Tensor expected = tensor_from(DType::f32, {4, 4}, {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0});
    EXPECT_TRUE(bitwise_equal(expected, run_slice_grad({{4, 4}, {0, 0}, {4, 4}, {2, 2}}, dy)));
}

TEST(SliceGradExamples, S2SeedWindowOfSizeThree) {
    Tensor dy = tensor_from(DType::f32, {2, 2}, {1, 2, 3, 4});
    const Tensor expected = tensor_from(DType::f32, {4, 4}, {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0});
    EXPECT_TRUE(bitwise_equal(expected, run_slice_grad({{4, 4}, {0, 0}, {3, 3}, {2, 2}}, dy)));
}

TEST(SliceGradExamples, S3NegativeStride) {
    Tensor dy = tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor expected = tensor_from(DType::f32, {1, 1, 4, 4}, {0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 1, 0, 2});
    EXPECT_TRUE(bitwise_equal(expected, run_slice_grad({{1, 1, 4, 4}, {0, 0, 0, 1}, {1, 1, 4, 3}, {1, 1, -2, 2}}, dy)));
}

TEST(SliceGradExamples, S4GradientShorterThanTheWindow) {
    Tensor dy = tensor_from(DType::f32, {2}, {7, 9});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, {10}, {0, 0, 7, 0, 0, 9, 0, 0, 0, 0}),
                              run_slice_grad({{10}, {2}, {7}, {3}}, dy)));
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::f32, {10}, {0, 0, 0, 0, 0, 9, 0, 0, 7, 0}),
                              run_slice_grad({{10}, {2}, {7}, {-3}}, dy)));
}

// Size moves the start of a negative stride (docs/OPERATORS.md 3.1): {4} visits 3, 1 and {3} visits 2, 0.
TEST(SliceGradExamples, WindowSizeMovesTheStartOfANegativeStride) {
    Tensor dy = tensor_from(DType::i32, {2}, {5, 6});
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::i32, {4}, {0, 6, 0, 5}), run_slice_grad({{4}, {0}, {4}, {-2}}, dy)));
    EXPECT_TRUE(bitwise_equal(tensor_from(DType::i32, {4}, {6, 0, 5, 0}), run_slice_grad({{4}, {0}, {3}, {-2}}, dy)));
}

TEST(SliceGradExamples, CopiesBitsUnchanged) {
    const std::vector<uint32_t> dy_bits = {0x7FC12345, 0x80000000, 0x00000001, 0xFF800000};
    Tensor dy(TensorInfo{DType::f32, {4}});
    std::memcpy(dy.as<uint32_t>(), dy_bits.data(), 16);
    const Tensor dx = run_slice_grad({{6}, {1}, {4}, {1}}, dy);
    const std::vector<uint32_t> want = {0, 0x7FC12345, 0x80000000, 0x00000001, 0xFF800000, 0};
    Tensor expected(TensorInfo{DType::f32, {6}});
    std::memcpy(expected.as<uint32_t>(), want.data(), 24);
    EXPECT_TRUE(bitwise_equal(expected, dx));
}

// ---- the gather's axes (simplified_axes) ----

// The plan's gather axes as (dx, dy, start, stride), outermost first.
std::vector<std::array<int64_t, 4>> gather_axes_of(const SliceGradDesc& desc, const Shape& dy) {
    std::vector<std::array<int64_t, 4>> axes;
    for (const SliceAxis& a : plan_slice_grad(desc, gradient(DType::u8, dy)).gather_axes)
        axes.push_back({a.dx, a.dy, a.start, a.stride});
    return axes;
}

TEST(SliceGradGatherAxes, AnAxisTakingOneElementMergesWithTheAxisOutsideIt) {
    // dX 10x5x3, [9::-4, :, 1]: elements 15 r + 3 c + 1 for r = 9, 5, 1: rows of 15 on a grid of step 3 from 1.
    EXPECT_EQ(gather_axes_of({{10, 5, 3}, {1, 0, 1}, {9, 5, 1}, {-4, 1, 1}}, {3, 5, 1}),
              (std::vector<std::array<int64_t, 4>>{{10, 3, 9, -4}, {15, 5, 1, 3}}));
    // dX 5x4, [::-2, 2]: elements 18, 10, 2 (4 r + 2 for r = 4, 2, 0), one axis of step -8.
    EXPECT_EQ(gather_axes_of({{5, 4}, {0, 2}, {5, 1}, {-2, 1}}, {3, 1}),
              (std::vector<std::array<int64_t, 4>>{{20, 3, 18, -8}}));
}

TEST(SliceGradGatherAxes, AnAxisTakingOneElementMergesWithTheAxisInsideIt) {
    // dX 4x7x6, [2, ::3, 1::2]: elements 84 + 18 j + 1 + 2 i, rows 14 + 3 j of 6 (14 = 2 x 7).
    EXPECT_EQ(gather_axes_of({{4, 7, 6}, {2, 0, 1}, {1, 7, 5}, {1, 3, 2}}, {1, 3, 3}),
              (std::vector<std::array<int64_t, 4>>{{28, 3, 14, 3}, {6, 3, 1, 2}}));
}

TEST(SliceGradGatherAxes, AnAxisOfWholePeriodsMergesWithAStrideOneAxisOutsideIt) {
    // dX 7x9, [2:6, 1::3]: elements 9 r + 1 + 3 c for r = 2..5, c = 0..2: one grid of step 3 from 19, 12 long.
    EXPECT_EQ(gather_axes_of({{7, 9}, {2, 1}, {4, 8}, {1, 3}}, {4, 3}),
              (std::vector<std::array<int64_t, 4>>{{63, 12, 19, 3}}));
    // dX 3x6x10, [:, :, ::2]: the rows merge, then with the axis copied whole outside them: 90 elements, step 2.
    EXPECT_EQ(gather_axes_of({{3, 6, 10}, {0, 0, 0}, {3, 6, 10}, {1, 1, 2}}, {3, 6, 5}),
              (std::vector<std::array<int64_t, 4>>{{180, 90, 0, 2}}));
}

TEST(SliceGradGatherAxes, AxesThatAreNotWholePeriodsStayApart) {
    // A step that does not divide the row ([:, ::4] of rows of 9); a start past the step ([:, 4::3]); a period short
    // of the row's end (dY 2 of [:, ::3] on rows of 9); a negative step; an outer axis of step 2.
    for (const auto& [desc, dy] : std::vector<std::pair<SliceGradDesc, Shape>>{
             {{{5, 9}, {0, 0}, {5, 9}, {1, 4}}, {5, 3}},
             {{{5, 9}, {0, 4}, {5, 5}, {1, 3}}, {5, 2}},
             {{{5, 9}, {0, 0}, {5, 9}, {1, 3}}, {5, 2}},
             {{{5, 9}, {0, 0}, {5, 9}, {1, -3}}, {5, 3}},
             {{{6, 9}, {0, 0}, {6, 9}, {2, 3}}, {3, 3}},
         })
        EXPECT_EQ(gather_axes_of(desc, dy).size(), 2u) << "step " << desc.window_strides[1] << ", dY " << dy[1];
}

TEST(SliceGradGatherAxes, StridedAxesTakingSeveralElementsStayApart) {
    // dX 6x8, [::2, 1::3]: rows 0, 2, 4 of elements 1, 4, 7; no single grid holds them.
    EXPECT_EQ(gather_axes_of({{6, 8}, {0, 1}, {5, 7}, {2, 3}}, {3, 3}),
              (std::vector<std::array<int64_t, 4>>{{6, 3, 0, 2}, {8, 3, 1, 3}}));
}

// ---- validation (docs/OPERATORS.md 3.2 and section 0) ----

TEST(SliceGradValidation, PlanHoldsStartAndStride) {
    const SliceGradPlan plan = plan_slice_grad({{10, 4}, {2, 0}, {7, 4}, {-3, 1}}, gradient(DType::u16, {2, 4}));
    EXPECT_EQ(plan.dtype, DType::u16);
    EXPECT_EQ(plan.dx_shape, (Shape{10, 4}));
    EXPECT_EQ(plan.dy_shape, (Shape{2, 4}));
    EXPECT_EQ(plan.start, (std::vector<int64_t>{8, 0}));
    EXPECT_EQ(plan.stride, (std::vector<int64_t>{-3, 1}));
}

TEST(SliceGradValidation, AcceptsEveryTypeAndTheLimitsOfEachRule) {
    for (DType type : testing::kSliceGradDocumentedTypes)
        EXPECT_NO_THROW(plan_slice_grad({{4}, {0}, {4}, {1}}, gradient(type, {4})));
    // Window ending exactly at dX's end, dY exactly as long as allowed, the extreme 32-bit strides.
    EXPECT_NO_THROW(plan_slice_grad({{10}, {3}, {7}, {2}}, gradient(DType::f32, {4})));
    EXPECT_NO_THROW(plan_slice_grad({{10}, {3}, {7}, {INT32_MIN}}, gradient(DType::f32, {1})));
    EXPECT_NO_THROW(plan_slice_grad({{10}, {3}, {7}, {INT32_MAX}}, gradient(DType::f32, {1})));
    for (size_t rank = 1; rank <= 8; ++rank) {
        const std::vector<int64_t> ones(rank, 1), zeros(rank, 0);
        EXPECT_NO_THROW(plan_slice_grad({ones, zeros, ones, ones}, gradient(DType::f32, Shape(rank, 1))));
    }
}

TEST(SliceGradValidation, RejectsScalarGradient) {
    expect_plan_rejected({{}, {}, {}, {}}, gradient(DType::f32, {}), {"--input-gradient dy.npy", "rank 0"});
}

TEST(SliceGradValidation, RejectsRankNine) {
    const std::vector<int64_t> ones(9, 1), zeros(9, 0);
    expect_plan_rejected({ones, zeros, ones, ones}, gradient(DType::f32, Shape(9, 1)),
                         {"--input-gradient dy.npy", "rank 9"});
}

TEST(SliceGradValidation, RejectsZeroSizedGradientAxis) {
    expect_plan_rejected({{4, 4}, {0, 0}, {4, 4}, {1, 1}}, gradient(DType::f32, {2, 0}),
                         {"--input-gradient dy.npy", "size 0"});
}

TEST(SliceGradValidation, RejectsOutputSizesOfAnotherRank) {
    expect_plan_rejected({{4}, {0, 0}, {2, 2}, {1, 1}}, gradient(DType::f32, {2, 2}), {"--output-sizes", "1 value"});
}

TEST(SliceGradValidation, RejectsZeroOutputSize) {
    expect_plan_rejected({{4, 0}, {0, 0}, {2, 2}, {1, 1}}, gradient(DType::f32, {2, 2}), {"--output-sizes", "size 0"});
}

TEST(SliceGradValidation, RejectsNegativeOutputSize) {
    expect_plan_rejected({{4, -3}, {0, 0}, {2, 2}, {1, 1}}, gradient(DType::f32, {2, 2}), {"--output-sizes", "-3"});
}

TEST(SliceGradValidation, RejectsOutputOfMoreThan2To32Minus1Elements) {
    expect_plan_rejected({{65536, 65536}, {0, 0}, {1, 1}, {1, 1}}, gradient(DType::f32, {1, 1}),
                         {"--output-sizes", "2^32"});
}

TEST(SliceGradValidation, RejectsOffsetsOfAnotherRank) {
    expect_plan_rejected({{4, 4}, {0}, {2, 2}, {1, 1}}, gradient(DType::f32, {2, 2}),
                         {"--input-window-offsets", "1 value"});
}

TEST(SliceGradValidation, RejectsSizesOfAnotherRank) {
    expect_plan_rejected({{4, 4}, {0, 0}, {2, 2, 2}, {1, 1}}, gradient(DType::f32, {2, 2}),
                         {"--input-window-sizes", "3 value"});
}

TEST(SliceGradValidation, RejectsStridesOfAnotherRank) {
    expect_plan_rejected({{4, 4}, {0, 0}, {2, 2}, {}}, gradient(DType::f32, {2, 2}),
                         {"--input-window-strides", "0 value"});
}

TEST(SliceGradValidation, RejectsNegativeOffset) {
    expect_plan_rejected({{4, 4}, {0, -1}, {2, 2}, {1, 1}}, gradient(DType::f32, {2, 2}),
                         {"--input-window-offsets", "axis 1", "-1", "negative"});
}

TEST(SliceGradValidation, RejectsEmptyWindow) {
    expect_plan_rejected({{4, 4}, {0, 0}, {0, 2}, {1, 1}}, gradient(DType::f32, {1, 2}),
                         {"--input-window-sizes", "axis 0", "size 0"});
}

TEST(SliceGradValidation, RejectsWindowPastTheOutputsEnd) {
    expect_plan_rejected({{4, 10}, {0, 4}, {2, 7}, {1, 1}}, gradient(DType::f32, {2, 2}),
                         {"--input-window-sizes", "axis 1", "offset 4", "size 7", "10"});
}

// Offset + Size computed naively would overflow 64 bits and look small.
TEST(SliceGradValidation, RejectsHugeOffsetWithoutOverflow) {
    const int64_t huge = std::numeric_limits<int64_t>::max();
    expect_plan_rejected({{4}, {huge}, {2}, {1}}, gradient(DType::f32, {2}), {"--input-window-sizes", "axis 0"});
    expect_plan_rejected({{4}, {2}, {huge}, {1}}, gradient(DType::f32, {2}), {"--input-window-sizes", "axis 0"});
}

TEST(SliceGradValidation, RejectsZeroStride) {
    expect_plan_rejected({{4, 4}, {0, 0}, {2, 2}, {1, 0}}, gradient(DType::f32, {2, 1}),
                         {"--input-window-strides", "axis 1", "stride 0"});
}

TEST(SliceGradValidation, RejectsStrideBeyond32Bits) {
    expect_plan_rejected({{4}, {0}, {4}, {int64_t(INT32_MAX) + 1}}, gradient(DType::f32, {1}),
                         {"--input-window-strides", "axis 0", "2147483648"});
    expect_plan_rejected({{4}, {0}, {4}, {std::numeric_limits<int64_t>::min()}}, gradient(DType::f32, {1}),
                         {"--input-window-strides", "axis 0"});
}

TEST(SliceGradValidation, RejectsGradientLongerThanTheWindowAllows) {
    // Size 7, stride 3 reaches 1 + 6/3 = 3 elements.
    expect_plan_rejected({{10}, {2}, {7}, {3}}, gradient(DType::f32, {4}),
                         {"--input-gradient dy.npy", "axis 0", "at most 3"});
    expect_plan_rejected({{10}, {2}, {7}, {-3}}, gradient(DType::f32, {4}),
                         {"--input-gradient dy.npy", "axis 0", "at most 3"});
    expect_plan_rejected({{3, 10}, {0, 0}, {3, 10}, {1, 1}}, gradient(DType::f32, {3, 11}),
                         {"--input-gradient dy.npy", "axis 1", "at most 10"});
}

// ---- the kernel against a naive scatter ----

// Deliberately plain and driven from dY's side: zero dX, then put every dY element at its coordinate.
Tensor naive_slice_grad(const SliceGradDesc& desc, const Tensor& dy) {
    Tensor dx(TensorInfo{dy.dtype(), desc.output_sizes});
    std::memset(dx.buffer.data(), 0, dx.bytes());
    const size_t rank = dy.shape().size();
    const size_t size = dtype_size(dy.dtype());
    for (uint64_t k = 0; k < dy.elements(); ++k) {
        uint64_t rest = k, target = 0, scale = 1;
        for (size_t a = rank; a-- > 0;) {
            const int64_t coordinate = int64_t(rest % uint64_t(dy.shape()[a]));
            rest /= uint64_t(dy.shape()[a]);
            const int64_t stride = desc.window_strides[a];
            const int64_t first =
                stride > 0 ? desc.window_offsets[a] : desc.window_offsets[a] + desc.window_sizes[a] - 1;
            target += uint64_t(first + stride * coordinate) * scale;
            scale *= uint64_t(desc.output_sizes[a]);
        }
        std::memcpy(dx.buffer.data() + target * size, dy.buffer.data() + k * size, size);
    }
    return dx;
}

// One axis of a random window. Now and then a full axis walked in order, which the kernel folds into the axis
// outside it, and now and then a stride longer than the window.
struct AxisWindow {
    int64_t dx_size, offset, size, stride, dy_size;
};

AxisWindow random_axis(std::mt19937_64& rng, int64_t dx_size) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    if (pick(0, 3) == 0) return {dx_size, 0, dx_size, 1, dx_size};
    AxisWindow w{dx_size, 0, 0, 0, 0};
    w.offset = pick(0, dx_size - 1);
    w.size = pick(1, dx_size - w.offset);
    w.stride = pick(0, 5) == 0 ? pick(w.size, w.size + 100) : pick(1, 4);
    if (pick(0, 1)) w.stride = -w.stride;
    const int64_t reachable = 1 + (w.size - 1) / std::abs(w.stride);
    w.dy_size = pick(0, 1) ? reachable : pick(1, reachable);
    return w;
}

// A window over dX `shape`, and a random dY of `type` for it.
std::pair<SliceGradDesc, Tensor> random_case(DType type, const Shape& shape, std::mt19937_64& rng) {
    SliceGradDesc desc;
    Shape dy_shape;
    for (int64_t extent : shape) {
        const AxisWindow w = random_axis(rng, extent);
        desc.output_sizes.push_back(w.dx_size);
        desc.window_offsets.push_back(w.offset);
        desc.window_sizes.push_back(w.size);
        desc.window_strides.push_back(w.stride);
        dy_shape.push_back(w.dy_size);
    }
    return {desc, random_tensor(type, dy_shape, rng)};
}

std::string describe(const SliceGradDesc& d) {
    return fmt::format("--output-sizes {} --input-window-offsets {} --input-window-sizes {} --input-window-strides {}",
                       fmt::join(d.output_sizes, ","), fmt::join(d.window_offsets, ","), fmt::join(d.window_sizes, ","),
                       fmt::join(d.window_strides, ","));
}

void check_against_naive(DType type, const Shape& dx_shape, std::mt19937_64& rng) {
    const auto [desc, dy] = random_case(type, dx_shape, rng);
    SCOPED_TRACE(::testing::Message() << dtype_name(type) << " dY " << shape_string(dy.shape()) << " "
                                      << describe(desc));
    EXPECT_TRUE(bitwise_equal(naive_slice_grad(desc, dy), run_slice_grad(desc, dy)));
}

TEST(SliceGradRandom, MatchesNaiveScatterForEveryTypeAndRank) {
    testing::SeededRng rng;
    for (DType type : testing::kSliceGradDocumentedTypes)
        for (size_t rank = 1; rank <= 8; ++rank)
            for (int repeat = 0; repeat < 6; ++repeat) check_against_naive(type, random_shape(rng, rank, 4000), rng);
}

// Rows longer than the kernel's scatter block, and tensors split between threads in the middle of a row.
TEST(SliceGradRandom, MatchesNaiveScatterOnLongRowsAcrossThreads) {
    testing::SeededRng rng;
    for (DType type : {DType::u8, DType::f16, DType::f32, DType::f64})
        for (const Shape& shape : {Shape{300007}, Shape{3, 70001}, Shape{50001, 5}, Shape{7, 3, 9001}})
            for (int repeat = 0; repeat < 2; ++repeat) check_against_naive(type, shape, rng);
}

// Rows of whole periods merged into one grid across rows (simplified_axes: one axis, or two where the outermost has a
// step other than 1), against the scatter axis by axis.
TEST(SliceGradRandom, MatchesNaiveScatterWhereRowsAreWholePeriods) {
    struct Case {
        SliceGradDesc desc;
        Shape dy;
        size_t axes;
    };
    const std::vector<Case> cases = {
        {{{7, 9}, {2, 1}, {4, 8}, {1, 3}}, {4, 3}, 1},
        {{{3, 6, 10}, {0, 0, 0}, {3, 6, 10}, {1, 1, 2}}, {3, 6, 5}, 1},
        {{{4, 5, 12}, {1, 0, 3}, {3, 5, 9}, {-1, 1, 4}}, {3, 5, 3}, 2},
        {{{1001, 15}, {3, 2}, {997, 13}, {1, 5}}, {997, 3}, 1},
    };
    testing::SeededRng rng;
    for (DType type : {DType::u8, DType::f16, DType::f32, DType::f64})
        for (const Case& c : cases) {
            SCOPED_TRACE(::testing::Message() << dtype_name(type) << " " << describe(c.desc));
            EXPECT_EQ(plan_slice_grad(c.desc, gradient(type, c.dy)).gather_axes.size(), c.axes);
            const Tensor dy = random_tensor(type, c.dy, rng);
            EXPECT_TRUE(bitwise_equal(naive_slice_grad(c.desc, dy), run_slice_grad(c.desc, dy)));
        }
}

}  // namespace
}  // namespace dmlgrad
