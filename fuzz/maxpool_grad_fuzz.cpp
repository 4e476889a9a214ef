// libFuzzer target: a fuzzed max-pool grad (4-D or 5-D, windows, strides, paddings, dilations, dY shape) through
// plan -> the CPU backend. It must give a UsageError, or the gradient computed here straight from DirectML's
// description: each window's dY to its first largest non-padding element of X (NaN above every number, the
// first NaN winning), contributions added, a window of only padding dropped. X holds small integers with ties
// and NaNs, dY small integers, so every sum is exact.
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "fuzz_input.h"
#include "ops/backend.h"
#include "ops/maxpool_grad.h"

using namespace dmlgrad;
using namespace dmlgrad::fuzz;

namespace {

struct Geometry {
    size_t spatial = 2;
    Shape x, dy;
    MaxPoolGradDesc desc;
};

bool larger(double v, double best) { return std::isnan(v) ? !std::isnan(best) : v > best; }

// Visits every multi-index of `sizes` in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& sizes, F f) {
    uint64_t count = 1;
    for (int64_t s : sizes) count *= uint64_t(std::max<int64_t>(s, 0));
    std::vector<int64_t> index(sizes.size());
    for (uint64_t n = 0; n < count; ++n) {
        uint64_t rest = n;
        for (size_t d = sizes.size(); d-- > 0;) {
            index[d] = int64_t(rest % uint64_t(sizes[d]));
            rest /= uint64_t(sizes[d]);
        }
        f(index);
    }
}

uint64_t flat(const Shape& shape, const std::vector<int64_t>& index) {
    uint64_t f = 0;
    for (size_t d = 0; d < shape.size(); ++d) f = f * uint64_t(shape[d]) + uint64_t(index[d]);
    return f;
}

std::vector<double> reference(const Geometry& g, const Tensor& x, const Tensor& dy) {
    std::vector<double> dx(x.elements(), 0.0);
    const size_t s = g.spatial;
    for_each_index(std::vector<int64_t>(g.dy.begin(), g.dy.end()), [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> window(g.desc.window_size.begin(), g.desc.window_size.end());
        bool chosen = false;
        double best = 0;
        std::vector<int64_t> best_p;
        for_each_index(window, [&](const std::vector<int64_t>& k) {
            std::vector<int64_t> p = {o[0], o[1]};
            for (size_t j = 0; j < s; ++j) {
                const int64_t c = o[2 + j] * g.desc.strides[j] - g.desc.start_padding[j] + k[j] * g.desc.dilations[j];
                if (c < 0 || c >= g.x[2 + j]) return;  // padding
                p.push_back(c);
            }
            const double v = value_at(x, flat(g.x, p));
            if (!chosen || larger(v, best)) chosen = true, best = v, best_p = p;
        });
        if (chosen) dx[flat(g.x, best_p)] += value_at(dy, flat(g.dy, o));
    });
    return dx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in{data, size};
    Geometry g;
    const DType type = in.pick(2) ? DType::f32 : DType::f16;
    g.spatial = 2 + in.pick(2);
    g.x = {int64_t(1 + in.pick(2)), int64_t(1 + in.pick(2))};
    g.dy = g.x;
    for (size_t j = 0; j < g.spatial; ++j) {
        const int64_t input = int64_t(1 + in.pick(6)), window = int64_t(1 + in.pick(3)),
                      stride = int64_t(1 + in.pick(3));
        const int64_t start = int64_t(in.pick(3)), end = int64_t(in.pick(3)), dilation = int64_t(1 + in.pick(2));
        g.x.push_back(input);
        g.desc.window_size.push_back(window);
        g.desc.strides.push_back(stride);
        g.desc.start_padding.push_back(start);
        g.desc.end_padding.push_back(end);
        g.desc.dilations.push_back(dilation);
        // The output size of a pooling, sometimes off by one (validation must refuse it).
        const int64_t reach = input + start + end - (window - 1) * dilation - 1;
        g.dy.push_back((reach < 0 ? 0 : reach / stride + 1) + (in.pick(16) == 0 ? 1 : 0));
    }
    const Operand x{"--input", "x.npy", {type, g.x}}, dy{"--input-gradient", "dy.npy", {type, g.dy}};
    Plan plan;
    try {
        plan = plan_maxpool_grad(g.desc, x, dy);
    } catch (const UsageError&) {
        return 0;
    }
    const Tensor xt = small_values(type, g.x, in, true), dyt = small_values(type, g.dy, in, false);
    Tensor out(plan_output_info(plan));
    poison(out);
    const Tensor* inputs[] = {&xt, &dyt};
    make_cpu_backend()->run(plan, inputs, out, RunOptions{1});
    const std::vector<double> want = reference(g, xt, dyt);
    for (uint64_t i = 0; i < out.elements(); ++i)
        if (value_at(out, i) != want[i]) std::abort();
    return 0;
}
