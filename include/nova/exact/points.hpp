// Interpolation points: exact rationals plus, optionally, the point at infinity.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nova/exact/rational.hpp"

namespace nova {

struct Point {
  bool infinite = false;
  Rational value;  // meaningful only when !infinite

  static Point finite(Rational v) { return Point{false, std::move(v)}; }
  static Point infinity() { return Point{true, Rational(0)}; }
  friend bool operator==(const Point& a, const Point& b) {
    return a.infinite == b.infinite && (a.infinite || a.value == b.value);
  }
};

using PointList = std::vector<Point>;

// Parses "0, 1, -1, 1/2, -1/2, 2, -2, inf", with decimals ("0.6" is 3/5) and the pair shorthand
// "±x" / "+-x" / "+/-x" for x, -x. Infinity is "inf", "infinity" or "∞" (the projective point: a
// sign is allowed and ignored). Validates: every token parses, no duplicates (0.5 and 1/2 are the
// same point), at most one infinity. Throws nova::Error with a one-line reason.
PointList parse_points(std::string_view text);

// Checks an already-built list (duplicates, more than one infinity); throws nova::Error.
void validate_points(const PointList& points);

std::string to_string(const Point& p);                     // "3/5", "inf"
std::string to_string(const PointList& points);            // "0, 1, -1, inf"
std::vector<std::string> to_strings(const PointList& points);

bool has_infinity(const PointList& points);
std::vector<Rational> finite_values(const PointList& points);

// The conventional small-integer points: 0, 1, -1, 2, -2, ... (count finite ones), then inf
// if asked. This is the seed paper's "standard" choice.
PointList standard_points(int finite_count, bool with_infinity);

}  // namespace nova
