// Max-pooling grad: GPU against the CPU reference, bit for bit: fp32 and fp16, 4-D and 5-D, windows 1-4, strides
// 1-3 (gaps where the stride passes the window), asymmetric paddings up to beyond the window (all-padding
// windows), dilations, ceil-mode dY sizes, ties, special values in X and dY (sums through denormals, inf - inf),
// the fast kernel's 2-D (wide and narrow tiles) and 3-D variants, the walk kernels (3-D k3 s2 p1, 3-D k2 s1 fp32;
// 2-D k3 p1 s1 and s2), the k2s2 kernel (windows of 2 that tile the input), the cell kernel (other windows that do
// not overlap), the two-pass kernel (every other geometry, windows of any size), and the plane and grid splits on
// small limits.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstring>
#include <iterator>
#include <set>

#include "core/error.h"
#include "core/half.h"
#include "gpu/ops/maxpool_grad_kernels.h"
#include "gpu_testing.h"
#include "interface/maxpool_grad.h"
#include "interface/maxpool_grad_select.h"
#include "ops/maxpool_grad.h"
#include "support/documented_dtypes.h"

namespace dmlgrad::testing {
namespace {

using maxpool_gpu::Family;
using maxpool_gpu::kernel_name;
using maxpool_gpu::Layout;
using maxpool_gpu::Variant;

// DirectML's parameters, spatial axes only, with dY's size: O_floor, or O_floor + 1 where ceil mode allows it.
struct Pooling {
    Shape x;
    std::vector<int64_t> window, strides, start, end, dilations;
    bool ceil_mode = false;
};

// The elements of pooling p's cells along its axes from `first`: the product of their strides, each capped by the
// axis's size.
int64_t cell_extent(const Pooling& p, size_t first) {
    int64_t cell = 1;
    for (size_t a = first; a < p.strides.size(); ++a)
        cell *= std::min(p.strides[a], p.x[p.x.size() - p.strides.size() + a]);
    return cell;
}

// The cell kernel of pooling p's non-overlapping windows (maxpool_grad_dispatch.cpp's take_cellrows, take_cells
// and take_cellwords, written out here): fp32 cells of 8 rows or more (all axes but the columns) the cell rows
// kernel where its workgroups of whole rows keep 192 of their 256 threads busy, other fp32 cells the cell kernel;
// fp16 cellwords, its _shared variant (split words stored whole through groupshared memory) where a cell has 9
// elements or more.
std::string cell_kernel(DType t, const Pooling& p) {
    if (t != DType::f16) {
        const int64_t columns = p.x.back(), rows = cell_extent(p, 0) / cell_extent(p, p.strides.size() - 1);
        const bool cellrows = rows >= 8 && columns <= 256 && 256 / columns * columns >= 192;
        return cellrows ? "maxpool_grad_cellrows_f32" : "maxpool_grad_cells_f32";
    }
    return cell_extent(p, 0) >= 9 ? "maxpool_grad_cellwords_shared_f16" : "maxpool_grad_cellwords_f16";
}

// Limits large enough that every test plan runs as one dispatch: what build_program then picks is the kernel.
constexpr DeviceLimits kRoomyLimits{1 << 30, 16, 65535};

MaxPoolGradPlan plan_of(DType type, const Pooling& p) {
    Shape dy = {p.x[0], p.x[1]};
    for (size_t j = 0; j + 2 < p.x.size(); ++j) {
        const int64_t out =
            maxpool_output_size(p.x[2 + j], p.window[j], p.strides[j], p.start[j], p.end[j], p.dilations[j]);
        const int64_t span = (p.window[j] - 1) * p.dilations[j] + 1;
        const bool ceil_allowed = (p.x[2 + j] + p.start[j] + p.end[j] - span) % p.strides[j] != 0;
        dy.push_back(out + (p.ceil_mode && ceil_allowed ? 1 : 0));
    }
    const MaxPoolGradDesc desc{p.window, p.strides, p.start, p.end, p.dilations};
    return plan_maxpool_grad(desc, {"--input", "x.npy", {type, p.x}}, {"--input-gradient", "dy.npy", {type, dy}});
}

// The kernel that runs `plan`.
std::string kernel_of(const MaxPoolGradPlan& plan) { return build_program(plan, kRoomyLimits).kernel; }

// A random valid pooling of `spatial` axes, inputs up to `max_size` per axis.
Pooling random_pooling(size_t spatial, int64_t max_size, std::mt19937_64& rng) {
    const auto pick = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
    Pooling p;
    p.x = {1 + pick(3), 1 + pick(3)};
    for (size_t j = 0; j < spatial; ++j) {
        const int64_t w = 1 + pick(4), t = 1 + pick(3), d = pick(4) == 0 ? 2 + pick(2) : 1;
        const int64_t span = (w - 1) * d + 1;
        int64_t in = 1 + pick(max_size), s = pick(3) == 0 ? pick(span + 2) : pick(2),
                e = pick(3) == 0 ? pick(span + 2) : 0;
        if (in + s + e < span) e = span - in - s;  // the dilated window must fit the padded input
        p.x.push_back(in), p.window.push_back(w), p.strides.push_back(t), p.start.push_back(s), p.end.push_back(e);
        p.dilations.push_back(d);
    }
    p.ceil_mode = pick(3) == 0;
    return p;
}

// The bits of every element, rewritten by `f` (float32 bits in and out; fp16 through exact conversions).
template <class F>
void map_bits(Tensor& t, F f) {
    for (uint64_t i = 0; i < t.elements(); ++i) {
        if (t.dtype() == DType::f16) {
            uint16_t h;
            std::memcpy(&h, t.buffer.data() + 2 * i, 2);
            h = float_to_half(std::bit_cast<float>(f(std::bit_cast<uint32_t>(half_to_float(h)))));
            std::memcpy(t.buffer.data() + 2 * i, &h, 2);
        } else {
            uint32_t v;
            std::memcpy(&v, t.buffer.data() + 4 * i, 4);
            v = f(v);
            std::memcpy(t.buffer.data() + 4 * i, &v, 4);
        }
    }
}

// dY with ±0, ±inf, NaN and denormals: a NaN input and the default NaN of inf - inf meet in sums, where the
// first NaN of a sum is kept on both sides (core/nan_sum.h).
Tensor special_gradient(DType type, const Shape& shape, std::mt19937_64& rng) {
    return random_tensor(type, shape, rng);
}

// fp32 values below 2^-96 of both signs, denormals included: sums that round into and out of the denormal range.
Tensor tiny_gradient(const Shape& shape, std::mt19937_64& rng) {
    Tensor dy(TensorInfo{DType::f32, shape});
    map_bits(dy, [&](uint32_t) {
        const uint32_t r = uint32_t(rng());
        return (r & 0x80000000u) | (((r >> 23) % 31) << 23) | (r & 0x7FFFFFu);
    });
    return dy;
}

enum class Values { specials, ties, raw_bits };

Tensor input_values(Values kind, DType type, const Shape& shape, std::mt19937_64& rng) {
    switch (kind) {
        case Values::specials: return random_tensor(type, shape, rng);
        case Values::ties: return random_small_integers(type, shape, rng, 1);  // -1, 0, 1: ties everywhere
        case Values::raw_bits: break;
    }
    return random_bits(type, shape, rng);
}

Tensor gradient_values(int kind, DType type, const Shape& shape, std::mt19937_64& rng) {
    switch (kind) {
        case 0: return random_small_integers(type, shape, rng);
        case 1: return random_tensor(type, shape, rng, /*specials=*/false);  // order-sensitive sums
        case 2: return special_gradient(type, shape, rng);
        default: return type == DType::f32 ? tiny_gradient(shape, rng) : special_gradient(type, shape, rng);
    }
}

// Windows of 2, stride 2, no padding that tile every pooled axis (2-D, or 3-D with the depth pooled alike or
// untouched), rows of whole thread units (2 windows fp32, 4 fp16): the k2s2 kernel's name, else "".
std::string k2s2_kernel_name(const Pooling& p, DType type) {
    const size_t n = p.window.size();
    const auto tiles = [&](size_t j) {
        // An end padding of 1 adds a window only in ceil mode, one of 2 or more always.
        const bool no_extra_window = p.end[j] == 0 || (p.end[j] == 1 && !p.ceil_mode);
        return p.window[j] == 2 && p.strides[j] == 2 && p.start[j] == 0 && p.dilations[j] == 1 && p.x[2 + j] % 2 == 0 &&
               no_extra_window;
    };
    const int64_t unit = type == DType::f16 ? 4 : 2;
    if (!tiles(n - 2) || !tiles(n - 1) || (p.x.back() / 2) % unit != 0) return "";
    const bool cube = n == 3 && tiles(0), planar = n == 2 || (p.window[0] == 1 && p.strides[0] == 1 && p.start[0] == 0);
    if (!cube && !planar) return "";
    return kernel_name({Family::k2s2, type, cube ? Layout::cube : Layout::planar});
}

// The kernel the host picks for a geometry of the fast kernel (its `layout`; the window and stride of the last
// axis): windows of 2 that tile the input take the k2s2 kernel, other windows that do not overlap the cell kernels
// (fp16: the cell kernel, only where the columns' stride, start padding and row length are even).
std::string fast_kernel_name(const Pooling& p, DType type, Layout layout) {
    if (const std::string k2s2 = k2s2_kernel_name(p, type); !k2s2.empty()) return k2s2;
    bool cells = true;
    for (size_t j = 0; j < p.window.size(); ++j) cells = cells && (p.window[j] - 1) * p.dilations[j] < p.strides[j];
    const size_t w = p.window.size() - 1;
    if (type == DType::f16) cells = cells && p.strides[w] % 2 == 0 && p.start[w] % 2 == 0 && p.x.back() % 2 == 0;
    if (cells) return type == DType::f16 ? kernel_name({Family::cells, type}) : cell_kernel(type, p);
    return kernel_name({Family::fast, type, layout, uint32_t(p.window.back()), uint32_t(p.strides.back())});
}

// The kernel of a 3-D cube window of 2 at stride 1: the k2 s1 walk without start padding, for rows shorter than
// WALK3D_K2_CHUNK, fp16 slices of an even size and chunks (WALK3D_K2_CHUNK elements, fp16 twice that) at least a
// quarter used (maxpool_grad_dispatch.cpp's fits_walk3d_k2, written out here), else the fast kernel's cube tiles.
std::string cube_k2s1_kernel(const Pooling& p, DType t) {
    const int64_t threads = kernels::maxpool_grad::WALK3D_K2_CHUNK, columns = p.x[4], slice = p.x[3] * columns;
    const int64_t chunk = t == DType::f16 ? 2 * threads : threads, chunks = (slice + chunk - 1) / chunk;
    const bool walk = p.start == std::vector<int64_t>{0, 0, 0} && columns < threads &&
                      (t != DType::f16 || slice % 2 == 0) && 4 * slice >= chunks * chunk;
    return walk ? "maxpool_grad_walk3d_k2s1_" + dtype_suffix(t) : kernel_name({Family::fast, t, Layout::cube, 2, 1});
}

// A two-pass variant for `type` (whichever choose and gather runs: tests of those check the exact name).
bool is_twopass(const std::string& kernel, DType type) {
    return kernel.starts_with("maxpool_grad_twopass_") && kernel.ends_with(dtype_suffix(type));
}

// `plan` against the CPU on each kind of input (ties, specials, raw bits), each with the next kind of gradient
// (`kind`, advanced: order-sensitive sums, specials, denormals).
void expect_matches_cpu_on_each_kind_of_input(const MaxPoolGradPlan& plan, std::mt19937_64& rng, int& kind) {
    for (int values = 0; values < 3; ++values, ++kind)
        expect_gpu_matches_cpu(plan, input_values(Values(values), plan.dtype, plan.x_shape, rng),
                               gradient_values(kind % 4, plan.dtype, plan.dy_shape, rng));
}

// Chunks of planes in a program: distinct dY windows.
size_t chunks(const GpuProgram& program) {
    std::set<uint64_t> offsets;
    for (const DispatchStep& step : program.steps) offsets.insert(step.bindings[1].offset);
    return offsets.size();
}

class MaxPoolGradGpu : public ::testing::TestWithParam<DType> {};

TEST_P(MaxPoolGradGpu, MatchesCpuOnRandomPoolings) {
    SeededRng rng;
    for (int trial = 0; trial < 48; ++trial) {
        const bool five_d = trial % 3 == 2;
        const MaxPoolGradPlan plan = plan_of(GetParam(), random_pooling(five_d ? 3 : 2, five_d ? 7 : 24, rng));
        const Tensor x = input_values(Values(trial % 3), plan.dtype, plan.x_shape, rng);
        const Tensor dy = gradient_values(trial % 4, plan.dtype, plan.dy_shape, rng);
        expect_gpu_matches_cpu(plan, x, dy);
    }
}

TEST_P(MaxPoolGradGpu, MatchesCpuOnTheBenchmarkPoolingsAndOddSizes) {
    SeededRng rng;
    const DType t = GetParam();
    for (const Shape& x : {Shape{2, 3, 64, 80}, Shape{1, 5, 37, 45}, Shape{3, 1, 33, 1}, Shape{1, 2, 1, 31}})
        for (int64_t k : {2, 3})
            for (int64_t s : {1, 2}) {
                const int64_t pad = k == 3 ? 1 : 0;
                if (x[2] + 2 * pad < k || x[3] + 2 * pad < k) continue;
                const MaxPoolGradPlan plan = plan_of(t, {x, {k, k}, {s, s}, {pad, pad}, {pad, pad}, {1, 1}});
                const Tensor xv = random_tensor(t, plan.x_shape, rng);
                expect_gpu_matches_cpu(plan, xv, random_tensor(t, plan.dy_shape, rng, false));
            }
    // 5-D, the same three poolings in depth too.
    const Pooling cube{{2, 2, 9, 10, 11}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    const MaxPoolGradPlan plan = plan_of(t, cube);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_small_integers(t, plan.dy_shape, rng));
}

TEST_P(MaxPoolGradGpu, FastKernelOnEveryWindowAndStride) {
    // kernels/maxpool_grad_fast.hlsl: square windows of 2 and 3, strides 1-3, tiles cut at odd sizes, paddings up
    // to past the window, ceil mode, the depth of 5-D tensors folded into the planes.
    SeededRng rng;
    const DType t = GetParam();
    for (int64_t k : {2, 3})
        for (int64_t s : {1, 2, 3}) {
            const int64_t w = t == DType::f16 ? 70 : 69;  // fp16 takes this kernel for even rows only
            for (const Pooling& p :
                 {Pooling{{2, 3, 37, w}, {k, k}, {s, s}, {0, 0}, {0, 0}, {1, 1}, true},
                  Pooling{{1, 2, 33, w}, {k, k}, {s, s}, {k - 1, 1}, {1, k + 1}, {1, 1}},
                  Pooling{{1, 2, 3, 9, 66}, {1, k, k}, {1, s, s}, {0, k, 0}, {0, 0, k}, {1, 1, 1}, true}}) {
                const MaxPoolGradPlan plan = plan_of(t, p);
                EXPECT_EQ(kernel_of(plan), fast_kernel_name(p, t, Layout::planar));
                expect_gpu_matches_cpu(plan, input_values(Values(rng() % 3), t, plan.x_shape, rng),
                                       gradient_values(int(rng() % 4), t, plan.dy_shape, rng));
            }
        }
}

TEST_P(MaxPoolGradGpu, FastKernelOnNarrowRows) {
    // Rows of up to 32 elements take narrow tiles (half the columns, twice the rows): every window and stride,
    // rows cut at odd sizes, paddings, ceil mode, several planes per tile row, each kind of input and gradient.
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (int64_t k : {2, 3})
        for (int64_t s : {1, 2, 3}) {
            const int64_t w = t == DType::f16 ? 30 : 29;  // fp16 takes this kernel for even rows only
            for (const Pooling& p :
                 {Pooling{{2, 3, 71, w}, {k, k}, {s, s}, {0, 0}, {0, 0}, {1, 1}, true},
                  Pooling{{1, 2, 3, 40, 32}, {1, k, k}, {1, s, s}, {0, k - 1, 1}, {0, 1, k + 1}, {1, 1, 1}}}) {
                const MaxPoolGradPlan plan = plan_of(t, p);
                EXPECT_EQ(kernel_of(plan), fast_kernel_name(p, t, Layout::narrow));
                expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                       gradient_values(kind % 4, t, plan.dy_shape, rng));
                ++kind;
            }
        }
}

TEST_P(MaxPoolGradGpu, FastKernelOnlyWherePlanesFillAQuarterOfTheirTiles) {
    // Planes of 7 x 8 (k3 s3, 5% of a narrow tile) and 125 x 7 (k3 s2, 21% of four narrow tiles) leave most of a
    // tile's threads idle: other kernels take them (H100: 8939 -> 1825 us and 286 -> 141 us).
    SeededRng rng;
    const DType t = GetParam();
    for (const Pooling& p : {Pooling{{3, 5, 7, 8}, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
                             Pooling{{2, 3, 125, 8}, {3, 3}, {2, 2}, {0, 0}, {2, 2}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_FALSE(kernel_of(plan).starts_with("maxpool_grad_fast")) << kernel_of(plan);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false));
    }
}

TEST_P(MaxPoolGradGpu, FastKernelOn3dPooling) {
    // Cube windows of 2 and 3, strides 1-3 on every axis: kernels/maxpool_grad_fast.hlsl with DEPTH = 1 for windows
    // of 2 at stride 1 (tiles cut at odd sizes along each axis: several tiles of depth, rows and columns), the cell
    // kernels where windows do not overlap, the two-pass kernel for the others; paddings up to past the window,
    // ceil mode, and each kind of input (ties, specials, raw bits) and gradient (order-sensitive sums, specials,
    // denormals).
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (int64_t k : {2, 3})
        for (int64_t s : {1, 2, 3}) {
            const int64_t w = t == DType::f16 ? 66 : 67;  // fp16 takes this kernel for even rows only
            for (const Pooling& p :
                 {Pooling{{1, 2, 9, 11, w}, {k, k, k}, {s, s, s}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, true},
                  Pooling{{2, 1, 7, 10, w}, {k, k, k}, {s, s, s}, {k - 1, 1, 1}, {1, k + 1, 0}, {1, 1, 1}}}) {
                const MaxPoolGradPlan plan = plan_of(t, p);
                const std::string expected = fast_kernel_name(p, t, Layout::cube), kernel = kernel_of(plan);
                if (k == 2 && s == 1)
                    EXPECT_EQ(kernel, cube_k2s1_kernel(p, t));
                else if (!expected.starts_with("maxpool_grad_fast"))
                    EXPECT_EQ(kernel, expected);
                else if (k <= s)
                    EXPECT_EQ(kernel, cell_kernel(t, p));
                else
                    EXPECT_TRUE(is_twopass(kernel, t)) << kernel;
                expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                       gradient_values(kind % 4, t, plan.dy_shape, rng));
                ++kind;
            }
        }
    // Not a cube (the depth pooled otherwise), or fp16 rows of odd length: the two-pass kernel.
    for (const Pooling& p : {Pooling{{1, 2, 6, 7, 8}, {2, 3, 3}, {2, 2, 2}, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}},
                             Pooling{{1, 2, 6, 7, 8}, {3, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_TRUE(is_twopass(kernel_of(plan), t));
    }
}

TEST_P(MaxPoolGradGpu, WalkKernelOn3dWindowsOf3Stride2Padding1) {
    // kernels/maxpool_grad_walk.hlsl: several tiles of rows and columns (8 x 32 windows each) cut at odd sizes,
    // odd and even depths, end paddings of 0-2 and ceil mode (windows past the input, cells cut short), each kind
    // of input (ties, specials, raw bits) and gradient (order-sensitive sums, specials, denormals).
    SeededRng rng;
    const DType t = GetParam();
    const int64_t w = t == DType::f16 ? 66 : 67;  // fp16 takes this kernel for even rows only
    const std::string walk = "maxpool_grad_walk3d_k3s2p1_" + dtype_suffix(t);
    int kind = 0;
    for (const Pooling& p : {Pooling{{1, 2, 9, 37, w}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
                             Pooling{{2, 1, 8, 18, w}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, true},
                             Pooling{{1, 3, 4, 17, 2 * w}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {2, 1, 0}, {1, 1, 1}},
                             Pooling{{2, 2, 2, 16, 32}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan), walk);
        for (int repeat = 0; repeat < 2; ++repeat, ++kind)
            expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                   gradient_values(kind % 4, t, plan.dy_shape, rng));
    }
    // Coordinates past every cell (in > 2 * out), another padding or stride, or planes of windows that fill less than
    // a quarter of a tile (7 x 7 of 8 x 32; 1 x 1): the two-pass kernel.
    for (const Pooling& p : {Pooling{{1, 2, 5, 6, 8}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 5, 6, 8}, {3, 3, 3}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}},
                             Pooling{{2, 3, 5, 14, 14}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
                             Pooling{{2, 2, 2, 2, 2}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_TRUE(is_twopass(kernel_of(plan), t));
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false));
    }
    // Grids of 3 groups per dispatch.
    const MaxPoolGradPlan plan = plan_of(t, {{3, 2, 5, 20, 70}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}});
    EXPECT_EQ(build_program(plan, kFewGroups).kernel, walk);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false),
                           gpu_with_limits(kFewGroups));
}

