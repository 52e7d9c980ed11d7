// The built-in objectives: kappa_2(V) (the seed's), kappa_2 of the 2D transforms, the norm product,
// the first-order error proxy P, and the seed's printed ES fitness (eq. 5/14).
#include "nova/discover/objectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nova/analysis/small_svd.hpp"
#include "nova/analysis/vandermonde.hpp"
#include "nova/discover/float_cook_toom.hpp"
#include "nova/numerics/first_order.hpp"

namespace nova {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Singular values of a row-major matrix, through the stack path when it fits.
std::vector<double> sigmas(const std::vector<double>& a, int rows, int cols) {
  if (rows <= kSmallSvdMax && cols <= kSmallSvdMax) {
    std::vector<double> s(static_cast<std::size_t>(std::min(rows, cols)));
    small_singular_values(a.data(), rows, cols, s.data());
    return s;
  }
  Eigen::MatrixXd m(rows, cols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) m(i, j) = a[static_cast<std::size_t>(i * cols + j)];
  }
  return singular_values(m);
}

bool all_finite(const TransformF64& t) {
  auto ok = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  return ok(t.AT) && ok(t.G) && ok(t.BT);
}

bool build(TileSize tile, std::span<const double> finite, TransformF64& t) {
  return float_cook_toom(tile, finite, t) && all_finite(t);
}

}  // namespace

double KappaV::evaluate(TileSize, std::span<const double> finite) const { return kappa2_vandermonde(finite); }

double KappaV::evaluate_symmetric(TileSize, std::span<const double> mags, bool with_zero) const {
  // Rows (x, -x) of V rotate by the orthogonal [[1,1],[1,-1]]/sqrt2 into sqrt2 (even powers, 0) and
  // sqrt2 (0, odd powers); the zero row has only the constant term. So V is orthogonally equivalent to
  // diag(E, O) with E, O Vandermonde-like in the even and odd columns, and sigma(V) = sigma(E) u sigma(O).
  const int k = static_cast<int>(mags.size());
  const int total = 2 * k + (with_zero ? 1 : 0);
  if (total > kSmallSvdMax) return kappa2_vandermonde(symmetric_points(mags, with_zero));
  const int ne = (total + 1) / 2, no = total / 2;  // even and odd column counts
  double e[kSmallSvdMax * kSmallSvdMax], o[kSmallSvdMax * kSmallSvdMax];
  int row = 0;
  if (with_zero) {
    for (int j = 0; j < ne; ++j) e[j] = j == 0 ? 1.0 : 0.0;
    row = 1;
  }
  for (int i = 0; i < k; ++i, ++row) {
    const double x = mags[static_cast<std::size_t>(i)], x2 = x * x;
    double p = std::sqrt(2.0);
    for (int j = 0; j < ne; ++j, p *= x2) e[row * ne + j] = p;
    p = std::sqrt(2.0) * x;
    for (int j = 0; j < no; ++j, p *= x2) o[i * no + j] = p;
  }
  for (int i = 0; i < ne * ne; ++i) {
    if (!std::isfinite(e[i])) return kInf;
  }
  double se[kSmallSvdMax], so[kSmallSvdMax];
  small_singular_values(e, ne, ne, se);
  double hi = se[0], lo = se[ne - 1];
  if (no > 0) {
    small_singular_values(o, no, no, so);
    hi = std::max(hi, so[0]);
    lo = std::min(lo, so[no - 1]);
  }
  return lo > 0 ? hi / lo : kInf;
}

double Kappa2D::evaluate(TileSize tile, std::span<const double> finite) const {
  TransformF64 t;
  if (!build(tile, finite, t)) return kInf;
  double product = 1.0;
  for (const auto& [a, rows, cols] : {std::tuple{&t.AT, t.m, t.n}, std::tuple{&t.G, t.n, t.r},
                                      std::tuple{&t.BT, t.n, t.n}}) {
    const auto s = sigmas(*a, rows, cols);
    if (!(s.back() > 0)) return kInf;
    const double k = s.front() / s.back();
    product *= k * k;  // kappa_2(M (x) M) = kappa_2(M)^2
  }
  return product;
}

double NormProduct::evaluate(TileSize tile, std::span<const double> finite) const {
  TransformF64 t;
  if (!build(tile, finite, t)) return kInf;
  return sigmas(t.AT, t.m, t.n).front() * sigmas(t.G, t.n, t.r).front() * sigmas(t.BT, t.n, t.n).front();
}

double ErrorProxy::evaluate(TileSize tile, std::span<const double> finite) const {
  TransformF64 t;
  if (!build(tile, finite, t)) return kInf;
  return winograd_p(t);  // the first-order error model's P (numerics)
}

double SeedFitness::evaluate(TileSize tile, std::span<const double> finite) const {
  TransformF64 t;
  if (!build(tile, finite, t)) return kInf;
  // ||T - T_rec||_F with T_ijk = [j == i + k] (output i, input j, tap k), T_rec from the float transform.
  double err2 = 0;
  for (int i = 0; i < t.m; ++i) {
    for (int k = 0; k < t.r; ++k) {
      for (int j = 0; j < t.n; ++j) {
        double s = 0;
        for (int a = 0; a < t.n; ++a) s += t.at(i, a) * t.g(a, k) * t.bt(a, j);
        const double d = s - (j == i + k ? 1.0 : 0.0);
        err2 += d * d;
      }
    }
  }
  double mag = 0;
  for (double x : finite) mag += x * x;
  mag /= static_cast<double>(finite.size());
  return std::sqrt(err2) + 0.001 * mag + 0.0001 * std::log10(kappa2_vandermonde(finite) + 1.0);
}

}  // namespace nova
