// The engine's default Winograd transforms, one per supported tile, until the catalogue of the
// precision work lands. Points closed under x -> -x (and x -> 1/x where the count allows), wincnn
// scaling:
//   F(2,3) {0,+-1,inf}   F(4,3) {0,+-1,+-2,inf}   F(6,3) {0,+-1,+-2,+-1/2,inf}
//   F(8,3) {0,+-1,+-2,+-1/2,+-3/4,inf}   F(2,5) {0,+-1,+-2,inf}   F(4,5) {0,+-1,+-2,+-1/2,inf}
// For F(8,3), +-3/4 gives P = sum_a |A^T[:,a]|^2 |G[a,:]|^2 |B^T[a,:]|^2 of 6.2e3 against 3.7e4 for the
// common +-4 (6x less FP32 error); see docs/engine.md.
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