TEST_P(MaxPoolGradGpu, CellKernelForWindowsThatDoNotOverlap) {
    // kernels/maxpool_grad.hlsl with CELLS: a thread per window writes its cell. Tails past the last window, gaps
    // (stride past the window), dilation within the stride, paddings beyond the window (windows of only padding),
    // ceil mode, 4-D and 5-D, each kind of input (ties, specials, raw bits) and gradient.
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 37, 70}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, true},
                             Pooling{{1, 2, 9, 11, 66}, {2, 2, 2}, {2, 2, 2}, {1, 0, 2}, {0, 1, 0}, {1, 1, 1}, true},
                             Pooling{{2, 2, 17, 30}, {2, 3}, {3, 4}, {2, 4}, {1, 3}, {1, 1}},
                             Pooling{{1, 3, 19, 26}, {2, 2}, {4, 4}, {1, 2}, {2, 0}, {2, 2}},
                             Pooling{{2, 1, 7, 5, 12}, {1, 2, 2}, {2, 2, 2}, {0, 3, 4}, {1, 2, 4}, {1, 1, 1}, true}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan), "maxpool_grad_cells_" + dtype_suffix(t));
        for (int repeat = 0; repeat < 2; ++repeat, ++kind)
            expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                   gradient_values(kind % 4, t, plan.dy_shape, rng));
    }
    // fp16 cells that would split a word (odd stride or padding of the columns): another kernel.
    for (const Pooling& p : {Pooling{{1, 2, 8, 30}, {2, 2}, {3, 3}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 8, 30}, {2, 2}, {2, 2}, {0, 1}, {0, 1}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan).starts_with("maxpool_grad_cells_"), t == DType::f32);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false));
    }
}

TEST_P(MaxPoolGradGpu, CellRowsKernelForFp32CellsOfManyRows) {
    // fp32 windows that do not overlap, in cells of 8 rows or more (the depth's and rows' strides), sparse or not,
    // on rows that fill a workgroup's threads: maxpool_grad_cellrows_f32, a thread per column of a row of windows'
    // cells. Rows of 79, 200, 40, 33 and 64 columns (3, 1, 6, 7 and 4 rows of windows a workgroup), padding,
    // dilation within the stride, ceil mode (last cells cut short), windows of only padding; chunks of planes and
    // several dispatches. fp16 keeps the other kernels, the same bits.
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{1, 2, 13, 11, 79}, {4, 4, 4}, {4, 4, 4}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, true},
                             Pooling{{2, 1, 10, 9, 200}, {2, 2, 2}, {3, 3, 3}, {1, 0, 1}, {0, 1, 0}, {1, 2, 1}},
                             Pooling{{2, 3, 37, 40}, {3, 2}, {8, 2}, {2, 0}, {1, 0}, {1, 1}},
                             Pooling{{1, 2, 4, 5, 33}, {2, 2, 2}, {4, 4, 4}, {3, 3, 3}, {3, 3, 3}, {1, 1, 1}},
                             Pooling{{3, 2, 7, 8, 64}, {2, 2, 3}, {3, 3, 3}, {0, 1, 1}, {0, 0, 1}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const std::string kernel = kernel_of(plan);
        EXPECT_EQ(kernel == "maxpool_grad_cellrows_f32", t == DType::f32) << kernel;
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
    const MaxPoolGradPlan split = plan_of(t, {{4, 5, 8, 9, 11}, {2, 2, 2}, {4, 4, 4}, {1, 0, 0}, {0, 0, 0}, {1, 1, 1}});
    const GpuProgram program = build_program(split, kTinyLimits);
    ASSERT_GT(chunks(program), 1u);
    EXPECT_EQ(program.kernel == "maxpool_grad_cellrows_f32", t == DType::f32) << program.kernel;
    expect_gpu_matches_cpu(split, random_tensor(t, split.x_shape, rng), random_tensor(t, split.dy_shape, rng, false),
                           gpu_with_limits(kTinyLimits));
    // Cells of 4 rows (2-D strides of 4), rows of 130 columns (a row of windows a workgroup, 126 threads idle) and of
    // 300 (longer than a workgroup): the cell kernels.
    for (const Pooling& p : {Pooling{{2, 3, 17, 36}, {3, 3}, {4, 4}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 9, 9, 130}, {3, 3, 3}, {3, 3, 3}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 9, 9, 300}, {3, 3, 3}, {3, 3, 3}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}}) {
        const std::string kernel = kernel_of(plan_of(t, p));
        EXPECT_FALSE(kernel.starts_with("maxpool_grad_cellrows")) << kernel;
        EXPECT_TRUE(t != DType::f32 || kernel == "maxpool_grad_cells_f32") << kernel;
    }
}

