// Rounding emulation against independent references: the bit-level definitions of the formats,
// the compiler's own _Float16 conversion and the hardware double -> float conversion.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "nova/error.hpp"
#include "nova/numerics/format.hpp"

namespace nova {
namespace {

bool same(double a, double b) {  // bitwise equal, or both NaN
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

TEST(Format, ParseNamesAndUnknownNameListsValidOnes) {
  for (Format f : all_formats()) EXPECT_EQ(parse_format_name(format_name(f)), f);
  EXPECT_EQ(parse_format_name("FP16"), Format::kFp16);
  EXPECT_EQ(parse_format_name("e4m3"), Format::kFp8E4M3);
  try {
    parse_format_name("fp12");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fp12"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fp8-e5m2"), std::string::npos);
  }
}

TEST(Format, PropertiesMatchTheirDefinitions) {
  EXPECT_EQ(format_info(Format::kFp16).max_finite, 65504.0);
  EXPECT_EQ(format_info(Format::kFp16).min_normal, std::ldexp(1.0, -14));
  EXPECT_EQ(format_info(Format::kFp16).min_subnormal, std::ldexp(1.0, -24));
  EXPECT_EQ(format_info(Format::kFp16).unit_roundoff, std::ldexp(1.0, -11));
  EXPECT_EQ(format_info(Format::kFp32).max_finite, static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(format_info(Format::kFp32).min_subnormal, static_cast<double>(std::numeric_limits<float>::denorm_min()));
  EXPECT_EQ(format_info(Format::kFp32).epsilon, static_cast<double>(std::numeric_limits<float>::epsilon()));
  EXPECT_EQ(format_info(Format::kBf16).epsilon, 1.0 / 128);
  EXPECT_EQ(format_info(Format::kFp8E4M3).max_finite, 448.0);
  EXPECT_EQ(format_info(Format::kFp8E5M2).max_finite, 57344.0);
  EXPECT_EQ(format_info(Format::kInt8).max_finite, 127.0);
  EXPECT_EQ(format_info(Format::kInt8).min_value, -128.0);
  EXPECT_EQ(format_info(Format::kInt4).min_value, -8.0);
  // The largest finite value of every float format is itself a format value, and the next
  // representable step above it is not.
  for (Format f : {Format::kFp32, Format::kFp16, Format::kBf16, Format::kFp8E4M3, Format::kFp8E5M2}) {
    const FormatInfo& i = format_info(f);
    EXPECT_TRUE(is_representable(f, i.max_finite)) << i.name;
    EXPECT_TRUE(is_representable(f, i.min_subnormal)) << i.name;
    EXPECT_FALSE(is_representable(f, i.min_subnormal / 2)) << i.name;
    EXPECT_FALSE(is_representable(f, i.max_finite * (1 + i.epsilon))) << i.name;
  }
}

// The value of an fp16 bit pattern as the compiler's _Float16 sees it: independent of nova's
// decoder. Without _Float16 (a compiler that lacks it), the IEEE definition written out here.
double f16_value(uint16_t bits) {
#if defined(__FLT16_MAX__)
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<double>(h);
#else
  const int e = (bits >> 10) & 31, f = bits & 1023;
  const double mag = e == 31 ? (f ? std::nan("") : INFINITY) : e == 0 ? std::ldexp(f, -24) : std::ldexp(f + 1024, e - 25);
  return (bits & 0x8000) ? -mag : mag;
#endif
}

TEST(Format, EveryFp16BitPatternRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const double v = decode_bits(Format::kFp16, b);
    ASSERT_TRUE(same(v, f16_value(static_cast<uint16_t>(b)))) << std::hex << b;
    ASSERT_TRUE(same(round_to(Format::kFp16, v), v)) << std::hex << b;
    if (!std::isnan(v)) {
      ASSERT_EQ(encode_bits(Format::kFp16, v), b) << std::hex << b;
      ASSERT_TRUE(is_representable(Format::kFp16, v));
    }
  }
}

TEST(Format, EveryBf16BitPatternRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    // bf16 is the top half of an fp32 pattern.
    const double ref = static_cast<double>(std::bit_cast<float>(b << 16));
    const double v = decode_bits(Format::kBf16, b);
    ASSERT_TRUE(same(v, ref)) << std::hex << b;
    ASSERT_TRUE(same(round_to(Format::kBf16, v), v)) << std::hex << b;
    if (!std::isnan(v)) {
      ASSERT_EQ(encode_bits(Format::kBf16, v), b) << std::hex << b;
    }
  }
}

