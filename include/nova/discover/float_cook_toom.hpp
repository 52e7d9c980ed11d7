// A float64 Cook-Toom construction in the wincnn convention, for objectives that score candidate
// points many thousands of times (the exact construction is for results, this one for the search).
#pragma once

#include <span>

#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"

namespace nova {

// A^T (m x n), G (n x r), B^T (n x n) for the finite points plus infinity, matching
// Transform::construct(tile, points + inf, "wincnn").to_f64() up to rounding. Returns false (and leaves
// `out` unspecified) for repeated points.
bool float_cook_toom(TileSize tile, std::span<const double> finite, TransformF64& out);

}  // namespace nova
