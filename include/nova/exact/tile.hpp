// A tile F(m, r): m outputs per tile from an r-tap filter, using n = m + r - 1 multiplications.
#pragma once

#include <string>
#include <string_view>

namespace nova {

// nova builds transforms with at most this many points. Beyond it the Vandermonde systems are so
// ill-conditioned that no float format can use the result, and exact entries grow without bound.
inline constexpr int kMaxPoints = 32;

struct TileSize {
  int m = 0;
  int r = 0;
  int n() const { return m + r - 1; }
  std::string to_string() const;  // "F(6,3)"
  friend bool operator==(const TileSize&, const TileSize&) = default;
};

// Parses "6,3", "F(6,3)", "f(6, 3)" or "6x3"; checks m >= 1, r >= 1, n <= kMaxPoints.
TileSize parse_tile(std::string_view text);
// Checks m >= 1, r >= 1, n <= kMaxPoints; throws nova::Error.
void validate_tile(const TileSize& tile);

}  // namespace nova
