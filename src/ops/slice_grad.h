#pragma once
// DML_SLICE_GRAD_OPERATOR_DESC: dX = 0, then dX[start + Stride * k] = dY[k] (docs/OPERATORS.md section 3).
#include <vector>

#include "ops/operand.h"

namespace dmlgrad {

inline constexpr DType kSliceGradTypes[] = {DType::f32, DType::f16, DType::f64, DType::i64, DType::i32, DType::i16,
                                            DType::i8,  DType::u64, DType::u32, DType::u16, DType::u8};

struct SliceGradDesc {
    Shape output_sizes;                   // dX's shape (--output-sizes)
    std::vector<int64_t> window_offsets;  // InputWindowOffsets
    std::vector<int64_t> window_sizes;    // InputWindowSizes
    std::vector<int64_t> window_strides;  // InputWindowStrides, signed, never 0
};

// One axis of the gather: dX coordinate start + stride * k takes dY[k], for 0 <= k < dy.
struct SliceAxis {
    int64_t dx = 1;
    int64_t dy = 1;
    int64_t start = 0;
    int64_t stride = 1;
};

// Whether every element of the axis is copied, in order (start 0, stride 1, dY as long as dX).
inline bool copied_whole(const SliceAxis& axis) { return axis.start == 0 && axis.stride == 1 && axis.dy == axis.dx; }

struct SliceGradPlan {
    static constexpr bool sums = false;  // each dX element is one value or 0 (plan_sums)
    DType dtype = DType::f32;
    Shape dx_shape;
    Shape dy_shape;
    std::vector<int64_t> start;   // per axis: dX coordinate of dY[0]
    std::vector<int64_t> stride;  // per axis, signed
    // What both backends run: the same element mapping on fewer axes (fewer index splits per element, longer
    // rows). Outermost first, never empty: simplified_axes() below.
    std::vector<SliceAxis> gather_axes;
};

SliceGradPlan plan_slice_grad(const SliceGradDesc& desc, const Operand& dy);

// The plan's axes with size-1 axes dropped, and neighbours merged where their elements lie on one grid: an axis
// copied whole (start 0, stride 1, dY as long as dX), or taking every period of a positive stride that divides it
// (a stride-s grid across rows), into a stride-1 axis outside it, an axis taking one element
// into the axis outside it, an axis taking one element with the axis inside it. plan_slice_grad fills gather_axes
// with it.
std::vector<SliceAxis> simplified_axes(const SliceGradPlan& plan);

}  // namespace dmlgrad
