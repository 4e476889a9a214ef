#include "gpu/ops/resample_planes.h"

#include <array>
#include <bit>
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

// Plane element `index`'s indices on the plane's axes (from first_axis), from `index`'s digits.
std::array<uint64_t, 4> plane_indices(const View& view, size_t first_axis, uint64_t index) {
    std::array<uint64_t, 4> at{};
    for (size_t a = 4; a-- > first_axis;) {
        at[a] = index % view[a].dx;
        index /= view[a].dx;
    }
    return at;
}

// Appends the runs of the dY offsets of plane element `index`, the axes nested in the CPU's order (axis 3
// innermost), so the offsets rise: consecutive ones extend the last run.
class RunWriter {
public:
    RunWriter(const View& view, size_t first_axis) : view_(view), first_(first_axis) {}

    void element(uint64_t index, std::vector<uint32_t>& runs) {
        last_ = UINT64_MAX;
        nest(first_, plane_indices(view_, first_, index), 0, runs);
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

// Appends the terms of plane element `index` (linear): each dY offset and its weight product, the axes nested in
// the CPU's order and the product made as the CPU makes it, left to right in float32 (an identity axis' weight is
// 1, which changes no product).
class TermWriter {
public:
    TermWriter(const View& view, size_t first_axis) : view_(view), first_(first_axis) {}

    void element(uint64_t index, std::vector<uint32_t>& terms) {
        nest(first_, plane_indices(view_, first_, index), 0, 1.0f, terms);
    }

private:
    void nest(size_t a, const std::array<uint64_t, 4>& at, uint64_t offset, float product,
              std::vector<uint32_t>& terms) {
        const Reach reach = taps_at(view_[a], at[a]);
        for (uint64_t k = 0; k < reach.count; ++k) {
            const uint64_t o = offset * view_[a].dy + reach.first + k;
            const float p = product * weight_at(view_[a], at[a], k);
            if (a < 3) {
                nest(a + 1, at, o, p, terms);
            } else {
                terms.push_back(uint32_t(o));
                terms.push_back(std::bit_cast<uint32_t>(p));
            }
        }
    }

    static float weight_at(const Axis& axis, uint64_t i, uint64_t k) {
        return axis.identity ? 1.0f : axis.taps->weight[axis.taps->begin[i] + k];
    }

    const View& view_;
    size_t first_;
};

// The kernel's words for a writer of each element's list: P, Q, each element's list start, then the lists.
template <typename Writer>
std::vector<uint32_t> plane_lists(const View& view, const Planes& planes, uint32_t at) {
    using namespace kernels::resample_grad;
    std::vector<uint32_t> words{uint32_t(planes.dx), uint32_t(planes.dy)};
    std::vector<uint32_t> lists;
    std::vector<uint32_t> starts;
    Writer writer(view, planes.first_axis);
    for (uint64_t k = 0; k < planes.dx; ++k) {
        starts.push_back(uint32_t(lists.size()));
        writer.element(k, lists);
    }
    starts.push_back(uint32_t(lists.size()));
    const uint32_t first_list = at + PLANE_RUN_STARTS + uint32_t(starts.size());
    for (uint32_t s : starts) words.push_back(first_list + s);
    words.insert(words.end(), lists.begin(), lists.end());
    return words;
}

}  // namespace

std::optional<Planes> planes_of(const View& view) {
    for (size_t a = 0; a < 4; ++a) {
        if (view[a].identity) continue;
        Planes planes{a, 1, 1, 1};
        for (size_t b = a; b < 4; ++b) {
            planes.dx *= view[b].dx;
            planes.dy *= view[b].dy;
            planes.terms *= view[b].identity ? view[b].dx : view[b].taps->begin[view[b].dx];
        }
        return planes;
    }
    return std::nullopt;
}

std::vector<uint32_t> plane_runs(const View& view, const Planes& planes, uint32_t at) {
    return plane_lists<RunWriter>(view, planes, at);
}

std::vector<uint32_t> plane_terms(const View& view, const Planes& planes, uint32_t at) {
    return plane_lists<TermWriter>(view, planes, at);
}

}  // namespace dmlgrad::resample_gpu
