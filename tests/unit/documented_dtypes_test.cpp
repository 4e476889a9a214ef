// Each operator accepts exactly the dtypes README lists for it (tests/support/documented_dtypes.h, written out by
// hand), and refuses every other .npy dtype README names with a usage error.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "ops/plan.h"
#include "support/documented_dtypes.h"
#include "support/validation_testing.h"

namespace dmlgrad::testing {
namespace {

// README's .npy dtypes: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8.
constexpr DType kNpyTypes[] = {DType::f16, DType::f32, DType::f64, DType::i8,  DType::i16, DType::i32,
                               DType::i64, DType::u8,  DType::u16, DType::u32, DType::u64};

// Plans a small valid instance of an operator on tensors of `type`.
using PlanOf = std::function<void(DType)>;

template <class List>
void expect_accepts_exactly(const char* op, const PlanOf& plan, const List& documented) {
    for (DType type : kNpyTypes) {
        SCOPED_TRACE(::testing::Message() << op << " " << dtype_name(type));
        if (std::find(documented.begin(), documented.end(), type) != documented.end())
            EXPECT_NO_THROW(plan(type));
        else
            EXPECT_THROW(plan(type), UsageError);
    }
}

TEST(DocumentedDtypes, EachOperatorAcceptsExactlyItsList) {
    const auto x = [](DType t, Shape s) { return operand("--input", "x.npy", t, std::move(s)); };
    const auto dy = [](DType t, Shape s) { return operand("--input-gradient", "dy.npy", t, std::move(s)); };
    const PlanOf relu = [&](DType t) { plan_relu_grad({}, x(t, {4}), dy(t, {4})); };
    const PlanOf clip = [&](DType t) { plan_clip_grad({"0", "1"}, x(t, {4}), dy(t, {4})); };
    const PlanOf slice = [&](DType t) { plan_slice_grad({{4}, {0}, {4}, {1}}, dy(t, {4})); };
    const PlanOf pool = [&](DType t) {
        plan_maxpool_grad({{2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}}, x(t, {1, 1, 3, 3}), dy(t, {1, 1, 2, 2}));
    };
    const PlanOf resample = [&](DType t) {
        plan_resample_grad({{2}, InterpolationMode::nearest, RoundingDirection::decreasing, {}, {}, {}}, dy(t, {4}));
    };
    expect_accepts_exactly("relu-grad", relu, kReluGradDocumentedTypes);
    expect_accepts_exactly("clip-grad", clip, kClipGradDocumentedTypes);
    expect_accepts_exactly("slice-grad", slice, kSliceGradDocumentedTypes);
    expect_accepts_exactly("maxpool-grad", pool, kMaxPoolGradDocumentedTypes);
    expect_accepts_exactly("resample-grad", resample, kResampleGradDocumentedTypes);
}

}  // namespace
}  // namespace dmlgrad::testing
