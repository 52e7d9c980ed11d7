// The rounding kernels behind format.cpp, inline so that the bulk loops vectorize. Private to
// src/numerics.
//
// A floating format is described by its precision p and minimum normal exponent emin. Rounding a
// double x = m * 2^(e-52) (m the 53-bit significand with its implicit bit) to the format keeps the
// top p bits of m when x is normal in the format and fewer below 2^emin (gradual underflow): the
// number of dropped bits is shift = 53 - p + max(0, emin - e). Round-to-nearest-even on the
// integer m is (m + 2^(shift-1) - 1 + lsb) >> shift, where lsb is the lowest kept bit; a carry out
// of the top is the correct next binade. Everything is integer arithmetic on the bit pattern, so
// the result does not depend on the host's floating-point units or rounding mode.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "nova/numerics/format.hpp"

namespace nova::detail {

struct FloatKernel {
  int precision;        // p, including the implicit bit
  int min_exponent;     // emin
  double max_finite;
  double overflow_value;  // +inf, or NaN for formats without inf, or max_finite when saturating
  double min_normal;      // 2^emin
};

// Any double, any format: the definition above, with the shift depending on the exponent.
inline double round_float_generic(double x, const FloatKernel& k) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const uint64_t sign = bits & 0x8000000000000000ULL;
  const uint64_t mag = bits & 0x7fffffffffffffffULL;
  const int ebits = static_cast<int>(mag >> 52);
  if (ebits == 0x7ff) return (mag == 0x7ff0000000000000ULL) ? std::copysign(k.overflow_value, x) : x;
  const int e = ebits - 1023;
  // Inputs that are double subnormals have e = -1023: far below every format's smallest
  // subnormal, they clamp to shift 54 and round to zero like any other tiny value.
  int shift = 53 - k.precision + (k.min_exponent > e ? k.min_exponent - e : 0);
  shift = shift > 54 ? 54 : shift;
  const uint64_t m = (mag & 0x000fffffffffffffULL) | 0x0010000000000000ULL;
  const uint64_t lsb = (m >> shift) & 1U;
  const uint64_t mr = (m + (uint64_t{1} << (shift - 1)) - 1 + lsb) >> shift;
  // The result is mr * 2^(e - 52 + shift); that exponent is at least emin - p + 1 (>= -1074 + 53
  // for every format here), so the power of two is a normal double and the product is exact.
  const int scale_exp = e - 52 + shift;
  const double scale = std::bit_cast<double>(static_cast<uint64_t>(scale_exp + 1023) << 52);
  double r = static_cast<double>(static_cast<int64_t>(mr)) * scale;
  r = r > k.max_finite ? k.overflow_value : r;
  return std::bit_cast<double>(std::bit_cast<uint64_t>(r) | sign);
}

// The common case: zero, or a magnitude in [2^emin, max_finite). The result is then normal (or
// zero) in the format, the shift is the constant 53 - p, and rounding works on the whole bit
// pattern: a carry out of the significand moves into the exponent, which is the next binade.
inline bool in_fast_range(double x, const FloatKernel& k) {
  const double a = std::fabs(x);
  return (a >= k.min_normal && a < k.max_finite) || a == 0.0;
}
inline double round_float_fast(double x, const FloatKernel& k) {
  const int shift = 53 - k.precision;
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const uint64_t lsb = (bits >> shift) & 1U;
  const uint64_t r = (bits + ((uint64_t{1} << (shift - 1)) - 1) + lsb) & ~((uint64_t{1} << shift) - 1);
  return std::bit_cast<double>(r);
}

// The general path out of line: keeps the hot loops that call round_float small.
[[gnu::noinline, gnu::cold]] inline double round_float_slow(double x, const FloatKernel& k) {
  return round_float_generic(x, k);
}

inline double round_float(double x, const FloatKernel& k) {
  return __builtin_expect(in_fast_range(x, k), 1) ? round_float_fast(x, k) : round_float_slow(x, k);
}

// The kernel of a floating format other than fp64 (defined in format.cpp).
FloatKernel float_kernel(Format f, Overflow overflow);

// Rounding policies for the emulation's templated loops: none (fp64, or native float arithmetic),
// or every result through a format's kernel.
struct NoRound {
  double operator()(double x) const { return x; }
  float operator()(float x) const { return x; }
};
struct KernelRound {
  FloatKernel k;
  double operator()(double x) const { return round_float(x, k); }
};

// Integers: nearest, ties to even, saturating. Clamping first keeps |x| < 2^51, where adding
// and subtracting 1.5 * 2^52 rounds to an integer with the default round-to-nearest-even (a
// branch-free form of nearbyint that vectorizes); NaN fails every comparison and stays NaN.
inline double round_integer(double x, double lo, double hi) {
  double c = x < lo - 1 ? lo - 1 : x;
  c = c > hi + 1 ? hi + 1 : c;
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  double r = (c + kMagic) - kMagic;
  r = r < lo ? lo : r;
  r = r > hi ? hi : r;
  return r;
}

}  // namespace nova::detail
