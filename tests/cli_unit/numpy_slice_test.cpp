// --slice: numpy's basic slicing turned into DirectML's window, checked by hand and against numpy itself on
// thousands of random slices (tests/data/numpy/gen_numpy_slices.py wrote what numpy does with each).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/numpy_slice.h"
#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "ops/backend.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

using cli::NumpySlice;
using cli::resolve_numpy_slice;

struct Window {
    std::vector<int64_t> offsets, sizes, strides;
    Shape numpy_shape;
};

Window window_of(const std::string& text, const Shape& shape) {
    const NumpySlice s = resolve_numpy_slice(text, shape);
    return {s.desc.window_offsets, s.desc.window_sizes, s.desc.window_strides, s.numpy_shape};
}

void expect_window(const std::string& text, const Shape& shape, const Window& want) {
    const Window got = window_of(text, shape);
    EXPECT_EQ(got.offsets, want.offsets) << text;
    EXPECT_EQ(got.sizes, want.sizes) << text;
    EXPECT_EQ(got.strides, want.strides) << text;
    EXPECT_EQ(got.numpy_shape, want.numpy_shape) << text;
}

TEST(NumpySlice, HandCheckedWindows) {
    // x[:, 1:, ::3, 2:9] of 2x3x16x16: rows 0,3,..,15 (6 of them, span 16), columns 2..8.
    expect_window("[:, 1:, ::3, 2:9]", {2, 3, 16, 16}, {{0, 1, 0, 2}, {2, 2, 16, 7}, {1, 1, 3, 1}, {2, 2, 6, 7}});
    expect_window(":, 1:, ::3, 2:9", {2, 3, 16, 16}, {{0, 1, 0, 2}, {2, 2, 16, 7}, {1, 1, 3, 1}, {2, 2, 6, 7}});
    // Negative step: 7, 5, 3 -> the window 3..7 walked from its end.
    expect_window("7:2:-2", {10}, {{3}, {5}, {-2}, {3}});
    // Reversed whole axis; negative indices; bounds past the ends clamped as Python clamps them.
    expect_window("::-1", {4}, {{0}, {4}, {-1}, {4}});
    expect_window("-3:", {5}, {{2}, {3}, {1}, {3}});
    expect_window("-100:100", {5}, {{0}, {5}, {1}, {5}});
    expect_window("100:-100:-2", {5}, {{0}, {5}, {-2}, {3}});
    // Integer indices: one element, the axis dropped from numpy's shape; negative counts from the end.
    expect_window("1, -1", {3, 4}, {{1, 3}, {1, 1}, {1, 1}, {}});
    // `...` and fewer items than axes: the rest whole.
    expect_window("..., 2", {2, 3, 4}, {{0, 0, 2}, {2, 3, 1}, {1, 1, 1}, {2, 3}});
    expect_window("1:", {2, 3, 4}, {{1, 0, 0}, {1, 3, 4}, {1, 1, 1}, {1, 3, 4}});
    expect_window("[]", {2, 3}, {{0, 0}, {2, 3}, {1, 1}, {2, 3}});
    expect_window("0,", {2, 3}, {{0, 0}, {1, 3}, {1, 1}, {3}});
    // An empty selection: no dY element, dX all zeros.
    expect_window("3:1", {5}, {{0}, {1}, {1}, {0}});
}

