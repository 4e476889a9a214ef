#pragma once
// DML_MAX_POOLING_GRAD_OPERATOR_DESC: each window's dY goes to the window's first maximal non-padding element
// of X; overlaps add (docs/OPERATORS.md section 4).
#include <array>
#include <vector>

#include "ops/operand.h"

namespace dmlgrad {

inline constexpr DType kMaxPoolGradTypes[] = {DType::f32, DType::f16};

// Spatial axes only ({H, W} or {D, H, W}); an empty list takes the default (strides 1, paddings 0, dilations 1).
struct MaxPoolGradDesc {
    std::vector<int64_t> window_size;
    std::vector<int64_t> strides;
    std::vector<int64_t> start_padding;
    std::vector<int64_t> end_padding;
    std::vector<int64_t> dilations;
};

// Geometry with the spatial axes right-aligned into three ({1, H, W} for 4-D tensors), so every backend has
// one loop nest for 4-D and 5-D.
struct MaxPoolGradPlan {
    static constexpr bool sums = true;  // dX elements add contributions (plan_sums)
    DType dtype = DType::f32;
    Shape x_shape;  // == dX's shape
    Shape dy_shape;
    uint64_t planes = 0;  // N * C
    std::array<int64_t, 3> in{1, 1, 1};
    std::array<int64_t, 3> out{1, 1, 1};
    std::array<int64_t, 3> window{1, 1, 1};
    std::array<int64_t, 3> stride{1, 1, 1};
    std::array<int64_t, 3> start_padding{0, 0, 0};
    std::array<int64_t, 3> end_padding{0, 0, 0};  // the kernels need only dY's size; --json reports it
    std::array<int64_t, 3> dilation{1, 1, 1};
};

MaxPoolGradPlan plan_maxpool_grad(const MaxPoolGradDesc& desc, const Operand& x, const Operand& dy);

// O_floor per spatial axis (docs/OPERATORS.md 4.1); used by validation and by tests.
int64_t maxpool_output_size(int64_t input, int64_t window, int64_t stride, int64_t start_padding, int64_t end_padding,
                            int64_t dilation);

}  // namespace dmlgrad
