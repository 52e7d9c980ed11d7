// The engine's default Winograd transforms, one per supported tile: nova's catalogue entry for the
// fp32 preset (data/catalogue.json: the points and exact diagonal scaling with the smallest measured
// FP32 error on the catalogue's training data), compiled in through src/conv/default_points_table.hpp,
// which `nova catalogue engine-defaults` regenerates and a test compares with the catalogue.
#pragma once

#include <string>
#include <vector>

#include "nova/exact/points.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"

namespace nova::conv {

// Tiles with a default transform (and generated code): F(2,3) F(4,3) F(6,3) F(8,3) F(2,5) F(4,5).
const std::vector<TileSize>& default_tiles();
// Throws nova::Error for a tile without a default.
PointList default_points(TileSize tile);
std::string default_points_text(TileSize tile);
Transform default_transform(TileSize tile);

}  // namespace nova::conv
