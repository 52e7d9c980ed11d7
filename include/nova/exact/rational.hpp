// Exact rationals (GMP's mpq_class) and their text forms.
#pragma once

#include <gmpxx.h>

#include <string>
#include <string_view>

namespace nova {

using Rational = mpq_class;

// Parses an exact rational: integers ("-2"), fractions ("3/5", "-7/6"), and decimals, which are
// exact ("0.6" is 3/5, "1.25e-1" is 1/8). Throws nova::Error naming the token on anything else,
// including a zero denominator.
Rational parse_rational(std::string_view text);

// "p/q" in lowest terms, or "p" when the denominator is 1.
std::string to_string(const Rational& value);

// The double nearest to the exact value (round to nearest, ties to even), unlike mpq_get_d,
// which truncates. Values beyond the double range give +-inf.
double to_double(const Rational& value);

// The float nearest to the exact value (ties to even), without double rounding through double.
float to_float(const Rational& value);

// True when |value| is 2^k for some integer k (k may be negative).
bool is_power_of_two(const Rational& value);

// 2^k as an exact rational; k may be negative.
Rational power_of_two(int k);

}  // namespace nova
