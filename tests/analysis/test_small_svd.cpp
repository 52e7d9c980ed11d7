// The fast singular values against closed forms and against Eigen's SVD (an independent code).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nova/analysis/small_svd.hpp"
#include "nova/analysis/vandermonde.hpp"

namespace nova {
namespace {

TEST(SmallSvd, TwoByTwoClosedForm) {
  // sigma^2 are the eigenvalues of M^T M: (T +- sqrt(T^2 - 4 det^2)) / 2 with T = ||M||_F^2.
  const double a = 3, b = -1.5, c = 0.25, d = 2;
  const double m[] = {a, b, c, d};
  double s[2];
  ASSERT_EQ(small_singular_values(m, 2, 2, s), 2);
  const double t = a * a + b * b + c * c + d * d, det = a * d - b * c;
  const double root = std::sqrt(t * t - 4 * det * det);
  EXPECT_NEAR(s[0], std::sqrt((t + root) / 2), 1e-14);
  EXPECT_NEAR(s[1], std::sqrt((t - root) / 2), 1e-14);
}

TEST(SmallSvd, DiagonalAndRankDeficient) {
  const double m[] = {0, 0, -5, 0, 1e-9, 0, 2, 0, 0};  // |entries| of a permuted diagonal
  double s[3];
  small_singular_values(m, 3, 3, s);
  EXPECT_DOUBLE_EQ(s[0], 5);
  EXPECT_DOUBLE_EQ(s[1], 2);
  EXPECT_DOUBLE_EQ(s[2], 1e-9);
  const double rank1[] = {1, 2, 2, 4};
  EXPECT_GT(small_kappa2(rank1, 2, 2), 1e15);
  const double bad[] = {1, NAN, 0, 1};
  EXPECT_TRUE(std::isinf(small_kappa2(bad, 2, 2)));
}

TEST(SmallSvd, MatchesEigenOnRandomAndRectangular) {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> nd;
  for (int trial = 0; trial < 200; ++trial) {
    const int rows = 1 + static_cast<int>(gen() % kSmallSvdMax), cols = 1 + static_cast<int>(gen() % kSmallSvdMax);
    Eigen::MatrixXd m(rows, cols);
    for (int i = 0; i < rows; ++i) {
      // Graded rows and columns, as in Vandermonde and transform matrices.
      for (int j = 0; j < cols; ++j) m(i, j) = nd(gen) * std::pow(3.0, (i % 4) - (j % 5));
    }
    const auto ours = singular_values(m);
    const Eigen::VectorXd ref = Eigen::JacobiSVD<Eigen::MatrixXd>(m).singularValues();
    ASSERT_EQ(static_cast<Eigen::Index>(ours.size()), ref.size());
    for (Eigen::Index i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(ours[static_cast<std::size_t>(i)], ref(i), 1e-12 * ref(0)) << rows << "x" << cols;
    }
  }
}

TEST(SmallSvd, IllConditionedVandermondeKeepsRelativeAccuracy) {
  // Twelve equispaced points on [0, 2.75]: kappa is far beyond 1e8, and the fast path must still
  // agree with Eigen's two-sided Jacobi SVD to a relative 1e-6.
  std::vector<double> x;
  for (int i = 0; i < 12; ++i) x.push_back(0.25 * i);
  const double k = kappa2_vandermonde(x);
  const Eigen::VectorXd ref = Eigen::JacobiSVD<Eigen::MatrixXd>(vandermonde(x)).singularValues();
  EXPECT_GT(k, 1e8);
  EXPECT_NEAR(k / (ref(0) / ref(ref.size() - 1)), 1.0, 1e-6);
}

TEST(Vandermonde, TwoPointClosedForm) {
  // V = [[1, 0], [1, x]]: V^T V = [[2, x], [x, x^2]], trace 2 + x^2, determinant x^2.
  for (double x : {0.5, 1.0, 3.0, -7.0}) {
    const double t = 2 + x * x, det = x * x;
    const double root = std::sqrt(t * t - 4 * det);
    const double expected = std::sqrt((t + root) / (t - root));
    const double pts[] = {0.0, x};
    EXPECT_NEAR(kappa2_vandermonde(pts), expected, 1e-12 * expected);
  }
}

TEST(Vandermonde, SeedPrintedValuesToThreeDigits) {
  // The seed's Tables 1 and 2 (kappa_2(V), finite points only).
  struct Case {
    std::vector<double> x;
    double printed;
    int digits;  // significant digits as printed
  };
  const Case cases[] = {{{0, 1, -1}, 3.2, 2},
                        {{0, 1, -1, 2, -2}, 42.5, 3},
                        {{0, 1, -1, 2, -2, 3, -3}, 2075, 4},
                        {{0, 1, -1, 2, -2, 3, -3, 4, -4}, 196900, 4},
                        {{0, 5. / 6, -5. / 6, 7. / 6, -7. / 6}, 14.5, 3},
                        {{0, 0.6, -0.6, 1, -1, 7. / 6, -7. / 6}, 77, 2},
                        {{0, 0.4, -0.4, 5. / 6, -5. / 6, 1, -1, 7. / 6, -7. / 6}, 474, 3}};
  for (const auto& c : cases) {
    const double k = kappa2_vandermonde(c.x);
    const double scale = std::pow(10.0, std::floor(std::log10(c.printed)) - c.digits + 1);
    EXPECT_NEAR(std::round(k / scale) * scale, c.printed, 1e-9 * c.printed) << k;
  }
}

}  // namespace
}  // namespace nova
