// Slice grad: GPU against the CPU reference, bit for bit, every element size (and every dtype of docs/OPERATORS.md 3.2
// once), ranks 1-8, negative and mixed strides, |stride| > size, dY smaller than the window allows, and the split paths
// on small limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gpu_testing.h"
#include "ops/slice_grad.h"
#include "support/documented_dtypes.h"

namespace dmlgrad::testing {
namespace {

// The plan of the DirectML parameters (docs/OPERATORS.md 3.1), validated as the command line does it.
SliceGradPlan slice_plan(DType type, const Shape& dx, const Shape& dy, const std::vector<int64_t>& offsets,
                         const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
    return plan_slice_grad({dx, offsets, sizes, strides}, {"--input-gradient", "dy.npy", {type, dy}});
}

// A random valid slice of rank `rank` whose dX has about `target` elements or fewer (times `inner_multiple`, the
// factor of the innermost size).
SliceGradPlan random_slice(DType type, size_t rank, uint64_t target, std::mt19937_64& rng, int64_t inner_multiple = 1) {
    Shape dx, dy;
    std::vector<int64_t> offsets, sizes, strides;
    const double per_axis = std::pow(double(target), 1.0 / double(rank));
    for (size_t a = 0; a < rank; ++a) {
        int64_t n = 1 + int64_t(rng() % uint64_t(std::max(1.0, 2 * per_axis)));
        if (a + 1 == rank) n *= inner_multiple;
        const int64_t offset = int64_t(rng() % uint64_t(n));
        const int64_t size = 1 + int64_t(rng() % uint64_t(n - offset));
        int64_t stride = 1 + int64_t(rng() % 4);
        if (rng() % 6 == 0) stride = size + 1 + int64_t(rng() % 3);  // |stride| > size: one element
        if (rng() % 2) stride = -stride;
        const int64_t reachable = 1 + (size - 1) / (stride < 0 ? -stride : stride);
        const int64_t k = rng() % 4 == 0 ? 1 + int64_t(rng() % uint64_t(reachable)) : reachable;  // dY may be smaller
        dx.push_back(n), dy.push_back(k), offsets.push_back(offset), sizes.push_back(size), strides.push_back(stride);
    }
    return slice_plan(type, dx, dy, offsets, sizes, strides);
}

// A random dY for `plan`, on `backend` and on the CPU.
void check_random_dy(Backend& backend, const SliceGradPlan& plan, std::mt19937_64& rng) {
    expect_gpu_matches_cpu(plan, random_tensor(plan.dtype, plan.dy_shape, rng), backend);
}

class SliceGradGpu : public ::testing::TestWithParam<DType> {};

TEST_P(SliceGradGpu, MatchesCpuOnRandomSlicesOfRanks1To8) {
    SeededRng rng;
    for (size_t rank = 1; rank <= 8; ++rank)
        for (int trial = 0; trial < 3; ++trial) check_random_dy(gpu(), random_slice(GetParam(), rank, 3000, rng), rng);
}

TEST_P(SliceGradGpu, MatchesCpuOnOddSizes) {
    const DType t = GetParam();
    SeededRng rng;
    // 1, 3, 17 and 1000003 dX elements: the padded tail of the last uint4.
    check_random_dy(gpu(), slice_plan(t, {1}, {1}, {0}, {1}, {1}), rng);
    check_random_dy(gpu(), slice_plan(t, {3}, {2}, {0}, {3}, {-2}), rng);
    check_random_dy(gpu(), slice_plan(t, {17}, {5}, {2}, {13}, {3}), rng);
    check_random_dy(gpu(), slice_plan(t, {1000003}, {333334}, {0}, {1000003}, {-3}), rng);
    // Strided rows where dY ends before the window does (the far end of a negative stride is skipped to).
    check_random_dy(gpu(), slice_plan(t, {40}, {5}, {0}, {40}, {-3}), rng);
    check_random_dy(gpu(), slice_plan(t, {6, 40}, {3, 4}, {0, 2}, {6, 38}, {-2, 3}), rng);
    check_random_dy(gpu(), slice_plan(t, {3, 200}, {3, 9}, {0, 1}, {3, 199}, {1, -7}), rng);
    // Crops (stride 1 inside): runs of dY that start and end inside a uint4, rows shorter and longer than one.
    check_random_dy(gpu(), slice_plan(t, {5, 37}, {5, 30}, {0, 3}, {5, 30}, {1, 1}), rng);
    check_random_dy(gpu(), slice_plan(t, {3, 300}, {2, 250}, {1, 21}, {2, 250}, {1, 1}), rng);
    check_random_dy(gpu(), slice_plan(t, {4, 3, 70}, {3, 2, 61}, {1, 1, 5}, {3, 2, 63}, {1, -1, 1}), rng);
    // Mixed signs, a copied-whole inner axis (merged away), size-1 axes, rank 8.
    check_random_dy(gpu(), slice_plan(t, {4, 1, 6, 9}, {2, 1, 6, 9}, {1, 0, 0, 0}, {3, 1, 6, 9}, {-2, 1, 1, 1}), rng);
    check_random_dy(gpu(),
                    slice_plan(t, {3, 2, 1, 4, 5, 2, 3, 7}, {2, 1, 1, 2, 2, 1, 3, 3}, {0, 1, 0, 0, 1, 0, 0, 0},
                               {3, 1, 1, 4, 4, 2, 3, 7}, {2, 1, 1, -3, 3, -5, 1, -3}),
                    rng);
}

TEST_P(SliceGradGpu, MatchesCpuOnStrideTwoRowsAtEveryOffset) {
    // Every other element (the spread path of 8- and 16-bit elements): runs that start anywhere in a uint4 and
    // at any lane of a dY word, that end early (dY shorter than the window allows), rows of odd and even length.
    const DType t = GetParam();
    SeededRng rng;
    for (int64_t offset = 0; offset < 18; ++offset)
        for (int64_t width : {37, 64}) {
            const int64_t size = width - offset, reach = 1 + (size - 1) / 2;
            for (int64_t k : {reach, std::max<int64_t>(1, reach / 2)})
                check_random_dy(gpu(), slice_plan(t, {3, width}, {3, k}, {0, offset}, {3, size}, {1, 2}), rng);
        }
}

// Limits under which dY is bound whole, as on lavapipe and the H100 for these sizes.
constexpr DeviceLimits kOneBinding{uint64_t(1) << 27, 256, 65535};

// The element kernel's variant for rows that end inside uint4s (slice_grad_rowends_*) is what `limits` gives `plan`.
void expect_row_ends_variant(const SliceGradPlan& plan, const DeviceLimits& limits) {
    const std::string kernel = build_slice_grad_program(plan, limits).kernel;
    EXPECT_EQ(kernel, "slice_grad_rowends_b" + std::to_string(8 * dtype_size(plan.dtype))) << describe(plan);
}

// An odd number of elements from `at_least` on, so that rows are never whole uint4s.
int64_t odd_length(int64_t at_least, int64_t spread, std::mt19937_64& rng) {
    return at_least + 2 * int64_t(rng() % uint64_t(spread)) + (at_least % 2 == 0 ? 1 : 0);
}

TEST_P(SliceGradGpu, ElementKernelMatchesCpuWhereRowsEndInsideAUint4) {
    // Crops of rows of 16 uint4s and more that are not whole uint4s (two axes, step 1 inside: the element kernel's
    // row-ends variant):
    // a row ends inside a uint4 in every warp. Odd row lengths; crops that start and end anywhere in a row's first
    // and last uint4 (odd offsets included), or at its first element; outer steps that skip rows.
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    for (int trial = 0; trial < 8; ++trial) {
        const int64_t width = odd_length(16 * per_uint4, 2 * per_uint4, rng);
        // Not the whole row (a row copied whole merges with its outer axis).
        const int64_t offset = int64_t(rng() % uint64_t(per_uint4 + 2));
        const int64_t tail = int64_t(rng() % uint64_t(per_uint4 + 2)) + (offset == 0 ? 1 : 0);
        const int64_t outer_step = (1 + int64_t(rng() % 3)) * (rng() % 2 ? -1 : 1);
        // At least two rows reached (an axis taking one element merges with the row).
        const int64_t rows = 1 + std::abs(outer_step) + int64_t(rng() % 9);
        const int64_t outer_count = 1 + (rows - 1) / std::abs(outer_step), size = width - offset - tail;
        const SliceGradPlan plan =
            slice_plan(t, {rows, width}, {outer_count, size}, {0, offset}, {rows, size}, {outer_step, 1});
        expect_row_ends_variant(plan, kOneBinding);
        check_random_dy(gpu(), plan, rng);
    }
}

TEST_P(SliceGradGpu, ElementKernelKeepsItsPlainVariantOnLongRows) {
    // Crops of rows that are not whole uint4s but long enough that a row ends in few warps (256 uint4s an element of
    // a uint4): the plain variant, whose element-by-element path takes the uint4s in which rows end; rows just
    // shorter: the rowends variant. Both match the CPU.
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t)), least = 256 * per_uint4 * per_uint4;
    const std::string bits = std::to_string(8 * dtype_size(t));
    SeededRng rng;
    for (const auto& [width, kernel] :
         {std::pair{least + 1, "slice_grad_b" + bits}, std::pair{least - 1, "slice_grad_rowends_b" + bits}}) {
        const int64_t offset = 1 + int64_t(rng() % uint64_t(per_uint4)), size = width - offset - 2;
        const SliceGradPlan plan = slice_plan(t, {5, width}, {3, size}, {0, offset}, {5, size}, {2, 1});
        EXPECT_EQ(build_slice_grad_program(plan, kOneBinding).kernel, kernel) << describe(plan);
        check_random_dy(gpu(), plan, rng);
    }
}

