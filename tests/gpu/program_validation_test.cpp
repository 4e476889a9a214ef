// validate() of gpu/dispatch.h, no device needed: random plans of every operator, under tiny limits (many windows,
// chunks and dispatches), build programs that validate; and each rule of validate() rejects a program that breaks it.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "support/documented_dtypes.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

// 4 KiB bindings at 64-byte alignment, 2 groups a dispatch; 16 KiB at 256, 3 groups; 1 MiB at 16, 1 group.
constexpr DeviceLimits kLimits[] = {{4096, 64, 2}, {16384, 256, 3}, {1 << 20, 16, 1}};

template <class T, size_t N>
T pick(const std::array<T, N>& values, std::mt19937_64& rng) {
    return values[rng() % N];
}

int64_t below(std::mt19937_64& rng, int64_t n) { return int64_t(rng() % uint64_t(n)); }

Operand operand(const char* flag, DType type, const Shape& shape) { return {flag, "t.npy", {type, shape}}; }

Plan random_relu(std::mt19937_64& rng) {
    const DType t = pick(kReluGradDocumentedTypes, rng);
    const Shape shape = random_shape(rng, 1 + rng() % 4, 3000);
    return plan_relu_grad({}, operand("--input", t, shape), operand("--input-gradient", t, shape));
}

Plan random_clip(std::mt19937_64& rng) {
    const DType t = pick(kClipGradDocumentedTypes, rng);
    const Shape shape = random_shape(rng, 1 + rng() % 4, 3000);
    return plan_clip_grad({"1", "3"}, operand("--input", t, shape), operand("--input-gradient", t, shape));
}

// Per axis a window of a few elements inside dX, read with a stride of 1-3 in either direction.
Plan random_slice(std::mt19937_64& rng) {
    const DType t = pick(kSliceGradDocumentedTypes, rng);
    SliceGradDesc desc;
    Shape dy;
    for (int64_t n : random_shape(rng, 1 + rng() % 4, 3000)) {
        const int64_t size = 1 + below(rng, n), stride = (1 + below(rng, 3)) * (rng() % 4 == 0 ? -1 : 1);
        desc.output_sizes.push_back(n);
        desc.window_offsets.push_back(below(rng, n - size + 1));
        desc.window_sizes.push_back(size);
        desc.window_strides.push_back(stride);
        dy.push_back((size + std::abs(stride) - 1) / std::abs(stride));
    }
    return plan_slice_grad(desc, operand("--input-gradient", t, dy));
}

// 2-D or 3-D pooling; windows, strides and paddings mostly shared by the axes, so that the specialised kernels
// (k2s2, cells, walks, fast) come up beside the two-pass one.
Plan random_maxpool(std::mt19937_64& rng) {
    const DType t = pick(kMaxPoolGradDocumentedTypes, rng);
    const size_t spatial = 2 + rng() % 2;
    const bool shared = rng() % 3 != 0, large = rng() % 10 == 0;
    const int64_t window = 1 + below(rng, 4), stride = 1 + below(rng, 3), pad = below(rng, 2);
    MaxPoolGradDesc desc;
    Shape x = {1 + below(rng, 3), 1 + below(rng, 3)}, dy = {x[0], x[1]};
    for (size_t j = 0; j < spatial; ++j) {
        const int64_t w = large ? 10 + below(rng, 20) : shared ? window : 1 + below(rng, 4);
        const int64_t in = w + below(rng, spatial == 3 ? 12 : 40), s = shared ? stride : 1 + below(rng, 3);
        const int64_t p = std::min(w - 1, shared ? pad : below(rng, 2));
        desc.window_size.push_back(w), desc.strides.push_back(s), desc.start_padding.push_back(p);
        desc.end_padding.push_back(0), desc.dilations.push_back(1);
        x.push_back(in), dy.push_back(maxpool_output_size(in, w, s, p, 0, 1));
    }
    return plan_maxpool_grad(desc, operand("--input", t, x), operand("--input-gradient", t, dy));
}

