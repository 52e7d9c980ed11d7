// Exact power-of-two diagonal scalings of a point set, searched in float64 and recorded exactly.
//
// A transform of fixed points is (A^T D1, D2 G, (D1 D2)^-1 B^T) relative to the lagrange triple. A
// ScalingChoice picks, for every Winograd position p, where the normalizer 1/N_p of the lagrange
// basis (N_p = prod_{j != p}(f_p - f_j), 1 for infinity) goes (into G as wincnn does, into B^T as
// lagrange does, or into A^T), and two powers of two 2^e1[p] (on A^T's column, undone in B^T) and
// 2^e2[p] (on G's row, undone in B^T). Every choice is an exact transform of the same points; only
// rounding, range and quantization see the difference.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <vector>

#include "nova/exact/transform.hpp"

namespace nova {

enum class Normalizer { kG = 0, kBT = 1, kAT = 2 };

struct ScalingChoice {
  std::vector<int> e1, e2;
  std::vector<Normalizer> place;
  static ScalingChoice wincnn(int n);  // all zero exponents, normalizers in G
  friend bool operator==(const ScalingChoice&, const ScalingChoice&) = default;
};

// The lagrange matrices in float64 and the normalizers, for finite points plus infinity (last).
struct FloatBase {
  TileSize tile;
  TransformF64 lagrange;
  std::vector<double> normalizer;  // N_p; 1 for infinity
};
// False for repeated points or values that overflow float64.
bool float_base(TileSize tile, std::span<const double> finite, FloatBase& out);
TransformF64 apply_scaling(const FloatBase& base, const ScalingChoice& s);

// The exact ScalingSpec ("custom", D1, D2 relative to lagrange) of a choice for `points`, which must
// list the finite points in the order the FloatBase used and infinity last.
ScalingSpec exact_scaling(const PointList& points, const ScalingChoice& s);

nlohmann::json to_json(const ScalingChoice& s);

struct ScalingSearchOptions {
  int max_exponent = 10;   // |e1|, |e2| <= this
  int window = 0;          // > 0: only exponents within this distance of the start
  int passes = 4;          // full coordinate sweeps at most
  bool normalizers = true; // also move each 1/N_p between G, B^T and A^T
  double min_gain = 1e-6;  // a move must lower the score by this relative amount
};

using TransformScore = std::function<double(const TransformF64&)>;

struct ScalingSearchResult {
  ScalingChoice choice;
  double value = 0;
  long evaluations = 0;
};

// Coordinate descent: each coordinate (e1[p], e2[p], place[p]) takes its best value with the others
// fixed; a move must improve the score by the relative `min_gain`, so that flat directions (every
// float rounding is invariant under powers of two away from the range limits) keep the start, and
// a measured score does not chase the noise of its training set.
ScalingSearchResult search_scaling(const FloatBase& base, const TransformScore& score, const ScalingChoice& start,
                                   const ScalingSearchOptions& options = {});

}  // namespace nova