TEST(NumpySlice, RefusesWhatIsNotBasicSlicing) {
    const Shape shape{4, 5};
    for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
             {"None", "None (newaxis) adds an axis"},
             {":, np.newaxis", "None (newaxis) adds an axis"},
             {"True", "boolean indices"},
             {"[[0, 1]]", "array indices"},
             {"::0", "the step cannot be 0"},
             {"4", "index 4 is out of bounds for axis 0 with size 4"},
             {"0, -6", "index -6 is out of bounds for axis 1 with size 5"},
             {"..., ...", "a single ellipsis"},
             {"0, 0, 0", "3 indices for a tensor of rank 2"},
             {"1:2:3:4", "more than two ':'"},
             {"a:b", "'a' is not an integer"},
             {"1,,2", "an empty item"},
             {"::3000000000", "32-bit stride"},
             {"99999999999999999999", "out of the 64-bit range"},
         }) {
        try {
            resolve_numpy_slice(text, shape);
            ADD_FAILURE() << text << " was accepted";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("--slice " + text + ": "), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
}

TEST(NumpySlice, DyMayKeepOrDropTheIntegerIndexedAxes) {
    const NumpySlice s = resolve_numpy_slice("1, :", {3, 4});
    const Operand dropped{"--input-gradient", "dy.npy", {DType::f32, {4}}};
    const Operand kept{"--input-gradient", "dy.npy", {DType::f32, {1, 4}}};
    const Operand wrong{"--input-gradient", "dy.npy", {DType::f32, {4, 1}}};
    EXPECT_EQ(s.plan_view(dropped, "1, :").info.shape, (Shape{1, 4}));
    EXPECT_EQ(s.plan_view(kept, "1, :").info.shape, (Shape{1, 4}));
    EXPECT_THROW(s.plan_view(wrong, "1, :"), UsageError);
}

Shape parse_shape(const std::string& text) {
    Shape shape;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) shape.push_back(std::stoll(part));
    return shape;
}

std::vector<std::string> split(const std::string& line, char separator) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    for (std::string field; std::getline(in, field, separator);) fields.push_back(field);
    if (!line.empty() && line.back() == separator) fields.emplace_back();
    return fields;
}

// For each case: the gradient through the plan and the CPU backend, against numpy's placement of each element.
TEST(NumpySlice, MatchesNumpyOnRandomSlices) {
    std::ifstream file(DMLGRAD_TEST_DATA "/numpy/numpy_slices.txt");
    ASSERT_TRUE(file) << "tests/data/numpy/numpy_slices.txt";
    auto cpu = make_cpu_backend();
    size_t cases = 0, checked = 0, refused = 0, empty = 0;
    for (std::string line; std::getline(file, line); ++cases) {
        const std::vector<std::string> f = split(line, '|');
        ASSERT_GE(f.size(), 3u) << line;
        const Shape shape = parse_shape(f[0]);
        SCOPED_TRACE("x of shape " + f[0] + ", x[" + f[1] + "]");
        if (f[2] == "error") {
            EXPECT_THROW(resolve_numpy_slice(f[1], shape), UsageError);
            ++refused;
            continue;
        }
        const Shape numpy_shape = parse_shape(f[2]);
        std::vector<uint64_t> indices;
        std::stringstream in(f.size() > 3 ? f[3] : "");
        for (uint64_t i; in >> i;) indices.push_back(i);

        const NumpySlice s = resolve_numpy_slice(f[1], shape);
        ASSERT_EQ(s.numpy_shape, numpy_shape);
        const Operand dy{"--input-gradient", "dy.npy", {DType::f32, numpy_shape}};
        if (element_count(numpy_shape) == 0) {  // dmlgrad refuses tensors with an axis of size 0
            EXPECT_THROW(plan_slice_grad(s.desc, s.plan_view(dy, f[1])), UsageError);
            ++empty;
            continue;
        }
        const Plan plan{plan_slice_grad(s.desc, s.plan_view(dy, f[1]))};
        Tensor dy_values(TensorInfo{DType::f32, numpy_shape});
        std::vector<double> expected(uint64_t(element_count(shape)), 0.0);
        for (uint64_t k = 0; k < indices.size(); ++k) {
            const float v = float(k + 1);  // distinct and non-zero
            std::memcpy(dy_values.buffer.data() + 4 * k, &v, 4);
            expected[indices[k]] = v;
        }
        Tensor out(plan_output_info(plan));
        poison(out);
        const Tensor* inputs[] = {&dy_values};
        cpu->run(plan, inputs, out, {});
        ASSERT_EQ(to_doubles(out), expected);
        ++checked;
    }
    EXPECT_EQ(checked + refused + empty, cases);
    EXPECT_GE(checked, 1200u) << "too few cases ran";
    EXPECT_GE(refused, 50u) << "too few out-of-range cases ran";
    std::printf(
        "numpy slices: %zu cases, %zu compared element by element, %zu refused as numpy refuses them, %zu "
        "empty (refused: dmlgrad takes no tensor with an axis of size 0)\n",
        cases, checked, refused, empty);
}

}  // namespace
}  // namespace dmlgrad::testing