// Ranks 1-4, each axis an identity or a scale up or down, nearest or linear.
Plan random_resample(std::mt19937_64& rng) {
    static constexpr std::array kScales = {2.0f, 0.5f, 1.5f, 3.0f, 2.0f / 3.0f, 1.0f};
    const DType t = pick(kResampleGradDocumentedTypes, rng);
    ResampleGradDesc desc;
    desc.mode = rng() % 2 ? InterpolationMode::linear : InterpolationMode::nearest;
    Shape dy;
    for (int64_t n : random_shape(rng, 1 + rng() % 4, 3000)) {
        const float scale = rng() % 3 == 0 ? 1.0f : pick(kScales, rng);
        desc.output_sizes.push_back(n);
        desc.scales.push_back(scale);
        desc.input_pixel_offsets.push_back(-0.5f);
        desc.output_pixel_offsets.push_back(0.5f);
        dy.push_back(std::max<int64_t>(1, int64_t(float(n) * scale)));
    }
    return plan_resample_grad(desc, operand("--input-gradient", t, dy));
}

TEST(ProgramValidation, RandomPlansOfEveryOperatorUnderTinyLimitsBuildValidPrograms) {
    SeededRng rng;
    const std::function<Plan(std::mt19937_64&)> makers[] = {random_relu, random_clip, random_slice, random_maxpool,
                                                            random_resample};
    for (const auto& make : makers) {
        int validated = 0;
        for (int trial = 0; trial < 150; ++trial) {
            const Plan plan = make(rng);
            for (const DeviceLimits& limits : kLimits) {
                SCOPED_TRACE(::testing::Message() << plan_op_name(plan) << ", binding " << limits.max_binding_bytes);
                try {
                    const GpuProgram program = build_program(plan, limits);
                    ASSERT_NO_THROW(validate(program, limits, plan));
                    ++validated;
                } catch (const RuntimeFailure&) {  // a plane or a dY range larger than the tiny binding: refused
                }
            }
        }
        EXPECT_GT(validated, 300) << "most plans fit the limits";
    }
}

TEST(ProgramValidation, RejectsEachBrokenRule) {
    const DeviceLimits limits{4096, 64, 2};
    const Plan plan =
        plan_relu_grad({}, operand("--input", DType::f32, {2000}), operand("--input-gradient", DType::f32, {2000}));
    const GpuProgram good = build_program(plan, limits);
    ASSERT_GT(good.steps.size(), 1u);
    ASSERT_NO_THROW(validate(good, limits, plan));
    const std::function<void(GpuProgram&)> breaks[] = {
        [](GpuProgram& p) { p.kernel = "relu_grad_f128"; },
        [](GpuProgram& p) { p.steps[1].push.pop_back(); },
        [](GpuProgram& p) { p.steps[0].bindings.pop_back(); },
        [](GpuProgram& p) { p.steps[0].groups = 0; },
        [](GpuProgram& p) { p.steps[0].groups = 3; },
        [](GpuProgram& p) { p.steps[1].bindings[2].slot = 3; },
        [](GpuProgram& p) { p.steps[1].bindings[0].offset += 16; },
        [](GpuProgram& p) { p.steps[0].bindings[1].range = 4096 + 64; },
        [](GpuProgram& p) { p.steps[0].bindings[1].range = 0; },
        [](GpuProgram& p) { p.steps.back().bindings[2].offset += 64 * 16; },
        [](GpuProgram& p) {
            p.binding_types = {BindingType::storage, BindingType::uniform, BindingType::storage};
        },
        [](GpuProgram& p) { p.binding_types = {BindingType::storage}; },
    };
    for (size_t b = 0; b < std::size(breaks); ++b) {
        GpuProgram broken = good;
        breaks[b](broken);
        EXPECT_THROW(validate(broken, limits, plan), std::logic_error) << "broken rule " << b;
    }
}

}  // namespace
}  // namespace dmlgrad::testing
