// The point sets nova's catalogue is compared with: the seed paper's 'standard' integers, the sets
// practitioners ship (Lavin & Gray, NNPACK / ncnn / TVM, oneDNN's former F(4,3), ncnn's irrational
// F(4,3)), and the seed paper's discovered (NOVA) and dyadic points. Each is used in the wincnn
// scaling (the seed's Algorithm 3), the form in which they are usually published.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nova/exact/transform.hpp"

namespace nova {

struct ReferenceSet {
  std::string id;     // "standard", "lavin", "nnpack", "tvm", "ncnn", "onednn", "seed-nova", "seed-dyadic"
  std::string label;  // for tables: "Lavin {0,±1,±2}"
  std::string source; // where the set comes from
  TileSize tile;
  std::optional<PointList> points;  // exact points (infinity last); absent for irrational sets
  std::vector<double> finite;       // float64 finite points, in the order of `points`
};

// The sets that exist for `tile` (F(m,3) and F(m,5); an r = 5 tile gets the sets of the 3-tap tile
// with the same number of points, labelled so). Never empty: 'standard' exists for every tile.
std::vector<ReferenceSet> reference_sets(TileSize tile);

// The float64 transform: exact construction (wincnn) rounded to float64, or for an irrational set
// the float64 Cook-Toom construction itself.
TransformF64 reference_transform(const ReferenceSet& s);
std::optional<Transform> reference_exact(const ReferenceSet& s);

}  // namespace nova
