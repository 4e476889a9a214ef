#pragma once
// slice-grad's --slice: numpy's basic slicing ("[:, 1:, ::3, 2:9]", "..., -1", "::-2") turned into DirectML's
// window offsets, sizes and strides for a tensor of known shape, with numpy's rules: omitted parts, negative
// indices and steps, bounds clamped as Python's slice.indices() clamps them, `...`, fewer items than axes (the
// rest taken whole), integer indices (the axis has one element; numpy's result drops it).
#include <string_view>
#include <vector>

#include "ops/operand.h"
#include "ops/slice_grad.h"

namespace dmlgrad::cli {

struct NumpySlice {
    SliceGradDesc desc;  // output_sizes and the window of each axis
    Shape window_shape;  // elements per axis, integer-indexed axes 1: the dY the plan takes
    Shape numpy_shape;   // numpy's result shape: window_shape without the integer-indexed axes

    // dY as the plan takes it: dY's header shape may be numpy's (integer-indexed axes dropped) or keep those
    // axes as 1. Throws UsageError naming dY, the slice and both shapes for any other shape.
    Operand plan_view(const Operand& dy, std::string_view text) const;
};

// Throws UsageError naming --slice and the rule broken: None/newaxis, boolean and array indices, a step of 0, an
// integer index out of range, two `...`, more items than axes, text that is not a slice.
NumpySlice resolve_numpy_slice(std::string_view text, const Shape& dx_shape);

}  // namespace dmlgrad::cli
