// Resample grad's fractions (kernels/resample_grad_fractions.hlsl: linear float32 plans whose rows read their own dY
// row, where axis 3's tap tables are a large share of the bytes) against the CPU reference, bit for bit, on fresh
// random inputs with the output poisoned: downsamples and upsamples of one row (columns without taps, columns of
// more taps than the written-out steps), the DirectML and PyTorch rules, a few rows, special values and raw
// bits (NaN sums, denormal values and tiny weights made again on bits); the tables by hand; the plans whose taps
// the tables cannot give, which keep the other kernels.
#include <gtest/gtest.h>

#include <bit>
#include <string>
#include <vector>

#include "gpu/dispatch.h"
#include "gpu/ops/resample_fractions.h"
#include "gpu/ops/resample_geometry.h"
#include "gpu_testing.h"
#include "ops/resample_grad.h"
#include "resample_plans.h"

namespace dmlgrad::testing {
namespace {

// Columns of at most two dY columns in their range (downsamples), and of more (upsamples): 2 or 4 steps written out.
const std::string kFractions = "resample_grad_linear_f32_fractions_steps2";
const std::string kFractionsUp = "resample_grad_linear_f32_fractions_steps4";

// Linear with DirectML's parameters on the last axis of dX (`rows` rows of `columns`): dY's row is `dy_columns` long,
// the scale as the sweep gives it (dY / dX in float32), input pixel offset `offset`, output offset its negation
// (-0.5: half-pixel; 0: asymmetric).
ResampleGradPlan row_plan(int64_t rows, int64_t columns, int64_t dy_columns, float offset, DType type = DType::f32) {
    const float scale = float(dy_columns) / float(columns);
    ResampleGradDesc desc{
        {rows, columns}, InterpolationMode::linear, RoundingDirection::decreasing, {1.0f, scale}, {0.0f, offset},
        {0.0f, -offset}};
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, {rows, dy_columns}}});
}

ResampleGradPlan framework_plan(const Shape& dx, const Shape& dy, ResampleFramework framework) {
    ResampleGradDesc desc;
    desc.output_sizes = dx;
    desc.framework = framework;
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {DType::f32, dy}});
}

void expect_fractions_match_cpu(const ResampleGradPlan& plan, std::mt19937_64& rng,
                                const std::string& kernel = kFractions) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(kernel_of(plan), kernel);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng, /*specials=*/false));
    expect_gpu_matches_cpu(plan, random_bits(DType::f32, plan.dy_shape, rng));
}

TEST(ResampleFractionsGpu, TakeLinearF32PlansWhoseAxis3TablesAreALargeShareOfTheBytes) {
    EXPECT_EQ(kernel_of(row_plan(1, 50000, 30000, 0)), kFractions);        // 1-D, 0.6x, asymmetric
    EXPECT_EQ(kernel_of(row_plan(1, 50000, 30000, -0.5f)), kFractions);    // half-pixel
    EXPECT_EQ(kernel_of(row_plan(1, 20000, 54000, -0.5f)), kFractionsUp);  // an upsample, 2.7x
    EXPECT_EQ(kernel_of(row_plan(1, 20000, 25000, 0)), kFractionsUp);      // 1.25x: some ranges of 3
    EXPECT_EQ(kernel_of(row_plan(3, 50000, 30000, 0)), kFractions);        // a few rows
    // Many rows share a small table (the strips or runs), fp16 keeps its kernels, and so do tensors beyond a binding.
    EXPECT_NE(kernel_of(row_plan(500, 300, 180, 0)), kFractions);
    EXPECT_NE(kernel_of(row_plan(500, 300, 180, 0)), kFractionsUp);
    EXPECT_NE(kernel_of(row_plan(1, 50000, 30000, 0, DType::f16)), "resample_grad_linear_f16_fractions");
    EXPECT_EQ(kernel_of(row_plan(4, 50000, 30000, 0), DeviceLimits{700 << 10, 16, 65535}), "resample_grad_linear_f32");
    // A resampled outer axis: rows read other dY rows.
    EXPECT_NE(
        kernel_of(framework_plan({1, 1, 4, 20000}, {1, 1, 6, 12000}, TorchInterpolate{TorchMode::bilinear, false, {}})),
        kFractions);
}

