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

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20)
                    out += fmt::format("\\u{:04x}", c);
                else
                    out += c;
        }
    }
    return out + "\"";
}

void print_text_report(const RunReport& r) {
    const KernelSummary k = summarize(r.stats.kernel_ms);
    std::string shapes;
    for (const auto& [name, shape] : r.shapes)
        shapes += fmt::format("{}{} {}", shapes.empty() ? "" : ", ", name, shape_string(shape));
    fmt::print("{} {} on {} ({}): {}\n", r.op, dtype_name(r.dtype), r.backend, r.device, shapes);
    if (k.n > 1)
        fmt::print("  kernel   median {:.4f} ms (min {:.4f}, mean {:.4f}, max {:.4f}, stddev {:.4f}, n {}), {:.3g} GB/s\n",
                   k.median, k.min, k.mean, k.max, k.stddev, k.n, effective_gbps(r, k));
    else
        fmt::print("  kernel   {:.4f} ms, {:.3g} GB/s\n", k.median, effective_gbps(r, k));
    fmt::print("  phases   load {:.2f} ms, set-up {:.2f} ms, upload {:.2f} ms, download {:.2f} ms, save {:.2f} ms\n",
               r.load_ms, r.stats.setup_ms, r.stats.upload_ms, r.stats.download_ms, r.save_ms);
    if (r.check)
        fmt::print("  check    {} against {} ({}): {}\n", r.check->exact ? "bit for bit" : "within tolerance",
                   r.check->other_backend, r.check->other_device, r.check->passed ? "match" : "DIFFERENT");
    fmt::print("  total    {:.2f} ms, wrote {}\n", r.total_ms, r.output_path);
}

std::string json_report(const RunReport& r, std::string_view leading_fields) {
    const KernelSummary k = summarize(r.stats.kernel_ms);
    std::string shapes;
    for (const auto& [name, shape] : r.shapes)
        shapes += fmt::format("{}{}:{}", shapes.empty() ? "" : ",", json_string(name), shape_json(shape));
    std::string check = "null";
    if (r.check)
        check = fmt::format(R"({{"backend":{},"device":{},"exact":{},"passed":{}}})", json_string(r.check->other_backend),
                            json_string(r.check->other_device), r.check->exact, r.check->passed);
    return fmt::format(
        R"({{{}"version":{},"op":{},"backend":{},"device":{},"dtype":{},"shapes":{{{}}},"output":{},)"
        R"("kernel_ms":{{"min":{},"median":{},"mean":{},"max":{},"stddev":{},"n":{}}},)"
        R"("bytes":{},"effective_gbps":{},"load_ms":{},"setup_ms":{},"upload_ms":{},"download_ms":{},)"
        R"("save_ms":{},"total_ms":{},"check":{}}})",
        leading_fields, json_string(DMLGRAD_VERSION), json_string(r.op), json_string(r.backend), json_string(r.device), json_string(dtype_name(r.dtype)), shapes,
        json_string(r.output_path), k.min, k.median, k.mean, k.max, k.stddev, k.n, r.min_bytes,
        effective_gbps(r, k), r.load_ms, r.stats.setup_ms, r.stats.upload_ms, r.stats.download_ms, r.save_ms,
        r.total_ms, check);
}

}  // namespace dmlgrad::cli
