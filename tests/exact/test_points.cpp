#include <gtest/gtest.h>

#include "nova/error.hpp"
#include "nova/exact/points.hpp"
#include "nova/exact/tile.hpp"

namespace nova {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_points(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Points, ParsesShorthandDecimalsAndInfinity) {
  const PointList p = parse_points("0, ±1, +-2, +/-1/2, 0.6, inf");
  ASSERT_EQ(p.size(), 9u);
  EXPECT_EQ(to_string(p), "0, 1, -1, 2, -2, 1/2, -1/2, 3/5, inf");
  EXPECT_TRUE(has_infinity(p));
  EXPECT_EQ(finite_values(p).size(), 8u);
  EXPECT_TRUE(parse_points("∞")[0].infinite);
  EXPECT_TRUE(parse_points("Infinity")[0].infinite);
  EXPECT_FALSE(has_infinity(parse_points("1;2;3")));
}

TEST(Points, RejectsDuplicatesIncludingEqualValuesWrittenDifferently) {
  EXPECT_NE(error_of("0, 0.5, 1/2").find("duplicate point 1/2"), std::string::npos);
  EXPECT_NE(error_of("0, 0.5, 1/2").find("'0.5' and '1/2'"), std::string::npos);
  EXPECT_NE(error_of("±0").find("duplicate point 0"), std::string::npos);
  EXPECT_NE(error_of("1, ±1").find("duplicate"), std::string::npos);
  EXPECT_NE(error_of("0, inf, ∞").find("two infinities"), std::string::npos);
  EXPECT_NE(error_of("±inf").find("two infinities"), std::string::npos);
}

TEST(Points, RejectsBadTokens) {
  EXPECT_NE(error_of("0, 1/0").find("zero denominator"), std::string::npos);
  EXPECT_NE(error_of("0, x").find("bad point 'x'"), std::string::npos);
  EXPECT_NE(error_of("0,,1").find("empty entry"), std::string::npos);
  EXPECT_NE(error_of("").find("empty point list"), std::string::npos);
  EXPECT_NE(error_of("1, 2,").find("empty entry"), std::string::npos);
}

TEST(Points, StandardPoints) {
  EXPECT_EQ(to_string(standard_points(5, true)), "0, 1, -1, 2, -2, inf");
  EXPECT_EQ(to_string(standard_points(4, false)), "0, 1, -1, 2");
}

TEST(Tile, ParsesBothSpellingsAndChecksLimits) {
  EXPECT_EQ(parse_tile("6,3"), (TileSize{6, 3}));
  EXPECT_EQ(parse_tile("F(6,3)"), (TileSize{6, 3}));
  EXPECT_EQ(parse_tile("f( 4 , 5 )"), (TileSize{4, 5}));
  EXPECT_EQ(parse_tile("2x3"), (TileSize{2, 3}));
  EXPECT_EQ(parse_tile("30,3").n(), 32);
  EXPECT_THROW(parse_tile("31,3"), Error);  // n = 33 > kMaxPoints
  EXPECT_THROW(parse_tile("0,3"), Error);
  EXPECT_THROW(parse_tile("4,0"), Error);
  EXPECT_THROW(parse_tile("-1,3"), Error);
  EXPECT_THROW(parse_tile("6"), Error);
  EXPECT_THROW(parse_tile("a,b"), Error);
  EXPECT_THROW(parse_tile("99999999999,3"), Error);
}

}  // namespace
}  // namespace nova
