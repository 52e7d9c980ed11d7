// Objectives against independent computations: the exact construction, SVDs of the full matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nova/analysis/small_svd.hpp"
#include "nova/analysis/vandermonde.hpp"
#include "nova/discover/float_cook_toom.hpp"
#include "nova/discover/objectives.hpp"
#include "nova/error.hpp"

namespace nova {
namespace {

Eigen::MatrixXd mat(const std::vector<double>& v, int rows, int cols) {
  Eigen::MatrixXd m(rows, cols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) m(i, j) = v[static_cast<std::size_t>(i * cols + j)];
  }
  return m;
}

TEST(FloatCookToom, SatisfiesTheIdentityAndMatchesTheExactTransform) {
  for (const auto& [tile, pts] : {std::pair{TileSize{4, 3}, "0,5/6,-5/6,7/6,-7/6"},
                                  std::pair{TileSize{6, 3}, "0,3/5,-3/5,1,-1,7/6,-7/6"},
                                  std::pair{TileSize{3, 2}, "1/2,-3,2"}}) {
    const PointList finite = parse_points(pts);
    PointList all = finite;
    all.push_back(Point::infinity());
    const TransformF64 exact = Transform::construct(tile, all, ScalingSpec{"wincnn", {}, {}}).to_f64();
    TransformF64 f;
    ASSERT_TRUE(float_cook_toom(tile, finite_doubles(finite), f));
    // The 1D identity sum_a A^T[i][a] G[a][k] B^T[a][j] = [j == i + k].
    for (int i = 0; i < tile.m; ++i) {
      for (int k = 0; k < tile.r; ++k) {
        for (int j = 0; j < tile.n(); ++j) {
          double s = 0;
          for (int a = 0; a < tile.n(); ++a) s += f.at(i, a) * f.g(a, k) * f.bt(a, j);
          EXPECT_NEAR(s, j == i + k ? 1.0 : 0.0, 1e-12);
        }
      }
    }
    // Same matrices up to the sign of each Winograd position: equal singular values and |entries|.
    for (const auto& [x, y, rows, cols] : {std::tuple{&f.AT, &exact.AT, tile.m, tile.n()},
                                           std::tuple{&f.G, &exact.G, tile.n(), tile.r},
                                           std::tuple{&f.BT, &exact.BT, tile.n(), tile.n()}}) {
      const auto s1 = singular_values(mat(*x, rows, cols)), s2 = singular_values(mat(*y, rows, cols));
      for (std::size_t i = 0; i < s1.size(); ++i) EXPECT_NEAR(s1[i], s2[i], 1e-12 * s2[0]);
    }
  }
  TransformF64 f;
  const double repeated[] = {1, 1, 0};
  EXPECT_FALSE(float_cook_toom({2, 3}, repeated, f));
}

TEST(Objectives, SymmetricSplitEqualsTheFullVandermonde) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(0.05, 2.5);
  const KappaV kv;
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 1 + static_cast<int>(gen() % 6);
    const bool zero = gen() % 2;
    std::vector<double> mags;
    for (int i = 0; i < k; ++i) mags.push_back(u(gen));
    const auto full = symmetric_points(mags, zero);
    const double direct = kappa2_vandermonde(full);
    const double split = kv.evaluate_symmetric({2, 3}, mags, zero);
    // Both are accurate to a few ulps times kappa (the sets here reach kappa ~ 1e9).
    EXPECT_NEAR(split / direct, 1.0, 1e-12 + 1e-15 * direct) << trial << " kappa " << direct;
  }
}

