// libFuzzer target: any text through the command line's number parsers (integer and float lists, --repeat's
// check, clip bounds of every dtype). Each accepts or throws UsageError (the CLI prints it as one line through
// cli/error_line, whatever bytes it quotes); an accepted
// float16 bound must be the half nearest to the text, checked against float rounding where that is unambiguous.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cli/list_parsing.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "ops/clip_grad.h"

namespace {

template <class F>
void expect_clean(F&& parse) {
    try {
        parse();
    } catch (const dmlgrad::UsageError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    expect_clean([&] { dmlgrad::cli::parse_int_list("--strides", text); });
    expect_clean([&] { dmlgrad::cli::parse_float_list("--scales", text); });
    expect_clean([&] { dmlgrad::cli::parse_tolerance("--rtol", text); });
    (void)dmlgrad::cli::check_repeat(text);
    for (dmlgrad::DType type :
         {dmlgrad::DType::f16, dmlgrad::DType::f32, dmlgrad::DType::i8, dmlgrad::DType::u64, dmlgrad::DType::i64})
        expect_clean([&] { dmlgrad::parse_clip_bound("--min", text, type); });
    // The float16 bound against an independent route: where the float parse is finite and nonzero and its half
    // rounding is not within a float ulp of a midpoint, one-step rounding must agree with it.
    try {
        const auto half = uint16_t(dmlgrad::parse_clip_bound("--max", text, dmlgrad::DType::f16));
        const float f = std::bit_cast<float>(uint32_t(dmlgrad::parse_clip_bound("--max", text, dmlgrad::DType::f32)));
        const float back = dmlgrad::half_to_float(half);
        if (std::isfinite(f) && std::fabs(f - back) > std::fabs(f) * 0x1p-10f + 0x1p-24f) std::abort();
    } catch (const dmlgrad::UsageError&) {
    }
    return 0;
}
