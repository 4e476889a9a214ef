// Resample grad: GPU against the CPU reference, bit for bit, fp32 and fp16, ranks 1-4, nearest (both rounding
// directions) and linear on 1-4 resampled axes, scales up, down and non-integer, offsets that clamp at both ends,
// dY sizes that do not match the scale, special values, denormals (the kernel's exact path), the split paths on
// small limits and one real run past lavapipe's 128 MiB binding limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/kernel_registry.h"
#include "gpu/ops/resample_geometry.h"
#include "gpu/ops/resample_grad_kernels.h"
#include "gpu_testing.h"
#include "interface/resample_grad.h"
#include "ops/resample_grad.h"
#include "support/documented_dtypes.h"

namespace dmlgrad::testing {
namespace {

constexpr auto kNearest = InterpolationMode::nearest;
constexpr auto kLinear = InterpolationMode::linear;
constexpr auto kDecreasing = RoundingDirection::decreasing;
constexpr auto kIncreasing = RoundingDirection::increasing;
constexpr auto kTypes = kResampleGradDocumentedTypes;

ResampleGradPlan plan_of(DType type, const Shape& dy_shape, const ResampleGradDesc& desc) {
    return plan_resample_grad(desc, {"--input-gradient", "dy.npy", {type, dy_shape}});
}

// random_tensor's values: +-0, +-inf, NaN and denormals among them. A data NaN and the default NaN of an
// inf - inf meet in sums, where the first NaN of a sum is kept on both sides (core/nan_sum.h).
Tensor special_values(DType type, const Shape& shape, std::mt19937_64& rng) { return random_tensor(type, shape, rng); }

// Special values for `plan`'s dY, on `backend` and on the CPU.
void check_random_dy(Backend& backend, const ResampleGradPlan& plan, std::mt19937_64& rng) {
    expect_gpu_matches_cpu(plan, special_values(plan.dtype, plan.dy_shape, rng), backend);
}

// A random resample of rank `rank` with about `target` dX elements or fewer: per axis an identity (scale 1,
// half-pixel), or a scale from a list with half-pixel, zero or random offsets (multiples of 1/4 up to +-2, which
// push samples past both ends), and a dY size that sometimes ignores the scale.
ResampleGradPlan random_resample(DType type, size_t rank, uint64_t target, std::mt19937_64& rng) {
    static constexpr float kScales[] = {2.0f, 1.5f, 2.0f / 3.0f, 7.0f / 5.0f, 0.5f, 3.0f, 1.0f, 0.25f};
    const double per_axis = std::pow(double(target), 1.0 / double(rank));
    ResampleGradDesc desc;
    desc.mode = rng() % 2 ? kLinear : kNearest;
    desc.rounding = rng() % 2 ? kIncreasing : kDecreasing;
    Shape dy;
    for (size_t a = 0; a < rank; ++a) {
        const int64_t n = 1 + int64_t(rng() % uint64_t(std::max(1.0, 1.5 * per_axis)));
        float scale = 1.0f, in_offset = -0.5f, out_offset = 0.5f;
        int64_t m = n;
        if (rng() % 4 != 0) {  // a resampled axis
            scale = kScales[rng() % std::size(kScales)];
            m = std::max<int64_t>(1, int64_t(std::lround(double(n) * scale)));
            if (rng() % 4 == 0) m = std::max<int64_t>(1, m + int64_t(rng() % 5) - 2);  // edge clamping
            switch (rng() % 3) {
                case 0: break;  // half-pixel
                case 1: in_offset = out_offset = 0.0f; break;
                default: in_offset = float(int(rng() % 17) - 8) / 4.0f; out_offset = float(int(rng() % 17) - 8) / 4.0f;
            }
        }
        desc.output_sizes.push_back(n);
        dy.push_back(m);
        desc.scales.push_back(scale);
        desc.input_pixel_offsets.push_back(in_offset);
        desc.output_pixel_offsets.push_back(out_offset);
    }
    return plan_of(type, dy, desc);
}

class ResampleGradGpu : public ::testing::TestWithParam<DType> {};

TEST_P(ResampleGradGpu, MatchesCpuOnRandomResamplesOfRanks1To4) {
    SeededRng rng;
    for (size_t rank = 1; rank <= 4; ++rank)
        for (int trial = 0; trial < 8; ++trial)
            check_random_dy(gpu(), random_resample(GetParam(), rank, 4000, rng), rng);
}

TEST_P(ResampleGradGpu, MatchesCpuOnEveryModeAndScale) {
    // Each mode and rounding on 1, 2, 3 and 4 resampled axes (scales up, down, non-integer), offsets that clamp.
    const DType t = GetParam();
    SeededRng rng;
    for (auto mode : {kNearest, kLinear})
        for (auto rounding : {kDecreasing, kIncreasing}) {
            check_random_dy(gpu(), plan_of(t, {37}, {{13}, mode, rounding, {3.0f}, {0.25f}, {-1.0f}}), rng);
            check_random_dy(gpu(), plan_of(t, {20, 9}, {{10, 13}, mode, rounding, {2.0f, 2.0f / 3.0f}, {}, {}}), rng);
            check_random_dy(
                gpu(),
                plan_of(t, {4, 14, 11},
                        {{6, 10, 22}, mode, rounding, {0.5f, 1.4f, 0.5f}, {0, 1.5f, -0.5f}, {0, -2.0f, 1.75f}}),
                rng);
            check_random_dy(gpu(),
                            plan_of(t, {5, 6, 12, 9}, {{3, 4, 8, 6}, mode, rounding, {1.5f, 1.5f, 1.5f, 1.5f}, {}, {}}),
                            rng);
            // N and C untouched (identity axes merged on the GPU), H and W resampled; and channels last.
            check_random_dy(gpu(), plan_of(t, {2, 3, 16, 14}, {{2, 3, 8, 7}, mode, rounding, {}, {}, {}}), rng);
            check_random_dy(gpu(), plan_of(t, {2, 9, 7, 3}, {{2, 6, 5, 3}, mode, rounding, {}, {}, {}}), rng);
            // Scale 1 with a shift: a non-identity axis of one tap each.
            check_random_dy(gpu(), plan_of(t, {9, 8}, {{9, 8}, mode, rounding, {1, 1}, {1, -0.5f}, {0.5f, 2}}), rng);
        }
}

TEST_P(ResampleGradGpu, LongRowsMatchCpu) {
    // Rows of hundreds of elements: most of the elements a thread makes (fp32: four, 32 apart; fp16: two) share a
    // row, and the fast path with 1-4 taps per axis; shifts that clamp at both ends. (Nearest f32 rows that are not
    // whole runs take the walk; the 1-D dX of 256, the runs.)
    const DType t = GetParam();
    SeededRng rng;
    for (auto mode : {kNearest, kLinear})
        for (auto rounding : {kDecreasing, kIncreasing}) {
            check_random_dy(gpu(), plan_of(t, {2, 3, 14, 600}, {{2, 3, 7, 300}, mode, rounding, {}, {}, {}}), rng);
            check_random_dy(gpu(), plan_of(t, {2, 20, 390}, {{2, 13, 260}, mode, rounding, {}, {}, {}}), rng);
            check_random_dy(gpu(), plan_of(t, {3, 5, 130}, {{3, 10, 260}, mode, rounding, {}, {}, {}}), rng);
            check_random_dy(
                gpu(), plan_of(t, {6, 1000}, {{5, 700}, mode, rounding, {1.2f, 1.4f}, {0.5f, 1}, {-1.25f, 2}}), rng);
            check_random_dy(
                gpu(), plan_of(t, {2, 2, 300}, {{2, 4, 150}, mode, rounding, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}}), rng);
            check_random_dy(gpu(), plan_of(t, {512}, {{256}, mode, rounding, {}, {}, {}}), rng);
        }
}

INSTANTIATE_TEST_SUITE_P(BothTypes, ResampleGradGpu, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(ResampleGradGpu, WorkedExamples) {
    // docs/OPERATORS.md 5.6 (grad parameters in the R-swap convention).
    const auto run = [](const Shape& dy_shape, const ResampleGradDesc& desc, const std::vector<double>& dy) {
        const Tensor t = tensor_from(DType::f32, dy_shape, dy);
        return to_doubles(run_on(gpu(), plan_of(DType::f32, dy_shape, desc), {&t}));
    };
    EXPECT_EQ(run({1, 3}, {{2, 2}, kNearest, kDecreasing, {0.5f, 1.5f}, {0, 0}, {0, 0}}, {4, 5, 6}),
              (std::vector<double>{9, 6, 0, 0}));
    EXPECT_EQ(run({6}, {{3}, kNearest, kDecreasing, {2}, {0}, {0}}, {1, 2, 3, 4, 5, 6}),
              (std::vector<double>{3, 7, 11}));
    EXPECT_EQ(run({6}, {{3}, kNearest, kIncreasing, {2}, {0}, {0}}, {1, 2, 3, 4, 5, 6}),
              (std::vector<double>{1, 5, 15}));
    EXPECT_EQ(run({4}, {{2}, kLinear, kDecreasing, {2}, {-0.5f}, {0.5f}}, {1, 2, 3, 4}),
              (std::vector<double>{3.25, 6.75}));
    EXPECT_EQ(run({3, 3}, {{2, 2}, kLinear, kDecreasing, {2, 2}, {0, 0}, {0, 0}}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
              (std::vector<double>{5.25, 8.25, 14.25, 17.25}));
    EXPECT_EQ(run({2}, {{4}, kLinear, kDecreasing, {0.5f}, {-0.5f}, {0.5f}}, {2, 4}),
              (std::vector<double>{1, 1, 2, 2}));
    EXPECT_EQ(run({5}, {{2}, kNearest, kDecreasing, {1.5f}, {0}, {0}}, {1, 2, 3, 4, 5}), (std::vector<double>{3, 12}));
}

// Values that an FPU flushing denormals would get wrong: denormals, and normals so small that their products
// or sums with the weights become denormal; some zeros of both signs and a few ordinary numbers.
Tensor tiny_values(DType type, const Shape& shape, std::mt19937_64& rng) {
    Tensor t(TensorInfo{type, shape});
    for (uint64_t i = 0; i < t.elements(); ++i) {
        const uint32_t mantissa = uint32_t(rng()) & 0x7FFFFFu, sign = uint32_t(rng() % 2) << 31;
        uint32_t bits = 0;
        switch (rng() % 8) {
            case 0:
            case 1:
            case 2: bits = sign | mantissa; break;  // denormal
            case 3:
            case 4: bits = sign | uint32_t(1 + rng() % 30) << 23 | mantissa; break;    // 2^-126..2^-97
            case 5: bits = sign | uint32_t(31 + rng() % 40) << 23 | mantissa; break;   // up to 2^-57
            case 6: bits = sign | uint32_t(120 + rng() % 10) << 23 | mantissa; break;  // ~2^-7..2^2
            default: bits = sign;                                                      // +-0
        }
        if (type == DType::f16) {  // fp16 has no such small values; its subnormals stand in
            const uint16_t h = uint16_t((bits >> 16 & 0x8000u) | (bits & 0x3FFu) | (rng() % 4 == 0 ? 0x400u : 0u));
            std::memcpy(t.buffer.data() + 2 * i, &h, 2);
        } else {
            std::memcpy(t.buffer.data() + 4 * i, &bits, 4);
        }
    }
    return t;
}

TEST(ResampleGradGpu, DenormalsMatchBitForBit) {
    // dY full of values whose products and sums are denormal: the kernel's exact integer path, in every mode.
    SeededRng rng;
    for (DType t : kTypes)
        for (auto mode : {kNearest, kLinear}) {
            const ResampleGradPlan a = plan_of(t, {3, 40, 30}, {{3, 20, 45}, mode, kDecreasing, {}, {}, {}});
            expect_gpu_matches_cpu(a, tiny_values(t, a.dy_shape, rng));
            const ResampleGradPlan b = plan_of(t, {7, 5, 9, 11}, {{5, 4, 6, 8}, mode, kIncreasing, {}, {}, {}});
            expect_gpu_matches_cpu(b, tiny_values(t, b.dy_shape, rng));
            const ResampleGradPlan wide = plan_of(t, {3, 600}, {{5, 300}, mode, kDecreasing, {}, {}, {}});
            expect_gpu_matches_cpu(wide, tiny_values(t, wide.dy_shape, rng));
        }
}

TEST(ResampleGradGpu, TinyWeightsMatchBitForBit) {
    // A sampling coordinate a denormal (or 2^-100) away from an integer gives a weight that small: the host then
    // sends every nonzero dY (or every small one) through the exact path.
    SeededRng rng;
    for (DType t : kTypes)
        for (float shift : {-1e-40f, -1e-30f, -1e-7f}) {
            const ResampleGradPlan plan =
                plan_of(t, {6, 40}, {{5, 40}, kLinear, kDecreasing, {1.2f, 1}, {0, 0}, {0, shift}});
            check_random_dy(gpu(), plan, rng);
            expect_gpu_matches_cpu(plan, tiny_values(t, plan.dy_shape, rng));
        }
}

TEST(ResampleGradGpu, InfinityMinusInfinityGivesTheCpusNaN) {
    // +inf and -inf in one sum: the NaN of x86 (sign set), whatever NaN the GPU's own arithmetic makes.
    SeededRng rng;
    for (DType t : kTypes)
        for (auto mode : {kNearest, kLinear}) {
            for (const Shape& dx : {Shape{4, 15, 10}, Shape{2, 5, 200}}) {  // short and long rows
                const ResampleGradPlan plan =
                    plan_of(t, {dx[0], 2 * dx[1], 2 * dx[2]}, {dx, mode, kDecreasing, {}, {}, {}});
                std::vector<double> values(element_count(plan.dy_shape));
                for (double& v : values) v = rng() % 3 == 0 ? (rng() % 2 ? INFINITY : -INFINITY) : double(rng() % 7);
                expect_gpu_matches_cpu(plan, tensor_from(t, plan.dy_shape, values));
            }
        }
}

TEST(ResampleGradGpu, ComputesNoElementOutsideTheTensor) {
    // fp16 with an odd element count: the last word's second half is padding. Computing it anyway read taps
    // past the tables (garbage loop counts), and on lavapipe that cut short the sums of neighbouring lanes.
    const ResampleGradPlan plan = plan_of(DType::f16, {12, 33, 18, 1},
                                          {{7, 11, 13, 1},
                                           kLinear,
                                           kDecreasing,
                                           {1.4f, 3, 1.4f, 1.4f},
                                           {-0.5f, 0.5f, 0, -0.5f},
                                           {0.5f, -0.25f, 0, 0.5f}});
    for (uint64_t seed : {0, 1, 2}) {
        std::mt19937_64 rng(seed);
        expect_gpu_matches_cpu(plan, special_values(plan.dtype, plan.dy_shape, rng));
    }
}

TEST(ResampleGradGpu, TinyLimitBounds) {
    // Nearest fp16 never needs the exact path; fp32 does below 2^-101; a denormal weight product sends all.
    const ResampleGradPlan nearest = plan_of(DType::f16, {8}, {{4}, kNearest, kDecreasing, {}, {}, {}});
    EXPECT_EQ(resample_gpu::tiny_limit(resample_gpu::make_view(nearest), kNearest, DType::f16), 0u);
    EXPECT_EQ(resample_gpu::tiny_limit(resample_gpu::make_view(nearest), kNearest, DType::f32),
              ((uint32_t(-101 + 127) << 23) << 1) - 1);
    const ResampleGradPlan tiny = plan_of(DType::f32, {4}, {{4}, kLinear, kDecreasing, {1}, {0}, {-1e-40f}});
    EXPECT_EQ(resample_gpu::tiny_limit(resample_gpu::make_view(tiny), kLinear, DType::f32), 0xFFFFFFFFu);
    // A weight of about 2^-100: fp16 values below 2^-1 (half bits 0x3800) go the exact way.
    const ResampleGradPlan small = plan_of(DType::f16, {4}, {{4}, kLinear, kDecreasing, {1}, {0}, {-1e-30f}});
    EXPECT_EQ(resample_gpu::tiny_limit(resample_gpu::make_view(small), kLinear, DType::f16), (0x3800u << 17) - 1);
}

TEST(ResampleGradGpu, EveryFloatOperationIsNoContraction) {
    // Without NoContraction a driver may fuse a multiply and an add (NVIDIA does), which changes the bits.
    // glslang marks `precise` operations, but spirv-opt's loop unrolling has been seen to drop the mark.
    constexpr uint32_t kOpDecorate = 71, kNoContraction = 42, kOpFAdd = 129, kOpFSub = 131, kOpFMul = 133;
    for (const resample_gpu::Variant& variant : resample_gpu::compiled_variants()) {
        const std::string name = resample_gpu::kernel_name(variant);
        SCOPED_TRACE(name);
        const auto code = find_kernel(name).code;
        std::set<uint32_t> marked, arithmetic;
        for (size_t at = 5; at < code.size();) {
            const uint32_t words = code[at] >> 16, opcode = code[at] & 0xFFFFu;
            ASSERT_GT(words, 0u);
            if (opcode == kOpDecorate && code[at + 2] == kNoContraction) marked.insert(code[at + 1]);
            if (opcode == kOpFAdd || opcode == kOpFSub || opcode == kOpFMul) arithmetic.insert(code[at + 2]);
            at += words;
        }
        // The one-tap lines move bits (no float arithmetic, kernels/resample_grad_lines.hlsl); every other has some.
        const bool moves_bits = variant.family == resample_gpu::Family::lines && variant.taps == 1;
        EXPECT_EQ(arithmetic.empty(), moves_bits);
        for (uint32_t id : arithmetic) EXPECT_TRUE(marked.count(id)) << "result id " << id;
    }
}

TEST(ResampleGradGpu, TakesStripsWhereDxIsOneChunk) {
    // Strips of rows for f32 rows shorter than a run (or of linear plans with few taps: FixedTapPlansTakeTheirStrips)
    // and fp16 rows of an even length (linear: of 2^20 elements and more, smaller take the word walk), runs for the
    // others and for chunks (every test above reaches both: fp16 rows
    // shorter than a walk's elements, f32 rows of whole runs in nearest (256) or with many taps, the split tests;
    // nearest rows, and linear fp16 rows, that the strips and runs would make element by element or a word at a time
    // take the walk, resample_walk_test.cpp and resample_linear_walk_test.cpp).
    const auto kernel_of = [](DType t, const Shape& dx, const Shape& dy, const DeviceLimits& limits,
                              InterpolationMode mode = kLinear) {
        return build_resample_grad_program(plan_of(t, dy, {dx, mode, kDecreasing, {}, {}, {}}), limits).kernel;
    };
    constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};
    EXPECT_EQ(kernel_of(DType::f32, {2, 45, 45}, {2, 90, 90}, kRoomy, kNearest), "resample_grad_nearest_f32_strips");
    EXPECT_EQ(kernel_of(DType::f32, {2, 8192, 128}, {2, 16384, 256}, kRoomy, kNearest), "resample_grad_nearest_f32");
    EXPECT_EQ(kernel_of(DType::f32, {2, 9, 128}, {2, 72, 1024}, kRoomy),
              "resample_grad_linear_f32_elements");  // 16 taps: the strips' general code; small dX, an element a thread
    EXPECT_EQ(kernel_of(DType::f16, {2, 900, 600}, {2, 1800, 1200}, kRoomy), "resample_grad_linear_f16_strips");
    EXPECT_EQ(kernel_of(DType::f16, {2, 45, 600}, {2, 90, 1200}, kRoomy), "resample_grad_linear_f16_walk_words");
    EXPECT_EQ(kernel_of(DType::f16, {2, 45, 45}, {2, 90, 90}, kRoomy), "resample_grad_linear_f16_walk_words");
    constexpr DeviceLimits kSmall{32 << 10, 64, 2};  // the tables fit, the tensors do not
    EXPECT_EQ(kernel_of(DType::f32, {2, 45, 45}, {2, 90, 90}, kSmall), "resample_grad_linear_f32");
    EXPECT_EQ(kernel_of(DType::f16, {2, 45, 600}, {2, 90, 1200}, kSmall), "resample_grad_linear_f16");
}

// A nearest downscale of view axis 0 or 1 leaves planes that no dY index samples: their strips are +0 throughout
// (the kernels skip their general code there), between planes whose rows have 3 taps on axis 2 and 0-1 or 3 on
// axis 3 (as 3349x32x5x7 from 3349x8x15x4). Special values, raw bits.
TEST(ResampleGradGpu, NearestStripsMatchCpuOnPlanesWithoutTaps) {
    constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};
    SeededRng rng;
    const auto check = [&](DType t, const Shape& dx, const Shape& dy) {
        const ResampleGradPlan plan = plan_of(t, dy, {dx, kNearest, kDecreasing, {}, {}, {}});
        SCOPED_TRACE(describe(plan));
        ASSERT_EQ(build_resample_grad_program(plan, kRoomy).kernel,
                  std::string("resample_grad_nearest_") + (t == DType::f16 ? "f16" : "f32") + "_strips");
        expect_gpu_matches_cpu(plan, special_values(t, plan.dy_shape, rng));
        expect_gpu_matches_cpu(plan, random_bits(t, plan.dy_shape, rng));
    };
    check(DType::f32, {3, 32, 5, 7}, {3, 8, 15, 4});   // axis 1 at 0.25
    check(DType::f32, {8, 3, 6, 9}, {2, 3, 18, 27});   // axis 0 at 0.25
    check(DType::f16, {3, 32, 5, 8}, {3, 8, 15, 24});  // fp16 strips: rows of an even length, 3 taps on axis 3
    check(DType::f16, {8, 3, 6, 10}, {2, 3, 18, 30});
}

TEST(ResampleGradGpu, OneTapPlansTakeTheirStrips) {
    // Linear 0.5x (half-pixel): every dX index has one tap on every axis, so the strips variant that knows the
    // counts, f32 rows of any length too; an offset of 1 leaves some index without a tap: the general strips (f32:
    // the sparse walk, resample_sparse_walk_test.cpp; fp16 below 2^20 elements: the word walk).
    const auto plan_at = [](DType t, const Shape& dx, const Shape& dy, float offset) {
        return plan_of(t, dy,
                       {dx, kLinear, kDecreasing, {}, {-0.5f, -0.5f, -0.5f, -0.5f}, {0.5f, 0.5f, offset, offset}});
    };
    constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};
    const auto kernel_of = [&](DType t, const Shape& dx, const Shape& dy, float offset) {
        return build_resample_grad_program(plan_at(t, dx, dy, offset), kRoomy).kernel;
    };
    EXPECT_EQ(kernel_of(DType::f32, {2, 3, 18, 256}, {2, 3, 9, 128}, 0.5f), "resample_grad_linear_f32_strips_one_tap");
    EXPECT_EQ(kernel_of(DType::f16, {2, 3, 18, 256}, {2, 3, 9, 128}, 0.5f), "resample_grad_linear_f16_strips_one_tap");
    EXPECT_EQ(kernel_of(DType::f16, {2, 3, 18, 256}, {2, 3, 9, 128}, 1.0f), "resample_grad_linear_f16_walk_words");
    EXPECT_EQ(kernel_of(DType::f16, {2, 3, 686, 256}, {2, 3, 343, 128}, 1.0f), "resample_grad_linear_f16_strips");
    EXPECT_EQ(kernel_of(DType::f32, {2, 3, 18, 256}, {2, 3, 9, 128}, 1.0f), "resample_grad_linear_f32_walk_sparse");
    SeededRng rng;
    for (DType t : kTypes)
        for (const Shape& dx : {Shape{2, 3, 18, 256}, Shape{1, 5, 14, 6}}) {  // partial strips of 2 rows
            const Shape dy = {dx[0], dx[1], dx[2] / 2, dx[3] / 2};
            check_random_dy(gpu(), plan_at(t, dx, dy, 0.5f), rng);
            check_random_dy(gpu(), plan_at(t, dx, dy, 1.0f), rng);
        }
}

