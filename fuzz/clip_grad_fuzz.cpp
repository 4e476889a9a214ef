// libFuzzer target: a fuzzed clip-grad (bound text, dtypes, shapes, data) through plan -> the CPU backend. It must
// give a UsageError, or dX = (X <= Min or X >= Max) ? 0 : dY element by element, decided here by value (NaN X
// compares false, so it passes dY through). The bounds are taken from the plan as values: their text -> type
// conversion has its own unit tests and the numbers target.
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "fuzz_input.h"
#include "ops/backend.h"
#include "ops/clip_grad.h"

using namespace dmlgrad;
using namespace dmlgrad::fuzz;

namespace {

std::string bound_text(Bytes& in) {
    static const char kAlphabet[] = "0123456789.-+eEinf";
    std::string text(1 + in.pick(6), '0');
    for (char& c : text) c = kAlphabet[in.pick(sizeof kAlphabet - 1)];
    return text;
}

// A plan's bound (the tensors' bit pattern, zero-extended) as a value.
double bound_value(DType type, uint64_t bits) {
    Tensor t(TensorInfo{type, {1}});
    std::memcpy(t.span().data(), &bits, dtype_size(type));
    return value_at(t, 0);
}

Shape small_shape(Bytes& in) {
    Shape shape(in.pick(4));
    for (auto& d : shape) d = int64_t(in.pick(5));
    return shape;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in{data, size};
    const DType type = in.pick_from(kAllDTypes);
    const Shape shape = small_shape(in);
    const Shape dy_shape = in.pick(8) == 0 ? small_shape(in) : shape;
    const ClipGradDesc desc{bound_text(in), bound_text(in)};
    const Operand x{"--input", "x.npy", {type, shape}}, dy{"--input-gradient", "dy.npy", {type, dy_shape}};
    Plan plan;
    try {
        plan = plan_clip_grad(desc, x, dy);
    } catch (const UsageError&) {
        return 0;
    }
    const ClipGradPlan& clip = std::get<ClipGradPlan>(plan);
    const double min = bound_value(type, clip.min_bits), max = bound_value(type, clip.max_bits);
    const Tensor xt = raw_tensor(type, shape, in), dyt = raw_tensor(type, shape, in);
    Tensor out(plan_output_info(plan));
    poison(out);
    const Tensor* inputs[] = {&xt, &dyt};
    make_cpu_backend()->run(plan, inputs, out, RunOptions{1});
    const size_t es = dtype_size(type);
    const std::byte zero[8] = {};
    for (uint64_t i = 0; i < xt.elements(); ++i) {
        const double v = value_at(xt, i);
        const bool clipped = v <= min || v >= max;
        const std::byte* want = clipped ? zero : dyt.span().data() + i * es;
        if (std::memcmp(want, out.span().data() + i * es, es) != 0) std::abort();
    }
    return 0;
}
