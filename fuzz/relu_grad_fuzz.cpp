// libFuzzer target: a fuzzed relu-grad descriptor (dtypes, shapes) and data through validate -> plan -> the CPU
// backend. It must give a UsageError, or a result equal element by element to X > 0 ? dY : 0 computed here from
// the values (float16 through half_to_float, floats as doubles, integers signed), masked elements +0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "cpu/cpu_backend.h"
#include "ops/backend.h"
#include "ops/plan.h"
#include "ops/relu_grad.h"

namespace {

using namespace dmlgrad;

struct Bytes {
    const uint8_t* p;
    size_t n;
    uint8_t next() { return n ? (--n, *p++) : 0; }
};

Shape fuzzed_shape(Bytes& in) {
    Shape shape(in.next() % 5);
    for (auto& d : shape) d = in.next() % 6;
    return shape;
}

Tensor fuzzed_tensor(DType type, Shape shape, Bytes& in) {
    Tensor t(TensorInfo{type, std::move(shape)});
    for (std::byte& b : t.span()) b = std::byte(in.next());
    return t;
}

// X > 0 as a value, for the element at `i`.
bool positive(const Tensor& x, size_t i) {
    const std::byte* p = x.span().data() + i * dtype_size(x.info.dtype);
    auto load = [p](auto v) {
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    switch (x.info.dtype) {
        case DType::f16: return half_to_float(load(uint16_t{})) > 0;
        case DType::f32: return load(float{}) > 0;
        case DType::f64: return load(double{}) > 0;
        case DType::i8: return load(int8_t{}) > 0;
        case DType::i16: return load(int16_t{}) > 0;
        case DType::i32: return load(int32_t{}) > 0;
        case DType::i64: return load(int64_t{}) > 0;
        default: return load(uint64_t{}) != 0;  // unsigned types: a plan would have refused them
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in{data, size};
    const DType x_type = kAllDTypes[in.next() % std::size(kAllDTypes)];
    const DType dy_type = (in.next() & 7) == 0 ? kAllDTypes[in.next() % std::size(kAllDTypes)] : x_type;
    const Shape x_shape = fuzzed_shape(in);
    const Shape dy_shape = (in.next() & 7) == 0 ? fuzzed_shape(in) : x_shape;
    Operand x{"--input", "x.npy", {x_type, x_shape}}, dy{"--input-gradient", "dy.npy", {dy_type, dy_shape}};
    Plan plan;
    try {
        plan = plan_relu_grad(ReluGradDesc{}, x, dy);
    } catch (const UsageError&) {
        return 0;
    }
    const Tensor xt = fuzzed_tensor(x_type, x_shape, in), dyt = fuzzed_tensor(dy_type, dy_shape, in);
    Tensor out(plan_output_info(plan));
    std::memset(out.span().data(), 0xA5, out.bytes());  // poison: every element must be written
    const Tensor* inputs[] = {&xt, &dyt};
    make_cpu_backend()->run(plan, inputs, out, RunOptions{1});
    const size_t es = dtype_size(x_type);
    if (out.info.shape != x_shape || out.info.dtype != x_type) std::abort();
    for (size_t i = 0; i < xt.info.elements(); ++i) {
        std::vector<std::byte> want(es, std::byte{0});
        if (positive(xt, i)) std::memcpy(want.data(), dyt.span().data() + i * es, es);
        if (std::memcmp(want.data(), out.span().data() + i * es, es) != 0) std::abort();
    }
    return 0;
}
