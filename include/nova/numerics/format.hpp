// Number formats, emulated exactly in software so that an error measured on one machine is the
// error on every machine: rounding never goes through the host's half-precision or FP8 units.
//
// Floating formats round to nearest, ties to even, with gradual underflow (subnormals) and IEEE
// overflow: a value whose rounded magnitude exceeds the largest finite number becomes +-inf.
// FP8 E4M3 follows the OCP "FN" encoding: no infinities, largest finite 448, one NaN pattern per
// sign. Its overflow therefore gives NaN (the OCP non-saturating conversion), so that a pipeline
// that overflows shows up in NaN counts instead of silently clamping; Overflow::kSaturate selects
// the OCP saturating conversion (clamp to +-max finite) instead, for every floating format.
//
// Integer formats (int8, int4, int32) round to nearest, ties to even, and saturate to their range
// [-2^(b-1), 2^(b-1)-1]. They hold codes, not real values; quantization.hpp maps reals to codes.
// NaN stays NaN in every format (an integer pipeline that meets NaN reports it instead of hiding it).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nova {

enum class Format { kFp64, kFp32, kFp16, kBf16, kFp8E4M3, kFp8E5M2, kInt32, kInt8, kInt4 };

enum class Overflow {
  kIeee,      // +-inf (NaN for E4M3, which has no inf); integers always saturate
  kSaturate,  // clamp to +-max finite
};

struct FormatInfo {
  Format format;
  std::string_view name;  // "fp16", "fp8-e4m3", "int8", ...
  bool is_integer = false;
  // Floating formats: significand precision p (including the implicit bit), minimum normal
  // exponent, and whether +-inf exist. Integers: p = bits, the rest unused.
  int precision = 0;
  int exponent_bits = 0;
  int min_exponent = 0;  // value of the smallest normal number is 2^min_exponent
  bool has_infinity = false;
  double max_finite = 0;   // largest finite value (integers: 2^(b-1)-1)
  double min_value = 0;    // most negative finite value (integers: -2^(b-1); floats: -max_finite)
  double min_normal = 0;   // 2^min_exponent (integers: 1)
  double min_subnormal = 0;  // 2^(min_exponent - precision + 1) (integers: 1)
  double epsilon = 0;      // spacing of the format at 1: 2^(1-p) (integers: 1)
  double unit_roundoff = 0;  // epsilon / 2: the relative error bound of rounding (integers: 0.5 absolute)
};

// Every format, in the order of the enum.
const std::vector<Format>& all_formats();
const FormatInfo& format_info(Format f);
std::string_view format_name(Format f);
bool is_integer_format(Format f);
// Parses "fp64", "fp32", "fp16", "bf16", "fp8-e4m3", "fp8-e5m2", "int32", "int8", "int4"
// (case-insensitive; "e4m3", "e5m2", "float16", "half", "bfloat16", "float32", "float64" are
// accepted aliases). Throws nova::Error listing the valid names.
Format parse_format_name(std::string_view name);
// "fp64, fp32, fp16, ..." for messages.
std::string format_names_list();

// The value of `x` rounded to `f` (see the top of this file for the rules), as a double.
double round_to(Format f, double x, Overflow overflow = Overflow::kIeee);
// True when round_to(f, x) == x exactly (NaN is representable in every format; +-inf only in
// formats that have it).
bool is_representable(Format f, double x);

// Bulk rounding; `out` may alias `in` (same size). Fast paths for fp32, fp16, bf16 and FP8 are
// plain loops the compiler vectorizes; results equal the scalar round_to element by element.
void round_to(Format f, std::span<const double> in, std::span<double> out, Overflow overflow = Overflow::kIeee);
void round_in_place(Format f, std::span<double> values, Overflow overflow = Overflow::kIeee);
void round_to(Format f, std::span<const float> in, std::span<float> out, Overflow overflow = Overflow::kIeee);

// Bit patterns of the small floating formats (the IEEE / OCP encodings): decode gives the exact
// value; encode rounds first. Only for fp16, bf16, fp8-e4m3, fp8-e5m2 (and fp32); other formats
// throw nova::Error.
double decode_bits(Format f, uint32_t bits);
uint32_t encode_bits(Format f, double x, Overflow overflow = Overflow::kIeee);
int storage_bits(Format f);  // 64, 32, 16, 16, 8, 8, 32, 8, 4

}  // namespace nova
