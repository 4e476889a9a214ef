#pragma once
// The resample-grad cases of tests/data/resample_vectors.txt (written by gen_resample_vectors.py): PyTorch's
// autograd gradients and ONNX Resize's transposed forward map, each with its flags, dY and expected dX.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/resample_grad.h"

namespace dmlgrad::testing {

struct ResampleVector {
    size_t line = 0;
    bool torch = false;  // else ONNX
    std::string mode;    // --torch-mode, or ONNX's nearest / linear
    bool align_corners = false;
    std::string scale_factors;                  // "" when none
    std::string coordinate_mode, nearest_mode;  // ONNX; nearest_mode "" for linear
    Shape dx_shape, dy_shape;
    std::vector<double> dy, dx;

    bool linear() const;
    std::string describe() const;
    // The framework flags of the command line (without -g, -o and --output-sizes).
    std::vector<std::string> flags() const;
    ResampleGradDesc desc() const;
};

std::vector<ResampleVector> read_resample_vectors(const std::string& path);
// Lines of the file that hold a case (not comments): the count the readers must reach.
size_t resample_vector_lines(const std::string& path);

// Nearest: every value exactly (sums of small integers). Linear: within float32 summation rounding,
// |got - want| <= 1e-5 * magnitude + 1e-6, where magnitude is the element's sum of |terms| (the same resample of
// |dY|). An empty magnitude uses the sum of |dY| for every element.
::testing::AssertionResult matches_vector(const ResampleVector& v, const std::vector<double>& got,
                                          const std::vector<double>& magnitude);

}  // namespace dmlgrad::testing