TEST_P(SliceGradGpu, ChunksMatchCpuWhereRowsEndInsideAUint4) {
    // dY beyond a 4 KiB binding: box chunks of whole rows on the element kernel's row-ends variant, whatever the step.
    // Rows of one to three uint4s and an odd remainder, so that a row ends inside most uint4s; every inner step's plan,
    // odd offsets.
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t)), element = int64_t(dtype_size(t));
    SeededRng rng;
    for (int64_t step : {1, -1, 2, -2, 3, -5}) {
        // Never the whole row (a row copied whole merges with its outer axis), nor one element of it (an axis taking
        // one element merges too), nor every period of a step to the row's end (those merge into one grid): drawn
        // again until the rows stay apart.
        SliceGradPlan plan;
        do {
            const int64_t width = std::max(odd_length(per_uint4 * (1 + int64_t(rng() % 3)) + 1, per_uint4 / 2, rng),
                                           (std::abs(step) + 2) | 1);
            const int64_t offset = 1 + int64_t(rng() % uint64_t(width - 1 - std::abs(step))), size = width - offset;
            const int64_t count = 1 + (size - 1) / std::abs(step), rows = 2 + 4096 / (count * element);
            plan = slice_plan(t, {rows, width}, {rows, count}, {0, offset}, {rows, size}, {1, step});
        } while (plan.gather_axes.size() != 2);
        expect_row_ends_variant(plan, kTinyLimits);
        check_random_dy(gpu_with_limits(kTinyLimits), plan, rng);
    }
}

