#include "cli/plan_parameters.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <map>

#include "cli/report.h"
#include "core/half.h"
#include "core/overloaded.h"

namespace dmlgrad::cli {
namespace {

template <class Range>
std::string list_json(const Range& values) {
    return fmt::format("[{}]", fmt::join(values, ","));
}

// JSON has no infinities: those become the strings "inf" and "-inf". A float prints as the shortest decimal that
// reads back as that float (0.14285715, not the double 0.1428571492433548).
template <class Number>
std::string number_json(Number value) {
    if (std::isinf(value)) return value > 0 ? "\"inf\"" : "\"-inf\"";
    return fmt::format("{}", value);
}

std::string floats_json(const std::vector<float>& values) {
    std::vector<std::string> numbers;
    for (float v : values) numbers.push_back(number_json(v));
    return list_json(numbers);
}

// The smallest window that puts dY where the plan does (the one the user gave may be longer at its far end).
std::string slice_json(const SliceGradPlan& p) {
    std::vector<int64_t> offsets, sizes;
    for (size_t axis = 0; axis < p.start.size(); ++axis) {
        const int64_t count = p.dy_shape[axis], stride = p.stride[axis];
        const int64_t size = count == 0 ? 1 : (count - 1) * std::abs(stride) + 1;
        sizes.push_back(size);
        offsets.push_back(stride < 0 ? p.start[axis] - size + 1 : p.start[axis]);
    }
    return fmt::format(R"({{"input_window_offsets":{},"input_window_sizes":{},"input_window_strides":{}}})",
                       list_json(offsets), list_json(sizes), list_json(p.stride));
}

// The plan right-aligns the spatial axes into three; the tensor's own spatial axes are the last rank - 2.
std::string maxpool_json(const MaxPoolGradPlan& p) {
    const size_t spatial = p.x_shape.size() - 2, skip = 3 - spatial;
    const auto own = [&](const std::array<int64_t, 3>& values) {
        return list_json(std::vector<int64_t>(values.begin() + long(skip), values.end()));
    };
    return fmt::format(R"({{"window_size":{},"strides":{},"start_padding":{},"end_padding":{},"dilations":{}}})",
                       own(p.window), own(p.stride), own(p.start_padding), own(p.end_padding), own(p.dilation));
}

// The DirectML parameters a framework mode became, and which rule built the taps ("pytorch": PyTorch's own source
// indices, which DirectML's formula misses for some size pairs; see docs/OPERATORS.md 5.7). The names come from
// resolved_parameters (the -v log's too); the lists are written as JSON arrays of the plan's floats.
std::string resample_json(const ResampleGradPlan& p) {
    std::map<std::string, std::string> named;
    for (auto& [name, value] : resolved_parameters(p)) named[name] = value;
    return fmt::format(R"({{"interpolation_mode":{},"rounding_direction":{},"scales":{},"input_pixel_offsets":{},)"
                       R"("output_pixel_offsets":{},"taps":{}}})",
                       json_string(named["interpolation_mode"]), json_string(named["rounding_direction"]),
                       floats_json(p.scales), floats_json(p.input_pixel_offsets), floats_json(p.output_pixel_offsets),
                       json_string(named["taps"]));
}

}  // namespace

std::string clip_bound_json(DType type, uint64_t bits) {
    const auto sign_extend = [&](int bytes) { return int64_t(bits << (64 - 8 * bytes)) >> (64 - 8 * bytes); };
    switch (type) {
        case DType::f16: return number_json(half_to_float(uint16_t(bits)));  // exact as a float
        case DType::f32: return number_json(std::bit_cast<float>(uint32_t(bits)));
        case DType::f64: return number_json(std::bit_cast<double>(bits));
        case DType::i8: return fmt::format("{}", sign_extend(1));
        case DType::i16: return fmt::format("{}", sign_extend(2));
        case DType::i32: return fmt::format("{}", sign_extend(4));
        case DType::i64: return fmt::format("{}", int64_t(bits));
        default: return fmt::format("{}", bits);
    }
}

std::string parameters_json(const Plan& plan) {
    return std::visit(Overloaded{
                          [](const ReluGradPlan&) { return std::string("{}"); },
                          [](const ClipGradPlan& p) {
                              return fmt::format(R"({{"min":{},"max":{}}})", clip_bound_json(p.dtype, p.min_bits),
                                                 clip_bound_json(p.dtype, p.max_bits));
                          },
                          [](const SliceGradPlan& p) { return slice_json(p); },
                          [](const MaxPoolGradPlan& p) { return maxpool_json(p); },
                          [](const ResampleGradPlan& p) { return resample_json(p); },
                      },
                      plan);
}

}  // namespace dmlgrad::cli
