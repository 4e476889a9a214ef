// libFuzzer target: a fuzzed resample grad (rank 1-4, sizes, mode, rounding, scales, pixel offsets) through plan
// -> the CPU backend. It must give a UsageError, or the transpose of the forward resample computed here per dY
// element from DirectML's formula (u = (o - a) / s - b in float32; nearest: floor or ceil, clamped; linear: the
// two neighbours of the clamped u), summed in double and compared within float32 (or float16) rounding.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "fuzz_input.h"
#include "ops/backend.h"
#include "ops/resample_grad.h"

using namespace dmlgrad;
using namespace dmlgrad::fuzz;

namespace {

struct Tap {
    int64_t index;
    double weight;
};

// The dX positions dY position o reads along one axis, with their weights.
std::vector<Tap> taps(const ResampleGradDesc& d, size_t axis, int64_t o, int64_t dx_size) {
    const float u = (float(o) - d.input_pixel_offsets[axis]) / d.scales[axis] - d.output_pixel_offsets[axis];
    const float last = float(dx_size - 1);
    if (d.mode == InterpolationMode::nearest) {
        const float r = d.rounding == RoundingDirection::decreasing ? std::floor(u) : std::ceil(u);
        return {{int64_t(std::clamp(r, 0.0f, last)), 1.0}};
    }
    const float c = std::clamp(u, 0.0f, last);
    const auto i0 = int64_t(std::floor(c));
    const float f = c - float(i0);
    return {{i0, 1.0 - double(f)}, {std::min<int64_t>(i0 + 1, dx_size - 1), double(f)}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in{data, size};
    static const float kScales[] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 0.25f, 0.75f, 2.5f, 1.0f / 3.0f, 7.0f};
    static const float kOffsets[] = {-0.5f, 0.0f, 0.5f, 0.25f, -1.0f, 1.5f};
    const DType type = in.pick(2) ? DType::f32 : DType::f16;
    const size_t rank = 1 + in.pick(4);
    ResampleGradDesc d;
    d.mode = in.pick(2) ? InterpolationMode::linear : InterpolationMode::nearest;
    d.rounding = in.pick(2) ? RoundingDirection::increasing : RoundingDirection::decreasing;
    Shape dy_shape;
    for (size_t axis = 0; axis < rank; ++axis) {
        d.output_sizes.push_back(int64_t(1 + in.pick(5)));
        // At most 256 dY elements in all: coverage needs shapes and parameters, not size, and the reference's cost
        // grows with the elements (this keeps a run to thousands of executions a second).
        const int64_t room = 256 / std::max<int64_t>(1, element_count(dy_shape));
        dy_shape.push_back(std::min<int64_t>(int64_t(1 + in.pick(7)), std::max<int64_t>(room, 1)));
        d.scales.push_back(in.pick_from(kScales));
        d.input_pixel_offsets.push_back(in.pick_from(kOffsets));
        d.output_pixel_offsets.push_back(in.pick_from(kOffsets));
    }
    const Operand dy{"--input-gradient", "dy.npy", {type, dy_shape}};
    Plan plan;
    try {
        plan = plan_resample_grad(d, dy);
    } catch (const UsageError&) {
        return 0;
    }
    const Tensor dyt = small_values(type, dy_shape, in, false);
    Tensor out(plan_output_info(plan));
    poison(out);
    const Tensor* inputs[] = {&dyt};
    make_cpu_backend()->run(plan, inputs, out, RunOptions{1});

    std::vector<double> want(out.elements(), 0.0), magnitude(out.elements(), 0.0), terms(out.elements(), 0.0);
    std::vector<int64_t> o(rank);
    for (uint64_t k = 0; k < dyt.elements(); ++k) {
        uint64_t rest = k;
        for (size_t axis = rank; axis-- > 0;)
            o[axis] = int64_t(rest % uint64_t(dy_shape[axis])), rest /= uint64_t(dy_shape[axis]);
        // The product over axes of each axis' taps: every combination, as a flat dX index and a weight.
        std::vector<Tap> combined = {{0, 1.0}};
        for (size_t axis = 0; axis < rank; ++axis) {
            std::vector<Tap> next;
            for (const Tap& c : combined)
                for (const Tap& t : taps(d, axis, o[axis], d.output_sizes[axis]))
                    next.push_back({c.index * d.output_sizes[axis] + t.index, c.weight * t.weight});
            combined = std::move(next);
        }
        const double v = value_at(dyt, k);
        for (const Tap& c : combined) {
            want[uint64_t(c.index)] += v * c.weight;
            magnitude[uint64_t(c.index)] += std::abs(v * c.weight);
            terms[uint64_t(c.index)] += 1;
        }
    }
    // The backends multiply the axis weights and add the terms in float32: each term and each addition rounds by
    // at most 2^-24 relative, so the sum is off by at most (terms + rank + 1) * 2^-24 * (sum of |terms|) (plus
    // float32 underflow of tiny products); float16 rounds the result once more (2^-11 relative).
    const double u = std::ldexp(1.0, -24);
    for (uint64_t i = 0; i < out.elements(); ++i) {
        double bound = (terms[i] + double(rank) + 1) * u * magnitude[i] + 1e-37;
        if (type == DType::f16) bound += std::ldexp(1.0, -11) * std::abs(want[i]) + std::ldexp(1.0, -25);
        if (!(std::abs(value_at(out, i) - want[i]) <= bound)) {
            std::fprintf(stderr, "resample-grad %s %s: dX[%llu] = %.9g, the reference says %.9g\n",
                         d.mode == InterpolationMode::linear ? "linear" : "nearest", dtype_name(type).data(),
                         static_cast<unsigned long long>(i), value_at(out, i), want[i]);
            for (size_t axis = 0; axis < rank; ++axis)
                std::fprintf(stderr, "  axis %zu: dX %lld, dY %lld, scale %.9g, offsets %g %g, %s\n", axis,
                             static_cast<long long>(d.output_sizes[axis]), static_cast<long long>(dy_shape[axis]),
                             d.scales[axis], d.input_pixel_offsets[axis], d.output_pixel_offsets[axis],
                             d.rounding == RoundingDirection::decreasing ? "decreasing" : "increasing");
            std::abort();
        }
    }
    return 0;
}
