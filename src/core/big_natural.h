#pragma once
// Natural numbers of any size, just enough arithmetic for the exact tolerance rule (core/tolerance.cpp): the
// rule's terms are binary fractions of up to 2^±1100 and typed decimals of any length.
#include <compare>
#include <cstdint>
#include <vector>

namespace dmlgrad {

class BigNatural {
public:
    BigNatural() = default;
    explicit BigNatural(uint64_t value);
    static BigNatural power_of_ten(unsigned exponent);

    bool is_zero() const { return limbs_.empty(); }
    BigNatural& operator+=(const BigNatural& other);
    BigNatural& operator-=(const BigNatural& other);  // other <= *this
    BigNatural& multiply_small(uint32_t factor);
    BigNatural& shift_left(unsigned bits);
    friend BigNatural operator*(const BigNatural& a, const BigNatural& b);
    friend std::strong_ordering operator<=>(const BigNatural& a, const BigNatural& b);
    friend bool operator==(const BigNatural& a, const BigNatural& b) = default;

private:
    void trim();
    std::vector<uint32_t> limbs_;  // least significant first, no leading zero limbs
};

// |a - b|
BigNatural distance(const BigNatural& a, const BigNatural& b);

}  // namespace dmlgrad
