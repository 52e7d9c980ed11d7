// Cook-Toom construction of the "lagrange" triple (see transform.hpp for the derivation).
#include <string>

#include "nova/error.hpp"
#include "nova/exact/transform.hpp"

namespace nova {
namespace {

// Coefficients (ascending powers) of prod_{j in roots} (x - root_j), degree = roots.size().
std::vector<Rational> monic_from_roots(const std::vector<Rational>& roots) {
  std::vector<Rational> poly{Rational(1)};
  for (const Rational& root : roots) {
    std::vector<Rational> next(poly.size() + 1);
    for (std::size_t d = 0; d < poly.size(); ++d) {
      next[d + 1] += poly[d];
      next[d] -= root * poly[d];
    }
    poly = std::move(next);
  }
  return poly;
}

void check_point_count(TileSize tile, const PointList& points) {
  validate_tile(tile);
  validate_points(points);
  const int n = tile.n();
  if (static_cast<int>(points.size()) != n) {
    throw Error(tile.to_string() + " needs n = m+r-1 = " + std::to_string(n) + " points (" + std::to_string(n - 1) +
                " finite + inf, or " + std::to_string(n) + " finite); got " + std::to_string(points.size()));
  }
}

}  // namespace

LagrangeTriple lagrange_triple(TileSize tile, const PointList& points) {
  check_point_count(tile, points);
  const auto n = static_cast<std::size_t>(tile.n());
  const auto m = static_cast<std::size_t>(tile.m), r = static_cast<std::size_t>(tile.r);
  LagrangeTriple t{RationalMatrix(m, n), RationalMatrix(n, r), RationalMatrix(n, n)};
  const std::vector<Rational> finite = finite_values(points);

  for (std::size_t p = 0; p < n; ++p) {
    const Point& point = points[p];
    if (point.infinite) {
      t.AT(m - 1, p) = 1;  // the leading coefficient
      t.G(p, r - 1) = 1;
      const auto poly = monic_from_roots(finite);  // prod over all finite points, degree n-1
      for (std::size_t j = 0; j < poly.size(); ++j) t.BT(p, j) = poly[j];
      continue;
    }
    Rational power = 1;
    for (std::size_t i = 0; i < std::max(m, r); ++i) {
      if (i < m) t.AT(i, p) = power;
      if (i < r) t.G(p, i) = power;
      power *= point.value;
    }
    std::vector<Rational> others;
    Rational denominator = 1;  // N_p = prod_{j != p} (f_p - f_j)
    for (const Rational& f : finite) {
      if (f == point.value) continue;
      others.push_back(f);
      denominator *= point.value - f;
    }
    const auto poly = monic_from_roots(others);
    for (std::size_t j = 0; j < poly.size(); ++j) t.BT(p, j) = poly[j] / denominator;
  }
  return t;
}

std::vector<Rational> wincnn_d2(const PointList& points) {
  const std::vector<Rational> finite = finite_values(points);
  std::vector<Rational> d2;
  for (const Point& point : points) {
    if (point.infinite) {
      d2.emplace_back(1);
      continue;
    }
    Rational denominator = 1;
    for (const Rational& f : finite)
      if (f != point.value) denominator *= point.value - f;
    d2.push_back(1 / denominator);
  }
  // wincnn makes the first row's factor positive (its `if f[0,0] < 0: f[0,:] *= -1`); doing the same
  // reproduces its published matrices entry for entry.
  if (!d2.empty() && d2[0] < 0) d2[0] = -d2[0];
  return d2;
}

}  // namespace nova