// Asymmetric 0.6x, dX 5 from dY 3: dY o samples dX o / 0.6 = 0, 1.67, 3.33: lower columns 0, 1 and 3, dY 0 of one
// tap (fraction 0).
TEST(ResampleFractionsGpu, TablesByHand) {
    const ResampleGradPlan plan = row_plan(1, 5, 3, 0);
    const resample_gpu::View view = resample_gpu::make_view(plan);
    const std::optional<std::vector<uint32_t>> tables = resample_gpu::fraction_tables(view);
    ASSERT_TRUE(tables);
    // Bounds: bounds[i + 1] is the first dY column of lower column i or more; then the fractions.
    const AxisTaps& taps = plan.axes[1];
    ASSERT_EQ(taps.begin, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));  // every column one tap: 0, 1, 1, 2, 2
    const uint32_t f1 = std::bit_cast<uint32_t>(taps.weight[2]);       // dX 2's tap: dY 1's upper weight
    const uint32_t f2 = std::bit_cast<uint32_t>(taps.weight[4]);       // dX 4's: dY 2's
    EXPECT_EQ(*tables, (std::vector<uint32_t>{0, 0, 1, 2, 2, 3, 3, 0, f1, f2}));
    EXPECT_EQ(std::bit_cast<uint32_t>(taps.weight[1]), std::bit_cast<uint32_t>(1.0f - taps.weight[2]));
}

// Taps the tables cannot give: a lower weight other than 1 - f, one tap of a weight other than 1, taps that are not
// neighbours, lower columns that decrease, a dY column of no tap.
TEST(ResampleFractionsGpu, RefuseTapsOfAnotherForm) {
    auto view_of = [](AxisTaps& taps, uint64_t dx, uint64_t dy) {
        resample_gpu::View view;
        view[3] = {dx, dy, false, &taps};
        return view;
    };
    // dX 3, dY 2: dY 0 takes dX 0 (weight 1), dY 1 dX 1 and 2 (0.75, 0.25).
    AxisTaps good{{0, 1, 2, 3}, {0, 1, 1}, {1.0f, 0.75f, 0.25f}};
    EXPECT_EQ(resample_gpu::fraction_tables(view_of(good, 3, 2)),
              (std::vector<uint32_t>{0, 0, 1, 2, 2, 0, std::bit_cast<uint32_t>(0.25f)}));
    AxisTaps sum_not_one{{0, 1, 2, 3}, {0, 1, 1}, {1.0f, 0.75f, 0.3f}};
    EXPECT_FALSE(resample_gpu::fraction_tables(view_of(sum_not_one, 3, 2)));
    AxisTaps single_not_one{{0, 1, 2, 3}, {0, 1, 1}, {0.5f, 0.75f, 0.25f}};
    EXPECT_FALSE(resample_gpu::fraction_tables(view_of(single_not_one, 3, 2)));
    AxisTaps not_neighbours{{0, 1, 2, 3}, {1, 0, 1}, {0.75f, 1.0f, 0.25f}};  // dY 1 takes dX 0 and 2
    EXPECT_FALSE(resample_gpu::fraction_tables(view_of(not_neighbours, 3, 2)));
    AxisTaps decreasing{{0, 1, 2, 2}, {1, 0}, {1.0f, 1.0f}};  // dY 0 takes dX 1, dY 1 dX 0
    EXPECT_FALSE(resample_gpu::fraction_tables(view_of(decreasing, 3, 2)));
    AxisTaps untouched{{0, 1, 1, 1}, {0}, {1.0f}};  // dY 1 takes no dX column
    EXPECT_FALSE(resample_gpu::fraction_tables(view_of(untouched, 3, 2)));
}