TEST(ResampleGradGpu, FixedTapPlansTakeTheirStrips) {
    // Linear f32 whose lists of axes 2 and 3 have 2 to MAX_FIXED_TAPS taps: the strips whose steps do not test a
    // list's length (a step past it adds a zero-weight term), f32 rows of any length, on random specials (inf and
    // NaN beside a list make its zero-weight terms NaN: the exact path). Partial strips, clamped edges.
    const auto plan_at = [](const Shape& dx, const Shape& dy, float scale, float offset) {
        return plan_of(DType::f32, dy,
                       {dx, kLinear, kDecreasing, {1.0f, scale, scale}, {0.0f, -0.5f, -0.5f}, {0.0f, 0.5f, offset}});
    };
    constexpr DeviceLimits kRoomy{1ull << 30, 16, 65535};
    const auto kernel_of = [&](const Shape& dx, const Shape& dy, float scale, float offset) {
        return build_resample_grad_program(plan_at(dx, dy, scale, offset), kRoomy).kernel;
    };
    EXPECT_EQ(kernel_of({2, 18, 256}, {2, 36, 512}, 2.0f, 0.5f), "resample_grad_linear_f32_strips_taps4");
    EXPECT_EQ(kernel_of({2, 18, 256}, {2, 27, 384}, 1.5f, 0.5f), "resample_grad_linear_f32_strips_taps3");
    EXPECT_EQ(kernel_of({2, 18, 256}, {2, 18, 256}, 1.0f, 0.25f), "resample_grad_linear_f32_strips_taps2");
    SeededRng rng;
    for (const Shape& dx : {Shape{2, 18, 256}, Shape{3, 7, 45}, Shape{1, 5, 6}}) {  // partial strips of 2 rows
        for (float scale : {2.0f, 1.5f, 1.0f, 3.0f, 0.75f}) {
            const Shape dy = {dx[0], int64_t(std::lround(double(dx[1]) * scale)), int64_t(double(dx[2]) * scale)};
            for (float offset : {0.5f, 0.25f, -1.0f}) {
                SCOPED_TRACE(::testing::Message()
                             << "dx " << dx[1] << "x" << dx[2] << " scale " << scale << " offset " << offset);
                check_random_dy(gpu(), plan_at(dx, dy, scale, offset), rng);
            }
        }
    }
    // A 1-D resample (0.75x, one or two taps a list): planes of one row, nothing for strips to share, and tap tables
    // larger than the data: the fractions (resample_fractions_test.cpp).
    for (int64_t length : {300, 100}) {
        const ResampleGradPlan one_row =
            plan_of(DType::f32, {length * 3 / 4}, {{length}, kLinear, kDecreasing, {0.75f}, {0.0f}, {0.0f}});
        EXPECT_EQ(build_resample_grad_program(one_row, kRoomy).kernel, "resample_grad_linear_f32_fractions_steps2");
        for (int round = 0; round < 3; ++round) check_random_dy(gpu(), one_row, rng);
    }
}

