#include "core/decimal_half.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/half.h"

namespace dmlgrad {
namespace {

// A nonnegative integer in base 2^32, least significant limb first: just what the comparison needs.
class BigInt {
public:
    explicit BigInt(uint64_t v = 0) {
        while (v) {
            limbs_.push_back(uint32_t(v));
            v >>= 32;
        }
    }
    void multiply_add(uint32_t factor, uint32_t addend) {
        uint64_t carry = addend;
        for (uint32_t& limb : limbs_) {
            uint64_t t = uint64_t(limb) * factor + carry;
            limb = uint32_t(t);
            carry = t >> 32;
        }
        if (carry) limbs_.push_back(uint32_t(carry));
    }
    void times_power(uint32_t base, int64_t exponent) {
        for (int64_t i = 0; i < exponent; ++i) multiply_add(base, 0);
    }
    friend int compare(const BigInt& a, const BigInt& b) {
        if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() < b.limbs_.size() ? -1 : 1;
        for (size_t i = a.limbs_.size(); i-- > 0;)
            if (a.limbs_[i] != b.limbs_[i]) return a.limbs_[i] < b.limbs_[i] ? -1 : 1;
        return 0;
    }

private:
    std::vector<uint32_t> limbs_;  // no leading zero limbs
};

// The decimal as N * 10^E.
struct Decimal {
    BigInt n;
    int64_t e = 0;
};

Decimal read_decimal(std::string_view text) {
    Decimal d;
    size_t i = 0;
    for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
        if (text[i] == '.') continue;
        d.n.multiply_add(10, uint32_t(text[i] - '0'));
        if (text.find('.') < i) --d.e;
    }
    if (i < text.size()) d.e += std::strtoll(std::string(text.substr(i + 1)).c_str(), nullptr, 10);
    return d;
}

// The midpoint of halves u and u + 1 (magnitudes; 0x7C00 read as 2^16) as M * 2^K.
struct Dyadic {
    uint64_t m;
    int k;
};

Dyadic half_value(uint16_t u) {
    const int exponent = u >> 10, mantissa = u & 0x3FF;
    if (exponent == 0) return {uint64_t(mantissa), -24};
    return {uint64_t(mantissa | 0x400), exponent - 25};
}

Dyadic midpoint_above(uint16_t u) {
    Dyadic a = half_value(u), b = half_value(uint16_t(u + 1));
    const int k = std::min(a.k, b.k);
    return {(a.m << (a.k - k)) + (b.m << (b.k - k)), k - 1};
}

// Sign of decimal - dyadic, exactly.
int compare(const Decimal& d, const Dyadic& x) {
    BigInt left = d.n, right(x.m);
    if (d.e >= 0)
        left.times_power(10, d.e);
    else
        right.times_power(10, -d.e);
    if (x.k >= 0)
        right.times_power(2, x.k);
    else
        left.times_power(2, -x.k);
    return compare(left, right);
}

}  // namespace

uint16_t decimal_to_half_magnitude(std::string_view digits, double approximation) {
    // Far from every half midpoint that matters (the smallest is 2^-25, the largest 65520), the double's
    // rounding decides, and the exact step would only cost time on huge exponents.
    if (!(approximation >= 0x1p-26 && approximation <= 0x1p17))
        return uint16_t(float_to_half(float(approximation)) & 0x7FFF);
    const Decimal d = read_decimal(digits);
    // The double is within one half-ulp of the decimal, so the answer is its rounding or a neighbour.
    uint16_t u = uint16_t(float_to_half(float(approximation)) & 0x7FFF);
    if (u > 0) {
        int below = compare(d, midpoint_above(uint16_t(u - 1)));
        if (below < 0 || (below == 0 && (u & 1))) return uint16_t(u - 1);
    }
    if (u < 0x7C00) {
        int above = compare(d, midpoint_above(u));
        if (above > 0 || (above == 0 && (u & 1))) return uint16_t(u + 1);
    }
    return u;
}

}  // namespace dmlgrad
