#include "cli/save_diff.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/printable.h"
#include "io/npy.h"

namespace dmlgrad::cli {
namespace {

namespace fs = std::filesystem;

// |result - reference| for the error map.
double element_error(const ExactNumber& r, const ExactNumber& f) {
    using Kind = ExactNumber::Kind;
    if (r.kind == Kind::nan || f.kind == Kind::nan) return r.kind == f.kind ? 0.0 : NAN;
    if (!r.is_finite() || !f.is_finite()) return r.kind == f.kind && r.negative == f.negative ? 0.0 : NAN;
    return double(std::fabs(r.value() - f.value()));
}

template <class Fill>
void write_npy(const std::string& path, DType type, const Shape& shape, Fill fill) {
    NpyOutput out(path, TensorInfo{type, shape});
    fill(out.tensor());
    out.commit();
}

bool plain_word(const std::string& w) {
    return !w.empty() &&
           w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,=:+-@%") ==
               std::string::npos;
}

std::string shell_word(const std::string& w) {
    if (plain_word(w)) return w;
    std::string quoted = "'";
    for (char c : w) {
        if (c == '\'')
            quoted.append("'\\''");
        else
            quoted.push_back(c);
    }
    quoted.push_back('\'');
    return quoted;
}

}  // namespace

void save_result(const std::string& prefix, const Tensor& result) {
    write_npy(prefix + ".result.npy", result.dtype(), result.shape(),
              [&](Tensor& t) { std::memcpy(t.buffer.data(), result.buffer.data(), result.bytes()); });
}

void save_error_map(const std::string& prefix, std::string_view label, const Tensor& result, const Tensor& reference,
                    const Tolerance& tolerance) {
    write_npy(fmt::format("{}.{}-error.npy", prefix, label), DType::f64, result.shape(), [&](Tensor& t) {
        for (uint64_t i = 0; i < result.elements(); ++i)
            t.as<double>()[i] = element_error(exact_element(result, i), exact_element(reference, i));
    });
    write_npy(fmt::format("{}.{}-beyond.npy", prefix, label), DType::u8, result.shape(), [&](Tensor& t) {
        for (uint64_t i = 0; i < result.elements(); ++i)
            t.as<uint8_t>()[i] = !element_passes(result, reference, i, tolerance);
    });
}

void require_save_diff_folder(const std::string& prefix) {
    fs::path folder = fs::path(prefix).parent_path();
    if (folder.empty()) folder = ".";
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw UsageError(
            fmt::format("--save-diff {}: folder '{}' does not exist", printable_path(prefix), folder.string()));
}

std::string reproducer_line(const std::vector<std::string>& words) {
    std::error_code ec;
    std::string line = fmt::format("cd {} && dmlgrad", shell_word(fs::current_path(ec).string()));
    for (const std::string& w : words) {
        line.push_back(' ');
        line.append(shell_word(w));
    }
    return line;
}

}  // namespace dmlgrad::cli