TEST(ResampleGradGpu, ViewMergesIdentityAxes) {
    const ResampleGradPlan plan = plan_of(DType::f32, {2, 3, 8, 5}, {{2, 3, 4, 5}, kLinear, kDecreasing, {}, {}, {}});
    const resample_gpu::View view = resample_gpu::make_view(plan);
    EXPECT_TRUE(view[0].identity && view[0].dx == 1);
    EXPECT_TRUE(view[1].identity && view[1].dx == 6 && view[1].dy == 6);
    EXPECT_FALSE(view[2].identity);
    EXPECT_TRUE(view[3].identity && view[3].dx == 5);
}

TEST(ResampleGradGpu, IdentitiesTakeTheNearestCopyWhateverTheMode) {
    // Every axis an identity (sizes kept, DirectML's default half-pixel offsets): a linear element sums one term of
    // weight 1, +0 + (1 * 1) * v, which the nearest kernels' copy gives bit for bit: -0, NaN payloads, denormals,
    // raw bits; the one-tap lines, a uint4 of bits moved a thread (fp16 NaNs found in the thread's words).
    SeededRng rng;
    for (DType type : {DType::f16, DType::f32})
        for (const Shape& shape : {Shape{3, 1001, 1}, Shape{2, 5, 4, 3}, Shape{7}, Shape{1}}) {
            const ResampleGradPlan plan = plan_of(type, shape, {shape, kLinear, kDecreasing, {}, {}, {}});
            SCOPED_TRACE(describe(plan));
            const std::string kernel = build_resample_grad_program(plan, kTypicalLimits).kernel;
            EXPECT_EQ(kernel, type == DType::f16 ? "resample_grad_nearest_f16_lines_taps1"
                                                 : "resample_grad_nearest_f32_lines_taps1");
            expect_gpu_matches_cpu(plan, special_values(type, shape, rng));
            expect_gpu_matches_cpu(plan, random_bits(type, shape, rng));
        }
    // Split into chunks (the runs, as nearest), and in several dispatches.
    const ResampleGradPlan copy = plan_of(DType::f16, {3, 1001, 1}, {{3, 1001, 1}, kLinear, kDecreasing, {}, {}, {}});
    EXPECT_EQ(build_resample_grad_program(copy, kTinyLimits).kernel, "resample_grad_nearest_f16");
    expect_gpu_matches_cpu(copy, special_values(DType::f16, copy.dy_shape, rng), gpu_with_limits(kTinyLimits));
    expect_gpu_matches_cpu(copy, special_values(DType::f16, copy.dy_shape, rng), gpu_with_limits(kFewGroups));
    // One axis resampled: no identity, the linear kernels.
    const ResampleGradPlan resampled =
        plan_of(DType::f16, {3, 1001, 2}, {{3, 1001, 1}, kLinear, kDecreasing, {}, {}, {}});
    EXPECT_TRUE(build_resample_grad_program(resampled, kTypicalLimits).kernel.starts_with("resample_grad_linear_"));
}

