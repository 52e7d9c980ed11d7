#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "nova/error.hpp"
#include "nova/exact/rational.hpp"

namespace nova {
namespace {

TEST(Rational, ParsesIntegersFractionsAndExactDecimals) {
  EXPECT_EQ(parse_rational("-2"), Rational(-2));
  EXPECT_EQ(parse_rational("3/5"), Rational(3, 5));
  EXPECT_EQ(parse_rational("6/10"), Rational(3, 5));
  EXPECT_EQ(parse_rational(" -7/6 "), Rational(-7, 6));
  EXPECT_EQ(parse_rational("0.6"), Rational(3, 5));
  EXPECT_EQ(parse_rational(".5"), Rational(1, 2));
  EXPECT_EQ(parse_rational("1.25e-1"), Rational(1, 8));
  EXPECT_EQ(parse_rational("2.5E2"), Rational(250));
  EXPECT_EQ(parse_rational("+4"), Rational(4));
}

TEST(Rational, RejectsMalformedTokens) {
  for (const char* bad : {"", "abc", "1/0", "1//2", "1/2/3", "1.2.3", "e5", "--1", "1/-2", "0x10", "sqrt(2)", "1e", "."}) {
    EXPECT_THROW(parse_rational(bad), Error) << bad;
  }
  try {
    parse_rational("3/0");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("zero denominator"), std::string::npos);
  }
}

// The exponent limit is said as such ("1e10000" is a decimal; "cannot parse" misled), and leading zeros
// of an exponent within it are fine ("1e00001" was refused).
TEST(Rational, ExponentLimitIsNamed) {
  EXPECT_EQ(parse_rational("1e00001"), Rational(10));
  EXPECT_EQ(parse_rational("25e-0001"), Rational(5, 2));
  EXPECT_EQ(parse_rational("1e9999"), Rational(mpz_class("1" + std::string(9999, '0'))));
  for (const char* big : {"1e10000", "-1e-10000", "2.5E123456789012345678901"}) {
    try {
      parse_rational(big);
      FAIL() << big;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("beyond nova's limit of 9999"), std::string::npos) << e.what();
    }
  }
}

TEST(Rational, PrintsLowestTerms) {
  EXPECT_EQ(to_string(Rational(6, 4)), "3/2");
  EXPECT_EQ(to_string(Rational(-8, 4)), "-2");
  EXPECT_EQ(to_string(Rational(0)), "0");
}

// The nearest-double property checked directly: no neighbour of the result is closer.
TEST(Rational, ToDoubleIsCorrectlyRounded) {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<long> num(-2000000000L, 2000000000L), den(1, 2000000000L);
  for (int trial = 0; trial < 3000; ++trial) {
    const Rational x(num(rng), den(rng));
    Rational xc = x;
    xc.canonicalize();
    const double d = to_double(xc);
    const Rational err = abs(Rational(d) - xc);
    for (double neighbour : {std::nextafter(d, 1e300), std::nextafter(d, -1e300)}) {
      const Rational other = abs(Rational(neighbour) - xc);
      ASSERT_LE(err, other) << to_string(xc);
    }
  }
  // A halfway case: 1 + 2^-53 lies exactly between 1 and 1 + 2^-52; ties go to even (1).
  EXPECT_EQ(to_double(1 + power_of_two(-53)), 1.0);
  EXPECT_EQ(to_double(1 + 3 * power_of_two(-53)), 1.0 + std::ldexp(1.0, -51));
  EXPECT_EQ(to_double(Rational(1, 3)), 1.0 / 3.0);
  EXPECT_EQ(to_double(Rational(-7, 6)), -7.0 / 6.0);
}

// Below 2^-1022 doubles lie on the grid 2^-1074; rounding to 53 bits and then to that grid rounded
// twice (exports of a point such as 1e-35 in F(10,3) have such entries). Checked as above, ties to even.
TEST(Rational, ToDoubleIsCorrectlyRoundedBelowTheNormalRange) {
  const Rational ulp = power_of_two(-1074), below = Rational(1, 1) / (Rational(mpz_class(1) << 1400));
  const Rational half = ulp / 2;
  for (long k : {0L, 1L, 2L, 3L, 1023L, (1L << 52) - 1}) {
    EXPECT_EQ(to_double(k * ulp + half - below), std::ldexp(static_cast<double>(k), -1074)) << k;
    EXPECT_EQ(to_double(k * ulp + half + below), std::ldexp(static_cast<double>(k + 1), -1074)) << k;
    EXPECT_EQ(to_double(k * ulp + half), std::ldexp(static_cast<double>(k + (k & 1)), -1074))
        << k;  // tie: even
    EXPECT_EQ(to_double(-(k * ulp + half + below)), -std::ldexp(static_cast<double>(k + 1), -1074)) << k;
  }
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<long> num(1, 2000000000L), den(1, 2000000000L);
  std::uniform_int_distribution<int> binade(1022, 1080);
  for (int trial = 0; trial < 3000; ++trial) {
    Rational x = Rational(num(rng), den(rng)) * power_of_two(-binade(rng));
    x.canonicalize();
    const double d = to_double(x);
    const Rational err = abs(Rational(d) - x);
    for (double neighbour : {std::nextafter(d, 1.0), std::nextafter(d, -1.0)})
      ASSERT_LE(err, abs(Rational(neighbour) - x)) << to_string(x);
  }
}

TEST(Rational, ToFloatAvoidsDoubleRounding) {
  // 1 + 2^-24 + 2^-60: above the float halfway point 1 + 2^-24, so the nearest float is 1 + 2^-23,
  // while rounding to double first would give exactly 1 + 2^-24 and then 1 (a tie to even).
  const Rational x = 1 + power_of_two(-24) + power_of_two(-60);
  EXPECT_EQ(to_float(x), 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(to_float(1 + power_of_two(-24)), 1.0f);
  // At the top of the range: below FLT_MAX + 2^103 the nearest float is FLT_MAX (the double of 2^128 -
  // 2^103 - 2^-10 is the threshold itself, which gave inf); at it, the tie goes to inf (FLT_MAX is odd).
  const float max = std::numeric_limits<float>::max();
  const Rational threshold = Rational(static_cast<double>(max)) + power_of_two(103);
  EXPECT_EQ(to_float(threshold - power_of_two(-10)), max);
  EXPECT_EQ(to_float(-(threshold - power_of_two(-10))), -max);
  EXPECT_EQ(to_float(threshold - power_of_two(80)), max);
  EXPECT_TRUE(std::isinf(to_float(threshold)));
  EXPECT_TRUE(std::isinf(to_float(threshold + power_of_two(-10))));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<long> num(-1000000, 1000000), den(1, 1000000);
  for (int trial = 0; trial < 2000; ++trial) {
    Rational x2(num(rng), den(rng));
    x2.canonicalize();
    const float f = to_float(x2);
    const Rational err = abs(Rational(double(f)) - x2);
    for (float nb : {std::nextafter(f, 1e30f), std::nextafter(f, -1e30f)}) ASSERT_LE(err, abs(Rational(double(nb)) - x2));
  }
}

TEST(Rational, PowersOfTwo) {
  EXPECT_TRUE(is_power_of_two(Rational(1, 8)));
  EXPECT_TRUE(is_power_of_two(Rational(-4)));
  EXPECT_FALSE(is_power_of_two(Rational(3, 4)));
  EXPECT_FALSE(is_power_of_two(Rational(0)));
  EXPECT_EQ(power_of_two(-3), Rational(1, 8));
  EXPECT_EQ(power_of_two(5), Rational(32));
}

}  // namespace
}  // namespace nova