TEST_P(MaxPoolGradGpu, SparseCellsTakeTheTwoPassKernel) {
    // Windows that do not overlap but whose cells hold 8 elements a window tap or more (maxpool_grad_dispatch.cpp's
    // sparse_cells) take the two-pass kernel (fp32 cells of 8 rows or more: the cell rows kernel, tested above): its
    // scatter (dX filled with +0, then each window's chosen element stored) where a plane has more than TWOPASS_RUN
    // elements a window, else its gather. Odd rows and planes (fp16 words shared by two cells, and by two rows), ceil
    // mode (last cells cut short), windows spanning the stride, windows of only padding, an axis untouched by the
    // windows, chunks of planes.
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 13, 6, 21}, {2, 2, 2}, {4, 4, 4}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, true},
                             Pooling{{3, 4, 23, 15}, {2, 2}, {4, 8}, {1, 1}, {1, 1}, {1, 1}, true},
                             Pooling{{2, 3, 9, 17, 34}, {2, 2, 2}, {4, 4, 4}, {0, 0, 0}, {0, 0, 0}, {3, 3, 3}},
                             Pooling{{1, 2, 9, 11, 13}, {2, 2, 2}, {4, 4, 4}, {3, 3, 3}, {3, 3, 3}, {1, 1, 1}},
                             Pooling{{2, 2, 5, 9, 13}, {1, 2, 2}, {2, 4, 4}, {0, 1, 0}, {1, 0, 2}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const std::string kernel = kernel_of(plan);
        EXPECT_TRUE(is_twopass(kernel, t) || (t == DType::f32 && kernel == "maxpool_grad_cellrows_f32")) << kernel;
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
    const MaxPoolGradPlan split = plan_of(t, {{8, 5, 5, 9, 11}, {2, 2, 2}, {4, 4, 4}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}});
    ASSERT_GT(chunks(build_program(split, kTinyLimits)), 1u);
    expect_gpu_matches_cpu(split, random_tensor(t, split.x_shape, rng), random_tensor(t, split.dy_shape, rng, false),
                           gpu_with_limits(kTinyLimits));
    // Below 8 elements a tap (2-D cells of 4 x 4 for windows of 2 x 2): the cell kernels.
    const Pooling denser{{2, 3, 17, 35}, {2, 2}, {4, 4}, {0, 0}, {0, 0}, {1, 1}};
    EXPECT_EQ(kernel_of(plan_of(t, denser)), cell_kernel(t, denser));
}

// A random pooling whose windows are one tap on every axis: strides 1-4, dilations 1-3 (no effect on one tap),
// paddings up to past the input (windows of only padding), ceil mode (a last window past the input).
Pooling random_one_tap_pooling(size_t spatial, std::mt19937_64& rng) {
    const auto pick = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
    Pooling p;
    p.x = {1 + pick(3), 1 + pick(3)};
    for (size_t j = 0; j < spatial; ++j) {
        p.x.push_back(1 + pick(spatial == 3 ? 9 : 23));
        p.window.push_back(1), p.strides.push_back(1 + pick(4)), p.dilations.push_back(1 + pick(3));
        p.start.push_back(pick(3) == 0 ? pick(5) : 0), p.end.push_back(pick(3) == 0 ? pick(5) : 0);
    }
    p.ceil_mode = pick(2) == 0;
    return p;
}

TEST_P(MaxPoolGradGpu, SelectionKernelForWindowsOfOneTap) {
    // kernels/maxpool_grad_select.hlsl: windows of one tap on every axis choose their tap, X unread: dY scattered
    // at the taps (-0 becomes +0, NaNs quieted: the CPU's +0 + dY), +0 elsewhere. A copy (k1 s1), strides with and
    // without dilation, start and end paddings (taps in the padding: nothing chosen), ceil mode (a last tap past
    // the input), an axis of only padding, odd fp16 sizes (words across rows and planes), 4-D and 5-D.
    SeededRng rng;
    const DType t = GetParam();
    const std::string select = kernel_name({Family::select, t});
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 9, 13}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{3, 2, 31, 2}, {1, 1}, {3, 3}, {0, 0}, {0, 0}, {2, 3}},
                             Pooling{{2, 3, 8, 17, 13}, {1, 1, 1}, {3, 3, 3}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, true},
                             Pooling{{1, 2, 10, 11}, {1, 1}, {2, 2}, {1, 2}, {2, 1}, {1, 1}, true},
                             Pooling{{2, 2, 1, 5, 7}, {1, 1, 1}, {1, 2, 1}, {1, 0, 3}, {0, 1, 0}, {1, 2, 3}},
                             Pooling{{3, 3, 7, 9}, {1, 1}, {1, 2}, {0, 1}, {0, 0}, {3, 1}},
                             Pooling{{2, 3, 4, 6, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 2, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan), select);
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
    for (int trial = 0; trial < 16; ++trial) {
        const MaxPoolGradPlan plan = plan_of(t, random_one_tap_pooling(trial % 2 == 0 ? 2 : 3, rng));
        EXPECT_EQ(kernel_of(plan), select);
        expect_gpu_matches_cpu(plan, input_values(Values(trial % 3), t, plan.x_shape, rng),
                               gradient_values(2, t, plan.dy_shape, rng));
    }
}

TEST_P(MaxPoolGradGpu, SelectionKernelSignsAndNans) {
    // Hand-checked: 1 x 1 x 2 x 5 pooled by windows of 1 x 1, stride 1 x 2, start padding 0 x 1: the taps are
    // columns 1 and 3 (window 0's tap, column -1, lies in the padding), dY = [[a, b, c], [d, e, f]] lands as
    // [[0, b, 0, c, 0], [0, e, 0, f, 0]]; -0 becomes +0 and a signalling NaN is quieted.
    const DType t = GetParam();
    const MaxPoolGradPlan plan = plan_of(t, {{1, 1, 2, 5}, {1, 1}, {1, 2}, {0, 1}, {0, 0}, {1, 1}});
    ASSERT_EQ(kernel_of(plan), kernel_name({Family::select, t}));
    const bool half = t == DType::f16;
    const uint32_t minus_zero = half ? 0x8000u : 0x80000000u, nan = half ? 0x7D01u : 0x7F800001u;
    const uint32_t quiet_nan = half ? 0x7F01u : 0x7FC00001u, one = half ? 0x3C00u : 0x3F800000u;
    const uint32_t minus_two = half ? 0xC000u : 0xC0000000u;
    const std::vector<uint32_t> dy_bits{one, minus_zero, nan, minus_two, one, minus_zero};
    const std::vector<uint32_t> expected{0, 0, 0, quiet_nan, 0, 0, one, 0, 0, 0};
    const size_t size = half ? 2 : 4;
    SeededRng rng;
    Tensor x = random_tensor(t, plan.x_shape, rng), dy(TensorInfo{t, plan.dy_shape});
    for (size_t i = 0; i < dy_bits.size(); ++i) std::memcpy(dy.buffer.data() + i * size, &dy_bits[i], size);
    const Tensor dx = run_on(gpu(), plan, {&x, &dy});
    for (size_t i = 0; i < expected.size(); ++i) {
        uint32_t bits = 0;
        std::memcpy(&bits, dx.buffer.data() + i * size, size);
        EXPECT_EQ(bits, expected[i]) << "element " << i;
    }
    expect_gpu_matches_cpu(plan, x, dy);
}

TEST_P(MaxPoolGradGpu, SelectionKernelMergesAxesCopiedWhole) {
    // The geometry (interface/maxpool_grad_select.h): k1 s1 is one axis of every element, a copy; an axis copied
    // whole inside a strided one stays an axis of its own (merged only into an axis copied whole).
    namespace select = kernels::maxpool_grad_select;
    const DType t = GetParam();
    const auto axis = [](const GpuProgram& program, uint32_t a) {
        const uint32_t* w = &program.constants[0][a * select::SELECT_AXIS_WORDS];
        return std::array<uint32_t, 4>{w[0], w[1], w[2], w[3]};
    };
    const GpuProgram copy =
        build_program(plan_of(t, {{2, 3, 5, 7}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {2, 3}}), kRoomyLimits);
    ASSERT_EQ(copy.kernel, kernel_name({Family::select, t}));
    EXPECT_EQ(axis(copy, 3), (std::array<uint32_t, 4>{210, kernels::NO_SHIFT, select::ARITHMETIC, 1}));
    EXPECT_EQ(axis(copy, 0), (std::array<uint32_t, 4>{1, 0, select::ARITHMETIC, 0}));
    EXPECT_EQ(copy.constants[0].size(), select::SELECT_TABLES_WORD);
    // 3-D: depth copied whole (merged into the planes), rows strided by 2 from padding 1, columns copied whole.
    const GpuProgram rows = build_program(
        plan_of(t, {{2, 1, 3, 4, 8}, {1, 1, 1}, {1, 2, 1}, {0, 1, 0}, {0, 0, 0}, {1, 1, 1}}), kRoomyLimits);
    ASSERT_EQ(rows.kernel, kernel_name({Family::select, t}));
    EXPECT_EQ(axis(rows, 1), (std::array<uint32_t, 4>{6, kernels::NO_SHIFT, select::ARITHMETIC, 24}));
    EXPECT_EQ(axis(rows, 2), (std::array<uint32_t, 4>{4, 2, select::SELECT_TABLES_WORD, 8}));
    EXPECT_EQ(axis(rows, 3), (std::array<uint32_t, 4>{8, 3, select::ARITHMETIC, 1}));
    // Rows 0-3: windows 0-2 tap rows -1 (padding), 1 and 3.
    const std::vector<uint32_t> table(rows.constants[0].begin() + select::SELECT_TABLES_WORD, rows.constants[0].end());
    EXPECT_EQ(table, (std::vector<uint32_t>{select::NOT_SELECTED, 8, select::NOT_SELECTED, 16}));
}

TEST_P(MaxPoolGradGpu, SelectionKernelOnlyWhereDxAndDyFitABinding) {
    // Tensors larger than a binding are cut into chunks of planes, which the selection kernel does not take: the
    // cell kernel does (a thread per window), with the same bits.
    SeededRng rng;
    const DType t = GetParam();
    const MaxPoolGradPlan plan = plan_of(t, {{8, 8, 7, 10}, {1, 1}, {2, 2}, {0, 0}, {0, 0}, {1, 1}});
    EXPECT_EQ(kernel_of(plan), kernel_name({Family::select, t}));
    const GpuProgram chunked = build_program(plan, kTinyLimits);
    EXPECT_NE(chunked.kernel, kernel_name({Family::select, t}));
    EXPECT_GT(chunks(chunked), 1u);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng),
                           gpu_with_limits(kTinyLimits));
}

TEST_P(MaxPoolGradGpu, CellWordsKernelForFp16CellsThatSplitAWord) {
    // kernels/maxpool_grad.hlsl with CELL_WORDS: fp16 windows that do not overlap where a cell's columns start or
    // end inside a word (odd row length, stride or padding; planes of odd size, so words straddle rows and planes),
    // which the fast kernel does not take either; a shared word is stored by the cell of its second half, the first
    // half's window's choice from groupshared memory. fp32 takes the cell kernel. An earlier main sent these to its
    // general kernel (3-D k2s2 of odd sizes: 16x slower on an H100).
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 5, 13, 15}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{2, 3, 11, 17}, {2, 2}, {3, 3}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 9, 21}, {2, 3}, {3, 3}, {1, 1}, {1, 2}, {1, 1}, true},
                             Pooling{{3, 3, 7, 9}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 6, 19}, {2, 2}, {4, 4}, {0, 1}, {1, 0}, {2, 3}},
                             Pooling{{2, 2, 9, 1}, {3, 1}, {3, 1}, {0, 0}, {0, 0}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan), cell_kernel(t, p));
        for (int repeat = 0; repeat < 2; ++repeat, ++kind)
            expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                   gradient_values(kind % 4, t, plan.dy_shape, rng));
    }
    // Chunks of planes (an even number each: odd planes) over several dispatches.
    const Pooling chunked{{8, 8, 7, 9}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}};
    const MaxPoolGradPlan plan = plan_of(t, chunked);
    EXPECT_EQ(build_program(plan, kTinyLimits).kernel, cell_kernel(t, chunked));
    EXPECT_GT(chunks(build_program(plan, kTinyLimits)), 1u);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false),
                           gpu_with_limits(kTinyLimits));
}