TEST(ResampleGradGpu, ViewDropsAxesOfOneElement) {
    // dX 7x1x9x1 from dY 7x1x12x1: the axes of 1 are no axes, so axis 2 makes the rows (not rows of 1).
    const ResampleGradPlan plan = plan_of(DType::f16, {7, 1, 12, 1}, {{7, 1, 9, 1}, kNearest, kDecreasing, {}, {}, {}});
    const resample_gpu::View view = resample_gpu::make_view(plan);
    EXPECT_TRUE(view[1].identity && view[1].dx == 1);
    EXPECT_TRUE(view[2].identity && view[2].dx == 7);
    EXPECT_FALSE(view[3].identity);
    EXPECT_EQ(view[3].dx, 9u);
    EXPECT_EQ(view[3].dy, 12u);
    // An axis of 1 that is resampled (dY 2) stays.
    const ResampleGradPlan widened =
        plan_of(DType::f16, {7, 1, 12, 2}, {{7, 1, 9, 1}, kNearest, kDecreasing, {}, {}, {}});
    EXPECT_EQ(resample_gpu::make_view(widened)[3].dy, 2u);
}

// The walk's phased copy of axis 3 (interface/resample_grad.h's PHASED_*): where the kernel looks for it (after axis
// 3's pairs), each column's first dY index and tap count in its phase, the tables before it unchanged.
TEST(ResampleGradGpu, PhasedColumnsCopyAxisThreesTaps) {
    using namespace kernels::resample_grad;
    for (uint32_t phases : {4u, 8u}) {
        const ResampleGradPlan plan = plan_of(DType::f16, {3, 7, 12}, {{3, 5, 19}, kNearest, kDecreasing, {}, {}, {}});
        SCOPED_TRACE(describe(plan));
        const resample_gpu::View view = resample_gpu::make_view(plan);
        std::array<uint32_t, 4> offsets{};
        const std::vector<uint32_t> pairs = resample_gpu::tap_tables(view, kNearest, offsets);
        std::vector<uint32_t> tables = pairs;
        resample_gpu::insert_phased_columns(view, kNearest, phases, tables);
        const AxisTaps& taps = plan.axes[2];
        const uint64_t dx = view[3].dx, n = (dx + phases - 1) / phases * phases;
        ASSERT_EQ(tables.size(), pairs.size() + (PHASED_COUNT + 1) * n);
        const uint64_t base = offsets[3] + TABLE_PAIR_WORDS * (dx + 1);
        EXPECT_TRUE(std::equal(pairs.begin(), pairs.begin() + base, tables.begin()));
        EXPECT_TRUE(std::all_of(tables.end() - TABLE_PAD_WORDS, tables.end(), [](uint32_t w) { return w == 0; }));
        uint64_t counted = 0;
        for (uint64_t i = 0; i < n; ++i) {
            SCOPED_TRACE(i);
            const uint64_t at = base + (i % phases) * (n / phases) + i / phases;
            const uint32_t count = i < dx ? taps.begin[i + 1] - taps.begin[i] : 0;
            EXPECT_EQ(tables[at + PHASED_COUNT * n], count);
            if (count != 0) {
                EXPECT_EQ(tables[at + PHASED_FIRST * n], uint32_t(taps.dy_index[taps.begin[i]]));
            }
            counted += count;
        }
        EXPECT_EQ(counted, taps.begin[dx]);
    }
}

