#include "support/resample_vectors.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dmlgrad::testing {
namespace {

template <class T>
std::vector<T> numbers(const std::string& list) {
    std::vector<T> values;
    const char* p = list.data();
    const char* end = list.data() + list.size();
    while (p < end) {
        T v{};
        auto [next, ec] = std::from_chars(p, end, v);
        if (ec != std::errc()) throw std::runtime_error("resample_vectors.txt: bad number list " + list);
        values.push_back(v);
        p = next < end && *next == ',' ? next + 1 : next;
    }
    return values;
}

Shape shape(const std::string& list) { return numbers<int64_t>(list); }

bool is_case(const std::string& line) { return !line.empty() && line[0] != '#'; }

}  // namespace

bool ResampleVector::linear() const { return mode == "linear" || mode == "bilinear" || mode == "trilinear"; }

std::string ResampleVector::describe() const {
    std::string flags_text;
    for (const std::string& f : flags()) flags_text += " " + f;
    return fmt::format("resample_vectors.txt line {}:{} dX {} dY {}", line, flags_text, shape_string(dx_shape),
                       shape_string(dy_shape));
}

std::vector<std::string> ResampleVector::flags() const {
    std::vector<std::string> f;
    if (torch) {
        f = {"--torch-mode", mode};
        if (align_corners) f.push_back("--align-corners");
        if (!scale_factors.empty()) f.insert(f.end(), {"--scale-factor", scale_factors});
    } else {
        f = {"--interpolation-mode", mode, "--coordinate-transformation-mode", coordinate_mode};
        if (!nearest_mode.empty()) f.insert(f.end(), {"--nearest-mode", nearest_mode});
    }
    return f;
}

ResampleGradDesc ResampleVector::desc() const {
    ResampleGradDesc d;
    d.output_sizes = dx_shape;
    if (torch) {
        d.framework = TorchInterpolate{parse_torch_mode(mode), align_corners, numbers<double>(scale_factors)};
    } else {
        OnnxResize onnx;
        onnx.mode = parse_interpolation_mode("--interpolation-mode", mode);
        onnx.coordinates = parse_onnx_coordinate_mode(coordinate_mode);
        if (!nearest_mode.empty()) onnx.nearest = parse_onnx_nearest_mode(nearest_mode);
        d.framework = onnx;
    }
    return d;
}

std::vector<ResampleVector> read_resample_vectors(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot open " + path);
    std::vector<ResampleVector> cases;
    std::string line;
    for (size_t number = 1; std::getline(file, line); ++number) {
        if (!is_case(line)) continue;
        std::istringstream fields(line);
        std::string form, mode, a, b, dx_shape, dy_shape, dy, dx;
        if (!(fields >> form >> mode >> a >> b >> dx_shape >> dy_shape >> dy >> dx))
            throw std::runtime_error(fmt::format("{} line {}: expected 8 fields", path, number));
        ResampleVector v;
        v.line = number;
        v.torch = form == "torch";
        v.mode = mode;
        if (v.torch) {
            v.align_corners = a == "1";
            v.scale_factors = b == "-" ? "" : b;
        } else {
            v.coordinate_mode = a;
            v.nearest_mode = b == "-" ? "" : b;
        }
        v.dx_shape = shape(dx_shape);
        v.dy_shape = shape(dy_shape);
        v.dy = numbers<double>(dy);
        v.dx = numbers<double>(dx);
        if (v.dy.size() != uint64_t(element_count(v.dy_shape)) || v.dx.size() != uint64_t(element_count(v.dx_shape)))
            throw std::runtime_error(fmt::format("{} line {}: value counts do not match the shapes", path, number));
        cases.push_back(std::move(v));
    }
    return cases;
}

size_t resample_vector_lines(const std::string& path) {
    std::ifstream file(path);
    size_t count = 0;
    for (std::string line; std::getline(file, line);) count += is_case(line);
    return count;
}

::testing::AssertionResult matches_vector(const ResampleVector& v, const std::vector<double>& got,
                                          const std::vector<double>& magnitude) {
    if (got.size() != v.dx.size()) return ::testing::AssertionFailure() << v.describe() << ": wrong element count";
    double total = 0.0;
    for (double x : v.dy) total += std::abs(x);
    for (size_t i = 0; i < got.size(); ++i) {
        const double bound = v.linear() ? 1e-5 * (magnitude.empty() ? total : magnitude[i]) + 1e-6 : 0.0;
        if (!(std::abs(got[i] - v.dx[i]) <= bound))
            return ::testing::AssertionFailure() << v.describe() << ": dX[" << i << "] is " << got[i] << ", expected "
                                                 << v.dx[i] << " (tolerance " << bound << ")";
    }
    return ::testing::AssertionSuccess();
}

}  // namespace dmlgrad::testing
