// ReservedRuns (ops/backend.h): the single command allocates a run's buffers on the thread that made the device, before
// the run. The run then uses them, through the staging ring as on a discrete GPU, and a reservation that cannot be
// made fails as the run itself would.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/error.h"
#include "gpu/gpu.h"
#include "gpu_testing.h"
#include "ops/maxpool_grad.h"
#include "ops/relu_grad.h"
#include "ops/slice_grad.h"

namespace dmlgrad::testing {
namespace {

ReluGradPlan relu_plan(const Shape& shape) { return ReluGradPlan{DType::f32, shape, element_count(shape)}; }

std::unique_ptr<Backend> staged_backend(uint64_t max_allocation = 0, DeviceLimits limits_cap = {0, 0, 0}) {
    GpuBackendOptions options;
    options.poison_output = true;
    options.force_staging = true;
    options.max_allocation_cap = max_allocation;
    options.limits_cap = limits_cap;
    return make_gpu_backend(std::nullopt, tested_api(), options);
}

ReservedRuns& reserved(Backend& backend) {
    ReservedRuns* runs = backend.reserved_runs();
    if (!runs) throw std::logic_error("both GPU backends implement ReservedRuns");
    return *runs;
}

// Tensors of more than one 16 MiB staging chunk, so that the reserved rings upload and download in pieces; then a
// smaller and a larger plan on the same backend (kept buffers reused, then grown).
TEST(ReservedRuns, RunsAfterAReservationMatchTheCpu) {
    SeededRng rng;
    std::unique_ptr<Backend> backend = staged_backend();
    const Shape large{(int64_t(17) << 20) / 4 + 5};  // 17 MiB and a bit of float32
    reserved(*backend).reserve(relu_plan(large));
    for (const Shape& shape : {large, Shape{1000}, Shape{(int64_t(18) << 20) / 4}}) {
        const Tensor x = random_tensor(DType::f32, shape, rng), dy = random_tensor(DType::f32, shape, rng);
        expect_gpu_matches_cpu(relu_plan(shape), {&x, &dy}, *backend);
    }
}

// A one-input plan whose output is larger than its input: the reservation sizes each tensor's buffer apart.
TEST(ReservedRuns, OutputLargerThanTheInput) {
    SeededRng rng;
    std::unique_ptr<Backend> backend = staged_backend();
    const Tensor dy = random_tensor(DType::f32, {64, 512}, rng);
    const Plan plan =
        plan_slice_grad({{64, 1024}, {0, 0}, {64, 1023}, {1, 2}}, {"--input-gradient", "dy.npy", dy.info});
    reserved(*backend).reserve(plan);
    expect_gpu_matches_cpu(plan, dy, *backend);
}

std::string run_failure(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs) {
    try {
        run_on(backend, plan, inputs);
    } catch (const RuntimeFailure& e) {
        return e.what();
    }
    return "no failure";
}

// Too large for the (lowered) allocation limit: reserve() throws the message run() gives, for the same buffer.
TEST(ReservedRuns, AReservationThatCannotBeMadeFailsAsTheRunWould) {
    SeededRng rng;
    const Shape shape{1 << 16};  // 256 KiB of float32 against a 64 KiB limit
    const Tensor x = random_tensor(DType::f32, shape, rng), dy = random_tensor(DType::f32, shape, rng);
    std::unique_ptr<Backend> unreserved = staged_backend(64 << 10);
    const std::string expected = run_failure(*unreserved, relu_plan(shape), {&x, &dy});
    ASSERT_NE(expected.find("the first input"), std::string::npos) << expected;
    std::unique_ptr<Backend> backend = staged_backend(64 << 10);
    try {
        reserved(*backend).reserve(relu_plan(shape));
        ADD_FAILURE() << "reserve() made buffers over the allocation limit";
    } catch (const RuntimeFailure& e) {
        EXPECT_EQ(std::string(e.what()), expected);
    }
}

// A plan this device refuses (a 16 KiB plane of X against 4 KiB bindings) fails in reserve() with the refusal,
// before any buffer is made: the 16 KiB buffers would also break the 8 KiB allocation limit.
TEST(ReservedRuns, ARefusedPlanFailsBeforeAnyBufferIsMade) {
    const Shape x{1, 1, 64, 64}, dy{1, 1, 32, 32};
    const Plan plan = plan_maxpool_grad({{2, 2}, {2, 2}, {0, 0}, {0, 0}, {1, 1}}, {"--input", "x.npy", {DType::f32, x}},
                                        {"--input-gradient", "dy.npy", {DType::f32, dy}});
    std::unique_ptr<Backend> backend = staged_backend(8 << 10, {4096, 64, 0});
    try {
        reserved(*backend).reserve(plan);
        ADD_FAILURE() << "reserve() accepted a plane larger than a binding";
    } catch (const RuntimeFailure& e) {
        EXPECT_NE(std::string(e.what()).find("one plane of X (16384 bytes)"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace dmlgrad::testing