TEST(ResampleGradGpu, SpecialValuesAndRepeatGiveIdenticalBits) {
    SeededRng rng;
    for (DType t : kTypes)
        for (auto mode : {kNearest, kLinear}) {
            for (const Shape& dx : {Shape{3, 16, 23}, Shape{2, 8, 300}}) {  // short and long rows
                const ResampleGradPlan plan =
                    plan_of(t, {dx[0], 12, 17 * dx[2] / 23}, {dx, mode, kDecreasing, {}, {}, {}});
                const Tensor dy = special_values(t, plan.dy_shape, rng);
                expect_gpu_matches_cpu(plan, dy);
                // Repeats (each after a 0.3 s warm-up): once per type and mode.
                if (dx[2] == 300) expect_gpu_matches_cpu(plan, dy, gpu(), /*repeat=*/3);
            }
        }
}

// Random plans for small bindings, drawn until their tap tables (bound whole) and the dY range of each dX
// element fit one binding (RuntimeFailure otherwise, tested below).
ResampleGradPlan random_resample_within(DType type, size_t rank, uint64_t target, const DeviceLimits& limits,
                                        std::mt19937_64& rng) {
    for (;;) {
        ResampleGradPlan plan = random_resample(type, rank, target, rng);
        const resample_gpu::View view = resample_gpu::make_view(plan);
        std::array<uint32_t, 4> offsets{};
        if (4 * resample_gpu::tap_tables(view, plan.mode, offsets).size() + 16 > limits.max_binding_bytes) continue;
        try {
            resample_gpu::chunks(view, (limits.max_binding_bytes - 2 * limits.offset_alignment - 32) / 4);
            return plan;
        } catch (const RuntimeFailure&) {
        }
    }
}