TEST_P(MaxPoolGradGpu, CellWordsSharedWordsAcrossWorkgroups) {
    // CELL_WORDS: a word's first half lies in the cell before along the row, or (odd rows) at the end of the row
    // before: that window's choice comes from groupshared memory where a thread of the same workgroup of 256
    // windows chose it, else the thread chooses it again. Each case has several workgroups of windows: odd rows
    // with 4 windows (the row before's last window in the group before at group starts), a single window per row
    // (the row before in the same cell), a first cell of only padding (rows start in the second cell), a 3-D
    // pooling of odd sizes, and chunks over several dispatches. Ties, specials and raw bits in X.
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{3, 9, 13, 11}, {2, 2}, {3, 3}, {1, 0}, {0, 1}, {1, 1}},
                             Pooling{{8, 40, 7, 5}, {2, 5}, {3, 5}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{5, 9, 5, 9}, {2, 3}, {2, 3}, {0, 3}, {0, 0}, {1, 1}, true},
                             Pooling{{4, 5, 7, 9, 11}, {2, 2, 2}, {3, 3, 3}, {0, 1, 0}, {1, 0, 0}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        ASSERT_GT(element_count(plan.dy_shape), 2 * 256);
        // fp16: groupshared words for cells of 9 elements or more (3 x 3, 3 x 5, 3 x 3 x 3), atomics for 2 x 3
        const std::string expected = cell_kernel(t, p);
        EXPECT_EQ(expected.ends_with("_shared_f16"), t == DType::f16 && p.x[2] != 5);
        EXPECT_EQ(kernel_of(plan), expected);
        expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                               gradient_values(kind % 4, t, plan.dy_shape, rng));
        ++kind;
        EXPECT_EQ(build_program(plan, kTinyLimits).kernel, expected);
        expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                               gradient_values(kind % 4, t, plan.dy_shape, rng), gpu_with_limits(kTinyLimits));
        ++kind;
    }
}

TEST(MaxPoolGradGpuCellWords, EmptyCellsLeaveTheNeighboursHalf) {
    // kernels/maxpool_grad.hlsl, CELL_WORDS: a cell of no columns (here the last window of each row, only padding
    // past the input in ceil mode) starting at an odd element shares its word with column 0 of the next row. It
    // must not touch that word: it cleared that half (column-0 elements became 0; 4 of them here before the fix).
    // Each window's maximum is its first column (of its heavier row: every other row of the tensor weighs 4 more),
    // so column 0 of a row in each row cell carries a dY; the empty cell reaches the shared word after the window
    // that set it. Both variants: cells of 3 x 3 (_shared; the next row cell's window) and of 2 x 3 (atomics on the
    // halves; the window of its own row cell, where it chose its second row's). Fixed data, no seed.
    for (const auto& [pooling, kernel] : {std::pair{Pooling{{2, 2, 9, 3}, {1, 2}, {3, 3}, {0, 0}, {0, 0}, {1, 1}, true},
                                                    "maxpool_grad_cellwords_shared_f16"},
                                          std::pair{Pooling{{2, 2, 9, 3}, {2, 2}, {2, 3}, {0, 0}, {0, 0}, {1, 1}, true},
                                                    "maxpool_grad_cellwords_f16"}}) {
        const MaxPoolGradPlan plan = plan_of(DType::f16, pooling);
        ASSERT_EQ(cell_kernel(DType::f16, pooling), kernel);
        ASSERT_EQ(kernel_of(plan), kernel);
        std::vector<double> x(element_count(plan.x_shape)), dy(element_count(plan.dy_shape));
        for (size_t i = 0; i < x.size(); ++i) x[i] = double(3 - i % 3 + 4 * (i / 3 % 2));
        for (size_t i = 0; i < dy.size(); ++i) dy[i] = double(1 + i % 7) * (i % 2 ? -1 : 1);
        expect_gpu_matches_cpu(plan, tensor_from(DType::f16, plan.x_shape, x),
                               tensor_from(DType::f16, plan.dy_shape, dy));
    }
}

TEST_P(MaxPoolGradGpu, TiesPaddingOnlyWindowsAndGaps) {
    SeededRng rng;
    const DType t = GetParam();
    // All equal (+0 and -0 equal too): every window picks its first non-padding element.
    Pooling overlap{{2, 2, 13, 17}, {3, 4}, {1, 2}, {2, 0}, {1, 3}, {1, 1}};
    MaxPoolGradPlan plan = plan_of(t, overlap);
    Tensor x = tensor_from(t, plan.x_shape, std::vector<double>(element_count(plan.x_shape), 5.0));
    expect_gpu_matches_cpu(plan, x, random_tensor(t, plan.dy_shape, rng, false));
    x = random_small_integers(t, plan.x_shape, rng, 0);
    map_bits(x, [&](uint32_t v) { return rng() % 2 ? v ^ 0x80000000u : v; });  // ±0
    expect_gpu_matches_cpu(plan, x, random_tensor(t, plan.dy_shape, rng, false));
    // Paddings at and beyond the window: windows of only padding are dropped; dilation skips over the input.
    for (const Pooling& p : {Pooling{{1, 3, 6, 5}, {2, 2}, {1, 1}, {3, 2}, {4, 2}, {1, 1}},
                             Pooling{{1, 2, 2, 7}, {2, 2}, {1, 2}, {1, 3}, {2, 3}, {3, 3}},
                             Pooling{{2, 1, 1, 2}, {1, 2}, {1, 1}, {0, 1}, {0, 2}, {1, 3}}}) {
        plan = plan_of(t, p);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_small_integers(t, plan.dy_shape, rng));
    }
    // Strides past the window: elements in the gaps get zeros.
    plan = plan_of(t, {{2, 2, 5, 9, 14}, {1, 2, 2}, {3, 3, 3}, {0, 0, 1}, {0, 1, 0}, {1, 1, 1}, true});
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false));
}

TEST_P(MaxPoolGradGpu, SumsSpecialGradientsExactly) {
    SeededRng rng;
    const DType t = GetParam();
    // Overlapping windows (up to 16 per element) so that each dX element sums many dY values.
    const MaxPoolGradPlan plan = plan_of(t, {{2, 3, 19, 21}, {4, 4}, {1, 1}, {2, 1}, {2, 1}, {1, 1}});
    const Tensor x = random_small_integers(t, plan.x_shape, rng, 1);
    for (int kind = 2; kind < 4; ++kind) expect_gpu_matches_cpu(plan, x, gradient_values(kind, t, plan.dy_shape, rng));
    // inf + -inf: the default NaN, which later additions keep.
    Tensor dy = tensor_from(t, plan.dy_shape, std::vector<double>(element_count(plan.dy_shape), 1.0));
    map_bits(dy, [&](uint32_t v) { return rng() % 3 == 0 ? (rng() % 2 ? 0x7F800000u : 0xFF800000u) : v; });
    expect_gpu_matches_cpu(plan, x, dy);
    // NaNs of two payloads, signalling (quieted by the sum), and infinities: the first NaN of each sum stays.
    const bool half = t == DType::f16;
    const uint64_t half_bits = half ? 0x3800 : 0x3F000000, nan_a = half ? 0xFD01 : 0xFF812345,
                   nan_b = half ? 0x7C2A : 0x7F80ABCD, inf = half ? 0x7C00 : 0x7F800000;
    std::vector<uint64_t> bits(element_count(plan.dy_shape), half_bits);
    for (auto& b : bits) {
        const uint64_t pick = rng() % 40;
        b = pick == 0 ? nan_a : pick == 1 ? nan_b : pick == 2 ? inf : b;
    }
    dy = tensor_from_bits(t, plan.dy_shape, bits);
    const Tensor constant = tensor_from(t, plan.x_shape, std::vector<double>(element_count(plan.x_shape), 1.0));
    expect_gpu_matches_cpu(plan, constant, dy);  // each window picks its first element: few overlaps
    expect_gpu_matches_cpu(plan, x, dy);         // ties and small values: elements picked by many windows
}

// The geometries no specialised kernel takes: dilations, windows other than 2 or 3, windows of different sizes per
// axis, odd 3-D sizes (fp16 words across rows and planes), ceil mode.
TEST_P(MaxPoolGradGpu, TwoPassKernelOnDilatedOddAndUnevenWindows) {
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 30, 41}, {4, 4}, {1, 2}, {2, 3}, {1, 2}, {2, 1}},
                             Pooling{{2, 3, 19, 23}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {2, 2}},
                             Pooling{{3, 2, 21, 17}, {2, 5}, {4, 4}, {0, 2}, {0, 2}, {1, 1}},
                             Pooling{{3, 2, 32, 9}, {5, 5}, {3, 3}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{3, 4, 8, 21, 17}, {3, 5, 2}, {2, 2, 3}, {0, 2, 0}, {0, 0, 0}, {3, 1, 1}, true},
                             Pooling{{1, 3, 5, 11, 13}, {3, 3, 5}, {3, 4, 3}, {1, 0, 0}, {1, 0, 0}, {2, 2, 3}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_TRUE(is_twopass(kernel_of(plan), t));
        expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                               gradient_values(kind % 4, t, plan.dy_shape, rng));
        ++kind;
    }
}

// Its two phases per chunk: choose (a thread per window, the choices in a scratch buffer of a uint per dY element),
// then gather (a thread per dX unit), the gather waiting for the choices.
TEST_P(MaxPoolGradGpu, TwoPassKernelChoosesThenGathers) {
    const DType t = GetParam();
    const MaxPoolGradPlan plan = plan_of(t, {{2, 3, 19, 23}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {2, 2}});
    const GpuProgram program = build_program(plan, kRoomyLimits);
    ASSERT_EQ(program.steps.size(), 2u);
    EXPECT_EQ(program.binding_count, 6u);
    EXPECT_EQ(program.scratch_bytes, padded_bytes(4 * element_count(plan.dy_shape)));
    // The geometry's header as a uniform buffer (binding 3), the whole geometry, with its tables, as storage (5).
    ASSERT_EQ(program.binding_types.size(), 6u);
    EXPECT_EQ(program.binding_types[3], BindingType::uniform);
    EXPECT_EQ(program.binding_types[5], BindingType::storage);
    const auto choose = pushed_params<kernels::maxpool_grad::Params>(program.steps[0]);
    const auto gather = pushed_params<kernels::maxpool_grad::Params>(program.steps[1]);
    EXPECT_EQ(choose.phase, kernels::maxpool_grad::PHASE_CHOOSE);
    const bool half = t == DType::f16;  // k3 d2 columns overlap: fp16 gathers long runs
    const uint64_t run = half ? kernels::maxpool_grad::TWOPASS_LONG_RUN : kernels::maxpool_grad::TWOPASS_RUN;
    EXPECT_EQ(program.kernel, half ? "maxpool_grad_twopass_long_f16" : "maxpool_grad_twopass_f32");
    EXPECT_EQ(choose.count, element_count(plan.dy_shape));
    EXPECT_EQ(gather.phase, kernels::maxpool_grad::PHASE_GATHER);
    EXPECT_EQ(gather.count, ceil_div<uint64_t>(element_count(plan.x_shape), run));
    EXPECT_FALSE(program.steps[0].barrier_before);
    EXPECT_TRUE(program.steps[1].barrier_before);
    EXPECT_EQ(program.steps[1].bindings[4], (BufferWindow{4, 0, program.scratch_bytes}));
    const uint64_t geometry_bytes = padded_bytes(4 * program.constants.at(0).size());
    EXPECT_EQ(program.steps[1].bindings[3], (BufferWindow{3, 0, 16 * kernels::maxpool_grad::GEOMETRY_HEADER_UINT4S}));
    EXPECT_EQ(program.steps[1].bindings[5], (BufferWindow{3, 0, geometry_bytes}));
    // The covers of every coordinate of the depth (1) and rows (19) in tables after the header (the columns' windows
    // are a range per row segment).
    const std::vector<uint32_t>& geometry = program.constants.at(0);
    EXPECT_EQ(geometry.at(kernels::maxpool_grad::PLANE_SIZES_WORD + 2), kernels::maxpool_grad::COVER_TABLES_WORD);
    EXPECT_EQ(geometry.size(), kernels::maxpool_grad::COVER_TABLES_WORD + 1 + 19);
}