// The rows layout (slice_grad_rows_*) is what `limits` gives `plan`: the tests below reach it.
void expect_rows_layout(const SliceGradPlan& plan, const DeviceLimits& limits) {
    const std::string kernel = build_slice_grad_program(plan, limits).kernel;
    EXPECT_EQ(kernel.rfind("slice_grad_rows_b", 0), 0u) << kernel << ", not the rows layout: " << describe(plan);
}

// Rows of one uint4 of 16-bit elements or wider (as a bit copy: int8 rows copied whole are wider elements) that fold
// into lines take the lines walk instead (tests/gpu/slice_grad_lines_test.cpp).
bool takes_short_lines(const SliceGradPlan& plan) {
    return uint64_t(plan.gather_axes.back().dx) * dtype_size(plan.dtype) == 16 &&
           build_slice_grad_program(plan, kOneBinding).kernel.rfind("slice_grad_walk_lines_", 0) == 0;
}

// Rows of whole uint4s at every element size: innermost sizes that are multiples of 16 elements.
constexpr int64_t kWholeRows = 16;

TEST_P(SliceGradGpu, RowsLayoutMatchesCpu) {
    const DType t = GetParam();
    SeededRng rng;
    const std::vector<SliceGradPlan> plans = {
        // [::2, ::2]-like rows shorter than a workgroup, and their mirror; crops; flips of whole rows.
        slice_plan(t, {6, 5, 32}, {6, 3, 16}, {0, 0, 0}, {6, 5, 32}, {1, 2, 2}),
        slice_plan(t, {6, 5, 32}, {6, 3, 16}, {0, 0, 0}, {6, 5, 32}, {1, -2, -2}),
        slice_plan(t, {4, 9, 48}, {3, 7, 37}, {1, 1, 5}, {3, 7, 37}, {1, 1, 1}),
        slice_plan(t, {4, 9, 48}, {4, 9, 48}, {0, 0, 0}, {4, 9, 48}, {1, -1, 1}),
        // Inner strides 3, -3, |stride| beyond a uint4, dY shorter than the window allows, rank 1.
        slice_plan(t, {7, 64}, {6, 20}, {1, 2}, {6, 60}, {1, 3}),
        slice_plan(t, {7, 64}, {7, 10}, {0, 0}, {7, 64}, {1, -3}),
        slice_plan(t, {5, 80}, {5, 3}, {0, 7}, {5, 70}, {1, 21}),
        slice_plan(t, {3, 2, 96}, {2, 2, 40}, {0, 0, 1}, {3, 2, 95}, {2, 1, 2}),
        slice_plan(t, {4096}, {1000}, {3}, {4000}, {4}),
        // Rows of one uint4 (8-bit): a workgroup touches as many rows as it has uint4s.
        slice_plan(t, {600, 16}, {300, 8}, {0, 0}, {600, 16}, {2, 2}),
        // Rows longer than a workgroup's uint4s at every size (4112 = 257 x 16): columns worked out per thread.
        slice_plan(t, {3, 4112}, {2, 2056}, {0, 0}, {3, 4112}, {2, 2}),
        slice_plan(t, {3, 4112}, {3, 4100}, {0, 9}, {3, 4100}, {1, 1}),
        // Rows of half a workgroup's uint4s (2064 = 129 x 16: three rows a workgroup at 8 bits) and of a workgroup's
        // uint4s and more (8208 = 513 x 16), each a span of a few hundred elements in the middle (32/64-bit rows skip
        // the uint4s outside it without a plan), its first or last reached element at the edge of a uint4 for each
        // element size: highest 3296 and lowest 5007 (the first of a uint4 and the last).
        slice_plan(t, {9, 2064}, {5, 100}, {0, 1001}, {9, 300}, {2, -3}),
        slice_plan(t, {4, 8208}, {3, 100}, {1, 2997}, {3, 300}, {1, -3}),
        slice_plan(t, {3, 8208}, {3, 78}, {0, 5007}, {3, 390}, {1, 5}),
    };
    for (const SliceGradPlan& plan : plans) {
        if (!takes_short_lines(plan)) expect_rows_layout(plan, kOneBinding);
        check_random_dy(gpu(), plan, rng);
    }
    for (size_t rank = 1; rank <= 6; ++rank)
        for (int trial = 0; trial < 3; ++trial) {
            const SliceGradPlan plan = random_slice(t, rank, 3000, rng, kWholeRows);
            // Sparse ones take a spans kernel (tests/gpu/slice_grad_spans_test.cpp); all are checked.
            if (build_slice_grad_program(plan, kOneBinding).kernel.rfind("slice_grad_spans_", 0) != 0 &&
                !takes_short_lines(plan))
                expect_rows_layout(plan, kOneBinding);
            check_random_dy(gpu(), plan, rng);
        }
}

