// Backend::run checks the tensors against the plan before any backend touches them.
#include <gtest/gtest.h>

#include <stdexcept>

#include "cpu/cpu_backend.h"
#include "ops/backend.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

Plan relu_plan(DType type, const Shape& shape) {
    const Operand x{"--input", "x.npy", TensorInfo{type, shape}};
    const Operand dy{"--input-gradient", "dy.npy", TensorInfo{type, shape}};
    return Plan{plan_relu_grad(ReluGradDesc{}, x, dy)};
}

TEST(Backend, RunRejectsTensorsThatDoNotMatchThePlan) {
    auto cpu = make_cpu_backend();
    const Plan plan = relu_plan(DType::f32, {2, 3});
    const Tensor x = tensor_from(DType::f32, {2, 3}, {1, -1, 2, -2, 3, -3});
    const Tensor dy = tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor wrong_type = tensor_from(DType::f16, {2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor wrong_count = tensor_from(DType::f32, {7}, {1, 2, 3, 4, 5, 6, 7});
    Tensor out(plan_output_info(plan));
    Tensor small_out(TensorInfo{DType::f32, {5}});

    const Tensor* one[] = {&x};
    const Tensor* typed[] = {&x, &wrong_type};
    const Tensor* counted[] = {&wrong_count, &dy};
    const Tensor* right[] = {&x, &dy};
    EXPECT_THROW(cpu->run(plan, one, out, {}), std::invalid_argument);
    EXPECT_THROW(cpu->run(plan, typed, out, {}), std::invalid_argument);
    EXPECT_THROW(cpu->run(plan, counted, out, {}), std::invalid_argument);
    EXPECT_THROW(cpu->run(plan, right, small_out, {}), std::invalid_argument);

    poison(out);
    cpu->run(plan, right, out, {});
    EXPECT_EQ(to_doubles(out), (std::vector<double>{1, 0, 3, 0, 5, 0}));
}

TEST(Backend, AShapeThatDiffersOnlyByUnitAxesIsTheSameMemory) {
    auto cpu = make_cpu_backend();
    const Plan plan = relu_plan(DType::f32, {2, 1, 3});
    const Tensor x = tensor_from(DType::f32, {2, 3}, {1, -1, 2, -2, 3, -3});
    const Tensor dy = tensor_from(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor out(plan_output_info(plan));
    poison(out);
    const Tensor* inputs[] = {&x, &dy};
    cpu->run(plan, inputs, out, {});
    EXPECT_EQ(to_doubles(out), (std::vector<double>{1, 0, 3, 0, 5, 0}));
}

}  // namespace
}  // namespace dmlgrad::testing