// The gather takes TWOPASS_LONG_RUN elements a thread for fp16 where the columns' windows overlap (span past the
// stride) and have 3 taps or more, TWOPASS_RUN elsewhere (fp32 always): runs across rows shorter than a run (several
// segments, some of one element) and across planes, a chunk's last run cut short (odd plane sizes in 4 KiB bindings),
// fp16 words whole; ties, NaNs, specials.
TEST_P(MaxPoolGradGpu, TwoPassGatherRunsLongWhereColumnsOverlap) {
    SeededRng rng;
    const DType t = GetParam();
    namespace k = kernels::maxpool_grad;
    struct Case {
        Pooling pooling;
        bool long_runs;
    };
    int kind = 0;
    for (const Case& c : {Case{{{3, 2, 7, 5}, {4, 4}, {5, 1}, {1, 2}, {2, 1}, {1, 1}}, true},
                          Case{{{2, 3, 9, 3}, {2, 5}, {2, 2}, {0, 2}, {1, 2}, {1, 1}, true}, true},
                          Case{{{2, 3, 11, 13}, {3, 2}, {3, 1}, {1, 0}, {1, 0}, {1, 2}}, false},  // 2 column taps
                          Case{{{2, 3, 11, 13}, {4, 2}, {2, 2}, {3, 0}, {3, 0}, {1, 1}}, false},  // span 2 = stride
                          Case{{{2, 2, 9, 7, 11}, {2, 3, 1}, {1, 2, 2}, {0, 1, 0}, {1, 1, 0}, {2, 1, 1}}, false}}) {
        const MaxPoolGradPlan plan = plan_of(t, c.pooling);
        const GpuProgram program = build_program(plan, kRoomyLimits);
        const bool long_runs = c.long_runs && t == DType::f16;
        ASSERT_EQ(program.kernel, kernel_name({Family::twopass, t, Layout::planar, 0, 0, long_runs}));
        const uint64_t run = long_runs ? k::TWOPASS_LONG_RUN : k::TWOPASS_RUN;
        EXPECT_EQ(pushed_params<k::Params>(program.steps.at(1)).count,
                  ceil_div<uint64_t>(element_count(plan.x_shape), run));
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
    // Chunks of planes of 143 elements in 4 KiB bindings: chunks end inside a run.
    const MaxPoolGradPlan split = plan_of(t, {{6, 7, 13, 11}, {4, 4}, {4, 1}, {1, 2}, {2, 1}, {1, 1}});
    ASSERT_GT(chunks(build_program(split, kTinyLimits)), 1u);
    ASSERT_EQ(build_program(split, kTinyLimits).kernel,
              kernel_name({Family::twopass, t, Layout::planar, 0, 0, t == DType::f16}));
    expect_gpu_matches_cpu(split, input_values(Values::ties, t, split.x_shape, rng),
                           gradient_values(2, t, split.dy_shape, rng), gpu_with_limits(kTinyLimits));
    // The choose by rows with long runs (rows dilated: undilated stride-1 windows take the bands kernel).
    const MaxPoolGradPlan rows = plan_of(t, {{2, 2, 23, 13}, {6, 6}, {1, 1}, {0, 0}, {0, 0}, {2, 1}});
    ASSERT_EQ(kernel_of(rows), kernel_name({Family::twopass, t, Layout::planar, k::CHOOSE_ROWS, 0, t == DType::f16}));
    expect_gpu_matches_cpu(rows, input_values(Values::specials, t, rows.x_shape, rng),
                           gradient_values(1, t, rows.dy_shape, rng));
}

// Pooling with axes of a single tap (one coordinate, one window reaching it) is the pooling of the other axes: every
// family sees it so. A 3-D cube window of 2 at stride 1 over a depth of one takes the 2-D fast kernel (wide or narrow
// tiles), or over rows of one the depth and columns as 2-D; a 3-D window of 3 at stride 2 padded by 1 over a depth of
// one the 2-D walk.
TEST_P(MaxPoolGradGpu, SingleTapAxesTakenOutBeforeEveryFamily) {
    SeededRng rng;
    const DType t = GetParam();
    const bool half = t == DType::f16;
    const int64_t narrow = half ? 30 : 29, wide = half ? 70 : 69;  // fp16: the fast kernel's even rows
    struct Case {
        Pooling pooling;
        Variant variant;
    };
    int kind = 0;
    for (const Case& c : {Case{{{2, 3, 1, 13, narrow}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}},
                               {Family::fast, t, Layout::narrow, 2, 1}},
                          Case{{{1, 2, 1, 9, wide}, {2, 2, 2}, {1, 1, 1}, {1, 0, 0}, {0, 1, 0}, {1, 1, 1}},
                               {Family::fast, t, Layout::planar, 2, 1}},
                          Case{{{2, 2, 9, 1, wide}, {2, 2, 2}, {1, 1, 1}, {0, 1, 0}, {1, 0, 1}, {1, 1, 1}, true},
                               {Family::fast, t, Layout::planar, 2, 1}},
                          Case{{{2, 3, 1, 11, wide}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
                               {Family::walk2d, t, Layout::planar, 3, 2}}}) {
        const MaxPoolGradPlan plan = plan_of(t, c.pooling);
        EXPECT_EQ(kernel_of(plan), kernel_name(c.variant));
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
}

// Rows of 2^16 windows or more: no cover tables; the gather computes each element's covers.
TEST_P(MaxPoolGradGpu, TwoPassKernelComputesCoversWhereNoTableFits) {
    SeededRng rng;
    const DType t = GetParam();
    const MaxPoolGradPlan plan = plan_of(t, {{1, 2, 70001, 2}, {3, 1}, {1, 1}, {1, 0}, {1, 0}, {2, 1}});
    const GpuProgram program = build_program(plan, kRoomyLimits);
    EXPECT_EQ(program.kernel, "maxpool_grad_twopass_" + dtype_suffix(t));
    EXPECT_EQ(program.constants.at(0).at(kernels::maxpool_grad::PLANE_SIZES_WORD + 2), 0u);
    expect_gpu_matches_cpu(plan, random_small_integers(t, plan.x_shape, rng),
                           random_tensor(t, plan.dy_shape, rng, false));
}

TEST_P(MaxPoolGradGpu, TwoPassKernelForWindowsCoveringThousandsOfElements) {
    SeededRng rng;
    const DType t = GetParam();
    // Over 2000 windows reach one element in 2-D, 1728 in 3-D. (Kept inside lavapipe's loop budget, gpu/thread_loops.h:
    // these threads loop over 2025 windows of up to 2 elements, twice for fp16.)
    for (const Pooling& p : {Pooling{{2, 3, 1, 1}, {45, 45}, {1, 1}, {44, 44}, {44, 44}, {1, 1}},
                             Pooling{{1, 2, 1, 2}, {45, 45}, {1, 1}, {44, 43}, {44, 44}, {1, 1}},
                             Pooling{{1, 3, 1, 2, 1}, {12, 12, 12}, {1, 1, 1}, {11, 11, 11}, {11, 11, 11}, {1, 1, 1}},
                             Pooling{{2, 3, 45, 45}, {45, 45}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}}) {  // global pooling
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_TRUE(build_program(plan, DeviceLimits{1 << 20, 16, 65535}).kernel.starts_with("maxpool_grad_twopass_"));
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false));
    }
}

// An axis of one coordinate whose one window reaches it is a single tap: the two-pass kernel takes it out and pools
// the other axes as the innermost ones (an X of 29 x 1 as 1 x 29), so its runs lie along a pooled axis. Axes of one
// coordinate whose window reaches only padding (no tap: every window chooses none) or that have several windows
// stay as they are.
TEST_P(MaxPoolGradGpu, TwoPassKernelTakesSingleTapAxesOut) {
    SeededRng rng;
    const DType t = GetParam();
    namespace k = kernels::maxpool_grad;
    struct Case {
        Pooling pooling;
        std::array<uint32_t, 3> sizes;  // the axes' sizes the kernel gets (depth, rows, columns)
    };
    int kind = 0;
    for (const Case& c : {Case{{{2, 3, 29, 1}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, true}, {1, 1, 29}},
                          Case{{{2, 3, 1, 37}, {3, 4}, {2, 1}, {1, 1}, {1, 2}, {1, 2}}, {1, 1, 37}},
                          Case{{{1, 2, 1, 23, 1}, {3, 2, 5}, {1, 1, 2}, {1, 0, 2}, {1, 1, 2}, {1, 2, 1}}, {1, 1, 23}},
                          Case{{{2, 2, 5, 1, 7}, {2, 3, 4}, {2, 1, 1}, {0, 1, 0}, {1, 1, 0}, {2, 1, 1}}, {1, 5, 7}},
                          Case{{{1, 2, 9, 1}, {3, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 2}}, {1, 9, 1}},     // padding only
                          Case{{{1, 3, 9, 1}, {3, 2}, {2, 1}, {1, 1}, {1, 1}, {1, 1}}, {1, 9, 1}}}) {  // 2 windows
        const MaxPoolGradPlan plan = plan_of(t, c.pooling);
        const GpuProgram program = build_program(plan, kRoomyLimits);
        ASSERT_TRUE(is_twopass(program.kernel, t));
        const std::vector<uint32_t>& geometry = program.constants.at(0);
        for (uint32_t a = 0; a < 3; ++a) EXPECT_EQ(geometry.at(a * k::AXIS_WORDS), c.sizes[a]) << "axis " << a;
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
}

// Where windows along the rows share rows of taps with no untaken row between them and each row has enough column
// taps, the choose takes CHOOSE_ROWS windows of a column per thread, each shared row searched once: rows of windows
// not a multiple of the group, dilated rows whose first and last taps are clipped by the padding (neither the
// group's first nor its last window holds its first or last row), 3-D depth taps, windows of only padding, ties and
// NaNs; rows gcd(T, D) apart where stride and dilation share a factor (k6 s2 d2 with an odd start padding: the odd
// rows; k4 s3 d3, k3 s3 d3). (The scatter's geometries group rows only on large tensors: the test after the scatter's.)
TEST_P(MaxPoolGradGpu, TwoPassChooseSharesRowsOfTapsAlongTheRows) {
    SeededRng rng;
    const DType t = GetParam();
    namespace k = kernels::maxpool_grad;
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 31, 23}, {7, 7}, {1, 1}, {0, 1}, {0, 2}, {2, 2}},
                             Pooling{{2, 2, 41, 29}, {6, 6}, {2, 1}, {1, 0}, {3, 0}, {1, 1}},
                             Pooling{{1, 3, 26, 17}, {7, 7}, {1, 2}, {5, 3}, {6, 4}, {2, 1}, true},
                             Pooling{{2, 2, 4, 22, 19}, {3, 6, 6}, {2, 2, 1}, {1, 4, 2}, {0, 3, 3}, {1, 1, 1}},
                             Pooling{{1, 2, 9, 13}, {5, 5}, {1, 1}, {7, 1}, {7, 0}, {1, 2}},
                             Pooling{{2, 2, 27, 21}, {6, 6}, {2, 1}, {1, 2}, {2, 3}, {2, 2}},
                             Pooling{{1, 2, 41, 29}, {3, 6}, {3, 1}, {1, 0}, {6, 4}, {3, 2}},
                             Pooling{{1, 3, 25, 14}, {4, 4}, {3, 1}, {8, 2}, {5, 1}, {3, 1}, true}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const GpuProgram program = build_program(plan, kRoomyLimits);
        ASSERT_TRUE(program.kernel.starts_with("maxpool_grad_twopass_rows_")) << program.kernel;
        ASSERT_TRUE(is_twopass(program.kernel, t));
        const Shape& dy = plan.dy_shape;
        const int64_t rows = dy[dy.size() - 2];
        EXPECT_EQ(pushed_params<k::Params>(program.steps[0]).count,
                  uint64_t(element_count(dy) / rows * ceil_div<int64_t>(rows, k::CHOOSE_ROWS)));
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
    // Chunks of planes in 4 KiB bindings and batches of 2 groups: each group's windows within its chunk.
    const MaxPoolGradPlan split = plan_of(t, {{2, 3, 31, 23}, {7, 7}, {1, 1}, {0, 1}, {0, 2}, {2, 2}});
    EXPECT_GT(chunks(build_program(split, kTinyLimits)), 1u);
    expect_gpu_matches_cpu(split, input_values(Values::ties, t, split.x_shape, rng),
                           gradient_values(1, t, split.dy_shape, rng), gpu_with_limits(kTinyLimits));
    // Windows that share no row of taps (stride past the span), rows of one column tap, or a group's rows of taps
    // with rows between them that no window takes (k7 s3 d2: rows 1 and 20 of 22): one window per thread.
    for (const Pooling& p : {Pooling{{1, 2, 30, 30}, {3, 5}, {3, 1}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 30, 30}, {5, 1}, {3, 1}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 41, 29}, {7, 6}, {3, 2}, {1, 0}, {6, 0}, {2, 2}}}) {
        const std::string kernel = kernel_of(plan_of(t, p));
        EXPECT_TRUE(is_twopass(kernel, t) && !kernel.starts_with("maxpool_grad_twopass_rows_")) << kernel;
    }
}

// The choose's batched loads (kernels/README.md): windows of one column walk their taps over depth and rows as one
// sequence, a batch at a time (3-D k4x7x1: 28 taps; k3x5x1: 15, the last batch partial; windows clipped by the
// padding to fewer taps; 2-D k7x1), and so do windows of at most TAP_BATCH (4) taps over rows and columns (2-D k2x2
// d1x3 with padding; k1x3 d2, whose rows are taken out: 1-D), beside windows of several columns and fp16 rows searched
// a word at a time (k5 rows of odd length: rows starting at either half of a word; k9); ties and NaNs across batches,
// on the gather and the scatter.
TEST_P(MaxPoolGradGpu, TwoPassChooseLoadsOneColumnWindowsInBatches) {
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 2, 5, 17, 9}, {4, 7, 1}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 3, 6, 13, 10}, {3, 5, 1}, {1, 1, 3}, {1, 2, 0}, {1, 2, 0}, {1, 1, 1}},
                             Pooling{{2, 3, 23, 9}, {7, 1}, {2, 2}, {3, 0}, {3, 0}, {1, 1}, true},
                             Pooling{{2, 3, 11, 19}, {3, 5}, {2, 3}, {1, 2}, {1, 2}, {1, 1}},
                             Pooling{{1, 2, 7, 9, 29}, {2, 2, 9}, {2, 2, 4}, {0, 0, 4}, {0, 0, 4}, {1, 1, 1}},
                             Pooling{{2, 2, 13, 15}, {3, 4}, {2, 1}, {1, 1}, {1, 2}, {1, 1}},
                             Pooling{{2, 3, 9, 12}, {2, 2}, {1, 2}, {0, 1}, {0, 1}, {1, 3}},
                             Pooling{{2, 2, 8, 11}, {1, 3}, {2, 1}, {0, 2}, {0, 2}, {2, 2}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        ASSERT_TRUE(is_twopass(kernel_of(plan), t)) << kernel_of(plan);
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
}