TEST_P(SliceGradGpu, RowsLayoutUnderLoweredLimits) {
    const DType t = GetParam();
    SeededRng rng;
    // dY within one 4 KiB binding, dX (8 KiB) not: dX windows, each a grid of its own.
    const int64_t rows = 128 / int64_t(dtype_size(t));
    const SliceGradPlan windows = slice_plan(t, {rows, 64}, {rows / 2, 32}, {0, 1}, {rows, 63}, {2, 2});
    expect_rows_layout(windows, kTinyLimits);
    check_random_dy(gpu_with_limits(kTinyLimits), windows, rng);
    // Rows longer than a workgroup's uint4s, a span in each, over windows that start inside rows.
    const SliceGradPlan long_rows = slice_plan(t, {3, 8208}, {2, 100}, {1, 2997}, {2, 300}, {1, -3});
    expect_rows_layout(long_rows, kTinyLimits);
    check_random_dy(gpu_with_limits(kTinyLimits), long_rows, rng);
    // Grids split into dispatches of 3 workgroups; and the discrete-GPU path through staging buffers.
    const SliceGradPlan big = slice_plan(t, {5, 301, 80}, {5, 150, 40}, {0, 1, 0}, {5, 300, 80}, {1, -2, 2});
    expect_rows_layout(big, kFewGroups);
    check_random_dy(gpu_with_limits(kFewGroups), big, rng);
    check_random_dy(gpu_with_staging(), big, rng);
}

