#include "gpu/ops/resample_planes.h"

#include <array>
#include <stdexcept>

#include "interface/resample_grad.h"

namespace dmlgrad::resample_gpu {
namespace {

// The dY indices of dX index i of an axis: [first, first + count).
struct Reach {
    uint64_t first, count;
};
Reach taps_at(const Axis& axis, uint64_t i) {
    if (axis.identity) return {i, 1};
    const AxisTaps& t = *axis.taps;
    const uint64_t count = t.begin[i + 1] - t.begin[i];
    return {count == 0 ? 0 : uint64_t(t.dy_index[t.begin[i]]), count};
}

// Appends the runs of the dY offsets of plane element `index` (its indices on axes a..3 from `index`'s digits), the
// axes nested in the CPU's order (axis 3 innermost), so the offsets rise: consecutive ones extend the last run.
class RunWriter {
public:
    RunWriter(const View& view, size_t first_axis) : view_(view), first_(first_axis) {}

    void element(uint64_t index, std::vector<uint32_t>& runs) {
        std::array<uint64_t, 4> at{};
        for (size_t a = 4; a-- > first_;) {
            at[a] = index % view_[a].dx;
            index /= view_[a].dx;
        }
        last_ = UINT64_MAX;
        nest(first_, at, 0, runs);
    }

private:
    void nest(size_t a, const std::array<uint64_t, 4>& at, uint64_t offset, std::vector<uint32_t>& runs) {
        const Reach reach = taps_at(view_[a], at[a]);
        for (uint64_t k = 0; k < reach.count; ++k) {
            const uint64_t o = offset * view_[a].dy + reach.first + k;
            if (a < 3)
                nest(a + 1, at, o, runs);
            else
                add(o, runs);
        }
    }

    void add(uint64_t offset, std::vector<uint32_t>& runs) {
        using namespace kernels::resample_grad;
        if (offset > PLANE_OFFSET_MASK) throw std::logic_error("resample-grad: a plane too large for its runs");
        const bool extends =
            last_ != UINT64_MAX && offset == last_ + 1 && (runs.back() >> PLANE_LENGTH_SHIFT) < PLANE_MOST_RUN;
        if (extends)
            runs.back() += 1u << PLANE_LENGTH_SHIFT;
        else
            runs.push_back(uint32_t(offset) | 1u << PLANE_LENGTH_SHIFT);
        last_ = offset;
    }

    const View& view_;
    size_t first_;
    uint64_t last_ = UINT64_MAX;
};

}  // namespace

std::optional<Planes> planes_of(const View& view) {
    for (size_t a = 0; a < 4; ++a) {
        if (view[a].identity) continue;
        Planes planes{a, 1, 1};
        for (size_t b = a; b < 4; ++b) {
            planes.dx *= view[b].dx;
            planes.dy *= view[b].dy;
        }
        return planes;
    }
    return std::nullopt;
}

std::vector<uint32_t> plane_runs(const View& view, const Planes& planes, uint32_t at) {
    using namespace kernels::resample_grad;
    std::vector<uint32_t> words{uint32_t(planes.dx), uint32_t(planes.dy)};
    std::vector<uint32_t> runs;
    std::vector<uint32_t> starts;
    RunWriter writer(view, planes.first_axis);
    for (uint64_t k = 0; k < planes.dx; ++k) {
        starts.push_back(uint32_t(runs.size()));
        writer.element(k, runs);
    }
    starts.push_back(uint32_t(runs.size()));
    const uint32_t first_run = at + PLANE_RUN_STARTS + uint32_t(starts.size());
    for (uint32_t s : starts) words.push_back(first_run + s);
    words.insert(words.end(), runs.begin(), runs.end());
    return words;
}

}  // namespace dmlgrad::resample_gpu
