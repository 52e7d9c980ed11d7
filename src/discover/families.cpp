#include "nova/discover/families.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "nova/analysis/vandermonde.hpp"

namespace nova {

double minimize_1d(const std::function<double(double)>& f, double lo, double hi, int grid) {
  double best_x = lo, best_v = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= grid; ++i) {
    const double x = lo + (hi - lo) * i / grid;
    const double v = f(x);
    if (v < best_v) {
      best_v = v;
      best_x = x;
    }
  }
  // Golden section inside the grid cell around the best sample.
  const double step = (hi - lo) / grid;
  double a = std::max(lo, best_x - step), b = std::min(hi, best_x + step);
  const double r = (std::sqrt(5.0) - 1) / 2;
  double x1 = b - r * (b - a), x2 = a + r * (b - a);
  double f1 = f(x1), f2 = f(x2);
  for (int it = 0; it < 200 && b - a > 1e-11; ++it) {
    if (f1 < f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - r * (b - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + r * (b - a);
      f2 = f(x2);
    }
  }
  const double x = (a + b) / 2;
  return f(x) <= best_v ? x : best_x;
}

std::vector<double> reciprocal_points(int finite_count, const std::vector<double>& c) {
  std::vector<double> p;
  if (finite_count % 2 == 1) p.push_back(0);
  if ((finite_count / 2) % 2 == 1) {
    p.push_back(1);
    p.push_back(-1);
  }
  for (double v : c) {
    for (double x : {v, -v, 1 / v, -1 / v}) p.push_back(x);
  }
  return p;
}

namespace {

// Cyclic coordinate descent with 1D minimizations, from the best point of a coarse grid.
std::vector<double> minimize_nd(const std::function<double(const std::vector<double>&)>& f, std::size_t dim,
                                double lo, double hi) {
  std::vector<double> best(dim, (lo + hi) / 2);
  if (dim == 0) return best;
  if (dim == 2) {
    double bv = std::numeric_limits<double>::infinity();
    const int g = 80;
    for (int i = 1; i < g; ++i) {
      for (int j = 1; j < g; ++j) {
        std::vector<double> x = {lo + (hi - lo) * i / g, lo + (hi - lo) * j / g};
        const double v = f(x);
        if (v < bv) {
          bv = v;
          best = x;
        }
      }
    }
  }
  for (int sweep = 0; sweep < 30; ++sweep) {
    const auto before = best;
    for (std::size_t d = 0; d < dim; ++d) {
      best[d] = minimize_1d(
          [&](double t) {
            auto x = best;
            x[d] = t;
            return f(x);
          },
          lo, hi, dim == 1 ? 2000 : 200);
    }
    double change = 0;
    for (std::size_t d = 0; d < dim; ++d) change = std::max(change, std::abs(best[d] - before[d]));
    if (change < 1e-10) break;
  }
  return best;
}

}  // namespace

FamilyResult best_reciprocal(int finite_count) {
  const std::size_t params = static_cast<std::size_t>((finite_count / 2) / 2);
  FamilyResult r;
  r.description = std::string(finite_count % 2 ? "{0, " : "{") + ((finite_count / 2) % 2 ? "+-1, " : "") +
                  (params == 1 ? "+-c, +-1/c}" : "+-c1, +-1/c1, +-c2, +-1/c2}");
  auto f = [&](const std::vector<double>& c) { return kappa2_vandermonde(reciprocal_points(finite_count, c)); };
  r.params = minimize_nd(f, params, 0.02, 0.999);
  r.points = reciprocal_points(finite_count, r.params);
  r.kappa = kappa2_vandermonde(r.points);
  return r;
}

std::vector<double> alam_two_parameter_points(double c1, double c2) {
  return {0, c1, -c1, 1 / c1, -1 / c1, c2, -c2};
}

FamilyResult best_alam_two_parameter() {
  FamilyResult r;
  r.description = "{0, +-c1, +-1/c1, +-c2}";
  auto f = [](const std::vector<double>& c) { return kappa2_vandermonde(alam_two_parameter_points(c[0], c[1])); };
  r.params = minimize_nd(f, 2, 0.05, 3.0);
  r.points = alam_two_parameter_points(r.params[0], r.params[1]);
  r.kappa = kappa2_vandermonde(r.points);
  return r;
}

std::vector<double> chebyshev_nodes(int count) {
  std::vector<double> x;
  for (int k = 1; k <= count; ++k) x.push_back(std::cos((2.0 * k - 1) * std::numbers::pi / (2.0 * count)));
  return x;
}

FamilyResult best_chebyshev_affine(int count) {
  const auto nodes = chebyshev_nodes(count);
  FamilyResult best;
  best.kappa = std::numeric_limits<double>::infinity();
  for (double xj : nodes) {
    auto points = [&](double a) {
      std::vector<double> p;
      for (double x : nodes) p.push_back(a * (x - xj));  // b = -a x_j puts node j at 0
      return p;
    };
    // a in [0.5, 5] and |b| = a |x_j| <= 2.
    const double a_hi = std::abs(xj) > 1e-12 ? std::min(5.0, 2.0 / std::abs(xj)) : 5.0;
    if (a_hi < 0.5) continue;
    const double a = minimize_1d([&](double t) { return kappa2_vandermonde(points(t)); }, 0.5, a_hi, 2000);
    const double k = kappa2_vandermonde(points(a));
    if (k < best.kappa) {
      best.kappa = k;
      best.params = {a, -a * xj};
      best.points = points(a);
    }
  }
  best.description = "a cos((2k-1) pi / 2q) + b, one node at 0";
  return best;
}

}  // namespace nova