TEST_P(MaxPoolGradGpu, WindowsOfTwoColumnsLoadBothBeforeComparing) {
    // window_argmax()'s path for windows of 2 columns (kernels/maxpool_grad.hlsl), on the two-pass choose (more than
    // TAP_BATCH taps; fp16 there with dilated columns) and the cell kernel: columns cut to one tap by padding (start
    // 2 at dilation 2) or to none (an end padding past the window: windows of only padding along the columns),
    // 3-D, ceil mode, each kind of input (ties: the first tap of the greatest key).
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 13, 17}, {3, 2}, {3, 2}, {0, 2}, {0, 2}, {1, 2}},
                             Pooling{{2, 2, 9, 11, 12}, {2, 3, 2}, {1, 2, 3}, {0, 1, 1}, {1, 1, 3}, {1, 1, 2}, true},
                             Pooling{{1, 4, 10, 21}, {5, 2}, {2, 3}, {2, 0}, {2, 1}, {1, 3}},
                             Pooling{{2, 3, 12, 14}, {3, 2}, {3, 2}, {0, 0}, {0, 0}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const std::string kernel = kernel_of(plan);
        ASSERT_TRUE((is_twopass(kernel, t) && kernel.find("_rows") == std::string::npos) ||
                    kernel.starts_with("maxpool_grad_cell"))
            << kernel;
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
}

// Where windows are few beside the elements (strides past 1), the second pass goes by windows: dX is filled with +0,
// then each window whose choice (fp16: either element of the choice's word) no earlier window chose sums that
// element's (word's) covering windows in dY order and stores it. Words across rows and planes (odd rows and planes),
// the tensor's last word half past it, a column window of one tap, lattices of taps (k6 s2 d2), dilated columns
// (fp32: each element's covering windows alone: k3 s1 d3), windows of only padding, ties (elements chosen by many
// windows: one stores), specials; chunks of planes.
TEST_P(MaxPoolGradGpu, TwoPassScatterStoresEachChosenElementOnce) {
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 7, 9, 11}, {3, 3, 3}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 1, 5, 7, 9}, {3, 3, 3}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, true},
                             Pooling{{2, 2, 5, 17, 9}, {4, 7, 1}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 13, 12, 15}, {6, 6, 6}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {2, 2, 2}},
                             Pooling{{2, 3, 21, 19}, {7, 7}, {4, 4}, {3, 3}, {3, 3}, {1, 1}},
                             Pooling{{1, 2, 9, 9, 13}, {3, 3, 3}, {4, 4, 4}, {5, 0, 0}, {5, 0, 0}, {2, 2, 2}},
                             Pooling{{2, 2, 9, 7, 21}, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {3, 3, 3}},
                             Pooling{{2, 2, 3, 13, 21}, {4, 4, 4}, {2, 3, 3}, {1, 2, 3}, {1, 0, 2}, {1, 1, 2}, true}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const std::string kernel = kernel_of(plan);
        ASSERT_TRUE(is_twopass(kernel, t) && kernel.find("_scatter_") != std::string::npos) << kernel;
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
    // Chunks of planes in 4 KiB bindings (odd planes of 315 elements: fp16 chunks of an even number of them): each
    // chunk filled, chosen and scattered, its choices overwriting the last chunk's.
    const MaxPoolGradPlan split = plan_of(t, {{3, 4, 5, 7, 9}, {3, 3, 3}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}});
    ASSERT_GT(chunks(build_program(split, kTinyLimits)), 1u);
    expect_gpu_matches_cpu(split, input_values(Values::ties, t, split.x_shape, rng),
                           gradient_values(1, t, split.dy_shape, rng), gpu_with_limits(kTinyLimits));
    expect_gpu_matches_cpu(split, input_values(Values::raw_bits, t, split.x_shape, rng),
                           gradient_values(2, t, split.dy_shape, rng), gpu_with_limits(kTinyLimits));
    // Grids of 3 groups per dispatch: the fill's and the scatter's threads over several dispatches.
    expect_gpu_matches_cpu(split, input_values(Values::specials, t, split.x_shape, rng),
                           gradient_values(3, t, split.dy_shape, rng), gpu_with_limits(kFewGroups));
}

// Its steps per chunk: the choose, the fill (a thread per FILL_WORDS words of dX, in whole groups of FILL_LANES),
// then the scatter (a thread per window) after both.
TEST_P(MaxPoolGradGpu, TwoPassScatterChoosesFillsThenScatters) {
    const DType t = GetParam();
    namespace k = kernels::maxpool_grad;
    const MaxPoolGradPlan plan = plan_of(t, {{2, 3, 7, 9, 11}, {3, 3, 3}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}});
    const GpuProgram program = build_program(plan, kRoomyLimits);
    EXPECT_EQ(program.kernel, "maxpool_grad_twopass_scatter_" + dtype_suffix(t));
    ASSERT_EQ(program.steps.size(), 3u);
    const auto choose = pushed_params<k::Params>(program.steps[0]);
    const auto fill = pushed_params<k::Params>(program.steps[1]);
    const auto scatter = pushed_params<k::Params>(program.steps[2]);
    const uint64_t words = ceil_div<uint64_t>(element_count(plan.x_shape) * dtype_size(t), 4);
    EXPECT_EQ(choose.phase, k::PHASE_CHOOSE);
    EXPECT_EQ(choose.count, element_count(plan.dy_shape));
    EXPECT_EQ(fill.phase, k::PHASE_FILL);
    EXPECT_EQ(fill.count, ceil_div<uint64_t>(words, k::FILL_WORDS * k::FILL_LANES) * k::FILL_LANES);
    EXPECT_EQ(scatter.phase, k::PHASE_SCATTER);
    EXPECT_EQ(scatter.count, element_count(plan.dy_shape));
    EXPECT_FALSE(program.steps[0].barrier_before);
    EXPECT_FALSE(program.steps[1].barrier_before);
    EXPECT_TRUE(program.steps[2].barrier_before);
}

// The scatter's choose groups CHOOSE_ROWS windows a thread only where that leaves 2^19 threads or more (fewer
// threads leave the GPU idle): 1049 planes of 63 x 402 pooled by k6 windows at strides 3 x 4 (2098000 windows) do;
// the same planes, fewer of them, take a window a thread.
TEST_P(MaxPoolGradGpu, TwoPassScatterChoosesByRowsOnlyWithManyThreads) {
    SeededRng rng;
    const DType t = GetParam();
    namespace k = kernels::maxpool_grad;
    const Pooling many{{1, 1049, 63, 402}, {6, 6}, {3, 4}, {0, 0}, {0, 0}, {1, 1}};
    const MaxPoolGradPlan plan = plan_of(t, many);
    const GpuProgram program = build_program(plan, kRoomyLimits);
    ASSERT_EQ(program.kernel, kernel_name({Family::twopass, t, Layout::planar, k::CHOOSE_ROWS, 0, false, true}));
    EXPECT_EQ(pushed_params<k::Params>(program.steps.at(0)).count, 1049u * 5 * 100);  // 20 rows of windows: 5 groups
    expect_gpu_matches_cpu(plan, input_values(Values::ties, t, plan.x_shape, rng),
                           gradient_values(1, t, plan.dy_shape, rng));
    Pooling few = many;
    few.x[1] = 1048;  // 2096000 windows: 524000 threads by rows
    EXPECT_EQ(kernel_of(plan_of(t, few)), kernel_name({Family::twopass, t, Layout::planar, 0, 0, false, true}));
}

TEST_P(MaxPoolGradGpu, SplitsPlanesAndGrids) {
    SeededRng rng;
    const DType t = GetParam();
    Backend& tiny = gpu_with_limits(kTinyLimits);  // 4 KiB bindings at 64-byte alignment, 2 groups per dispatch
    // Odd plane sizes: chunk boundaries off the alignment (and for fp16 an even number of planes per chunk).
    for (const Pooling& p : {Pooling{{3, 7, 13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
                             Pooling{{2, 5, 16, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{3, 3, 5, 7, 9}, {2, 3, 2}, {1, 2, 3}, {1, 0, 1}, {0, 1, 1}, {1, 1, 2}, true},
                             Pooling{{3, 3, 3, 16, 16}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
                             Pooling{{4, 5, 5, 4, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 0, 0}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_GT(chunks(build_program(plan, kTinyLimits)), 1u);
        if (p.window == std::vector<int64_t>{3, 3, 3}) {  // the walk kernel's split path
            EXPECT_TRUE(build_program(plan, kTinyLimits).kernel.starts_with("maxpool_grad_walk3d_"));
        }
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false),
                               tiny);
    }
    // The two-pass kernel: choices of 8100 bytes per plane in 32 KiB bindings, 4 planes per chunk (fp16's planes
    // pair up), each chunk's choices overwriting the last one's in the scratch buffer.
    const MaxPoolGradPlan twopass = plan_of(t, {{5, 3, 1, 1}, {45, 45}, {1, 1}, {44, 44}, {44, 44}, {1, 1}});
    const DeviceLimits small{32768, 64, 2};
    EXPECT_EQ(chunks(build_program(twopass, small)), 4u);
    expect_gpu_matches_cpu(twopass, random_tensor(t, twopass.x_shape, rng),
                           random_small_integers(t, twopass.dy_shape, rng), gpu_with_limits(small));
    // Grids of 3 groups per dispatch; the discrete-GPU path through staging buffers; repeated runs.
    const MaxPoolGradPlan plan = plan_of(t, {{2, 3, 40, 50}, {3, 3}, {2, 1}, {1, 0}, {1, 2}, {1, 2}});
    const Tensor x = random_tensor(t, plan.x_shape, rng), dy = random_tensor(t, plan.dy_shape, rng, false);
    expect_gpu_matches_cpu(plan, x, dy, gpu_with_limits(kFewGroups));
    expect_gpu_matches_cpu(plan, x, dy, gpu_with_staging());
    expect_gpu_matches_cpu(plan, x, dy, gpu(), /*repeat=*/3);
}

TEST_P(MaxPoolGradGpu, ProgramsRespectTheLimits) {
    // Host-side only: bindings aligned, within the limit and the buffers; grids within max_groups_x; each plane's
    // X window starting where the push constants say (for fp16 at an even element).
    const DType t = GetParam();
    const uint64_t element = dtype_size(t);
    int checked = 0;
    for (const Pooling& p : {Pooling{{3, 7, 13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
                             Pooling{{3, 3, 5, 7, 9}, {2, 3, 2}, {1, 2, 3}, {1, 0, 1}, {0, 1, 1}, {1, 1, 2}},
                             Pooling{{5, 3, 1, 1}, {46, 46}, {1, 1}, {45, 45}, {45, 45}, {1, 1}}})
        for (const DeviceLimits& limits : {kTinyLimits, kFewGroups, DeviceLimits{32768, 64, 2}}) {
            const MaxPoolGradPlan plan = plan_of(t, p);
            GpuProgram program;
            try {
                program = build_program(plan, limits);
            } catch (const RuntimeFailure&) {
                // Refused only where one plane of X or dY is larger than a binding.
                EXPECT_GT(std::max(element_count(plan.x_shape), element_count(plan.dy_shape)) / plan.planes * element,
                          limits.max_binding_bytes);
                continue;
            }
            ++checked;
            const uint64_t x_bytes = padded_bytes(element_count(plan.x_shape) * element);
            const uint64_t dy_bytes = padded_bytes(element_count(plan.dy_shape) * element);
            const bool twopass = program.kernel.starts_with("maxpool_grad_twopass_");
            for (const DispatchStep& step : program.steps) {
                ASSERT_EQ(step.bindings.size(), twopass ? 6u : 4u);
                EXPECT_LE(step.groups, limits.max_groups_x);
                if (twopass) {
                    EXPECT_LE(step.bindings[4].range, std::min(program.scratch_bytes, limits.max_binding_bytes));
                }
                for (size_t b = 0; b < 3; ++b) {
                    const BufferWindow& w = step.bindings[b];
                    EXPECT_EQ(w.offset % limits.offset_alignment, 0u);
                    EXPECT_LE(w.range, limits.max_binding_bytes);
                    EXPECT_LE(w.offset + w.range, b == 1 ? dy_bytes : x_bytes);
                }
                if (t == DType::f16) {
                    EXPECT_EQ((step.bindings[0].offset / 2 + step.push[4]) % 2, 0u);
                }
            }
        }
    EXPECT_EQ(checked, 8) << "all but one program (the 46x46 window's 8464-byte dY plane in 4 KiB) are built";
}

TEST_P(MaxPoolGradGpu, RejectsAPlaneLargerThanABinding) {
    const DType t = GetParam();
    const MaxPoolGradPlan plan = plan_of(t, {{1, 2, 64, 33}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}});
    try {
        build_program(plan, kTinyLimits);
        FAIL() << "expected a RuntimeFailure";
    } catch (const RuntimeFailure& e) {
        EXPECT_NE(std::string(e.what()).find("4096 bytes per storage binding"), std::string::npos) << e.what();
    }
}

// ---- the k2s2 kernel (kernels/maxpool_grad_k2s2.hlsl) ----

// Bits that meet every rule of the argmax and of the sums, drawn from a short list so that windows often hold ties
// and several NaNs: ±0, ±inf, NaNs of both signs with payloads (signalling ones too), subnormals of both signs, the
// largest finite values, ±1. Entries [first, end) of the list only: [0, 2) is ±0, [4, 8) the NaNs.
Tensor edge_bits(DType type, const Shape& shape, std::mt19937_64& rng, size_t first = 0, size_t end = 15) {
    static constexpr uint32_t f32[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                       0xFFC00001, 0x7F800001, 0xFF812345, 0x00000001, 0x80000001,
                                       0x007FFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF};
    static constexpr uint16_t f16[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01, 0xFD23,
                                       0x0001, 0x8001, 0x03FF, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF};
    static_assert(std::size(f32) == std::size(f16));
    Tensor t(TensorInfo{type, shape});
    for (uint64_t i = 0; i < t.elements(); ++i) {
        const size_t pick = first + rng() % (end - first);
        if (type == DType::f16)
            std::memcpy(t.buffer.data() + 2 * i, &f16[pick], 2);
        else
            std::memcpy(t.buffer.data() + 4 * i, &f32[pick], 4);
    }
    return t;
}

TEST_P(MaxPoolGradGpu, K2s2KernelForWindowsOfTwoThatTileTheInput) {
    // kernels/maxpool_grad_k2s2.hlsl: 2-D, 3-D, and 5-D with the depth untouched (folded into the planes); one and
    // several thread units per row, an end padding that adds no window; X and dY from the edge bits (ties of ±0,
    // NaNs with payloads, infinities, subnormals), each kind of input and gradient.
    SeededRng rng;
    const DType t = GetParam();
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 6, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{3, 1, 10, 24}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, {1, 1}},
                             Pooling{{1, 2, 2, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{2, 3, 4, 6, 16}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 2, 2, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 0, 1}, {1, 1, 1}},
                             Pooling{{3, 2, 6, 2, 24}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 3, 4, 16}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const std::string name = k2s2_kernel_name(p, t);
        ASSERT_FALSE(name.empty());
        EXPECT_EQ(kernel_of(plan), name);
        expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng), edge_bits(t, plan.dy_shape, rng));
        for (int repeat = 0; repeat < 2; ++repeat, ++kind)
            expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                   gradient_values(kind % 4, t, plan.dy_shape, rng));
    }
}

