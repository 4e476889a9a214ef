#pragma once
// The CPU reference of each operator: exact, deterministic, multithreaded over outer dimensions.
#include "core/tensor.h"
#include "ops/plan.h"

namespace dmlgrad::cpu {

void relu_grad(const ReluGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx);
void clip_grad(const ClipGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx);
void slice_grad(const SliceGradPlan& plan, const Tensor& dy, Tensor& dx);
void maxpool_grad(const MaxPoolGradPlan& plan, const Tensor& x, const Tensor& dy, Tensor& dx);
void resample_grad(const ResampleGradPlan& plan, const Tensor& dy, Tensor& dx);

}  // namespace dmlgrad::cpu
