#include "cli/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dmlgrad::cli {
namespace {

double effective_gbps(const RunReport& r, const KernelSummary& k) {
    return k.median > 0 ? double(r.min_bytes) / (k.median * 1e6) : 0.0;
}

std::string shape_json(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

}  // namespace

KernelSummary summarize(const std::vector<double>& kernel_ms) {
    KernelSummary s;
    s.n = kernel_ms.size();
    if (s.n == 0) return s;
    std::vector<double> sorted = kernel_ms;
    std::sort(sorted.begin(), sorted.end());
    s.min = sorted.front();
    s.max = sorted.back();
    s.median = s.n % 2 ? sorted[s.n / 2] : (sorted[s.n / 2 - 1] + sorted[s.n / 2]) / 2;
    s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(s.n);
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stddev = s.n > 1 ? std::sqrt(squares / double(s.n - 1)) : 0.0;
    return s;
}

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

std::string comparison_text(const ComparisonSummary& c) {
    if (c.tolerance.exact()) return "bit for bit";
    return fmt::format("rtol {:g}, atol {:g}", c.tolerance.relative, c.tolerance.absolute);
}

std::string comparison_json(const std::optional<ComparisonSummary>& c, std::string_view against_key) {
    if (!c) return "null";
    std::string device = c->device.empty() ? "" : fmt::format(R"("device":{},)", json_string(c->device));
    return fmt::format(R"({{"{}":{},{}"exact":{},"rtol":{},"atol":{},"passed":{},"differing":{},"first_index":{}}})",
                       against_key, json_string(c->against), device, c->tolerance.exact(), c->tolerance.relative,
                       c->tolerance.absolute, c->passed, c->differing,
                       c->passed ? "null" : fmt::format("{}", c->first_index));
}

// A JSON string, or null for "" (the CPU has no API or kernel).
std::string string_or_null(std::string_view text) { return text.empty() ? "null" : json_string(text); }

}  // namespace

void print_text_report(const RunReport& r, std::FILE* out) {
    const KernelSummary k = summarize(r.stats.kernel_ms);
    std::string shapes;
    for (const auto& [name, shape] : r.shapes)
        shapes += fmt::format("{}{} {}", shapes.empty() ? "" : ", ", name, shape_string(shape));
    const std::string kernel = r.stats.kernel.empty() ? "" : ", kernel " + r.stats.kernel;
    fmt::print(out, "{} {} on {} ({}{}): {}\n", r.op, dtype_name(r.dtype), r.backend, r.device, kernel, shapes);
    if (k.n > 1)
        fmt::print(
            out,
            "  kernel   median {:.4f} ms (min {:.4f}, mean {:.4f}, max {:.4f}, stddev {:.4f}, n {}), {:.3g} GB/s\n",
            k.median, k.min, k.mean, k.max, k.stddev, k.n, effective_gbps(r, k));
    else
        fmt::print(out, "  kernel   {:.4f} ms, {:.3g} GB/s\n", k.median, effective_gbps(r, k));
    fmt::print(out,
               "  phases   load {:.2f} ms, set-up {:.2f} ms, upload {:.2f} ms, download {:.2f} ms, save {:.2f} ms\n",
               r.load_ms, r.stats.setup_ms, r.stats.upload_ms, r.stats.download_ms, r.save_ms);
    if (r.check)
        fmt::print(out, "  check    {} against {} ({}): {}\n", comparison_text(*r.check), r.check->against,
                   r.check->device, r.check->passed ? "match" : "DIFFERENT");
    if (r.compare)
        fmt::print(out, "  compare  {} against {}: {}\n", comparison_text(*r.compare), r.compare->against,
                   r.compare->passed ? "match" : "DIFFERENT");
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
        R"("shapes":{{{}}},)"
        R"("parameters":{},"output":{},"passed":{},)"
        R"("kernel_ms":{{"min":{},"median":{},"mean":{},"max":{},"stddev":{},"n":{}}},)"
        R"("bytes":{},"effective_gbps":{},"load_ms":{},"setup_ms":{},"upload_ms":{},"download_ms":{},)"
        R"("save_ms":{},"total_ms":{},"check":{},"compare":{}}})",
        leading_fields, json_string(DMLGRAD_VERSION), json_string(r.op), json_string(r.backend), json_string(r.device),
        string_or_null(r.api), string_or_null(r.stats.kernel), json_string(dtype_name(r.dtype)), inputs, shapes,
        r.parameters_json.empty() ? "{}" : r.parameters_json, json_string(r.output_path), r.passed(), k.min, k.median,
        k.mean, k.max, k.stddev, k.n, r.min_bytes, effective_gbps(r, k), r.load_ms, r.stats.setup_ms, r.stats.upload_ms,
        r.stats.download_ms, r.save_ms, r.total_ms, comparison_json(r.check, "backend"),
        comparison_json(r.compare, "reference"));
}

}  // namespace dmlgrad::cli