TEST_P(SliceGradGpu, InnermostFlipsMatchCpu) {
    // Step -1 on the innermost axis, the element and rows kernels' backwards runs (a run of dY loaded forwards into
    // the mirrored elements, then mirrored): whole flips, windows that start and end inside a uint4 at every offset of
    // a uint4, dY shorter than the window, rows that end inside a uint4 (odd lengths).
    const DType t = GetParam();
    const int64_t per_uint4 = 16 / int64_t(dtype_size(t));
    SeededRng rng;
    const int64_t n = 20 * per_uint4 + 3;  // one axis of 20 uint4s and more: the element kernel
    for (int64_t offset = 0; offset < per_uint4 + 1; ++offset) {
        const int64_t size = n - offset - (offset * 7) % per_uint4, count = size - offset % 2;
        const SliceGradPlan plan = slice_plan(t, {n}, {count}, {offset}, {size}, {-1});
        EXPECT_EQ(build_slice_grad_program(plan, kOneBinding).kernel,
                  "slice_grad_b" + std::to_string(8 * dtype_size(t)))
            << describe(plan);
        check_random_dy(gpu(), plan, rng);
    }
    const int64_t width = 4 * kWholeRows;  // whole-uint4 rows: the rows kernel
    for (const SliceGradPlan& plan : {slice_plan(t, {6, width}, {6, width}, {0, 0}, {6, width}, {1, -1}),
                                      slice_plan(t, {7, width}, {3, width - 5}, {1, 3}, {6, width - 4}, {2, -1}),
                                      slice_plan(t, {5, 3, width}, {5, 3, 9}, {0, 0, 2}, {5, 3, 11}, {-1, 1, -1})}) {
        expect_rows_layout(plan, kOneBinding);
        check_random_dy(gpu(), plan, rng);
    }
}

TEST(SliceGradGpu, RowsLayoutOnlyForWholeUint4RowsWithDyBoundWhole) {
    const SliceGradPlan aligned = slice_plan(DType::u8, {8, 64}, {4, 32}, {0, 0}, {8, 64}, {2, 2});
    EXPECT_EQ(build_slice_grad_program(aligned, kOneBinding).kernel, "slice_grad_rows_b8");
    const SliceGradPlan odd = slice_plan(DType::u8, {8, 65}, {4, 33}, {0, 0}, {8, 65}, {2, 2});
    EXPECT_EQ(build_slice_grad_program(odd, kOneBinding).kernel, "slice_grad_walk_lines_words_b8");
    // dY larger than a binding: box chunks, whose passes may share a uint4 (the generic layout).
    const SliceGradPlan chunked = slice_plan(DType::u8, {8, 1024}, {8, 1024}, {0, 0}, {8, 1024}, {1, -1});
    EXPECT_EQ(build_slice_grad_program(chunked, kTinyLimits).kernel, "slice_grad_b8");
}

