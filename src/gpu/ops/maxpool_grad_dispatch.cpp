// Max-pooling grad on the GPU: kernels/maxpool_grad.hlsl, a deterministic gather (no atomics).
//
// The tiled kernel (maxpool_grad_tiled_<dtype>) runs one workgroup per tile of dX: it computes the argmax of
// every window reaching the tile once into groupshared memory, then gathers. One pass, no scratch buffer: each
// X element is read from memory about once (neighbouring tiles share only a halo, mostly from cache), dY once,
// dX written once. The tile's shape (planes x depth x rows x columns, powers of two) is chosen here from a cost
// model, within the groupshared capacity (kMaxWindows windows per tile). Geometries whose windows overflow it even
// for a one-element tile (huge windows) take the direct kernel (maxpool_grad_direct_<dtype>): one thread per
// unit, each covering window's argmax recomputed from X.
//
// Splitting: dX, X and dY are cut into chunks of whole planes (N * C) whose byte ranges fit one binding; each
// window starts at an aligned offset at or before the chunk and the kernel gets the chunk's element offset. For
// fp16 a chunk starts at an even element, so no 32-bit word of dX is shared by two chunks (threads write whole
// words). One plane (two for fp16 of odd plane size) larger than a binding is rejected.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "core/error.h"
#include "gpu/dispatch.h"
#include "gpu/kernel_registry.h"