TEST(Objectives, ValuesAgainstDirectComputation) {
  const TileSize tile{4, 3};
  const std::vector<double> x = {0, 5. / 6, -5. / 6, 7. / 6, -7. / 6};
  TransformF64 f;
  ASSERT_TRUE(float_cook_toom(tile, x, f));
  const auto sa = singular_values(mat(f.AT, 4, 6)), sg = singular_values(mat(f.G, 6, 3)),
             sb = singular_values(mat(f.BT, 6, 6));
  EXPECT_NEAR(NormProduct().evaluate(tile, x), sa[0] * sg[0] * sb[0], 1e-12 * sa[0] * sg[0] * sb[0]);
  const double k2d = std::pow(sa[0] / sa.back() * sg[0] / sg.back() * sb[0] / sb.back(), 2);
  EXPECT_NEAR(Kappa2D().evaluate(tile, x), k2d, 1e-10 * k2d);
  // The error proxy is invariant under diagonal rescaling: compare the wincnn value with the
  // lagrange convention's exact matrices.
  PointList pts;
  for (const char* s : {"0", "5/6", "-5/6", "7/6", "-7/6", "inf"}) pts.push_back(parse_points(s)[0]);
  const TransformF64 lag = Transform::construct(tile, pts, ScalingSpec{"lagrange", {}, {}}).to_f64();
  double p = 0;
  for (int a = 0; a < 6; ++a) {
    double na = 0, ng = 0, nb = 0;
    for (int i = 0; i < 4; ++i) na += lag.at(i, a) * lag.at(i, a);
    for (int k = 0; k < 3; ++k) ng += lag.g(a, k) * lag.g(a, k);
    for (int j = 0; j < 6; ++j) nb += lag.bt(a, j) * lag.bt(a, j);
    p += na * ng * nb;
  }
  EXPECT_NEAR(ErrorProxy().evaluate(tile, x), p, 1e-10 * p);
  // The seed's fitness: tensor error ~ 0, so it is the magnitude and kappa terms.
  double mag = 0;
  for (double v : x) mag += v * v;
  EXPECT_NEAR(SeedFitness().evaluate(tile, x), 0.001 * mag / 5 + 0.0001 * std::log10(kappa2_vandermonde(x) + 1), 1e-12);
}

TEST(Objectives, FactoryAndWeightedSums) {
  for (const auto& name : objective_names()) EXPECT_EQ(make_objective(name)->name(), name);
  const std::vector<double> x = {0, 1, -1, 2, -2};
  const auto sum = make_objective("kappa-v:2,norm-product:0.5");
  EXPECT_NEAR(sum->evaluate({4, 3}, x), 2 * KappaV().evaluate({4, 3}, x) + 0.5 * NormProduct().evaluate({4, 3}, x),
              1e-9);
  // The symmetric stage evaluates a sum on magnitudes: it must equal the terms on the full set
  // {0, +-m_i}, and the sum's value is of the wincnn-scaled transform as soon as one term is.
  const std::vector<double> mags = {5. / 6, 7. / 6};
  const std::vector<double> full = symmetric_points(mags, true);
  EXPECT_NEAR(sum->evaluate_symmetric({4, 3}, mags, true),
              2 * KappaV().evaluate({4, 3}, full) + 0.5 * NormProduct().evaluate({4, 3}, full), 1e-9);
  EXPECT_EQ(sum->value_scaling(), "wincnn");
  EXPECT_EQ(make_objective("kappa-v:3")->value_scaling(), "");
  EXPECT_THROW(make_objective("kappa-w"), Error);
  EXPECT_THROW(make_objective("kappa-v:abc"), Error);
  EXPECT_THROW(make_objective("kappa-v:-1"), Error);
  EXPECT_THROW(make_objective(""), Error);
  EXPECT_THROW(make_objective("kappa-v,,norm-product"), Error);
  // A sum with only zero weights is zero everywhere and ranks nothing.
  EXPECT_THROW(make_objective("kappa-v:0"), Error);
  EXPECT_THROW(make_objective("kappa-v:0,norm-product:0"), Error);
  EXPECT_NO_THROW(make_objective("kappa-v:0,norm-product:1"));
}

}  // namespace
}  // namespace nova
