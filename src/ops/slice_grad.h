#pragma once
// DML_SLICE_GRAD_OPERATOR_DESC: dX = 0, then dX[start + Stride * k] = dY[k] (docs/OPERATORS.md section 3).
#include <vector>

#include "ops/operand.h"

namespace dmlgrad {

inline constexpr DType kSliceGradTypes[] = {DType::f32, DType::f16, DType::f64, DType::i64, DType::i32, DType::i16,
                                            DType::i8,  DType::u64, DType::u32, DType::u16, DType::u8};

struct SliceGradDesc {
    Shape output_sizes;                    // dX's shape (--output-sizes)
    std::vector<int64_t> window_offsets;   // InputWindowOffsets
    std::vector<int64_t> window_sizes;     // InputWindowSizes
    std::vector<int64_t> window_strides;   // InputWindowStrides, signed, never 0
};

struct SliceGradPlan {
    DType dtype = DType::f32;
    Shape dx_shape;
    Shape dy_shape;
    std::vector<int64_t> start;   // per axis: dX coordinate of dY[0]
    std::vector<int64_t> stride;  // per axis, signed
};

SliceGradPlan plan_slice_grad(const SliceGradDesc& desc, const Operand& dy);

}  // namespace dmlgrad