TEST_P(SliceGradGpu, SplitsDxWindowsAndDyWindows) {
    SeededRng rng;
    Backend& tiny = gpu_with_limits(kTinyLimits);
    const DType t = GetParam();
    // dY within one 4 KiB binding, dX not: dX windows only.
    check_random_dy(tiny, slice_plan(t, {50, 300}, {10, 40}, {5, 0}, {41, 300}, {-4, 3}), rng);
    // dY larger than a binding: box chunks, each with its dY window, boundaries inside a uint4.
    check_random_dy(tiny, slice_plan(t, {7001}, {7001}, {0}, {7001}, {-1}), rng);
    check_random_dy(tiny, slice_plan(t, {3, 37, 41}, {3, 37, 41}, {0, 0, 0}, {3, 37, 41}, {-1, 1, -1}), rng);
    check_random_dy(tiny, slice_plan(t, {9, 100, 23}, {5, 99, 11}, {0, 1, 0}, {9, 99, 23}, {-2, 1, 2}), rng);
    for (size_t rank = 1; rank <= 5; ++rank) check_random_dy(tiny, random_slice(t, rank, 20000, rng), rng);
    // Grids split into dispatches of 3 workgroups; and the discrete-GPU path through staging buffers.
    const SliceGradPlan big = slice_plan(t, {5, 301, 77}, {3, 150, 77}, {0, 1, 0}, {5, 300, 77}, {2, -2, 1});
    check_random_dy(gpu_with_limits(kFewGroups), big, rng);
    check_random_dy(gpu_with_staging(), big, rng);
}

// The kernels are bit copies by element size (slice_grad_b8 ... _b64 serve every type of their size): the checks
// above run for one type of each size, as the other slice suites do; every documented type below.
INSTANTIATE_TEST_SUITE_P(AllSizes, SliceGradGpu, ::testing::Values(DType::u8, DType::f16, DType::f32, DType::f64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(SliceGradGpu, MatchesCpuForEveryDocumentedType) {
    SeededRng rng;
    for (DType t : kSliceGradDocumentedTypes) {
        check_random_dy(gpu(), slice_plan(t, {1001}, {334}, {0}, {1001}, {-3}), rng);
        check_random_dy(gpu(), slice_plan(t, {9, 64}, {4, 29}, {1, 3}, {8, 58}, {2, -2}), rng);
        for (size_t rank = 2; rank <= 4; ++rank) check_random_dy(gpu(), random_slice(t, rank, 3000, rng), rng);
    }
}

TEST(SliceGradGpu, WorkedExamples) {
    // docs/OPERATORS.md 3.3 S1-S4.
    const Tensor dy = tensor_from(DType::f32, {2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(to_doubles(run_on(gpu(), slice_plan(DType::f32, {4, 4}, {2, 2}, {0, 0}, {4, 4}, {2, 2}), {&dy})),
              (std::vector<double>{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
    const Tensor dy4 = tensor_from(DType::f32, {1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(to_doubles(run_on(
                  gpu(), slice_plan(DType::f32, {1, 1, 4, 4}, {1, 1, 2, 2}, {0, 0, 0, 1}, {1, 1, 4, 3}, {1, 1, -2, 2}),
                  {&dy4})),
              (std::vector<double>{0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 1, 0, 2}));
    const Tensor dy1 = tensor_from(DType::i16, {2}, {7, 9});
    EXPECT_EQ(to_doubles(run_on(gpu(), slice_plan(DType::i16, {10}, {2}, {2}, {7}, {3}), {&dy1})),
              (std::vector<double>{0, 0, 7, 0, 0, 9, 0, 0, 0, 0}));
    EXPECT_EQ(to_doubles(run_on(gpu(), slice_plan(DType::i16, {10}, {2}, {2}, {7}, {-3}), {&dy1})),
              (std::vector<double>{0, 0, 0, 0, 0, 9, 0, 0, 7, 0}));
}

TEST(SliceGradGpu, CopiesNanPayloadsAndNegativeZeroBitExactly) {
    const std::vector<uint64_t> bits = {0x7FF0000000000001, 0xFFF8000000000123, 0x8000000000000000, 0x0000000000000001};
    const Tensor dy = tensor_from_bits(DType::f64, {4}, bits);
    const Tensor out = run_on(gpu(), slice_plan(DType::f64, {9}, {4}, {1}, {7}, {2}), {&dy});
    EXPECT_TRUE(
        bitwise_equal(tensor_from_bits(DType::f64, {9}, {0, bits[0], 0, bits[1], 0, bits[2], 0, bits[3], 0}), out));
}

}  // namespace
}  // namespace dmlgrad::testing