namespace dmlgrad {
namespace {

constexpr uint64_t kMaxWindows = 2048;   // MAX_WINDOWS in the kernel
constexpr uint64_t kMaxRegion = 3072;    // MAX_REGION
constexpr uint32_t kMaxTileLog2 = 8;     // MAX_TILE = 256 along one axis
constexpr uint32_t kWorkgroup = 256;      // the variants' workgroup size (checked against the registry)
constexpr uint64_t kMaxTilesPerBatch = uint64_t(1) << 22;  // keeps thread indices below 2^32

struct AxisGeometry {
    uint64_t size, out, window, stride, pad, dilation;
    uint64_t span_m1() const { return (window - 1) * dilation; }
    // Windows that can reach a run of `extent` consecutive coordinates.
    uint64_t box(uint64_t extent) const { return std::min(out, (extent - 1 + span_m1()) / stride + 1); }
    // Input coordinates (padding included) that `windows` consecutive windows read.
    uint64_t region(uint64_t windows) const { return (windows - 1) * stride + span_m1() + 1; }
};

struct TileShape {
    uint32_t plane_log2 = 0;
    std::array<uint32_t, 3> log2{0, 0, 0};  // depth, rows, columns
    std::array<uint64_t, 3> box{1, 1, 1};
    bool staged = false;  // X's keys staged in groupshared memory (the region fits kMaxRegion)
};

uint32_t ceil_log2(uint64_t v) { return uint32_t(std::bit_width(v - 1)); }
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t align_down(uint64_t v, uint64_t a) { return v / a * a; }

// The cheapest tile in a rough model of the kernel's work (argmax taps, gather loops, idle threads, per-tile
// overhead, uncoalesced rows); nullopt when not even a one-element tile fits the groupshared memory.
std::optional<TileShape> choose_tile(const std::array<AxisGeometry, 3>& axes, uint64_t planes, bool half) {
    const uint64_t max_elements = half ? 2048 : 1024;
    const uint32_t unit_log2 = half ? 1 : 0;
    double taps = 1, all_taps = 1, cover = 1;
    for (const auto& a : axes) {
        taps *= double(std::min(a.window, a.size));
        all_taps *= double(a.window);
        cover *= std::max(1.0, double(a.window) / double(a.stride));
    }
    const uint64_t coalesced = std::min<uint64_t>(half ? 64 : 32, axes[2].size);
    std::optional<TileShape> best;
    double best_cost = std::numeric_limits<double>::infinity();
    const uint32_t plane_max = std::min(kMaxTileLog2, ceil_log2(planes));
    const std::array<uint32_t, 3> max_log2 = {std::min(kMaxTileLog2, ceil_log2(axes[0].size)),
                                              std::min(kMaxTileLog2, ceil_log2(axes[1].size)),
                                              std::min(kMaxTileLog2, ceil_log2(axes[2].size))};
    for (uint32_t lp = 0; lp <= plane_max; ++lp)
        for (uint32_t ld = 0; ld <= max_log2[0]; ++ld)
            for (uint32_t lh = 0; lh <= max_log2[1]; ++lh)
                for (uint32_t lw = 0; lw <= max_log2[2]; ++lw) {
                    if ((uint64_t(1) << (lp + ld + lh + lw)) > max_elements) continue;
                    TileShape s{lp, {ld, lh, lw}, {}, false};
                    const uint64_t tile_planes = std::min<uint64_t>(uint64_t(1) << lp, planes);
                    uint64_t windows = tile_planes, region = tile_planes, tiles = ceil_div(planes, tile_planes);
                    for (size_t a = 0; a < 3; ++a) {
                        const uint64_t extent = std::min(uint64_t(1) << s.log2[a], axes[a].size);
                        s.box[a] = axes[a].box(extent);
                        windows *= s.box[a];
                        region *= axes[a].region(s.box[a]);
                        tiles *= ceil_div(axes[a].size, extent);
                    }
                    if (windows > kMaxWindows) continue;
                    s.staged = region <= kMaxRegion;
                    const uint64_t units = uint64_t(1) << (lp + ld + lh + std::max(lw, unit_log2) - unit_log2);
                    const double gather = double(ceil_div(units, kWorkgroup) * kWorkgroup) * (10 + 8 * cover);
                    const double per_window = s.staged ? 20 + 5 * all_taps : 40 + 14 * taps;
                    const double argmax = double(ceil_div(windows, kWorkgroup) * kWorkgroup) * per_window +
                                          (s.staged ? double(ceil_div(region, kWorkgroup) * kWorkgroup) * 12 : 0);
                    double cost = double(tiles) * (gather + argmax + 400);
                    if ((uint64_t(1) << lw) < coalesced) cost *= 2;
                    if (cost < best_cost) best_cost = cost, best = s;
                }
    return best;
}

// The kernel's geometry buffer (layout in kernels/maxpool_grad.hlsl).
std::vector<uint32_t> geometry_words(const std::array<AxisGeometry, 3>& axes, const TileShape& tile,
                                     uint64_t x_plane, uint64_t dy_plane) {
    std::vector<uint32_t> words;
    for (size_t a = 0; a < 3; ++a) {
        const AxisGeometry& g = axes[a];
        const uint64_t step = g.dilation / std::gcd(g.stride, g.dilation);
        const uint32_t dilation_shift = std::has_single_bit(g.dilation) ? uint32_t(std::countr_zero(g.dilation))
                                                                         : 0xFFFFFFFFu;
        const uint64_t tiles = ceil_div(g.size, std::min(uint64_t(1) << tile.log2[a], g.size));
        for (uint64_t v : {g.size, g.out, g.window, g.stride, g.pad, g.dilation, step, g.span_m1(),
                           uint64_t(dilation_shift), uint64_t(tile.log2[a]), tiles, tile.box[a]})
            words.push_back(uint32_t(v));
    }
    const uint64_t dbg = getenv("MPDEBUG") ? std::stoul(getenv("MPDEBUG")) : 0;  // DEBUG
    for (uint64_t v : {uint64_t(tile.plane_log2), x_plane, dy_plane, uint64_t(tile.staged) | dbg})
        words.push_back(uint32_t(v));
    return words;
}

// A binding window over the bytes of planes [first, end) of a tensor with `plane_bytes` per plane.
BufferWindow plane_window(uint32_t slot, uint64_t first, uint64_t end, uint64_t plane_bytes, uint64_t total_bytes,
                          const DeviceLimits& limits) {
    const uint64_t offset = align_down(first * plane_bytes, limits.offset_alignment);
    const uint64_t stop = std::min((end * plane_bytes + 15) / 16 * 16, padded_bytes(total_bytes));
    return {slot, offset, std::max<uint64_t>(stop - offset, 16)};
}

}  // namespace

GpuProgram build_maxpool_grad_program(const MaxPoolGradPlan& plan, const DeviceLimits& limits) {
    const bool half = plan.dtype == DType::f16;
    const uint64_t element = dtype_size(plan.dtype);
    std::array<AxisGeometry, 3> axes;
    for (size_t a = 0; a < 3; ++a) {
        axes[a] = {uint64_t(plan.in[a]), uint64_t(plan.out[a]), uint64_t(plan.window[a]), uint64_t(plan.stride[a]),
                   uint64_t(plan.start_padding[a]), uint64_t(plan.dilation[a])};
        // The kernel's coordinate arithmetic is 32-bit, signed where a window starts in the padding.
        const AxisGeometry& g = axes[a];
        const uint64_t limit = uint64_t(1) << 30;
        if (g.size >= limit || g.pad >= limit || g.stride >= limit || g.span_m1() >= limit ||
            (g.out - 1) * g.stride + g.span_m1() >= limit)
            throw RuntimeFailure("maxpool-grad on the GPU: an axis with a size, padding, stride or window of 2^30 "
                                 "or more; run it with --cpu");
    }
    const uint64_t x_plane = axes[0].size * axes[1].size * axes[2].size;
    const uint64_t dy_plane = axes[0].out * axes[1].out * axes[2].out;
    const uint64_t x_bytes = plan.planes * x_plane * element, dy_bytes = plan.planes * dy_plane * element;
    if (plan.planes * x_plane > UINT32_MAX || plan.planes * dy_plane > UINT32_MAX)
        throw RuntimeFailure("maxpool-grad on the GPU: a tensor has more than 2^32 - 1 elements");

    std::optional<TileShape> tile = choose_tile(axes, plan.planes, half);
    if (getenv("MPDIRECT")) tile.reset();  // DEBUG
    if (tile && getenv("MPUNSTAGED")) tile->staged = false;  // DEBUG
    GpuProgram program;
    program.kernel = std::string("maxpool_grad_") + (tile ? "tiled_" : "direct_") + dtype_suffix(plan.dtype);
    if (find_kernel(program.kernel).workgroup_size != kWorkgroup)
        throw std::logic_error("maxpool-grad: the kernels are compiled for 256 threads per group");
    program.binding_count = 4;
    program.push_bytes = 8 * 4;
    program.constants.push_back(geometry_words(axes, tile.value_or(TileShape{}), x_plane, dy_plane));
    const BufferWindow geometry{3, 0, padded_bytes(4 * program.constants[0].size())};

    // Planes per chunk: all when both tensors fit one binding, else as many as fit with the alignment slack.
    uint64_t per_chunk = plan.planes;
    if (padded_bytes(x_bytes) > limits.max_binding_bytes || padded_bytes(dy_bytes) > limits.max_binding_bytes) {
        const uint64_t slack = limits.offset_alignment + 16;
        const uint64_t room = limits.max_binding_bytes > slack ? limits.max_binding_bytes - slack : 0;
        per_chunk = std::min(room / (x_plane * element), room / (dy_plane * element));
        if (half && x_plane % 2 == 1) per_chunk &= ~uint64_t(1);  // chunks start at even elements
        if (per_chunk == 0)
            throw RuntimeFailure(fmt::format(
                "maxpool-grad on the GPU: {} of X ({} bytes) or dY ({} bytes) exceed the device's limit of {} "
                "bytes per storage binding; run it with --cpu",
                half && x_plane % 2 == 1 ? "two (n, c) planes" : "one (n, c) plane",
                (half && x_plane % 2 == 1 ? 2 : 1) * x_plane * element,
                (half && x_plane % 2 == 1 ? 2 : 1) * dy_plane * element, limits.max_binding_bytes));
    }

    for (uint64_t first = 0; first < plan.planes; first += per_chunk) {
        const uint64_t end = std::min(plan.planes, first + per_chunk), planes = end - first;
        const BufferWindow x = plane_window(0, first, end, x_plane * element, x_bytes, limits);
        const BufferWindow dy = plane_window(1, first, end, dy_plane * element, dy_bytes, limits);
        const BufferWindow dx{2, x.offset, x.range};
        const std::vector<BufferWindow> bindings = {x, dy, dx, geometry};
        std::vector<uint32_t> push = {0, 0, 0, uint32_t(planes), uint32_t(first * x_plane - x.offset / element),
                                      uint32_t(first * dy_plane - dy.offset / element), 0, 0};
        if (tile) {
            uint64_t tiles = ceil_div(planes, uint64_t(1) << tile->plane_log2);
            for (size_t a = 0; a < 3; ++a)
                tiles *= ceil_div(axes[a].size, std::min(uint64_t(1) << tile->log2[a], axes[a].size));
            for (uint64_t batch = 0; batch < tiles; batch += kMaxTilesPerBatch) {
                const uint64_t count = std::min(kMaxTilesPerBatch, tiles - batch);
                push[1] = uint32_t(batch), push[2] = uint32_t(count);
                append_dispatches(program, bindings, push, 0, count * kWorkgroup, limits);
            }
        } else {
            const uint64_t units = ceil_div(planes * x_plane, half ? 2 : 1);
            push[1] = 0, push[2] = uint32_t(units);
            append_dispatches(program, bindings, push, 0, units, limits);
        }
    }
    return program;
}

}  // namespace dmlgrad