TEST(Format, EveryFp8BitPatternRoundTrips) {
  for (Format f : {Format::kFp8E4M3, Format::kFp8E5M2}) {
    int nans = 0, infs = 0;
    for (uint32_t b = 0; b < 0x100; ++b) {
      const double v = decode_bits(f, b);
      nans += std::isnan(v);
      infs += std::isinf(v);
      ASSERT_TRUE(same(round_to(f, v), v)) << format_name(f) << ' ' << b;
      if (!std::isnan(v)) {
        ASSERT_EQ(encode_bits(f, v), b) << format_name(f) << ' ' << b;
      }
    }
    if (f == Format::kFp8E4M3) {
      EXPECT_EQ(nans, 2);  // S.1111.111 only
      EXPECT_EQ(infs, 0);
    } else {
      EXPECT_EQ(nans, 6);  // S.11111.{01,10,11}
      EXPECT_EQ(infs, 2);
    }
  }
}

TEST(Format, Fp8KnownValues) {
  // OCP 8-bit floating point specification, table of E4M3 / E5M2 values.
  EXPECT_EQ(decode_bits(Format::kFp8E4M3, 0x7E), 448.0);
  EXPECT_EQ(decode_bits(Format::kFp8E4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decode_bits(Format::kFp8E4M3, 0x08), std::ldexp(1.0, -6));
  EXPECT_EQ(decode_bits(Format::kFp8E4M3, 0x38), 1.0);
  EXPECT_EQ(decode_bits(Format::kFp8E4M3, 0xB8), -1.0);
  EXPECT_EQ(decode_bits(Format::kFp8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(decode_bits(Format::kFp8E5M2, 0x7C), std::numeric_limits<double>::infinity());
  EXPECT_EQ(decode_bits(Format::kFp8E5M2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(decode_bits(Format::kFp8E5M2, 0x3C), 1.0);
  EXPECT_EQ(round_to(Format::kFp8E4M3, 0.3), 0.3125);   // neighbours 0.28125, 0.3125
  EXPECT_EQ(round_to(Format::kFp8E5M2, 0.3), 0.3125);   // neighbours 0.25, 0.3125
  EXPECT_EQ(round_to(Format::kFp8E4M3, 17.0), 16.0);    // tie between 16 and 18: even mantissa
  EXPECT_EQ(round_to(Format::kFp8E4M3, 19.0), 20.0);    // tie between 18 and 20
}

TEST(Format, HalfwayCasesRoundToEven) {
  for (Format f : {Format::kFp16, Format::kBf16, Format::kFp8E4M3, Format::kFp8E5M2}) {
    // The pattern of the largest finite value; every pair below it is a pair of finite neighbours.
    const uint32_t max_pattern = encode_bits(f, format_info(f).max_finite);
    const uint32_t last = max_pattern - 1;
    for (uint32_t b = 0; b <= last; ++b) {
      const double a = decode_bits(f, b), c = decode_bits(f, b + 1);
      const double mid = (a + c) / 2;  // exact in double
      const double even = (b % 2 == 0) ? a : c;
      ASSERT_EQ(round_to(f, mid), even) << format_name(f) << ' ' << b;
      ASSERT_EQ(round_to(f, -mid), -even) << format_name(f) << ' ' << b;
      // Just off the midpoint, the nearer neighbour wins.
      ASSERT_EQ(round_to(f, std::nextafter(mid, 0.0)), a) << format_name(f) << ' ' << b;
      ASSERT_EQ(round_to(f, std::nextafter(mid, 1e300)), c) << format_name(f) << ' ' << b;
    }
  }
}

TEST(Format, OverflowGivesInfinityOrNaNOrSaturates) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(round_to(Format::kFp16, 65519.99), 65504.0);
  EXPECT_EQ(round_to(Format::kFp16, 65520.0), inf);  // the tie rounds to the even 2^16: overflow
  EXPECT_EQ(round_to(Format::kFp16, -1e6), -inf);
  EXPECT_EQ(round_to(Format::kFp16, -1e6, Overflow::kSaturate), -65504.0);
  EXPECT_EQ(round_to(Format::kBf16, 1e39), inf);
  EXPECT_EQ(round_to(Format::kFp32, 1e39), inf);
  EXPECT_EQ(round_to(Format::kFp8E5M2, 61440.0), inf);    // tie between 57344 and 65536
  EXPECT_EQ(round_to(Format::kFp8E5M2, 61439.0), 57344.0);
  EXPECT_EQ(round_to(Format::kFp8E4M3, 464.0), 448.0);    // tie between 448 and (not finite) 480
  EXPECT_TRUE(std::isnan(round_to(Format::kFp8E4M3, 465.0)));
  EXPECT_TRUE(std::isnan(round_to(Format::kFp8E4M3, inf)));
  EXPECT_EQ(round_to(Format::kFp8E4M3, 1000.0, Overflow::kSaturate), 448.0);
  EXPECT_EQ(round_to(Format::kFp16, inf), inf);
  EXPECT_TRUE(std::isnan(round_to(Format::kFp16, std::nan(""))));
  EXPECT_TRUE(std::isnan(round_to(Format::kInt8, std::nan(""))));
  EXPECT_FALSE(is_representable(Format::kFp8E4M3, inf));
  EXPECT_TRUE(is_representable(Format::kFp16, -inf));
}

TEST(Format, SubnormalsAndSignedZero) {
  const double tiny = std::ldexp(1.0, -24);  // fp16's smallest subnormal
  EXPECT_EQ(round_to(Format::kFp16, tiny * 0.5), 0.0);           // tie with 0: even
  EXPECT_EQ(round_to(Format::kFp16, tiny * 0.75), tiny);
  EXPECT_EQ(round_to(Format::kFp16, tiny * 1.5), 2 * tiny);      // tie between 1 and 2 ulps: even
  EXPECT_TRUE(std::signbit(round_to(Format::kFp16, -tiny * 0.25)));
  EXPECT_EQ(round_to(Format::kFp16, 1e-300), 0.0);
  EXPECT_EQ(round_to(Format::kFp32, 5e-324), 0.0);  // a double subnormal
}

TEST(Format, MatchesCompilerFloat16AndHardwareFloatOnRandomValues) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> expo(-30, 20);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  for (int i = 0; i < 200000; ++i) {
    const double x = (i % 2 ? -1 : 1) * std::ldexp(mant(rng), expo(rng));
#if defined(__FLT16_MAX__)
    ASSERT_TRUE(same(round_to(Format::kFp16, x), static_cast<double>(static_cast<_Float16>(x)))) << x;
#endif
    const double y = std::ldexp(x, expo(rng) * 4);  // spans fp32's subnormals to its overflow-free range
    if (std::fabs(y) < 3e38) {
      ASSERT_TRUE(same(round_to(Format::kFp32, y), static_cast<double>(static_cast<float>(y)))) << y;
    }
  }
}

TEST(Format, IntegersRoundHalfToEvenAndSaturate) {
  EXPECT_EQ(round_to(Format::kInt8, 2.5), 2.0);
  EXPECT_EQ(round_to(Format::kInt8, 3.5), 4.0);
  EXPECT_EQ(round_to(Format::kInt8, -3.5), -4.0);
  EXPECT_EQ(round_to(Format::kInt8, 126.6), 127.0);
  EXPECT_EQ(round_to(Format::kInt8, 127.5), 127.0);
  EXPECT_EQ(round_to(Format::kInt8, -200.0), -128.0);
  EXPECT_EQ(round_to(Format::kInt4, 7.6), 7.0);
  EXPECT_EQ(round_to(Format::kInt4, -9.0), -8.0);
  EXPECT_EQ(round_to(Format::kInt32, 3e9), 2147483647.0);
  EXPECT_TRUE(is_representable(Format::kInt8, -128));
  EXPECT_FALSE(is_representable(Format::kInt8, 128));
  EXPECT_FALSE(is_representable(Format::kInt8, 0.5));
}

TEST(Format, BulkEqualsScalar) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> x(5000);
  for (auto& v : x) v = nd(rng) * std::ldexp(1.0, static_cast<int>(nd(rng) * 12));
  x[0] = std::numeric_limits<double>::infinity();
  x[1] = -x[0];
  x[2] = std::nan("");
  x[3] = -0.0;
  x[4] = 5e-324;
  for (Format f : all_formats()) {
    for (Overflow o : {Overflow::kIeee, Overflow::kSaturate}) {
      std::vector<double> y(x.size());
      round_to(f, x, y, o);
      std::vector<float> xf(x.begin(), x.end()), yf(x.size());
      round_to(f, xf, yf, o);
      for (std::size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(same(y[i], round_to(f, x[i], o))) << format_name(f) << ' ' << x[i];
        // float in, float out: exact whenever the format is narrower than fp32.
        if (f != Format::kFp64 && f != Format::kInt32 && f != Format::kFp32 && f != Format::kBf16) {
          ASSERT_TRUE(same(yf[i], round_to(f, static_cast<double>(xf[i]), o))) << format_name(f) << ' ' << xf[i];
        }
      }
    }
  }
}

TEST(Format, BitPatternsOnlyForSmallFloatFormats) {
  EXPECT_THROW(decode_bits(Format::kInt8, 1), Error);
  EXPECT_THROW(encode_bits(Format::kFp64, 1.0), Error);
  EXPECT_THROW(decode_bits(Format::kFp16, 0x10000), Error);
}

}  // namespace
}  // namespace nova
