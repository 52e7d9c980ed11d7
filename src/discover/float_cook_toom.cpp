#include "nova/discover/float_cook_toom.hpp"

#include <vector>

namespace nova {

bool float_cook_toom(TileSize tile, std::span<const double> finite, TransformF64& out) {
  const int m = tile.m, r = tile.r, n = tile.n();
  const int q = static_cast<int>(finite.size());
  if (q != n - 1) return false;
  out.m = m;
  out.r = r;
  out.n = n;
  out.AT.assign(static_cast<std::size_t>(m * n), 0.0);
  out.G.assign(static_cast<std::size_t>(n * r), 0.0);
  out.BT.assign(static_cast<std::size_t>(n * n), 0.0);
  auto at = [&](int i, int p) -> double& { return out.AT[static_cast<std::size_t>(i * n + p)]; };
  auto g = [&](int p, int k) -> double& { return out.G[static_cast<std::size_t>(p * r + k)]; };
  auto bt = [&](int p, int j) -> double& { return out.BT[static_cast<std::size_t>(p * n + j)]; };
  std::vector<double> poly(static_cast<std::size_t>(n) + 1);
  // coefficients (ascending) of prod_{j != skip} (x - f_j); skip = -1 keeps every factor.
  auto product = [&](int skip) {
    std::fill(poly.begin(), poly.end(), 0.0);
    poly[0] = 1.0;
    int degree = 0;
    for (int j = 0; j < q; ++j) {
      if (j == skip) continue;
      // Multiply by (x - f_j) in place, highest coefficient first.
      const double f = finite[static_cast<std::size_t>(j)];
      for (auto d = static_cast<std::size_t>(degree) + 1; d >= 1; --d) poly[d] = poly[d - 1] - f * poly[d];
      poly[0] *= -f;
      ++degree;
    }
  };
  for (int p = 0; p < q; ++p) {
    const double f = finite[static_cast<std::size_t>(p)];
    double np = 1.0;
    for (int j = 0; j < q; ++j) {
      if (j != p) np *= f - finite[static_cast<std::size_t>(j)];
    }
    if (np == 0.0) return false;  // repeated point
    double power = 1.0;
    for (int i = 0; i < m; ++i, power *= f) at(i, p) = power;
    power = 1.0;
    for (int k = 0; k < r; ++k, power *= f) g(p, k) = power / np;
    product(p);
    for (int j = 0; j < n; ++j) bt(p, j) = poly[static_cast<std::size_t>(j)];
  }
  // The point at infinity: the leading coefficients, and prod (x - f_j) in B^T.
  at(m - 1, q) = 1.0;
  g(q, r - 1) = 1.0;
  product(-1);
  for (int j = 0; j < n; ++j) bt(q, j) = poly[static_cast<std::size_t>(j)];
  return true;
}

}  // namespace nova
