// Overflow-safe sizes for the error harness: the products of user-given counts (tiles, channels,
// layer dimensions) must be checked before they size an allocation, since a wrapped product
// allocates the wrong amount or divides by zero.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "nova/error.hpp"
#include "nova/exact/tile.hpp"
#include "nova/numerics/error_harness.hpp"

namespace nova::detail {

inline constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

// The product of non-negative factors, or kSaturated when it does not fit an int64.
inline int64_t saturating_product(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (const int64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return kSaturated;
  }
  return p;
}

// The sum of non-negative counts, saturating as above.
inline int64_t saturating_sum(std::initializer_list<int64_t> terms) {
  int64_t s = 0;
  for (const int64_t t : terms) {
    if (__builtin_add_overflow(s, t, &s)) return kSaturated;
  }
  return s;
}

// Throws when `values` float64 values exceed the harness's limit; `what` names the sizes asked for.
inline void check_harness_values(std::string_view what, int64_t values) {
  if (values <= kMaxHarnessValues) return;
  const std::string need = values == kSaturated ? std::string("more than 2^63 float64 values")
                                                : fmt::format("{} float64 values ({:.1f} GiB)", values,
                                                              static_cast<double>(values) * 8 / (1 << 30));
  throw Error(fmt::format("error harness: {} would need {}, over the limit of {} ({} GiB)", what, need,
                          kMaxHarnessValues, kMaxHarnessValues * 8 >> 30));
}

// The values a tile dataset and its evaluation hold: the data d and g, then the references, the
// products M and the outputs, one per tile (paired filters: one output channel).
inline int64_t tile_working_set(TileSize tile, int64_t tiles, int64_t channels) {
  const int64_t nn = int64_t{tile.n()} * tile.n(), rr = int64_t{tile.r} * tile.r,
                mm = int64_t{tile.m} * tile.m;
  return saturating_product({tiles, saturating_sum({saturating_product({channels, nn + rr}), nn + 2 * mm})});
}

inline void check_tile_working_set(TileSize tile, int64_t tiles, int64_t channels) {
  check_harness_values(fmt::format("{} tiles x {} channels of {}", tiles, channels, tile.to_string()),
                       tile_working_set(tile, tiles, channels));
}

}  // namespace nova::detail
