// The Winograd / Cook-Toom transform of a tile F(m, r): exact A^T (m x n), G (n x r), B^T (n x n)
// such that y = A^T [(G g) .* (B^T d)] is the correlation y_i = sum_k g_k d_{i+k}, and in 2D
// Y = A^T [(G g G^T) .* (B^T d B)] A.
//
// Construction. With finite points f_0..f_{q-1} (q = n-1 with infinity, q = n without), let
// E_x (n x m) and E_g (n x r) evaluate polynomials at the points (the row of infinity picks the
// leading coefficient) and C = V^{-1} interpolate from the n values. The correlation is the
// transpose of the convolution, so A^T = E_x^T, G = E_g, B^T = C^T: row p of the "lagrange" B^T
// holds the coefficients of the Lagrange basis polynomial of point p (and of prod (x - f_j) for
// infinity).
//
// Scaling. For any non-zero diagonals D1, D2 the triple (A^T D1, D2 G, (D1 D2)^{-1} B^T) is again
// exact. A transform records the D1, D2 it applies to the lagrange triple; that scaling is part of
// its identity (same points, other scaling: another transform, with other rounding behaviour).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nova/exact/matrix.hpp"
#include "nova/exact/points.hpp"
#include "nova/exact/tile.hpp"

namespace nova {

// How the diagonal freedom is used.
//  - "lagrange": D1 = D2 = I; every 1/N_p factor (N_p = prod_{j != p}(f_p - f_j)) sits in B^T.
//  - "wincnn":   D2 = diag(1/N_p) (1 for infinity), D1 = I: the 1/N_p factors move into G, as in
//                Lavin's wincnn and the seed paper's Algorithm 3; for integer points B^T is integral.
//  - "custom":   D1 and D2 given explicitly, relative to the lagrange triple.
struct Scaling {
  std::string convention = "unknown";  // wincnn, lagrange, custom, or unknown (matrices from elsewhere)
  std::vector<Rational> d1;  // n entries, applied to the columns of A^T
  std::vector<Rational> d2;  // n entries, applied to the rows of G
};

// A request for a scaling: a named convention, or explicit diagonals relative to lagrange.
struct ScalingSpec {
  std::string convention = "wincnn";
  std::vector<Rational> d1, d2;  // only for "custom"; empty means all ones

  // Parses "wincnn", "lagrange", or "d1=1,1/2,...;d2=2,1,..." (either part may be left out).
  static ScalingSpec parse(const std::string& text);
};

// The float64 view of a transform that numerical code consumes. Row-major; every value is the
// double nearest to the exact entry.
struct TransformF64 {
  int m = 0, r = 0, n = 0;
  std::vector<double> AT;  // m x n
  std::vector<double> G;   // n x r
  std::vector<double> BT;  // n x n
  double at(int i, int p) const { return AT[static_cast<std::size_t>(i * n + p)]; }
  double g(int p, int k) const { return G[static_cast<std::size_t>(p * r + k)]; }
  double bt(int p, int j) const { return BT[static_cast<std::size_t>(p * n + j)]; }
};

class Transform {
 public:
  // Builds the transform of `tile` from `points` (n = m+r-1 of them, with or without infinity).
  // Throws nova::Error on a bad tile, a wrong number of points, duplicates, or a bad scaling.
  static Transform construct(TileSize tile, PointList points, const ScalingSpec& scaling = {});

  // Wraps matrices that come from elsewhere (a file, another tool). Checks shapes only; call
  // verify() for correctness. `points` may be empty when unknown.
  static Transform from_matrices(TileSize tile, PointList points, Scaling scaling, RationalMatrix AT,
                                 RationalMatrix G, RationalMatrix BT);

  TileSize tile() const { return tile_; }
  int m() const { return tile_.m; }
  int r() const { return tile_.r; }
  int n() const { return tile_.n(); }
  const PointList& points() const { return points_; }
  const Scaling& scaling() const { return scaling_; }
  const RationalMatrix& AT() const { return at_; }
  const RationalMatrix& G() const { return g_; }
  const RationalMatrix& BT() const { return bt_; }

  // The same points with another diagonal scaling (D1, D2 relative to lagrange).
  Transform rescaled(const ScalingSpec& scaling) const;

  TransformF64 to_f64() const;

 private:
  TileSize tile_;
  PointList points_;
  Scaling scaling_;
  RationalMatrix at_, g_, bt_;
};

// The same points with each row p of B^T multiplied by the power of two 2^k_p that brings its L1 norm
// (sum_j |B^T[p][j]|) into [2, 4), and column p of A^T by 2^-k_p (D1 times 2^-k_p; G unchanged). Exact,
// and in floating point the same rounding wherever values stay in the format's normal range; what it
// changes is the range of V = B^T d B: every position is at most 16 max|d| and none is scaled far below
// d, where unbalanced rows put positions many binades above or below it (the default F(6,3), the
// lagrange triple, has rows of L1 norm 12.5 and 1/12). For formats of few exponent bits: the engine's
// fp16 plans use it. [2, 4) rather than [1, 2): the latter kept fp16 finite to larger inputs but cost
// F(8,3) 2.3x its error at inputs of 1e-4 (docs/engine.md, "fp16: V's exponent range").
Transform balance_input_rows(const Transform& t);

// The unscaled ("lagrange") matrices for the points, and the N_p factors of the wincnn convention.
struct LagrangeTriple {
  RationalMatrix AT, G, BT;
};
LagrangeTriple lagrange_triple(TileSize tile, const PointList& points);
std::vector<Rational> wincnn_d2(const PointList& points);

}  // namespace nova
