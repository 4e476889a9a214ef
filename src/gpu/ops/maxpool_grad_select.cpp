#include "gpu/ops/maxpool_grad_select.h"

#include <stdexcept>

#include "gpu/dispatch.h"
#include "interface/maxpool_grad_select.h"

namespace dmlgrad::maxpool_gpu {
namespace {

namespace kernel = kernels::maxpool_grad_select;

// A dX axis as the kernel walks it: every coordinate a tap (`table` empty: dY offset p * dy_stride) or per
// coordinate the dY offset of the window whose tap it is (kernel::NOT_SELECTED where none).
struct WalkedAxis {
    uint64_t size = 1, dy_stride = 0;
    std::vector<uint32_t> table;
};

// Windows of one tap at stride 1, no padding and one per coordinate: the axis is copied whole.
bool copied_whole(const TapAxis& a) { return a.stride == 1 && a.pad == 0 && a.out == a.size; }

WalkedAxis walked_axis(const TapAxis& a, uint64_t dy_stride) {
    WalkedAxis w{a.size, dy_stride, {}};
    if (copied_whole(a)) return w;
    w.table.assign(a.size, kernel::NOT_SELECTED);
    for (uint64_t o = 0; o < a.out; ++o) {
        const uint64_t tap = o * a.stride;  // + pad: the tap lies inside where pad <= tap < size + pad
        if (tap >= a.pad && tap - a.pad < a.size) w.table[tap - a.pad] = uint32_t(o * dy_stride);
    }
    return w;
}

// The planes and the pooled axes, outermost first, with each axis copied whole merged into the one outside it
// where that one is copied whole too (the two are then one run of dX and of dY).
std::vector<WalkedAxis> merged_axes(const std::array<TapAxis, 3>& axes, uint64_t planes) {
    std::array<uint64_t, 3> dy_stride{};
    uint64_t stride = 1;
    for (size_t a = 3; a-- > 0;) {
        dy_stride[a] = stride;
        stride *= axes[a].out;
    }
    std::vector<WalkedAxis> merged{{planes, stride, {}}};
    for (size_t a = 0; a < 3; ++a) {
        WalkedAxis next = walked_axis(axes[a], dy_stride[a]);
        WalkedAxis& last = merged.back();
        if (next.table.empty() && last.table.empty()) {
            last.size *= next.size;
            last.dy_stride = next.dy_stride;
        } else {
            merged.push_back(std::move(next));
        }
    }
    return merged;
}

}  // namespace

std::optional<std::vector<uint32_t>> select_geometry_words(const std::array<TapAxis, 3>& axes, uint64_t planes) {
    const std::vector<WalkedAxis> merged = merged_axes(axes, planes);
    // The kernel's outermost axis is never a table: past dX's end its coordinate runs past the axis.
    if (merged.size() > kernel::SELECT_AXES || !merged.front().table.empty())
        throw std::logic_error("maxpool-grad: the selection's axes do not fit the kernel");
    std::vector<uint32_t> words(kernel::SELECT_TABLES_WORD);
    const size_t outside = kernel::SELECT_AXES - merged.size();  // axes of size 1 padding the outside
    for (size_t a = 0; a < kernel::SELECT_AXES; ++a) {
        const WalkedAxis axis = a < outside ? WalkedAxis{} : merged[a - outside];
        uint32_t* record = &words[a * kernel::SELECT_AXIS_WORDS];
        record[0] = uint32_t(axis.size);
        record[1] = log2_or_none(axis.size);
        record[2] = axis.table.empty() ? kernel::ARITHMETIC : uint32_t(words.size());
        record[3] = uint32_t(axis.dy_stride);
        words.insert(words.end(), axis.table.begin(), axis.table.end());
        if (words.size() > kernel::SELECT_TABLES_WORD + kMaxSelectTableWords) return std::nullopt;
    }
    return words;
}

}  // namespace dmlgrad::maxpool_gpu
