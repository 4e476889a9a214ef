// The API-neutral planning of GPU work (no device needed): windows, grid splits, slice geometry and chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>

#include "gpu/dispatch.h"
#include "gpu/kernel_registry.h"
#include "gpu/ops/slice_geometry.h"
#include "interface/clip_grad.h"
#include "interface/relu_grad.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

// Every step's windows respect the limits, and each uint4 of the output is covered by exactly one thread.
template <class Params>
void expect_valid_elementwise(const GpuProgram& p, uint64_t bytes, const DeviceLimits& limits) {
    ASSERT_EQ(p.push_bytes, sizeof(Params));
    const uint64_t group = find_kernel(p.kernel).workgroup_size;
    std::vector<int> covered(padded_bytes(bytes) / 16, 0);
    for (const DispatchStep& s : p.steps) {
        ASSERT_EQ(s.bindings.size(), 3u);
        ASSERT_LE(s.groups, limits.max_groups_x);
        for (const BufferWindow& w : s.bindings) {
            EXPECT_EQ(w.offset % limits.offset_alignment, 0u);
            EXPECT_LE(w.range, limits.max_binding_bytes);
            EXPECT_LE(w.offset + w.range, padded_bytes(bytes));
        }
        const Params params = pushed_params<Params>(s);
        for (uint64_t t = 0; t < uint64_t(s.groups) * group; ++t) {
            const uint64_t i = params.base + t;
            if (i < params.count) ++covered[s.bindings[2].offset / 16 + i];
        }
    }
    for (size_t i = 0; i < covered.size(); ++i) ASSERT_EQ(covered[i], 1) << "uint4 " << i;
}

TEST(GpuDispatchPlan, ElementwiseWindowsAndGridsCoverEachUint4Once) {
    const DeviceLimits limits[] = {{4096, 64, 2}, {1 << 20, 256, 3}, {128 << 20, 16, 65535}};
    for (const DeviceLimits& l : limits)
        for (uint64_t n : {1ull, 3ull, 17ull, 4099ull, 1000003ull}) {
            SCOPED_TRACE(::testing::Message() << n << " elements, binding " << l.max_binding_bytes);
            const ReluGradPlan plan{DType::f32, {int64_t(n)}, n};
            expect_valid_elementwise<kernels::relu_grad::Params>(build_relu_grad_program(plan, l), n * 4, l);
            const ClipGradPlan clip{DType::i8, {int64_t(n)}, n, 0xF0, 0x10};
            expect_valid_elementwise<kernels::clip_grad::Params>(build_clip_grad_program(clip, l), n, l);
        }
}

// dY index read by dX element `i` under the plan (or none), straight from docs/OPERATORS.md 3.1.
std::optional<uint64_t> reference_source(const SliceGradPlan& p, uint64_t i) {
    uint64_t dy_index = 0, dy_stride = 1;
    bool ok = true;
    for (size_t a = p.dx_shape.size(); a-- > 0;) {
        const int64_t c = int64_t(i % uint64_t(p.dx_shape[a]));
        i /= uint64_t(p.dx_shape[a]);
        const int64_t d = c - p.start[a];
        if (d % p.stride[a] != 0 || d / p.stride[a] < 0 || d / p.stride[a] >= p.dy_shape[a])
            ok = false;
        else
            dy_index += uint64_t(d / p.stride[a]) * dy_stride;
        dy_stride *= uint64_t(p.dy_shape[a]);
    }
    return ok ? std::optional<uint64_t>(dy_index) : std::nullopt;
}

std::optional<uint64_t> gathered_source(const std::vector<SliceAxis>& axes, uint64_t i) {
    uint64_t dy_index = 0, dy_stride = 1;
    bool ok = true;
    for (size_t a = axes.size(); a-- > 0;) {
        const int64_t c = int64_t(i % uint64_t(axes[a].dx));
        i /= uint64_t(axes[a].dx);
        const int64_t d = c - axes[a].start;
        if (d % axes[a].stride != 0 || d / axes[a].stride < 0 || d / axes[a].stride >= axes[a].dy)
            ok = false;
        else
            dy_index += uint64_t(d / axes[a].stride) * dy_stride;
        dy_stride *= uint64_t(axes[a].dy);
    }
    return ok ? std::optional<uint64_t>(dy_index) : std::nullopt;
}