TEST(ResampleGradGpu, SplitsIntoChunksWithTheirDyWindows) {
    SeededRng rng;
    Backend& tiny = gpu_with_limits(kTinyLimits);  // 4 KiB bindings, 64-byte offsets, 2 groups per dispatch
    constexpr DeviceLimits kSmall{32 << 10, 64, 2};
    for (DType t : kTypes)
        for (auto mode : {kNearest, kLinear}) {
            // Chunks of planes, of rows (odd row lengths: fp16 chunks share words), of parts of rows.
            check_random_dy(tiny, plan_of(t, {3, 74, 82}, {{3, 37, 41}, mode, kDecreasing, {}, {}, {}}), rng);
            check_random_dy(tiny, plan_of(t, {5, 7, 19}, {{5, 7, 9}, mode, kIncreasing, {}, {}, {}}), rng);
            check_random_dy(tiny, plan_of(t, {4, 5, 6, 7}, {{7, 6, 5, 4}, mode, kDecreasing, {}, {}, {}}), rng);
            // Parts of one row: linear tables are as long as the row, so only nearest fits tables in 4 KiB.
            if (mode == kNearest)
                check_random_dy(tiny, plan_of(t, {2, 2, 3001}, {{2, 3, 101}, mode, kDecreasing, {}, {}, {}}), rng);
            // Long rows in chunks of whole rows (32 KiB bindings: the tables fit, the tensors do not).
            check_random_dy(gpu_with_limits(kSmall),
                            plan_of(t, {3, 40, 600}, {{3, 20, 300}, mode, kDecreasing, {}, {}, {}}), rng);
            // dX larger than dY (downscale), and a dX that fits while dY does not.
            check_random_dy(tiny, plan_of(t, {9, 20, 30}, {{9, 60, 61}, mode, kDecreasing, {}, {}, {}}), rng);
            check_random_dy(tiny, plan_of(t, {40, 100}, {{8, 10}, mode, kIncreasing, {}, {}, {}}), rng);
            for (size_t rank = 1; rank <= 4; ++rank)
                check_random_dy(gpu_with_limits(kSmall), random_resample_within(t, rank, 30000, kSmall, rng), rng);
        }
    // Grids split into dispatches of 3 workgroups; and the discrete-GPU path through staging buffers.
    const ResampleGradPlan big = plan_of(DType::f16, {3, 301, 77}, {{3, 150, 50}, kLinear, kDecreasing, {}, {}, {}});
    check_random_dy(gpu_with_limits(kFewGroups), big, rng);
    check_random_dy(gpu_with_staging(), big, rng);
}

