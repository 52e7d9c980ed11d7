#include "nova/exact/rational.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "nova/error.hpp"

namespace nova {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "123.45e-6" (no sign) -> exact rational; false when the text is not a decimal number.
bool parse_decimal(std::string_view s, Rational& out) {
  std::string_view mantissa = s;
  long exponent = 0;
  if (auto e = s.find_first_of("eE"); e != std::string_view::npos) {
    mantissa = s.substr(0, e);
    std::string_view exp_text = s.substr(e + 1);
    bool negative = false;
    if (!exp_text.empty() && (exp_text[0] == '+' || exp_text[0] == '-')) {
      negative = exp_text[0] == '-';
      exp_text.remove_prefix(1);
    }
    if (!all_digits(exp_text)) return false;
    // |exponent| < 10^4 keeps sizes sane. Said as such: "1e10000" is a decimal, and "cannot parse" misled.
    // Leading zeros ("1e00001") are fine.
    const std::size_t first = std::min(exp_text.find_first_not_of('0'), exp_text.size());
    if (exp_text.size() - first > 4)
      throw Error("the exponent of '" + std::string(s) +
                  "' is beyond nova's limit of 9999 (exact values stay a sane size)");
    exponent = std::stol(std::string(exp_text.substr(first == exp_text.size() ? first - 1 : first)));
    if (negative) exponent = -exponent;
  }
  std::string digits;
  long fraction_digits = 0;
  if (auto dot = mantissa.find('.'); dot != std::string_view::npos) {
    std::string_view int_part = mantissa.substr(0, dot);
    std::string_view frac_part = mantissa.substr(dot + 1);
    if ((!int_part.empty() && !all_digits(int_part)) || (!frac_part.empty() && !all_digits(frac_part)) ||
        (int_part.empty() && frac_part.empty()))
      return false;
    digits = std::string(int_part) + std::string(frac_part);
    fraction_digits = static_cast<long>(frac_part.size());
  } else {
    if (!all_digits(mantissa)) return false;
    digits = std::string(mantissa);
  }
  mpz_class value(digits, 10);
  long scale = exponent - fraction_digits;
  mpz_class ten_power;
  mpz_ui_pow_ui(ten_power.get_mpz_t(), 10, static_cast<unsigned long>(scale < 0 ? -scale : scale));
  out = scale >= 0 ? Rational(value * ten_power) : Rational(value, ten_power);
  out.canonicalize();
  return true;
}

}  // namespace

Rational parse_rational(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  const std::string quoted = "'" + std::string(text) + "'";
  if (s.empty()) throw Error("empty number");
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  Rational result;
  if (auto slash = s.find('/'); slash != std::string_view::npos) {
    std::string_view num = s.substr(0, slash), den = s.substr(slash + 1);
    if (!all_digits(num) || !all_digits(den))
      throw Error("cannot parse " + quoted + " as a rational (expected p/q with integers p, q > 0)");
    mpz_class q(std::string(den), 10);
    if (q == 0) throw Error("zero denominator in " + quoted);
    result = Rational(mpz_class(std::string(num), 10), q);
    result.canonicalize();
  } else if (!parse_decimal(s, result)) {
    throw Error("cannot parse " + quoted + " as an exact rational (expected an integer, p/q or a decimal)");
  }
  return negative ? Rational(-result) : result;
}

std::string to_string(const Rational& value) {
  Rational v = value;
  v.canonicalize();
  if (v.get_den() == 1) return v.get_num().get_str();
  return v.get_num().get_str() + "/" + v.get_den().get_str();
}