TEST_P(MaxPoolGradGpu, K2s2KernelLeavesOtherCellsToTheCellKernel) {
    // Rows of windows that are not whole thread units (fp32 3 or 9 windows, fp16 6 or 9), an odd size (a coordinate
    // no window reads), a start padding, the depth pooled otherwise: the general cell kernel, same bits.
    SeededRng rng;
    const DType t = GetParam();
    for (const Pooling& p : {Pooling{{2, 3, 6, t == DType::f16 ? 12 : 6}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{2, 3, 6, 18}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{2, 3, 7, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 6, 16}, {2, 2}, {2, 2}, {2, 0}, {0, 0}, {1, 1}},
                             Pooling{{1, 2, 4, 4, 16}, {1, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 5, 4, 16}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_TRUE(k2s2_kernel_name(p, t).empty());
        EXPECT_EQ(kernel_of(plan), "maxpool_grad_cells_" + dtype_suffix(t));
        expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng), edge_bits(t, plan.dy_shape, rng));
    }
}

TEST_P(MaxPoolGradGpu, K2s2KernelSplitsPlanesAndGrids) {
    // Chunks of planes in 4 KiB bindings at 64-byte alignment (origins inside the bound windows), and grids of 3
    // groups per dispatch (several batches), 2-D and 3-D.
    SeededRng rng;
    const DType t = GetParam();
    for (const Pooling& p : {Pooling{{4, 5, 8, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{3, 5, 4, 4, 16}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(build_program(plan, kTinyLimits).kernel, k2s2_kernel_name(p, t));
        EXPECT_GT(chunks(build_program(plan, kTinyLimits)), 1u);
        expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng), edge_bits(t, plan.dy_shape, rng),
                               gpu_with_limits(kTinyLimits));
    }
    const Pooling wide{{8, 16, 16, 32}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}};
    const MaxPoolGradPlan plan = plan_of(t, wide);
    EXPECT_GT(build_program(plan, kFewGroups).steps.size(), 1u);
    expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng),
                           gpu_with_limits(kFewGroups));
}

TEST_P(MaxPoolGradGpu, WalkKernelOnEdgeBits) {
    // The walk kernel's argmax (fp32: rows of taps, then rows; fp16: two 16-bit keys a word, the argmax on
    // (key, tap) in one word): X from the edge bits, from ±0 only (every window a tie) and from NaNs only (the first
    // NaN wins), across tiles (the halo row and column), the slice a window keeps from the step before, the input's
    // edges and the padding (end paddings of 3: each axis's last window holds only padding); dY from the edge bits
    // (sums of specials and subnormals).
    SeededRng rng;
    const DType t = GetParam();
    const int64_t w = t == DType::f16 ? 66 : 67;
    for (const Pooling& p : {Pooling{{1, 2, 9, 37, w}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
                             Pooling{{2, 1, 6, 18, 2 * w}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, true},
                             Pooling{{1, 2, 5, 22, 30}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {3, 3, 3}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan), "maxpool_grad_walk3d_k3s2p1_" + dtype_suffix(t));
        for (const std::pair<size_t, size_t>& values : {std::pair<size_t, size_t>{0, 15}, {0, 2}, {4, 8}})
            expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng, values.first, values.second),
                                   edge_bits(t, plan.dy_shape, rng));
    }
}

TEST_P(MaxPoolGradGpu, WalkKernelOn3dWindowsOf2Stride1) {
    // kernels/maxpool_grad_walk3d_k2.hlsl: slices cut into runs of 256 elements (fp16 512) across rows (rows of 2
    // to 255, several chunks a slice, the last one short), end paddings of 0 and 1 on each axis (windows whose
    // second column, row or slice is padding), several planes, each kind of input and gradient and the edge bits
    // (ties of ±0, NaNs, subnormal sums); fp16 slices of an odd size take other kernels.
    SeededRng rng;
    const DType t = GetParam();
    const std::string walk = "maxpool_grad_walk3d_k2s1_" + dtype_suffix(t);
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 3, 7, 33, 37}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 5, 9, 29}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 0, 1}, {1, 1, 1}, true},
                             Pooling{{3, 1, 4, 70, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 1, 1}, {1, 1, 1}},
                             Pooling{{1, 1, 3, 4, 255}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 0}, {1, 1, 1}},
                             Pooling{{2, 2, 5, 14, 36}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 1}, {1, 1, 1}},
                             Pooling{{1, 3, 5, 7, 32}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const bool odd_half_slice = t == DType::f16 && p.x[3] * p.x[4] % 2 != 0;
        EXPECT_EQ(kernel_of(plan) == walk, !odd_half_slice) << kernel_of(plan);
        for (int repeat = 0; repeat < 2; ++repeat, ++kind)
            expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                   gradient_values(kind % 4, t, plan.dy_shape, rng));
        for (const std::pair<size_t, size_t>& values : {std::pair<size_t, size_t>{0, 15}, {0, 2}, {4, 8}})
            expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng, values.first, values.second),
                                   edge_bits(t, plan.dy_shape, rng));
    }
    // A start padding, rows of a chunk or more, slices that use less than a quarter of a chunk (60 elements): other
    // kernels.
    for (const Pooling& p : {Pooling{{1, 2, 5, 9, 30}, {2, 2, 2}, {1, 1, 1}, {0, 1, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 1, 3, 2, 256}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{2, 2, 6, 2, 30}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_NE(cube_k2s1_kernel(p, t), walk);
        EXPECT_NE(kernel_of(plan), walk);
    }
}

TEST_P(MaxPoolGradGpu, WalkKernelOf2Stride1SplitsTheDepthPlanesAndGrids) {
    // One plane of 50 slices: segments of 13 slices, each starting a step early; chunks of planes in 4 KiB
    // bindings (910 elements a plane); grids of 3 groups per dispatch.
    SeededRng rng;
    const DType t = GetParam();
    const std::string walk = "maxpool_grad_walk3d_k2s1_" + dtype_suffix(t);
    const Pooling deep{{1, 1, 50, 10, 13}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 1, 0}, {1, 1, 1}};
    MaxPoolGradPlan plan = plan_of(t, deep);
    ASSERT_EQ(kernel_of(plan), walk);
    EXPECT_EQ(build_program(plan, kRoomyLimits).constants.at(0).at(kernels::maxpool_grad::WALK3D_K2_WORD_SEGMENTS), 4u);
    expect_gpu_matches_cpu(plan, input_values(Values::ties, t, plan.x_shape, rng),
                           gradient_values(1, t, plan.dy_shape, rng));
    expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng), edge_bits(t, plan.dy_shape, rng));
    const Pooling planes{{3, 2, 7, 10, 13}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 0, 1}, {1, 1, 1}};
    plan = plan_of(t, planes);
    EXPECT_EQ(build_program(plan, kTinyLimits).kernel, walk);
    EXPECT_GT(chunks(build_program(plan, kTinyLimits)), 1u);
    const Tensor x = random_tensor(t, plan.x_shape, rng), dy = random_tensor(t, plan.dy_shape, rng, false);
    expect_gpu_matches_cpu(plan, x, dy, gpu_with_limits(kTinyLimits));
    EXPECT_GT(build_program(plan, kFewGroups).steps.size(), 1u);
    expect_gpu_matches_cpu(plan, x, dy, gpu_with_limits(kFewGroups));
}

// ---- the stride-1 bands (kernels/maxpool_grad_bands.hlsl) ----

// The bands kernel (fp16 only).
std::string bands_kernel() { return kernel_name({Family::bands, DType::f16}); }

