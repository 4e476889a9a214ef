// ReLU grad on the GPU: kernels/relu_grad.hlsl, one variant per dtype, 16 bytes per thread.
#include "gpu/dispatch.h"
#include "interface/relu_grad.h"

namespace dmlgrad {

GpuProgram build_relu_grad_program(const ReluGradPlan& plan, const DeviceLimits& limits) {
    return elementwise_program("relu_grad_" + dtype_suffix(plan.dtype), plan.count * dtype_size(plan.dtype),
                               kernels::relu_grad::Params{}, limits);
}

}  // namespace dmlgrad
