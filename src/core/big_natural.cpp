#include "core/big_natural.h"

#include <algorithm>

namespace dmlgrad {

BigNatural::BigNatural(uint64_t value) {
    for (; value != 0; value >>= 32) limbs_.push_back(uint32_t(value));
}

BigNatural BigNatural::power_of_ten(unsigned exponent) {
    BigNatural result(1);
    for (; exponent >= 9; exponent -= 9) result.multiply_small(1000000000u);
    uint32_t rest = 1;
    for (; exponent > 0; --exponent) rest *= 10;
    return result.multiply_small(rest);
}

void BigNatural::trim() {
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
}

BigNatural& BigNatural::operator+=(const BigNatural& other) {
    limbs_.resize(std::max(limbs_.size(), other.limbs_.size()) + 1, 0);
    uint64_t carry = 0;
    for (size_t i = 0; i < limbs_.size(); ++i) {
        carry += uint64_t(limbs_[i]) + (i < other.limbs_.size() ? other.limbs_[i] : 0);
        limbs_[i] = uint32_t(carry);
        carry >>= 32;
    }
    trim();
    return *this;
}

BigNatural& BigNatural::operator-=(const BigNatural& other) {
    int64_t borrow = 0;
    for (size_t i = 0; i < limbs_.size(); ++i) {
        int64_t v = int64_t(limbs_[i]) - (i < other.limbs_.size() ? other.limbs_[i] : 0) - borrow;
        borrow = v < 0;
        limbs_[i] = uint32_t(v + (borrow << 32));
    }
    trim();
    return *this;
}

BigNatural& BigNatural::multiply_small(uint32_t factor) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs_) {
        carry += uint64_t(limb) * factor;
        limb = uint32_t(carry);
        carry >>= 32;
    }
    if (carry) limbs_.push_back(uint32_t(carry));
    trim();
    return *this;
}

BigNatural& BigNatural::shift_left(unsigned bits) {
    if (is_zero()) return *this;
    limbs_.insert(limbs_.begin(), bits / 32, 0);
    if (const unsigned rest = bits % 32) {
        uint32_t carry = 0;
        for (size_t i = bits / 32; i < limbs_.size(); ++i) {
            const uint32_t limb = limbs_[i];
            limbs_[i] = (limb << rest) | carry;
            carry = limb >> (32 - rest);
        }
        if (carry) limbs_.push_back(carry);
    }
    return *this;
}

BigNatural operator*(const BigNatural& a, const BigNatural& b) {
    BigNatural product;
    if (a.is_zero() || b.is_zero()) return product;
    product.limbs_.assign(a.limbs_.size() + b.limbs_.size(), 0);
    for (size_t i = 0; i < a.limbs_.size(); ++i) {
        uint64_t carry = 0;
        for (size_t j = 0; j < b.limbs_.size(); ++j) {
            carry += uint64_t(a.limbs_[i]) * b.limbs_[j] + product.limbs_[i + j];
            product.limbs_[i + j] = uint32_t(carry);
            carry >>= 32;
        }
        product.limbs_[i + b.limbs_.size()] = uint32_t(carry);
    }
    product.trim();
    return product;
}

std::strong_ordering operator<=>(const BigNatural& a, const BigNatural& b) {
    if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() <=> b.limbs_.size();
    return std::lexicographical_compare_three_way(a.limbs_.rbegin(), a.limbs_.rend(), b.limbs_.rbegin(),
                                                  b.limbs_.rend());
}

BigNatural distance(const BigNatural& a, const BigNatural& b) {
    BigNatural larger = std::max(a, b);
    larger -= std::min(a, b);
    return larger;
}

}  // namespace dmlgrad
