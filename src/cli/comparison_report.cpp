#include "cli/comparison_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace dmlgrad::cli {
namespace {

constexpr const char* kIndent = "           ";  // under the text after "  compare  "

std::string rule_text(const Tolerance& t, bool same_dtype) {
    if (t.exact()) return same_dtype ? "bit for bit" : "equal values";
    return fmt::format("rtol {}, atol {}", t.relative.text, t.absolute.text);
}

template <class T>
std::string optional_text(const std::optional<T>& v, std::string_view none) {
    return v ? fmt::format("{:.3g}", double(*v)) : std::string(none);
}

template <class T>
std::string optional_json(const std::optional<T>& v) {
    if (!v) return "null";
    if constexpr (std::is_same_v<T, std::string>)
        return *v;  // a decimal, a valid JSON number
    else if constexpr (std::is_floating_point_v<T>)
        return json_number(*v);
    else
        return fmt::format("{}", *v);
}

std::string verdict(const ComparisonSummary& c) {
    const Comparison& d = c.diff;
    if (!c.passed())
        return fmt::format("DIFFERENT, {} of {} elements ({:.3g}%) beyond", d.beyond, d.elements,
                           100 * d.share_beyond());
    if (d.bit_identical) return "match, bit-identical";
    return "match within the rule (not bit-identical)";
}

std::string error_line(const Comparison& d) {
    std::string ulp = d.max_ulp ? fmt::format(", ULP max {} p99 {}", *d.max_ulp, *d.p99_ulp) : "";
    return fmt::format("{}max abs error {:.3g}, max rel error {}{}, NMSE {}\n", kIndent, d.max_absolute_error,
                       optional_text(d.max_relative_error, "inf"), ulp,
                       optional_text(d.nmse, "undefined (reference all 0)"));
}

std::string worst_lines(const ComparisonSummary& c) {
    std::string text;
    for (const ElementDifference& e : c.diff.worst)
        text += fmt::format("{}{} ({}): result {}, reference {}, |diff| {:.3g}{}\n", kIndent,
                            text.empty() ? "worst" : "     ", fmt::join(e.coordinate, ","), e.result, e.reference,
                            e.absolute_error, e.beyond ? ", beyond" : "");
    return text;
}

std::string smallest_tolerances(const ComparisonSummary& c) {
    const auto& d = c.diff;
    if (!d.smallest_atol && !d.smallest_rtol)
        return fmt::format("{}no tolerance would pass (NaN or infinity mismatches)\n", kIndent);
    std::string options;
    if (d.smallest_atol) options = fmt::format("--atol {} (with rtol {})", *d.smallest_atol, c.tolerance.relative.text);
    if (d.smallest_rtol)
        options += fmt::format("{}--rtol {} (with atol {})", options.empty() ? "" : " or ", *d.smallest_rtol,
                               c.tolerance.absolute.text);
    return fmt::format("{}would pass with {}\n", kIndent, options);
}

std::string json_strings(const std::vector<std::string>& texts) {
    std::string list;
    for (const std::string& t : texts) {
        if (!list.empty()) list += ',';
        list += json_string(t);
    }
    return list;
}

}  // namespace

std::string determinism_text(const DeterminismSummary& d) {
    if (d.identical()) return fmt::format("  repeat   {} separate runs: bit-identical\n", d.runs);
    return fmt::format("  repeat   {} separate runs: DIFFERENT, run {} differs from run 1 in {} elements\n", d.runs,
                       d.first_differing_run, d.differing);
}

std::string determinism_json(const DeterminismSummary& d) {
    return fmt::format(R"({{"runs":{},"identical":{},"first_differing_run":{},"differing":{}}})", d.runs, d.identical(),
                       d.identical() ? "null" : fmt::format("{}", d.first_differing_run), d.differing);
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

std::string comparison_text(const ComparisonSummary& c, std::string_view label) {
    const Comparison& d = c.diff;
    std::string against = c.device.empty() ? c.against : fmt::format("{} ({})", c.against, c.device);
    std::string text =
        fmt::format("  {:<8} {} against {}: {}\n", label, rule_text(c.tolerance, d.same_dtype), against, verdict(c));
    if (!d.bit_identical) text += error_line(d);
    if (c.mistrusted())
        for (const std::string& reason : c.warnings) text += fmt::format("{}MISTRUSTED: {}\n", kIndent, reason);
    if (!c.passed()) {
        text += fmt::format("{}mismatches: {} NaN, {} infinity, {} signed zero\n", kIndent, d.nan_mismatches,
                            d.infinity_mismatches, d.signed_zero_mismatches);
        text += worst_lines(c) + smallest_tolerances(c);
    }
    return text;
}

std::string comparison_json(const ComparisonSummary& c, std::string_view against_key) {
    const Comparison& d = c.diff;
    std::string device = c.device.empty() ? "" : fmt::format(R"("device":{},)", json_string(c.device));
    std::string worst;
    for (const ElementDifference& e : d.worst)
        worst +=
            fmt::format(R"({}{{"index":{},"coordinate":[{}],"result":{},"reference":{},"abs_error":{},"beyond":{}}})",
                        worst.empty() ? "" : ",", e.index, fmt::join(e.coordinate, ","), json_string(e.result),
                        json_string(e.reference), json_number(e.absolute_error), e.beyond);
    return fmt::format(
        R"({{"{}":{},{}"exact":{},"rtol":{},"atol":{},"passed":{},"differing":{},"first_index":{},)"
        R"("bit_identical":{},"elements":{},"share_beyond":{},"max_abs_error":{},"max_rel_error":{},)"
        R"("max_ulp":{},"p99_ulp":{},"nmse":{},"nan_mismatches":{},"inf_mismatches":{},"signed_zero_mismatches":{},)"
        R"("worst":[{}],"smallest_atol":{},"smallest_rtol":{},"mistrusted":{},"warnings":[{}]}})",
        against_key, json_string(c.against), device, c.tolerance.exact(),
        json_number(double(c.tolerance.relative.approximation)),
        json_number(double(c.tolerance.absolute.approximation)), c.passed(), d.beyond,
        c.passed() ? "null" : fmt::format("{}", d.first_beyond), d.bit_identical, d.elements,
        json_number(d.share_beyond()), json_number(d.max_absolute_error), optional_json(d.max_relative_error),
        optional_json(d.max_ulp), optional_json(d.p99_ulp), optional_json(d.nmse), d.nan_mismatches,
        d.infinity_mismatches, d.signed_zero_mismatches, worst, optional_json(d.smallest_atol),
        optional_json(d.smallest_rtol), c.mistrusted(), json_strings(c.warnings));
}

}  // namespace dmlgrad::cli
