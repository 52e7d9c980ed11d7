// The parameterized point families the report compares against (Alam et al.'s reciprocal-symmetric
// sets, affinely scaled Chebyshev nodes) and their 1D minimizer, checked against closed forms and
// against brute-force scans whose kappa comes from Eigen's SVD rather than the library's own.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "common/eigen_vandermonde.hpp"
#include "nova/discover/families.hpp"

namespace nova::family_tests {
namespace {

using testing::eigen_vandermonde_kappa;

// The smallest f over `samples` equispaced points of [lo, hi]: what a minimizer must not lose to. (The
// scans are coarse: Eigen's SVD at -O0 under the sanitizers costs about 0.3 ms a call.)
template <class F>
double scan_min(F f, double lo, double hi, int samples) {
  double best = INFINITY;
  for (int i = 0; i <= samples; ++i) best = std::min(best, f(lo + (hi - lo) * i / samples));
  return best;
}

TEST(Families, Minimize1dFindsClosedFormMinima) {
  EXPECT_NEAR(minimize_1d([](double x) { return (x - 0.3) * (x - 0.3); }, 0, 1), 0.3, 1e-8);
  // At the end of the interval.
  EXPECT_NEAR(minimize_1d([](double x) { return x; }, -2, 5), -2, 1e-8);
  // Many local minima: the grid picks the right cell, golden section the point. The global minimum of
  // x^2/10 + sin(20 x) near x0 solves x/5 + 20 cos(20 x) = 0; checked by its derivative.
  auto wavy = [](double x) { return x * x / 10 + std::sin(20 * x); };
  const double x = minimize_1d(wavy, -3, 3);
  EXPECT_NEAR(x / 5 + 20 * std::cos(20 * x), 0, 1e-6);
  EXPECT_LE(wavy(x), scan_min(wavy, -3, 3, 1000000) + 1e-12);
}

TEST(Families, ReciprocalPointsHaveTheCountAndSymmetryOfTheirTile) {
  // F(4,3): 5 finite points {0, +-c, +-1/c}; F(6,3): 7 with +-1; F(8,3): 9 with two pairs of pairs.
  for (const auto& [count, params] :
       {std::pair{5, std::vector<double>{0.8}}, std::pair{7, std::vector<double>{0.7}},
        std::pair{9, std::vector<double>{0.6, 0.9}}}) {
    std::vector<double> p = reciprocal_points(count, params);
    ASSERT_EQ(static_cast<int>(p.size()), count);
    std::sort(p.begin(), p.end());
    EXPECT_EQ(std::adjacent_find(p.begin(), p.end()), p.end()) << "repeated point, count " << count;
    for (std::size_t i = 0; i < p.size(); ++i) EXPECT_DOUBLE_EQ(p[i], -p[p.size() - 1 - i]) << count;
    for (double x : p) {
      if (x == 0) continue;
      const auto reciprocal =
          std::find_if(p.begin(), p.end(), [&](double y) { return std::abs(y * x - 1) < 1e-15; });
      EXPECT_NE(reciprocal, p.end()) << x << " has no reciprocal, count " << count;
    }
  }
}

TEST(Families, BestReciprocalIsNoWorseThanAScanOfItsParameter) {
  for (int count : {5, 7}) {
    const FamilyResult r = best_reciprocal(count);
    ASSERT_EQ(r.params.size(), 1u);
    EXPECT_NEAR(r.kappa, eigen_vandermonde_kappa(r.points), 1e-9 * r.kappa);
    const double scanned = scan_min(
        [&](double c) { return eigen_vandermonde_kappa(reciprocal_points(count, {c})); }, 0.02, 0.999, 2000);
    EXPECT_LE(r.kappa, scanned * (1 + 1e-9)) << count << " points, c = " << r.params[0];
  }
}

TEST(Families, BestTwoParameterAlamSetBeatsTheSeedsPrintedParameters) {
  // The seed's text gives c1 = 1.14, c2 = 0.58 as the optimum of {0, +-c1, +-1/c1, +-c2}.
  const FamilyResult r = best_alam_two_parameter();
  ASSERT_EQ(r.params.size(), 2u);
  EXPECT_NEAR(r.kappa, eigen_vandermonde_kappa(r.points), 1e-9 * r.kappa);
  EXPECT_LT(r.kappa, eigen_vandermonde_kappa(alam_two_parameter_points(1.14, 0.58)));
  // A coarse 2D scan of the same box finds nothing better.
  double scanned = INFINITY;
  for (int i = 1; i < 60; ++i)
    for (int j = 1; j < 60; ++j)
      scanned = std::min(scanned, eigen_vandermonde_kappa(
                                      alam_two_parameter_points(0.05 + 2.95 * i / 60, 0.05 + 2.95 * j / 60)));
  EXPECT_LE(r.kappa, scanned * (1 + 1e-9));
}

TEST(Families, ChebyshevNodesAreTheRootsOfTheChebyshevPolynomial) {
  for (int count : {3, 5, 7, 9}) {
    const std::vector<double> x = chebyshev_nodes(count);
    ASSERT_EQ(static_cast<int>(x.size()), count);
    for (double v : x) {
      EXPECT_LT(std::abs(v), 1.0);
      EXPECT_NEAR(std::cos(count * std::acos(v)), 0, 1e-12) << "T_" << count << "(" << v << ")";
    }
    EXPECT_TRUE(std::is_sorted(x.rbegin(), x.rend()));
  }
}

TEST(Families, BestAffineChebyshevPutsANodeAtZeroAndBeatsAScan) {
  for (int count : {5, 7}) {
    const FamilyResult r = best_chebyshev_affine(count);
    ASSERT_EQ(r.params.size(), 2u);
    const double a = r.params[0], b = r.params[1];
    EXPECT_GE(a, 0.5);
    EXPECT_LE(a, 5.0);
    EXPECT_LE(std::abs(b), 2.0 + 1e-12);
    EXPECT_EQ(std::count(r.points.begin(), r.points.end(), 0.0), 1) << count;
    const std::vector<double> nodes = chebyshev_nodes(count);
    for (int k = 0; k < count; ++k) EXPECT_NEAR(r.points[k], a * nodes[k] + b, 1e-12);
    EXPECT_NEAR(r.kappa, eigen_vandermonde_kappa(r.points), 1e-9 * r.kappa);
    // Every choice of the node put at 0, every a on a fine grid: none better.
    double scanned = INFINITY;
    for (double xj : nodes) {
      const double a_hi = std::abs(xj) > 1e-12 ? std::min(5.0, 2.0 / std::abs(xj)) : 5.0;
      if (a_hi < 0.5) continue;
      scanned = std::min(scanned, scan_min(
                                      [&](double t) {
                                        std::vector<double> p;
                                        for (double x : nodes) p.push_back(t * (x - xj));
                                        return eigen_vandermonde_kappa(p);
                                      },
                                      0.5, a_hi, 500));
    }
    EXPECT_LE(r.kappa, scanned * (1 + 1e-9)) << count;
  }
}

}  // namespace
}  // namespace nova::family_tests
