#include "cli/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "cli/comparison_report.h"

namespace dmlgrad::cli {
namespace {

double effective_gbps(const RunReport& r, const KernelSummary& k) {
    return k.median > 0 ? double(r.min_bytes) / (k.median * 1e6) : 0.0;
}

std::string shape_json(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

// kernel_ms's object: the summary and every sample, in the order they ran.
std::string kernel_json(const KernelSummary& k, const std::vector<double>& samples) {
    return fmt::format(
        R"({{"min":{},"median":{},"mean":{},"max":{},"stddev":{},"n":{},"p90":{},"p99":{},"cv":{},"samples":[{}]}})",
        k.min, k.median, k.mean, k.max, k.stddev, k.n, k.p90, k.p99, k.cv, fmt::join(samples, ","));
}

std::string timing_warning(const KernelSummary& k) {
    return fmt::format(
        "noisy timing: the coefficient of variation is {:.3g}% (over {:.3g}%): the median may not be "
        "the kernel's time; close other work or raise --repeat",
        100 * k.cv, 100 * KernelSummary::kNoisyCv);
}

}  // namespace

namespace {

// The length of the valid UTF-8 sequence starting at text[i] (shortest form, no surrogates, at most U+10FFFF),
// or 0.
size_t utf8_sequence_length(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (length == 0 || lead == 0xC0 || lead == 0xC1 || lead > 0xF4 || i + length > text.size()) return 0;
    for (size_t k = 1; k < length; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    const unsigned char second = byte(i + 1);
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0) || (lead == 0xF0 && second < 0x90) ||
        (lead == 0xF4 && second >= 0x90))
        return 0;  // overlong, a surrogate, or beyond U+10FFFF
    return length;
}

}  // namespace

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7F) {
            out += fmt::format("\\u{:04x}", u);
        } else if (u < 0x80) {
            out += c;
        } else if (size_t length = utf8_sequence_length(text, i)) {
            out.append(text.substr(i, length));
            i += length - 1;
        } else {
            out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        }
    }
    return out + "\"";
}

namespace {

// A JSON string, or null for "" (the CPU has no API or kernel).
std::string string_or_null(std::string_view text) { return text.empty() ? "null" : json_string(text); }

}  // namespace

void print_text_report(const RunReport& r, std::FILE* out) {
    const KernelSummary k = summarize(r.stats.kernel_ms);
    std::string shapes;
    for (const auto& [name, shape] : r.shapes)
        shapes += fmt::format("{}{} {}", shapes.empty() ? "" : ", ", name, shape_string(shape));
    const std::string api = r.api.empty() ? "" : ", " + r.api;
    const std::string kernel = r.stats.kernel.empty() ? "" : ", kernel " + r.stats.kernel;
    fmt::print(out, "{} {} on {} ({}{}{}): {}\n", r.op, dtype_name(r.dtype), r.backend, r.device, api, kernel, shapes);
    if (k.n > 1) {
        fmt::print(
            out,
            "  kernel   median {:.4f} ms (min {:.4f}, mean {:.4f}, p99 {:.4f}, max {:.4f}, stddev {:.4f}, cv {:.3g}%, "
            "n {}), {:.3g} GB/s\n",
            k.median, k.min, k.mean, k.p99, k.max, k.stddev, 100 * k.cv, k.n, effective_gbps(r, k));
    } else {
        fmt::print(out, "  kernel   {:.4f} ms, {:.3g} GB/s\n", k.median, effective_gbps(r, k));
    }
    if (k.noisy()) fmt::print(out, "  WARNING  {}\n", timing_warning(k));
    fmt::print(out,
               "  phases   load {:.2f} ms, set-up {:.2f} ms, upload {:.2f} ms, download {:.2f} ms, save {:.2f} ms\n",
               r.load_ms, r.stats.setup_ms, r.stats.upload_ms, r.stats.download_ms, r.save_ms);
    if (r.check) fmt::print(out, "{}", comparison_text(*r.check, "check"));
    if (r.compare) fmt::print(out, "{}", comparison_text(*r.compare, "compare"));
    if (r.determinism) fmt::print(out, "{}", determinism_text(*r.determinism));
    if (!r.reproducer.empty()) fmt::print(out, "  rerun    {}\n", r.reproducer);
    if (r.passed())
        fmt::print(out, "  total    {:.2f} ms, wrote {}\n", r.total_ms, r.output_path);
    else
        fmt::print(out, "  total    {:.2f} ms, {} not written\n", r.total_ms, r.output_path);
}

std::string json_report(const RunReport& r, std::string_view leading_fields) {
    const KernelSummary k = summarize(r.stats.kernel_ms);
    std::string shapes, inputs;
    for (const auto& [name, shape] : r.shapes)
        shapes += fmt::format("{}{}:{}", shapes.empty() ? "" : ",", json_string(name), shape_json(shape));
    for (const auto& [name, path] : r.input_paths)
        inputs += fmt::format("{}{}:{}", inputs.empty() ? "" : ",", json_string(name), json_string(path));
    return fmt::format(
        R"({{{}"version":{},"op":{},"backend":{},"device":{},"api":{},"kernel":{},"dtype":{},"inputs":{{{}}},)"
        R"("shapes":{{{}}},"parameters":{},"output":{},"passed":{},"mistrusted":{},)"
        R"("kernel_ms":{},"timing_warning":{},)"
        R"("bytes":{},"effective_gbps":{},"load_ms":{},"setup_ms":{},"upload_ms":{},"download_ms":{},)"
        R"("save_ms":{},"total_ms":{},"check":{},"compare":{},"deterministic":{},"reproducer":{}}})",
        leading_fields, json_string(DMLGRAD_VERSION), json_string(r.op), json_string(r.backend), json_string(r.device),
        string_or_null(r.api), string_or_null(r.stats.kernel), json_string(dtype_name(r.dtype)), inputs, shapes,
        r.parameters_json.empty() ? "{}" : r.parameters_json, json_string(r.output_path), r.passed(), r.mistrusted(),
        kernel_json(k, r.stats.kernel_ms), k.noisy() ? json_string(timing_warning(k)) : "null", r.min_bytes,
        effective_gbps(r, k), r.load_ms, r.stats.setup_ms, r.stats.upload_ms, r.stats.download_ms, r.save_ms,
        r.total_ms, r.check ? comparison_json(*r.check, "backend") : "null",
        r.compare ? comparison_json(*r.compare, "reference") : "null",
        r.determinism ? determinism_json(*r.determinism) : "null", string_or_null(r.reproducer));
}

}  // namespace dmlgrad::cli