TEST(ResampleGradGpu, RejectsTablesLargerThanOneBinding) {
    const ResampleGradPlan plan = plan_of(DType::f32, {4000}, {{2000}, kLinear, kDecreasing, {}, {}, {}});
    SeededRng rng;
    const Tensor dy = random_tensor(DType::f32, plan.dy_shape, rng);
    EXPECT_THROW(run_on(gpu_with_limits(kTinyLimits), plan, {&dy}), RuntimeFailure);
}

// Of ChunksCoverDxOnceWithinTheLimit's 50 random plans, how many must fit their limit (about 48 do): a drawing
// that skips most of them, or a chunker that refuses them, would test nothing.
constexpr int kMinChunkedPlans = 25;

TEST(ResampleGradGpu, ChunksCoverDxOnceWithinTheLimit) {
    SeededRng rng;
    int checked = 0;
    for (int trial = 0; trial < 50; ++trial) {
        const ResampleGradPlan plan = random_resample(DType::f32, 1 + rng() % 4, 5000, rng);
        const resample_gpu::View view = resample_gpu::make_view(plan);
        const uint64_t limit = 64 + rng() % 2000;
        SCOPED_TRACE(describe(plan) + " limit " + std::to_string(limit));
        std::vector<resample_gpu::Chunk> chunks;
        try {
            chunks = resample_gpu::chunks(view, limit);
        } catch (const RuntimeFailure&) {
            continue;  // one element reads more than the limit (RejectsAnElementThatReadsMoreThanOneBinding)
        }
        ++checked;
        uint64_t next = 0;
        for (const auto& c : chunks) {
            EXPECT_EQ(c.begin, next);
            EXPECT_LE(c.end - c.begin, limit);
            if (c.reads_dy) {
                EXPECT_LT(c.dy_last - c.dy_first, limit);
            }
            next = c.end;
        }
        EXPECT_EQ(next, element_count(plan.dx_shape));
    }
    EXPECT_GE(checked, kMinChunkedPlans) << "too few of the 50 random plans could be split";
}

