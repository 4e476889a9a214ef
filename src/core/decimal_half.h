#pragma once
// Decimal text -> binary16 in one correct rounding (to nearest, ties to even). Going through a double rounds
// twice, which differs from one rounding for decimals within 2^-53 (relative) of a midpoint of two halves; this
// settles those cases by comparing the decimal with the midpoint exactly, in big integers.
#include <cstdint>
#include <string_view>

namespace dmlgrad {

// `digits`: an unsigned decimal as std::from_chars reads it for a double (digits, an optional '.', an optional
// exponent), already checked; `approximation`: that double. Returns the magnitude bits of the half nearest to
// the exact decimal: 0 when it rounds to zero, 0x7C00 when it rounds to infinity.
uint16_t decimal_to_half_magnitude(std::string_view digits, double approximation);

}  // namespace dmlgrad
