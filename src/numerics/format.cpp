#include "nova/numerics/format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "nova/error.hpp"
#include "numerics/isa_clones.hpp"
#include "numerics/round_kernel.hpp"

namespace nova {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

FormatInfo float_info(Format f, std::string_view name, int p, int ebits, int emin, bool has_inf, double max) {
  FormatInfo i;
  i.format = f;
  i.name = name;
  i.precision = p;
  i.exponent_bits = ebits;
  i.min_exponent = emin;
  i.has_infinity = has_inf;
  i.max_finite = max;
  i.min_value = -max;
  i.min_normal = std::ldexp(1.0, emin);
  i.min_subnormal = std::ldexp(1.0, emin - p + 1);
  i.epsilon = std::ldexp(1.0, 1 - p);
  i.unit_roundoff = std::ldexp(1.0, -p);
  return i;
}

FormatInfo int_info(Format f, std::string_view name, int bits) {
  FormatInfo i;
  i.format = f;
  i.name = name;
  i.is_integer = true;
  i.precision = bits;
  i.max_finite = std::ldexp(1.0, bits - 1) - 1;
  i.min_value = -std::ldexp(1.0, bits - 1);
  i.min_normal = 1;
  i.min_subnormal = 1;
  i.epsilon = 1;
  i.unit_roundoff = 0.5;
  return i;
}

const std::array<FormatInfo, 9>& table() {
  // E4M3 (OCP FN): exponent field 1111 is normal except for the NaN mantissa 111, so the largest
  // finite value is 1.75 * 2^8 = 448. E5M2 is IEEE-like: largest finite 1.75 * 2^15 = 57344.
  static const std::array<FormatInfo, 9> t = {
      float_info(Format::kFp64, "fp64", 53, 11, -1022, true, std::numeric_limits<double>::max()),
      float_info(Format::kFp32, "fp32", 24, 8, -126, true, static_cast<double>(std::numeric_limits<float>::max())),
      float_info(Format::kFp16, "fp16", 11, 5, -14, true, 65504.0),
      float_info(Format::kBf16, "bf16", 8, 8, -126, true, std::ldexp(255.0, 120)),
      float_info(Format::kFp8E4M3, "fp8-e4m3", 4, 4, -6, false, 448.0),
      float_info(Format::kFp8E5M2, "fp8-e5m2", 3, 5, -14, true, 57344.0),
      int_info(Format::kInt32, "int32", 32),
      int_info(Format::kInt8, "int8", 8),
      int_info(Format::kInt4, "int4", 4),
  };
  return t;
}

detail::FloatKernel kernel(const FormatInfo& i, Overflow overflow) {
  double ov = i.has_infinity ? kInf : kNaN;
  if (overflow == Overflow::kSaturate) ov = i.max_finite;
  return {i.precision, i.min_exponent, i.max_finite, ov, i.min_normal};
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <class T>
[[gnu::always_inline]] inline void round_span(Format f, std::span<const T> in, std::span<T> out, Overflow overflow) {
  if (in.size() != out.size()) throw Error("round_to: input and output sizes differ");
  const FormatInfo& i = format_info(f);
  const std::size_t n = in.size();
  const T* src = in.data();
  T* dst = out.data();
  if (f == Format::kFp64) {
    if (src != dst) std::copy(src, src + n, dst);
    return;
  }
  if (i.is_integer) {
    const double lo = i.min_value, hi = i.max_finite;
    for (std::size_t j = 0; j < n; ++j) dst[j] = static_cast<T>(detail::round_integer(static_cast<double>(src[j]), lo, hi));
    return;
  }
  // Blocks through a local buffer (so that `out` may alias `in`): a branch-free pass that the
  // compiler vectorizes, then the rare values outside the fast range (subnormal results,
  // overflow, inf, NaN) again through the general kernel.
  const detail::FloatKernel k = kernel(i, overflow);
  const int shift = 53 - k.precision;
  const uint64_t half_minus_one = (uint64_t{1} << (shift - 1)) - 1, keep = ~((uint64_t{1} << shift) - 1);
  constexpr std::size_t kBlock = 512;
  double buf[kBlock], res[kBlock];
  uint64_t bits[kBlock];
  for (std::size_t base = 0; base < n; base += kBlock) {
    const std::size_t len = std::min(kBlock, n - base);
    for (std::size_t j = 0; j < len; ++j) buf[j] = static_cast<double>(src[base + j]);
    std::memcpy(bits, buf, len * sizeof(double));
    // round_float_fast on the bit patterns, in integer arithmetic only.
    for (std::size_t j = 0; j < len; ++j) bits[j] = (bits[j] + half_minus_one + ((bits[j] >> shift) & 1U)) & keep;
    int slow = 0;
    for (std::size_t j = 0; j < len; ++j) slow += detail::in_fast_range(buf[j], k) ? 0 : 1;
    std::memcpy(res, bits, len * sizeof(double));
    if (slow)
      for (std::size_t j = 0; j < len; ++j)
        if (!detail::in_fast_range(buf[j], k)) res[j] = detail::round_float_generic(buf[j], k);
    for (std::size_t j = 0; j < len; ++j) dst[base + j] = static_cast<T>(res[j]);
  }
}

// The bulk entry points, one version per ISA.
NOVA_ISA_CLONES void round_span_f64(Format f, std::span<const double> in, std::span<double> out, Overflow overflow) {
  round_span<double>(f, in, out, overflow);
}
NOVA_ISA_CLONES void round_span_f32(Format f, std::span<const float> in, std::span<float> out, Overflow overflow) {
  round_span<float>(f, in, out, overflow);
}

}  // namespace

detail::FloatKernel detail::float_kernel(Format f, Overflow overflow) { return kernel(format_info(f), overflow); }

const std::vector<Format>& all_formats() {
  static const std::vector<Format> v = {Format::kFp64,    Format::kFp32,    Format::kFp16,
                                        Format::kBf16,    Format::kFp8E4M3, Format::kFp8E5M2,
                                        Format::kInt32,   Format::kInt8,    Format::kInt4};
  return v;
}

const FormatInfo& format_info(Format f) { return table()[static_cast<std::size_t>(f)]; }
std::string_view format_name(Format f) { return format_info(f).name; }
bool is_integer_format(Format f) { return format_info(f).is_integer; }

std::string format_names_list() {
  std::string s;
  for (Format f : all_formats()) {
    if (!s.empty()) s += ", ";
    s += format_name(f);
  }
  return s;
}

Format parse_format_name(std::string_view name) {
  const std::string n = lower(name);
  for (Format f : all_formats())
    if (n == format_name(f)) return f;
  if (n == "float64" || n == "double" || n == "f64") return Format::kFp64;
  if (n == "float32" || n == "float" || n == "f32") return Format::kFp32;
  if (n == "float16" || n == "half" || n == "f16") return Format::kFp16;
  if (n == "bfloat16") return Format::kBf16;
  if (n == "e4m3" || n == "fp8_e4m3" || n == "fp8e4m3" || n == "e4m3fn") return Format::kFp8E4M3;
  if (n == "e5m2" || n == "fp8_e5m2" || n == "fp8e5m2") return Format::kFp8E5M2;
  throw Error("unknown number format '" + std::string(name) + "' (valid: " + format_names_list() + ")");
}

double round_to(Format f, double x, Overflow overflow) {
  const FormatInfo& i = format_info(f);
  if (f == Format::kFp64) return x;
  if (i.is_integer) return detail::round_integer(x, i.min_value, i.max_finite);
  return detail::round_float(x, kernel(i, overflow));
}

bool is_representable(Format f, double x) {
  if (std::isnan(x)) return true;
  if (std::isinf(x)) return format_info(f).has_infinity;
  return round_to(f, x) == x;
}

void round_to(Format f, std::span<const double> in, std::span<double> out, Overflow overflow) {
  round_span_f64(f, in, out, overflow);
}
void round_in_place(Format f, std::span<double> values, Overflow overflow) {
  round_span_f64(f, values, values, overflow);
}
void round_to(Format f, std::span<const float> in, std::span<float> out, Overflow overflow) {
  round_span_f32(f, in, out, overflow);
}

int storage_bits(Format f) {
  switch (f) {
    case Format::kFp64: return 64;
    case Format::kFp32: return 32;
    case Format::kFp16: return 16;
    case Format::kBf16: return 16;
    case Format::kFp8E4M3: return 8;
    case Format::kFp8E5M2: return 8;
    case Format::kInt32: return 32;
    case Format::kInt8: return 8;
    case Format::kInt4: return 4;
  }
  return 0;
}

namespace {
void require_bit_format(Format f) {
  if (f == Format::kFp64 || is_integer_format(f))
    throw Error("bit patterns are only defined here for fp32, fp16, bf16, fp8-e4m3, fp8-e5m2, not " +
                std::string(format_name(f)));
}
}  // namespace

double decode_bits(Format f, uint32_t bits) {
  require_bit_format(f);
  const FormatInfo& i = format_info(f);
  const int mbits = i.precision - 1, ebits = i.exponent_bits;
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t emask = (1U << ebits) - 1, mmask = (1U << mbits) - 1;
  if (bits >> (ebits + mbits) > 1) throw Error("bit pattern wider than " + std::string(format_name(f)));
  const bool negative = (bits >> (ebits + mbits)) & 1U;
  const uint32_t exp = (bits >> mbits) & emask, man = bits & mmask;
  double v;
  if (f == Format::kFp8E4M3 && exp == emask && man == mmask) return kNaN;
  if (f != Format::kFp8E4M3 && exp == emask) {
    if (man != 0) return kNaN;
    v = kInf;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - bias - mbits);
  } else {
    v = std::ldexp(static_cast<double>(man | (1U << mbits)), static_cast<int>(exp) - bias - mbits);
  }
  return negative ? -v : v;
}

