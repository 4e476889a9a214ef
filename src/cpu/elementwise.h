#pragma once
// The loop shared by the element-wise gradients (ReLU, clip): dX[i] = select(X[i], dY[i]) on all cores.
#include <cstdint>

#include "core/parallel.h"
#include "core/tensor.h"

namespace dmlgrad::cpu {

// Below this many elements per thread, starting a thread costs more than it saves.
inline constexpr uint64_t kElementwiseMinPerThread = uint64_t(1) << 16;

// `Bits` is the element viewed as an unsigned or signed integer of its size: the select works on bit patterns,
// so no float ever passes through an FPU register (denormals and NaN payloads survive, nothing is flushed).
// `select` must be branch-free and inlinable so that the loop vectorizes.
template <class Bits, class Select>
void for_each_element(uint64_t count, const Tensor& x, const Tensor& dy, Tensor& dx, Select select) {
    const Bits* x_data = x.as<Bits>();
    const Bits* dy_data = dy.as<Bits>();
    Bits* dx_data = dx.as<Bits>();
    parallel_for(count, kElementwiseMinPerThread, [=](uint64_t begin, uint64_t end) {
        const Bits* __restrict__ xs = x_data;
        const Bits* __restrict__ dys = dy_data;
        Bits* __restrict__ dxs = dx_data;
        for (uint64_t i = begin; i < end; ++i) dxs[i] = select(xs[i], dys[i]);
    });
}

}  // namespace dmlgrad::cpu
