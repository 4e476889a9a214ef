// libFuzzer target: a fuzzed slice-grad window (offsets, sizes, signed strides, dY shape) through plan -> the CPU
// backend. It must give a UsageError, or dX = 0 with dY[k] at each axis' coordinate, computed here from
// DirectML's description: offset + k * stride for a positive stride, offset + size - 1 - k * |stride| for a
// negative one.
#include <cstdlib>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "fuzz_input.h"
#include "ops/backend.h"
#include "ops/slice_grad.h"

using namespace dmlgrad;
using namespace dmlgrad::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in{data, size};
    const DType type = in.pick_from(kAllDTypes);
    const size_t rank = in.pick(5);
    SliceGradDesc desc;
    Shape dy_shape;
    for (size_t axis = 0; axis < rank; ++axis) {
        desc.output_sizes.push_back(int64_t(in.pick(7)));
        desc.window_offsets.push_back(int64_t(in.pick(8)) - 1);
        desc.window_sizes.push_back(int64_t(in.pick(8)));
        desc.window_strides.push_back(int64_t(in.pick(9)) - 4);
        dy_shape.push_back(int64_t(in.pick(5)));
    }
    if (in.pick(8) == 0 && rank > 0) desc.window_strides.pop_back();  // a list of the wrong length
    const Operand dy{"--input-gradient", "dy.npy", {type, dy_shape}};
    Plan plan;
    try {
        plan = plan_slice_grad(desc, dy);
    } catch (const UsageError&) {
        return 0;
    }
    const Tensor dyt = raw_tensor(type, dy_shape, in);
    Tensor out(plan_output_info(plan));
    if (out.info.shape != desc.output_sizes) std::abort();
    poison(out);
    const Tensor* inputs[] = {&dyt};
    make_cpu_backend()->run(plan, inputs, out, RunOptions{1});

    const size_t es = dtype_size(type);
    Tensor want(out.info);
    std::memset(want.span().data(), 0, want.bytes());
    for (uint64_t k = 0; k < dyt.elements(); ++k) {
        uint64_t rest = k, flat = 0, scale = 1;
        for (size_t axis = rank; axis-- > 0;) {
            const int64_t index = int64_t(rest % uint64_t(dy_shape[axis]));
            rest /= uint64_t(dy_shape[axis]);
            const int64_t stride = desc.window_strides[axis];
            const int64_t coordinate = stride > 0
                                           ? desc.window_offsets[axis] + index * stride
                                           : desc.window_offsets[axis] + desc.window_sizes[axis] - 1 + index * stride;
            if (coordinate < 0 || coordinate >= desc.output_sizes[axis]) std::abort();  // the plan let it out
            flat += uint64_t(coordinate) * scale;
            scale *= uint64_t(desc.output_sizes[axis]);
        }
        std::memcpy(want.span().data() + flat * es, dyt.span().data() + k * es, es);
    }
    if (std::memcmp(want.span().data(), out.span().data(), out.bytes()) != 0) std::abort();
    return 0;
}