double to_double(const Rational& value) {
  // Correct rounding: form a quotient with at least 55 significant bits plus a sticky bit, then let
  // the hardware round that (exact in long arithmetic) integer-with-sticky to 53 bits.
  if (value == 0) return 0.0;
  const bool negative = value < 0;
  mpz_class num = abs(value.get_num());
  const mpz_class& den = value.get_den();
  long shift = 64 + static_cast<long>(mpz_sizeinbase(den.get_mpz_t(), 2)) -
               static_cast<long>(mpz_sizeinbase(num.get_mpz_t(), 2));
  mpz_class scaled = num;
  if (shift > 0) scaled <<= static_cast<mp_bitcnt_t>(shift);
  mpz_class quotient, remainder;
  if (shift >= 0) {
    mpz_tdiv_qr(quotient.get_mpz_t(), remainder.get_mpz_t(), scaled.get_mpz_t(), den.get_mpz_t());
  } else {
    mpz_class shifted_den = den << static_cast<mp_bitcnt_t>(-shift);
    mpz_tdiv_qr(quotient.get_mpz_t(), remainder.get_mpz_t(), num.get_mpz_t(), shifted_den.get_mpz_t());
  }
  // quotient has 64 or 65 bits: keep the top 62 bits, fold the rest into a sticky bit so that a
  // single rounding to double (53 bits) is correct.
  const size_t bits = mpz_sizeinbase(quotient.get_mpz_t(), 2);
  const long drop = static_cast<long>(bits) - 62;
  bool sticky = remainder != 0;
  if (drop > 0) {
    mpz_class low = quotient & ((mpz_class(1) << static_cast<mp_bitcnt_t>(drop)) - 1);
    sticky = sticky || low != 0;
    quotient >>= static_cast<mp_bitcnt_t>(drop);
  }
  uint64_t q = mpz_get_ui(quotient.get_mpz_t());
  q = (q << 1) | (sticky ? 1u : 0u);  // 63 bits, exactly representable as uint64
  const long exponent = (drop > 0 ? drop : 0) - shift - 1;
  if (exponent > 2000) return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  // q's top bit is bit 62, so the value is below 2^-1022 (subnormal, a grid of 2^-1074) exactly when
  // exponent < -1084. There, rounding q to 53 bits and then ldexp's rounding to that grid are two
  // roundings, which went wrong near halfway (1.5 * 2^-1074 less 10^-400 came out 2 * 2^-1074, not 1;
  // a point such as 1e-35 in F(10,3) puts such entries in the exports): round q to the grid once,
  // nearest-even (the sticky bit 0 lies below the rounding bit, as the shift is at least 11).
  if (exponent < -1084) {
    const long grid_shift = -1074 - exponent;           // > 10
    if (grid_shift > 63) return negative ? -0.0 : 0.0;  // below half the smallest subnormal
    const uint64_t half = uint64_t{1} << (grid_shift - 1);
    const uint64_t rest = q & ((half << 1) - 1);
    uint64_t kept = q >> grid_shift;
    if (rest > half || (rest == half && (kept & 1u))) ++kept;       // may carry into 2^-1022: still exact
    const double d = std::ldexp(static_cast<double>(kept), -1074);  // kept <= 2^52: exact
    return negative ? -d : d;
  }
  // Converting q (63 bits) to double rounds once to nearest-even; ldexp is then exact (normal range)
  // or overflows to inf.
  double d = std::ldexp(static_cast<double>(q), static_cast<int>(exponent));
  return negative ? -d : d;
}

bool is_power_of_two(const Rational& value) {
  if (value == 0) return false;
  mpz_class num = abs(value.get_num());
  const mpz_class& den = value.get_den();
  auto pow2 = [](const mpz_class& x) { return mpz_popcount(x.get_mpz_t()) == 1; };
  return pow2(num) && pow2(den);
}

Rational power_of_two(int k) {
  mpz_class p = mpz_class(1) << static_cast<mp_bitcnt_t>(k < 0 ? -k : k);
  return k >= 0 ? Rational(p) : Rational(mpz_class(1), p);
}

}  // namespace nova

namespace nova {

float to_float(const Rational& value) {
  // Rounding the double (already correctly rounded) to float can round twice; settle ties and
  // near-ties by comparing the two candidate floats against the exact value.
  const double d = to_double(value);
  const float f = static_cast<float>(d);
  if (!std::isfinite(f)) {
    // The double can round up onto the overflow threshold FLT_MAX + 2^103 (a tie that goes to inf) from a
    // value just below it, whose nearest float is FLT_MAX: (2^128 - 2^103 - 2^-10 was refused by the
    // C++ header as beyond float's range).
    const float max = std::numeric_limits<float>::max();
    const Rational threshold = Rational(static_cast<double>(max)) + power_of_two(103);
    if (std::isfinite(d) && abs(value) < threshold) return value < 0 ? -max : max;
    return f;
  }
  if (Rational(static_cast<double>(f)) == value) return f;
  const float other = Rational(static_cast<double>(f)) < value ? std::nextafter(f, std::numeric_limits<float>::infinity())
                                                                : std::nextafter(f, -std::numeric_limits<float>::infinity());
  if (!std::isfinite(other)) return f;
  const Rational err_f = abs(Rational(static_cast<double>(f)) - value);
  const Rational err_o = abs(Rational(static_cast<double>(other)) - value);
  if (err_o < err_f) return other;
  if (err_o > err_f) return f;
  uint32_t bits;  // exact tie: the one with an even significand
  std::memcpy(&bits, &f, sizeof bits);
  return (bits & 1u) == 0 ? f : other;
}

}  // namespace nova
