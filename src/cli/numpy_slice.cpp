#include "cli/numpy_slice.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/number_text.h"

namespace dmlgrad::cli {
namespace {

// One item between commas: `...`, an integer index, or start:stop:step with each part optional.
struct Item {
    enum class Kind { ellipsis, index, slice } kind = Kind::slice;
    int64_t index = 0;
    std::optional<int64_t> start, stop, step;

    static Item of(Kind kind) {
        Item item;
        item.kind = kind;
        return item;
    }
};

[[noreturn]] void refuse(std::string_view text, std::string_view why) {
    throw UsageError(fmt::format("--slice {}: {}", text, why));
}

std::string_view trim(std::string_view s) {
    const size_t first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::optional<int64_t> integer_part(std::string_view text, std::string_view part) {
    part = trim(part);
    if (part.empty()) return std::nullopt;
    const std::string_view digits = without_plus(part);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) refuse(text, fmt::format("'{}' is out of the 64-bit range", part));
    if (ec != std::errc() || end != digits.data() + digits.size())
        refuse(text, fmt::format("'{}' is not an integer", part));
    return value;
}

// The item's kind, or the reason numpy's advanced indexing or new axes are refused.
Item parse_item(std::string_view text, std::string_view item) {
    item = trim(item);
    if (item == "...") return Item::of(Item::Kind::ellipsis);
    if (item == "None" || item == "np.newaxis" || item == "newaxis" || item == "numpy.newaxis")
        refuse(text, "None (newaxis) adds an axis of size 1 that dX does not have; give dX's shape instead");
    if (item == "True" || item == "False") refuse(text, "boolean indices are advanced indexing, not a slice");
    if (item.find_first_of("[]()") != std::string_view::npos)
        refuse(text, "array indices are advanced indexing (a gather), not a slice");
    if (item.empty()) refuse(text, "an empty item (write ':' for a whole axis)");
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
        Item index = Item::of(Item::Kind::index);
        index.index = *integer_part(text, item);
        return index;
    }
    const size_t second = item.find(':', colon + 1);
    if (second != std::string_view::npos && item.find(':', second + 1) != std::string_view::npos)
        refuse(text, fmt::format("'{}' has more than two ':'", item));
    Item slice = Item::of(Item::Kind::slice);
    slice.start = integer_part(text, item.substr(0, colon));
    slice.stop =
        integer_part(text, item.substr(colon + 1, second == std::string_view::npos ? item.npos : second - colon - 1));
    if (second != std::string_view::npos) slice.step = integer_part(text, item.substr(second + 1));
    if (slice.step == 0) refuse(text, fmt::format("'{}': the step cannot be 0", item));
    if (slice.step && (*slice.step < INT32_MIN || *slice.step > INT32_MAX))
        refuse(text, fmt::format("'{}': the step does not fit DirectML's 32-bit stride", item));
    return slice;
}

std::vector<Item> parse_items(std::string_view text) {
    std::string_view body = trim(text);
    if (body.size() >= 2 && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
    std::vector<Item> items;
    if (trim(body).empty()) return items;  // "[]" or "": every axis whole
    size_t begin = 0;
    int depth = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
        if (i < body.size() && (body[i] == '[' || body[i] == '(')) ++depth;
        if (i < body.size() && (body[i] == ']' || body[i] == ')')) --depth;
        if (i == body.size() || (body[i] == ',' && depth == 0)) {
            std::string_view item = body.substr(begin, i - begin);
            // A trailing comma, as in "1," (a tuple of one), adds no item.
            if (!(i == body.size() && trim(item).empty() && !items.empty())) items.push_back(parse_item(text, item));
            begin = i + 1;
        }
    }
    return items;
}

// Python's slice.indices(): the first element, the step and the element count of start:stop:step on `size`.
struct Range {
    int64_t first = 0, step = 1, count = 0;
};

Range slice_range(const Item& item, int64_t size) {
    const int64_t step = item.step.value_or(1);
    const int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? size - 1 : size;
    const auto bound = [&](std::optional<int64_t> given, int64_t fallback) {
        if (!given) return fallback;
        int64_t v = *given;
        if (v < 0) v = v < -size ? lower : v + size;  // v < -size: beyond the start, clamped (no overflow)
        return std::clamp(v, lower, upper);
    };
    const int64_t start = bound(item.start, step < 0 ? upper : lower);
    const int64_t stop = bound(item.stop, step < 0 ? lower : upper);
    const int64_t span = step > 0 ? stop - start : start - stop;
    const int64_t magnitude = step > 0 ? step : -step;
    const int64_t count = span <= 0 ? 0 : (span - 1) / magnitude + 1;
    return {start, step, count};
}

// Every axis' item: `...` expanded, missing trailing axes whole.
std::vector<Item> items_per_axis(std::string_view text, const std::vector<Item>& items, size_t rank) {
    size_t ellipses = 0;
    for (const Item& item : items) ellipses += item.kind == Item::Kind::ellipsis;
    if (ellipses > 1) refuse(text, "an index can only have a single ellipsis ('...')");
    const size_t given = items.size() - ellipses;
    if (given > rank) refuse(text, fmt::format("{} indices for a tensor of rank {} (dX, --output-sizes)", given, rank));
    std::vector<Item> axes;
    for (const Item& item : items) {
        if (item.kind == Item::Kind::ellipsis)
            axes.insert(axes.end(), rank - given, Item{});
        else
            axes.push_back(item);
    }
    axes.resize(rank);  // whole axes after the last item
    return axes;
}

}  // namespace

NumpySlice resolve_numpy_slice(std::string_view text, const Shape& dx_shape) {
    const std::vector<Item> axes = items_per_axis(text, parse_items(text), dx_shape.size());
    NumpySlice s;
    s.desc.output_sizes = dx_shape;
    for (size_t axis = 0; axis < axes.size(); ++axis) {
        const Item& item = axes[axis];
        const int64_t size = dx_shape[axis];
        Range range;
        if (item.kind == Item::Kind::index) {
            const int64_t index = item.index < 0 ? item.index + size : item.index;
            if (index < 0 || index >= size)
                refuse(text, fmt::format("index {} is out of bounds for axis {} with size {}", item.index, axis, size));
            range = {index, 1, 1};
        } else {
            range = slice_range(item, size);
        }
        // DirectML's window: the elements' span; a negative stride walks it from its last element.
        const int64_t span = range.count == 0 ? 1 : (range.count - 1) * (range.step < 0 ? -range.step : range.step) + 1;
        const int64_t lowest = range.step < 0 ? range.first + (range.count - 1) * range.step : range.first;
        s.desc.window_offsets.push_back(range.count == 0 ? 0 : lowest);
        s.desc.window_sizes.push_back(span);
        s.desc.window_strides.push_back(range.step);
        s.window_shape.push_back(range.count);
        if (item.kind != Item::Kind::index) s.numpy_shape.push_back(range.count);
    }
    return s;
}

Operand NumpySlice::plan_view(const Operand& dy, std::string_view text) const {
    if (dy.info.shape != numpy_shape && dy.info.shape != window_shape)
        throw UsageError(fmt::format("{}: shape {} is not the shape of x[{}] for x of shape {}, which is {}",
                                     dy.label(), shape_string(dy.info.shape), text, shape_string(desc.output_sizes),
                                     shape_string(numpy_shape)));
    Operand view = dy;
    view.info.shape = window_shape;
    return view;
}

}  // namespace dmlgrad::cli