TEST(ResampleGradGpu, RejectsAnElementThatReadsMoreThanOneBinding) {
    // One dX element averages 2000 dY elements: 8 KB, beyond a 4 KiB binding.
    const ResampleGradPlan plan = plan_of(DType::f32, {2000}, {{1}, kNearest, kDecreasing, {}, {}, {}});
    SeededRng rng;
    const Tensor dy = random_tensor(DType::f32, plan.dy_shape, rng);
    EXPECT_THROW(run_on(gpu_with_limits(kTinyLimits), plan, {&dy}), RuntimeFailure);
    expect_gpu_matches_cpu(plan, dy);
}

TEST(ResampleGradGpu, DyBeyond128MiB) {
    // dY 144 MB at the device's real limits (lavapipe binds 128 MiB): one chunk per plane.
    SeededRng rng;
    const ResampleGradPlan plan =
        plan_of(DType::f32, {2, 3000, 6000}, {{2, 1500, 3000}, kNearest, kDecreasing, {}, {}, {}});
    ASSERT_GT(element_count(plan.dy_shape) * 4, uint64_t(128) << 20);
    const Tensor dy = random_small_integers(DType::f32, plan.dy_shape, rng);
    expect_gpu_matches_cpu(plan, dy);
}

}  // namespace
}  // namespace dmlgrad::testing