TEST(ResampleFractionsGpu, MatchCpuOnDownsamplesAndUpsamplesOfOneRow) {
    SeededRng rng;
    expect_fractions_match_cpu(row_plan(1, 9001, 5401, 0), rng);                     // 0.6x: 0 to 2 taps
    expect_fractions_match_cpu(row_plan(1, 9001, 5401, -0.5f), rng);                 // half-pixel
    expect_fractions_match_cpu(row_plan(1, 12007, 3001, -0.5f), rng);                // 0.25x: columns without taps
    expect_fractions_match_cpu(row_plan(1, 3001, 8113, 0), rng, kFractionsUp);       // 2.7x: past the 4 steps
    expect_fractions_match_cpu(row_plan(1, 2003, 13001, -0.5f), rng, kFractionsUp);  // 6.5x: about 13 taps
    expect_fractions_match_cpu(row_plan(1, 8009, 10011, 0), rng, kFractionsUp);      // 1.25x: 1 to 3
}

TEST(ResampleFractionsGpu, MatchCpuOnRowsAndOnThePyTorchRule) {
    SeededRng rng;
    expect_fractions_match_cpu(row_plan(3, 4099, 2459, 0), rng);                    // rows read their own dY row
    expect_fractions_match_cpu(row_plan(2, 4096, 6001, -0.5f), rng, kFractionsUp);  // rows of a power of two
    expect_fractions_match_cpu(
        framework_plan({1, 1, 7001}, {1, 1, 4201}, TorchInterpolate{TorchMode::linear, false, {}}), rng);
    expect_fractions_match_cpu(
        framework_plan({1, 1, 3001}, {1, 1, 7919}, TorchInterpolate{TorchMode::linear, /*align_corners=*/true, {}}),
        rng, kFractionsUp);
}

// Values near the smallest normals (terms and sums that would be denormal, which the GPU may flush): those elements
// are made again on bits (tiny_limit), as NaN sums are (random_bits above).
TEST(ResampleFractionsGpu, MatchCpuOnTinyValues) {
    SeededRng rng;
    const ResampleGradPlan plan = row_plan(1, 6007, 3607, 0);
    ASSERT_EQ(kernel_of(plan), kFractions);
    Tensor dy = random_tensor(DType::f32, plan.dy_shape, rng, /*specials=*/false);
    float* v = dy.as<float>();
    for (uint64_t k = 0; k < dy.elements(); ++k) v[k] *= k % 3 == 0 ? 0x1p-125f : 0x1p-100f;  // some sums denormal
    expect_gpu_matches_cpu(plan, dy);
}

// The tap tables of a 1-D resample are about twice its data: where they outgrow a binding (about 640 KiB here) and
// the fractions' tables do not (about 135 KiB), the plan still runs, on the fractions.
TEST(ResampleFractionsGpu, RunWhereTheTapTablesWouldNotFitABinding) {
    SeededRng rng;
    const ResampleGradPlan plan = row_plan(1, 50000, 30000, 0);
    constexpr DeviceLimits kSmallBindings{400 << 10, 16, 65535};
    ASSERT_EQ(kernel_of(plan, kSmallBindings), kFractions);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu_with_limits(kSmallBindings));
}

TEST(ResampleFractionsGpu, ManyWorkgroupsInSeveralDispatchesAndThroughStaging) {
    SeededRng rng;
    const ResampleGradPlan plan = row_plan(1, 30011, 18007, 0);
    ASSERT_EQ(kernel_of(plan, kFewGroups), kFractions);
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu_with_limits(kFewGroups));
    expect_gpu_matches_cpu(plan, random_tensor(DType::f32, plan.dy_shape, rng), gpu_with_staging());
}

}  // namespace
}  // namespace dmlgrad::testing