TEST(MaxPoolGradGpuBands, OnWholePlanesAtStride1) {
    // fp16 2-D windows of any size at stride 1 on planes that fit a workgroup's slots, several planes a group (the
    // last group short): square and uneven windows, windows of one row or one column, asymmetric paddings up to
    // past the window (windows of only padding columns), ceil mode, planes of one row, odd planes (an even number a
    // group), 5-D tensors (the depth folded into the planes); each kind of input (ties, specials, raw bits) and
    // gradient, and the edge bits (ties of ±0, NaNs, subnormal sums).
    SeededRng rng;
    const DType t = DType::f16;  // the bands kernel has no fp32 variant (BandsKernelLeavesOtherGeometries)
    int kind = 0;
    for (const Pooling& p : {Pooling{{2, 5, 10, 21}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, true},
                             Pooling{{3, 2, 13, 28}, {6, 6}, {1, 1}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{2, 3, 9, 13}, {5, 5}, {1, 1}, {7, 1}, {7, 0}, {1, 1}},
                             Pooling{{1, 7, 7, 9}, {3, 7}, {1, 1}, {2, 9}, {1, 3}, {1, 1}},
                             Pooling{{3, 3, 1, 31}, {1, 6}, {1, 1}, {0, 2}, {0, 4}, {1, 1}},
                             Pooling{{2, 2, 19, 3}, {4, 1}, {1, 1}, {1, 0}, {2, 0}, {1, 1}},
                             Pooling{{2, 3, 4, 11, 7}, {1, 4, 3}, {1, 1, 1}, {0, 3, 0}, {0, 2, 2}, {1, 1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_EQ(kernel_of(plan), bands_kernel());
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
        expect_gpu_matches_cpu(plan, edge_bits(t, plan.x_shape, rng), edge_bits(t, plan.dy_shape, rng));
    }
}

TEST(MaxPoolGradGpuBands, OnBandsOfRows) {
    // Planes beyond a workgroup's slots: bands of rows of one plane, each reading the rows its windows reach above
    // and below (read again by the next band), the last band short; odd rows (fp16: bands of an even number of
    // rows; with windows of 4 rows the bands' first key rows start at odd elements), paddings, windows of 7 rows.
    SeededRng rng;
    const DType t = DType::f16;  // the bands kernel has no fp32 variant (BandsKernelLeavesOtherGeometries)
    namespace k = kernels::maxpool_grad;
    int kind = 0;
    for (const Pooling& p : {Pooling{{1, 2, 300, 40}, {4, 4}, {1, 1}, {1, 1}, {2, 2}, {1, 1}},
                             Pooling{{2, 1, 134, 41}, {3, 5}, {1, 1}, {0, 2}, {2, 1}, {1, 1}, true},
                             Pooling{{1, 2, 197, 12}, {7, 2}, {1, 1}, {3, 0}, {3, 1}, {1, 1}},
                             Pooling{{1, 2, 150, 41}, {4, 3}, {1, 1}, {0, 1}, {0, 1}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const GpuProgram program = build_program(plan, kRoomyLimits);
        ASSERT_EQ(program.kernel, bands_kernel());
        EXPECT_GT(program.constants.at(0).at(k::BANDS_WORD_BANDS), 2u);
        EXPECT_EQ(program.constants.at(0).at(k::BANDS_WORD_PLANES), 1u);
        expect_matches_cpu_on_each_kind_of_input(plan, rng, kind);
    }
}

TEST(MaxPoolGradGpuBands, SplitsPlanesAndGrids) {
    // Chunks of planes in 4 KiB bindings (odd planes: chunk boundaries off the alignment, fp16 an even number of
    // planes a chunk) and grids of 3 groups per dispatch, whole planes and bands.
    SeededRng rng;
    const DType t = DType::f16;  // the bands kernel has no fp32 variant (BandsKernelLeavesOtherGeometries)
    for (const Pooling& p : {Pooling{{9, 7, 9, 13}, {4, 3}, {1, 1}, {1, 0}, {2, 1}, {1, 1}},
                             Pooling{{2, 3, 70, 40}, {4, 4}, {1, 1}, {1, 1}, {2, 2}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        const Tensor x = random_tensor(t, plan.x_shape, rng), dy = random_tensor(t, plan.dy_shape, rng, false);
        if (plan.x_shape[2] * plan.x_shape[3] * dtype_size(t) < 4096) {
            ASSERT_EQ(build_program(plan, kTinyLimits).kernel, bands_kernel());
            EXPECT_GT(chunks(build_program(plan, kTinyLimits)), 1u);
            expect_gpu_matches_cpu(plan, x, dy, gpu_with_limits(kTinyLimits));
        }
        ASSERT_EQ(build_program(plan, kFewGroups).kernel, bands_kernel());
        EXPECT_GT(build_program(plan, kFewGroups).steps.size(), 1u);
        expect_gpu_matches_cpu(plan, x, dy, gpu_with_limits(kFewGroups));
    }
}

TEST_P(MaxPoolGradGpu, BandsKernelLeavesOtherGeometries) {
    // fp32; stride 2, dilation 2, the depth pooled, windows of 33 columns, one window row of several tap rows,
    // bands that would be shorter than twice the window's extra rows (rows of 200 with windows of 6 rows), planes of
    // an odd size in bands: other kernels.
    const DType t = GetParam();
    EXPECT_TRUE(is_twopass(kernel_of(plan_of(DType::f32, {{2, 5, 10, 21}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, {1, 1}})),
                           DType::f32));
    for (const Pooling& p : {Pooling{{2, 3, 10, 21}, {4, 4}, {1, 2}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{2, 3, 10, 21}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, {1, 2}},
                             Pooling{{2, 3, 4, 10, 21}, {2, 4, 4}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}},
                             Pooling{{1, 2, 3, 40}, {2, 33}, {1, 1}, {0, 0}, {0, 0}, {1, 1}},
                             Pooling{{2, 3, 3, 17}, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
                             Pooling{{1, 2, 40, 200}, {6, 6}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}}) {
        EXPECT_NE(kernel_of(plan_of(t, p)), bands_kernel());
    }
    if (t == DType::f16) {
        EXPECT_NE(kernel_of(plan_of(t, {{1, 2, 301, 41}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, {1, 1}})), bands_kernel());
    }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MaxPoolGradGpu, ::testing::ValuesIn(kMaxPoolGradDocumentedTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(MaxPoolGradGpu, WorkedExamples) {
    // docs/OPERATORS.md 4.4 P1-P7.
    const auto run = [](const Pooling& p, const std::vector<double>& x, const std::vector<double>& dy) {
        const MaxPoolGradPlan plan = plan_of(DType::f32, p);
        const Tensor xt = tensor_from(DType::f32, plan.x_shape, x), dyt = tensor_from(DType::f32, plan.dy_shape, dy);
        return to_doubles(run_on(gpu(), plan, {&xt, &dyt}));
    };
    using V = std::vector<double>;
    EXPECT_EQ(run({{1, 1, 3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, {1, 2, 3, 2, 4, 2, 5, 6, 7}, {1, 2, 4, 5}),
              (V{0, 0, 0, 0, 3, 0, 0, 4, 5}));
    EXPECT_EQ(
        run({{1, 1, 3, 3}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}}, {-1, -2, -3, -4, -5, -6, -7, -8, -9}, {1, 2, 3, 4}),
        (V{1, 2, 0, 3, 4, 0, 0, 0, 0}));
    EXPECT_EQ(run({{1, 1, 2, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, V(6, 5.0), {10, 20}),
              (V{10, 20, 0, 0, 0, 0}));
    EXPECT_EQ(run({{1, 1, 3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, {0, 0, 0, 0, 9, 0, 0, 0, 0}, {1, 2, 3, 4}),
              (V{0, 0, 0, 0, 10, 0, 0, 0, 0}));
    EXPECT_EQ(run({{1, 1, 1, 5}, {1, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 2}}, {3, 1, 4, 1, 5}, {1, 2, 3}),
              (V{0, 2, 1, 0, 3}));
    EXPECT_EQ(
        run({{1, 1, 2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}}, {0, 1, 2, 3, 4, 5, 6, 7}, {7}),
        (V{0, 0, 0, 0, 0, 0, 0, 7}));
    EXPECT_EQ(run({{1, 1, 1, 2}, {1, 2}, {1, 1}, {0, 1}, {0, 2}, {1, 3}}, {1, 2}, {5, 6}), (V{6, 0}));
}

// ---- the 2-D walk kernel (kernels/maxpool_grad_walk2d.hlsl) ----

std::string walk2d_name(int64_t stride, DType t) {
    return kernel_name({Family::walk2d, t, Layout::planar, 3, uint32_t(stride)});
}

TEST_P(MaxPoolGradGpu, Walk2dKernelOnWindowsOf3Padding1) {
    // Strides 2 and 1: odd and even sizes, end paddings 0-2 and ceil mode (windows and cells cut at the edges),
    // rows shorter than a workgroup (several planes' columns in one group) and longer (groups' edges inside a
    // row: the halo threads), rows of 1-2 windows, the depth of 5-D tensors folded into the planes, each kind of
    // input (ties, specials, raw bits) and gradient (order-sensitive sums, specials, denormals).
    SeededRng rng;
    const DType t = GetParam();
    const int64_t w = t == DType::f16 ? 70 : 69, narrow = t == DType::f16 ? 6 : 5;  // fp16: even rows only
    int kind = 0;
    for (int64_t s : {2, 1})
        for (const Pooling& p :
             {Pooling{{2, 3, 37, w}, {3, 3}, {s, s}, {1, 1}, {1, 1}, {1, 1}, true},
              Pooling{{3, 4, 19, w}, {3, 3}, {s, s}, {1, 1}, {0, 1}, {1, 1}, true},
              Pooling{{2, 2, 300, 2 * w}, {3, 3}, {s, s}, {1, 1}, {1, 0}, {1, 1}},
              Pooling{{4, 5, 13, narrow}, {3, 3}, {s, s}, {1, 1}, {1, 1}, {1, 1}},
              Pooling{{1, 2, 3, 20, 66}, {1, 3, 3}, {1, s, s}, {0, 1, 1}, {0, 0, 1}, {1, 1, 1}, true},
              Pooling{{2, 2, 2, 2}, {3, 3}, {s, s}, {1, 1}, {1, 1}, {1, 1}},
              Pooling{{3, 1, 2, 4}, {3, 3}, {s, s}, {1, 1}, {s == 2 ? 2 : 1, 0}, {1, 1}}}) {
            const MaxPoolGradPlan plan = plan_of(t, p);
            EXPECT_EQ(kernel_of(plan), walk2d_name(s, t));
            for (int repeat = 0; repeat < 2; ++repeat, ++kind)
                expect_gpu_matches_cpu(plan, input_values(Values(kind % 3), t, plan.x_shape, rng),
                                       gradient_values(kind % 4, t, plan.dy_shape, rng));
        }
    // Stride 2 with a coordinate past every cell (in > 2 * out), stride 1 with a window past the input (end
    // padding 2) or another start padding: the fast kernel; fp16 rows of odd length: the two-pass kernel.
    for (const Pooling& p : {Pooling{{1, 2, 9, 30}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 1}},
                             Pooling{{1, 2, 9, 30}, {3, 3}, {1, 1}, {1, 1}, {2, 1}, {1, 1}},
                             Pooling{{1, 2, 9, 30}, {3, 3}, {2, 2}, {1, 0}, {1, 1}, {1, 1}}}) {
        const MaxPoolGradPlan plan = plan_of(t, p);
        EXPECT_TRUE(kernel_of(plan).starts_with("maxpool_grad_fast_"));
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false));
    }
    if (t == DType::f16) {
        const MaxPoolGradPlan plan = plan_of(t, {{1, 2, 9, 31}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}});
        EXPECT_TRUE(is_twopass(kernel_of(plan), t));
    }
}

TEST_P(MaxPoolGradGpu, Walk2dKernelSplitsPlanesAndGrids) {
    // Chunks of planes in 4 KiB bindings (odd plane sizes: chunk boundaries off the alignment) and grids of 3
    // groups per dispatch, both strides.
    SeededRng rng;
    const DType t = GetParam();
    for (int64_t s : {2, 1}) {
        const MaxPoolGradPlan plan = plan_of(t, {{3, 7, 13, 10}, {3, 3}, {s, s}, {1, 1}, {1, 1}, {1, 1}});
        EXPECT_EQ(build_program(plan, kTinyLimits).kernel, walk2d_name(s, t));
        EXPECT_GT(chunks(build_program(plan, kTinyLimits)), 1u);
        expect_gpu_matches_cpu(plan, random_tensor(t, plan.x_shape, rng), random_tensor(t, plan.dy_shape, rng, false),
                               gpu_with_limits(kTinyLimits));
        const MaxPoolGradPlan wide = plan_of(t, {{3, 4, 20, 300}, {3, 3}, {s, s}, {1, 1}, {1, 1}, {1, 1}});
        EXPECT_EQ(build_program(wide, kFewGroups).kernel, walk2d_name(s, t));
        expect_gpu_matches_cpu(wide, input_values(Values::ties, t, wide.x_shape, rng),
                               gradient_values(2, t, wide.dy_shape, rng), gpu_with_limits(kFewGroups));
    }
}

TEST_P(MaxPoolGradGpu, Walk2dStride1ThreadsOwnRunsOfColumns) {
    // Stride 1: a thread owns WALK2D_STRIDE_1_COLUMNS columns, the last one of a plane fewer where the row is not a
    // multiple: every remainder (fp16: every even one), with end padding 0 and 1, rows shorter than a run (several
    // planes' last runs in one group) and rows across a group's edge (the halos next to a partial run).
    SeededRng rng;
    const DType t = GetParam();
    const int64_t cols = kernels::maxpool_grad::WALK2D_STRIDE_1_COLUMNS, step = t == DType::f16 ? 2 : 1;
    for (int64_t w = step; w <= 2 * cols + 1; w += step)
        for (int64_t end : {0, 1}) {
            if (w + end < 2) continue;  // no window
            if (w == 1) continue;       // one window over one column: a single tap, pooled as 1-D by the two-pass
            const MaxPoolGradPlan plan = plan_of(t, {{3, 5, 7, w}, {3, 3}, {1, 1}, {1, 1}, {end, end}, {1, 1}});
            EXPECT_EQ(kernel_of(plan), walk2d_name(1, t));
            expect_gpu_matches_cpu(plan, input_values(Values(w % 3), t, plan.x_shape, rng),
                                   gradient_values(int(w % 4), t, plan.dy_shape, rng));
        }
    for (int64_t w : {254 * cols - 2, 254 * cols + 3 * step}) {
        const MaxPoolGradPlan plan = plan_of(t, {{2, 3, 6, w}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}});
        EXPECT_EQ(kernel_of(plan), walk2d_name(1, t));
        expect_gpu_matches_cpu(plan, input_values(Values::ties, t, plan.x_shape, rng),
                               gradient_values(1, t, plan.dy_shape, rng));
    }
}

TEST_P(MaxPoolGradGpu, Walk2dKernelWalksWholePlanesWhereTheColumnsFillTheGpu) {
    // Columns enough for 1024 workgroups: one segment, each thread walks every row of its plane (the other tests'
    // small batches cut the rows into segments of a few rows).
    SeededRng rng;
    const DType t = GetParam();
    for (int64_t s : {2, 1}) {
        const MaxPoolGradPlan plan = plan_of(t, {{2048, 2, 9, 256}, {3, 3}, {s, s}, {1, 1}, {1, 1}, {1, 1}});
        const GpuProgram program = build_program(plan, kRoomyLimits);
        EXPECT_EQ(program.kernel, walk2d_name(s, t));
        EXPECT_EQ(program.constants.at(0).at(kernels::maxpool_grad::WALK2D_WORD_SEGMENTS), 1u);
        expect_gpu_matches_cpu(plan, input_values(Values::ties, t, plan.x_shape, rng),
                               gradient_values(1, t, plan.dy_shape, rng));
    }
}

}  // namespace
}  // namespace dmlgrad::testing
