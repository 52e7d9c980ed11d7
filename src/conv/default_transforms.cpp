#include "nova/conv/default_transforms.hpp"

#include "default_points_table.hpp"
#include "nova/error.hpp"

namespace nova::conv {

const std::vector<TileSize>& default_tiles() {
  static const std::vector<TileSize> tiles = [] {
    std::vector<TileSize> t;
    for (const auto& e : kDefaultPoints) t.push_back(TileSize{e.m, e.r});
    return t;
  }();
  return tiles;
}

std::string default_points_text(TileSize tile) {
  for (const auto& e : kDefaultPoints)
    if (e.m == tile.m && e.r == tile.r) return e.points;
  std::string known;  // from the table itself: a hard-coded list had fallen behind it (F(7,3))
  for (const auto& e : kDefaultPoints) known += (known.empty() ? "" : " ") + TileSize{e.m, e.r}.to_string();
  throw Error("no default transform for tile " + tile.to_string() + " (defaults: " + known +
              "); pass a transform");
}

PointList default_points(TileSize tile) {
  return parse_points(default_points_text(tile));
}

// The catalogue's fp32 entry: its points with its exact scaling.
Transform default_transform(TileSize tile) {
  for (const auto& e : kDefaultPoints)
    if (e.m == tile.m && e.r == tile.r)
      return Transform::construct(tile, parse_points(e.points), ScalingSpec::parse(e.scaling));
  return Transform::construct(tile, default_points(tile));  // throws: no default for the tile
}

}  // namespace nova::conv