// A random u8 slice through plan_slice_grad, rank 1-6, axes of up to 9 elements (the first `first_scale` times
// longer); a third of the axes copied whole, so that gather_axes merges some.
SliceGradPlan random_plan(std::mt19937_64& rng, int64_t first_scale = 1) {
    SliceGradDesc desc;
    Shape dy;
    const size_t rank = 1 + rng() % 6;
    for (size_t a = 0; a < rank; ++a) {
        const int64_t n = (1 + int64_t(rng() % 9)) * (a == 0 ? first_scale : 1);
        int64_t offset = int64_t(rng() % uint64_t(n)), size = 1 + int64_t(rng() % uint64_t(n - offset));
        int64_t stride = rng() % 3 == 0 ? 1 : 1 + int64_t(rng() % 4);
        if (rng() % 3 == 0) stride = -stride;
        const bool whole = rng() % 3 == 0;
        if (whole) offset = 0, size = n, stride = 1;
        const int64_t reachable = 1 + (size - 1) / std::abs(stride);
        desc.output_sizes.push_back(n);
        desc.window_offsets.push_back(offset);
        desc.window_sizes.push_back(size);
        desc.window_strides.push_back(stride);
        dy.push_back(whole ? n : 1 + int64_t(rng() % uint64_t(reachable)));
    }
    return plan_slice_grad(desc, Operand{"--input-gradient", "dy.npy", TensorInfo{DType::u8, dy}});
}

TEST(GpuDispatchPlan, SliceGatherAxesKeepTheMapping) {
    SeededRng rng;
    for (int trial = 0; trial < 300; ++trial) {
        const SliceGradPlan p = random_plan(rng);
        ASSERT_FALSE(p.gather_axes.empty());
        ASSERT_LE(p.gather_axes.size(), p.dx_shape.size());
        for (uint64_t i = 0; i < element_count(p.dx_shape); ++i)
            ASSERT_EQ(reference_source(p, i), gathered_source(p.gather_axes, i))
                << "trial " << trial << " element " << i;
    }
}

TEST(GpuDispatchPlan, SliceChunksAreContiguousBoxesWithTightDyWindows) {
    SeededRng rng;
    for (int trial = 0; trial < 300; ++trial) {
        const SliceGradPlan p = random_plan(rng);
        const uint64_t total = element_count(p.dx_shape);
        const uint64_t max_elements = 1 + rng() % 40;
        uint64_t next = 0;
        for (const Chunk& c : slice_gpu::chunks(p.gather_axes, max_elements)) {
            ASSERT_EQ(c.begin, next);
            ASSERT_GT(c.end, c.begin);
            ASSERT_LE(c.end - c.begin, max_elements);
            next = c.end;
            bool reads = false;
            for (uint64_t i = c.begin; i < c.end; ++i) {
                if (auto k = reference_source(p, i)) {
                    reads = true;
                    ASSERT_TRUE(c.reads_dy);
                    ASSERT_GE(*k, c.dy_first);
                    ASSERT_LE(*k, c.dy_last);
                }
            }
            EXPECT_EQ(reads, c.reads_dy);
            if (c.reads_dy) {
                EXPECT_LE(c.dy_last - c.dy_first + 1, c.end - c.begin);
            }
        }
        ASSERT_EQ(next, total);
    }
}

TEST(GpuDispatchPlan, SliceChunkBoundariesInsideAUint4WaitForTheChunkBefore) {
    // 3x37x41 u8 with 4 KiB bindings: dY does not fit, chunks of two 41x37 planes end mid-uint4.
    const SliceGradPlan p = plan_slice_grad({{3, 37, 41}, {0, 0, 0}, {3, 37, 41}, {-1, 1, -1}},
                                            Operand{"--input-gradient", "dy.npy", TensorInfo{DType::u8, {3, 37, 41}}});
    const GpuProgram program = build_slice_grad_program(p, DeviceLimits{4096, 64, 2});
    ASSERT_GT(program.steps.size(), 1u);
    EXPECT_TRUE(std::any_of(program.steps.begin(), program.steps.end(),
                            [](const DispatchStep& s) { return s.barrier_before; }));
    EXPECT_NE(program.steps[1].bindings[0], program.steps[0].bindings[0]);  // its own dY window
}

TEST(GpuDispatchPlan, SliceWindowsRespectTheLimits) {
    SeededRng rng;
    const DeviceLimits limits{4096, 64, 2};
    for (int trial = 0; trial < 100; ++trial) {
        SliceGradPlan p = random_plan(rng, 64);  // larger than a binding now and then
        for (DType t : {DType::u8, DType::f16, DType::f32, DType::u64}) {
            p.dtype = t;
            const GpuProgram program = build_slice_grad_program(p, limits);
            std::vector<uint64_t> sizes = {padded_bytes(element_count(p.dy_shape) * dtype_size(t)),
                                           padded_bytes(element_count(p.dx_shape) * dtype_size(t))};
            for (const std::vector<uint32_t>& words : program.constants)
                sizes.push_back(padded_bytes(4 * words.size()));
            for (const DispatchStep& s : program.steps) {
                ASSERT_LE(s.groups, limits.max_groups_x);
                for (const BufferWindow& w : s.bindings) {
                    EXPECT_EQ(w.offset % limits.offset_alignment, 0u);
                    EXPECT_LE(w.range, limits.max_binding_bytes);
                    EXPECT_LE(w.offset + w.range, sizes.at(w.slot));
                }
            }
        }
    }
}

}  // namespace
}  // namespace dmlgrad::testing