uint32_t encode_bits(Format f, double x, Overflow overflow) {
  require_bit_format(f);
  const FormatInfo& i = format_info(f);
  const int mbits = i.precision - 1, ebits = i.exponent_bits;
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t emask = (1U << ebits) - 1;
  const double r = round_to(f, x, overflow);
  const uint32_t sign = std::signbit(r) ? (1U << (ebits + mbits)) : 0U;
  if (std::isnan(r)) {
    // E4M3's only NaN is S.1111.111; the IEEE-like formats use the quiet NaN with the top mantissa bit.
    if (f == Format::kFp8E4M3) return sign | (emask << mbits) | ((1U << mbits) - 1);
    return sign | (emask << mbits) | (1U << (mbits - 1));
  }
  if (std::isinf(r)) return sign | (emask << mbits);
  const double a = std::fabs(r);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1): the unbiased exponent is e - 1
  const int unbiased = e - 1;
  if (unbiased < i.min_exponent) {
    const auto man = static_cast<uint32_t>(std::ldexp(a, bias - 1 + mbits));
    return sign | man;
  }
  const auto man = static_cast<uint32_t>(std::ldexp(a, mbits - unbiased)) & ((1U << mbits) - 1);
  return sign | (static_cast<uint32_t>(unbiased + bias) << mbits) | man;
}

}  // namespace nova
