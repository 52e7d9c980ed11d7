// The transform analysis: closed-form condition numbers, Kronecker identities, cost, representability.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/cli_runner.hpp"
#include "nova/analysis/analysis.hpp"
#include "nova/analysis/condition.hpp"
#include "nova/analysis/representability.hpp"

namespace nova {
namespace {

Transform make(TileSize tile, const char* points) { return Transform::construct(tile, parse_points(points)); }

TEST(Analysis, VandermondeNormsByHand) {
  // V for {0, 1, -1} is [[1,0,0],[1,1,1],[1,-1,1]], V^-1 = [[1,0,0],[0,1/2,-1/2],[-1,1/2,1/2]]:
  // ||V||_1 = 3, ||V^-1||_1 = 2, ||V||_inf = 3, ||V^-1||_inf = 2, ||V||_F^2 = 7, ||V^-1||_F^2 = 3.
  const auto a = analyze(make({2, 3}, "0,1,-1,inf"));
  ASSERT_TRUE(a.V.has_value());
  EXPECT_NEAR(a.V->one_d.kappa1, 6.0, 1e-13);
  EXPECT_NEAR(a.V->one_d.kappa_inf, 6.0, 1e-13);
  EXPECT_NEAR(a.V->one_d.kappa_fro, std::sqrt(21.0), 1e-13);
  EXPECT_TRUE(a.verified);
}

TEST(Analysis, KroneckerIdentitiesHoldOnTheProducts) {
  for (const char* pts : {"0,1,-1,2,-2,inf", "0,5/6,-5/6,7/6,-7/6,inf"}) {
    const auto a = analyze(make({4, 3}, pts));
    for (const MatrixAnalysis* m : {&*a.V, &a.AT, &a.G, &a.BT}) {
      ASSERT_TRUE(m->two_d.has_value());
      EXPECT_NEAR(m->kron_ratio, 1.0, 1e-10) << m->name;
      // The 1, inf and Frobenius norms are multiplicative over (x) as well.
      EXPECT_NEAR(m->two_d->kappa1 / (m->one_d.kappa1 * m->one_d.kappa1), 1.0, 1e-10) << m->name;
      EXPECT_NEAR(m->two_d->kappa_inf / (m->one_d.kappa_inf * m->one_d.kappa_inf), 1.0, 1e-10) << m->name;
      EXPECT_NEAR(m->two_d->kappa_fro / (m->one_d.kappa_fro * m->one_d.kappa_fro), 1.0, 1e-10) << m->name;
      EXPECT_NEAR(m->two_d->max_abs, m->one_d.max_abs * m->one_d.max_abs, 1e-12 * m->two_d->max_abs);
    }
    EXPECT_NEAR(a.norm_product_2d / (a.norm_product * a.norm_product), 1.0, 1e-10);
  }
}

TEST(Analysis, IllConditionedMatricesHaveFiniteConditionNumbers) {
  // V's kappa is about 1e40: it fits float64, but V's smallest singular value lies far below
  // eps * sigma_max, where a float64 SVD of V alone finds noise (it found 0: every kappa was inf).
  const auto a = analyze(make({4, 3}, "0,±1e-20,±1,inf"));
  for (const MatrixAnalysis* m : {&*a.V, &a.BT}) {
    const Conditioning& c = m->one_d;
    const double n = c.rows;
    for (const double kappa : {c.kappa1, c.kappa2, c.kappa_inf, c.kappa_fro}) {
      ASSERT_TRUE(std::isfinite(kappa)) << m->name;
      EXPECT_GT(kappa, 1e39) << m->name;
    }
    // The norms are equivalent within a factor n (sqrt(n) each for M and its inverse) ...
    EXPECT_LE(c.kappa2, n * c.kappa1 * (1 + 1e-12)) << m->name;
    EXPECT_GE(c.kappa2 * n * (1 + 1e-12), c.kappa1) << m->name;
    EXPECT_LE(c.kappa2, n * c.kappa_inf * (1 + 1e-12)) << m->name;
    EXPECT_LE(c.kappa2, c.kappa_fro * (1 + 1e-12)) << m->name;
    // ... the singular values agree with kappa2, and kappa2 is multiplicative over (x) (it was
    // 2e32 for V (x) V, 1e81 expected).
    EXPECT_NEAR(c.sigma.front() / c.sigma.back() / c.kappa2, 1.0, 1e-12) << m->name;
    EXPECT_NEAR(m->kron_ratio, 1.0, 1e-10) << m->name;
  }
  // A true overflow stays one: V^-1 for {0, ±1e-200} has entries of 1e400.
  const auto b = analyze(make({2, 3}, "0,±1e-200,inf"));
  EXPECT_TRUE(std::isinf(b.V->one_d.kappa2));
  EXPECT_TRUE(std::isinf(b.V->one_d.kappa1));
}

TEST(Analysis, RectangularMatricesUseTheirExactPseudoInverse) {
  // A^T and G are rectangular: their small singular values and M^+ came from a float64 SVD, which
  // loses them below eps * sigma_max. References: mpmath at 200 digits, M^+ = M^T (M M^T)^-1 for
  // A^T and (M^T M)^-1 M^T for G from the exact rational matrices of the wincnn construction.
  const auto a = analyze(Transform::construct({12, 3}, standard_points(13, true)));
  ASSERT_TRUE(a.AT.two_d.has_value());
  const Conditioning& k = *a.AT.two_d;  // A^T (x) A^T: all four were inf
  EXPECT_NEAR(k.kappa2 / 5.8567178480276449e17, 1.0, 1e-10);
  EXPECT_NEAR(k.kappa1 / 1.1376892409819634e18, 1.0, 1e-10);
  EXPECT_NEAR(k.kappa_inf / 1.8985260624048433e18, 1.0, 1e-10);
  EXPECT_NEAR(k.kappa_fro / 1.0023153342736976e18, 1.0, 1e-10);
  EXPECT_NEAR(k.sigma.back() / 0.45803357028251699, 1.0, 1e-10);
  EXPECT_NEAR(a.AT.kron_ratio, 1.0, 1e-10);

  AnalysisOptions one_d;
  one_d.two_d = false;
  const auto b = analyze(Transform::construct({16, 3}, standard_points(17, true)), one_d);
  EXPECT_NEAR(b.AT.one_d.kappa1 / 109286968063395.92, 1.0, 1e-10);  // was 1.6e-4 off
  EXPECT_NEAR(b.AT.one_d.kappa2 / 80438295985266.764, 1.0, 1e-10);  // 3.2e-8 off
  const auto c = analyze(Transform::construct({20, 13}, standard_points(31, true)), one_d);
  EXPECT_NEAR(c.G.one_d.kappa2 / 1.4704065726539845e24, 1.0, 1e-10);  // 3.8 % off
  EXPECT_NEAR(c.G.one_d.kappa1 / 1.6487918707116869e24, 1.0, 1e-10);  // 6.8 % off
}

// conditioning() without an inverse takes M^+ from an SVD (the path a caller with only float64 data
// gets; analyze() always passes the exact inverse). By hand: M = [[1,0],[0,2],[0,0]] has sigma {2, 1}
// and M^+ = [[1,0,0],[0,1/2,0]], so kappa_1 = 2 * 1, kappa_inf = 2 * 1, kappa_F = sqrt(5) sqrt(5/4) = 2.5.
TEST(Analysis, ConditioningWithoutAnInverseUsesTheSvdPseudoInverse) {
  Eigen::MatrixXd m(3, 2);
  m << 1, 0, 0, 2, 0, 0;
  const Conditioning c = conditioning(m);
  EXPECT_NEAR(c.kappa2, 2.0, 1e-15);
  EXPECT_NEAR(c.kappa1, 2.0, 1e-15);
  EXPECT_NEAR(c.kappa_inf, 2.0, 1e-15);
  EXPECT_NEAR(c.kappa_fro, 2.5, 1e-15);
  // A rank-deficient matrix has no finite condition number; its float64 SVD gives sigma_min = 8.9e-16,
  // not 0, which is inside the SVD's error (max(rows, cols) eps sigma_max = 5.6e-15).
  Eigen::MatrixXd rank_one(2, 3);
  rank_one << 1, 2, 3, 2, 4, 6;
  const Conditioning r = conditioning(rank_one);
  EXPECT_TRUE(std::isinf(r.kappa2) && std::isinf(r.kappa1) && std::isinf(r.kappa_inf) &&
              std::isinf(r.kappa_fro))
      << r.kappa2;
  // A well-conditioned random matrix: the same numbers as with the pseudo-inverse given (Eigen's
  // complete orthogonal decomposition, another algorithm).
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(6, 4) + 3 * Eigen::MatrixXd::Identity(6, 4);
  const Eigen::MatrixXd pinv = a.completeOrthogonalDecomposition().pseudoInverse();
  const Conditioning svd = conditioning(a), given = conditioning(a, &pinv);
  EXPECT_NEAR(svd.kappa2, given.kappa2, 1e-12 * given.kappa2);
  EXPECT_NEAR(svd.kappa1, given.kappa1, 1e-12 * given.kappa1);
  EXPECT_NEAR(svd.kappa_inf, given.kappa_inf, 1e-12 * given.kappa_inf);
  EXPECT_NEAR(svd.kappa_fro, given.kappa_fro, 1e-12 * given.kappa_fro);
}

TEST(Analysis, CostOfTheOutputTransformByHand) {
  // A^T of {0, 1, -1, inf} for m = 2 is [[1,1,1,0],[0,1,-1,1]] in every scaling convention that
  // leaves A^T alone: 6 non-zeros, all +-1, no multiplication, 2 + 2 additions.
  const auto a = analyze(make({2, 3}, "0,1,-1,inf"));
  EXPECT_EQ(a.cost.AT.nonzeros, 6);
  EXPECT_EQ(a.cost.AT.unit, 6);
  EXPECT_EQ(a.cost.AT.multiplications, 0);
  EXPECT_EQ(a.cost.AT.additions, 4);
  EXPECT_EQ(a.cost.output_adds_2d, (4 + 2) * 4);
  // Every entry falls in exactly one class.
  for (const MatrixCost* c : {&a.cost.AT, &a.cost.G, &a.cost.BT}) {
    EXPECT_EQ(c->unit + c->power_of_two + c->other, c->nonzeros);
    EXPECT_LE(c->nonzeros, c->rows * c->cols);
  }
}

TEST(Representability, ClosedFormRoundingErrors) {
  double err = 0;
  // fp16 has 11 significant bits: 1/3 rounds to 1365/4096, relative error 1/4096.
  EXPECT_FALSE(exactly_representable(Format::kFp16, Rational(1, 3), &err));
  EXPECT_NEAR(err, 1.0 / 4096, 1e-15);
  EXPECT_TRUE(exactly_representable(Format::kFp16, Rational(3, 4), &err));
  EXPECT_EQ(err, 0);
  // 9/8 = 1.001b needs 3 fraction bits: e4m3 has them, e5m2 (2 bits) does not.
  EXPECT_TRUE(exactly_representable(Format::kFp8E4M3, Rational(9, 8)));
  EXPECT_FALSE(exactly_representable(Format::kFp8E5M2, Rational(9, 8)));
  EXPECT_TRUE(exactly_representable(Format::kInt8, Rational(-128)));
  EXPECT_FALSE(exactly_representable(Format::kInt8, Rational(1, 2)));
  EXPECT_FALSE(exactly_representable(Format::kInt8, Rational(200), &err));
  EXPECT_NEAR(err, (200.0 - 127.0) / 200.0, 1e-15);
  // 1e6 overflows fp16 (max 65504).
  EXPECT_FALSE(exactly_representable(Format::kFp16, Rational(1000000), &err));
  EXPECT_TRUE(std::isinf(err));
}

TEST(Representability, DyadicPointsDoNotMakeDyadicMatrices) {
  // {0, +-3/4, +-5/4} are exact in fp16, but N_0 = (3/4)^2 (5/4)^2 = 225/256 puts 256/225 into G.
  const auto a = analyze(make({4, 3}, "0,±3/4,±5/4,inf"));
  const auto& fp16 = a.representability.front();
  ASSERT_EQ(fp16.format, Format::kFp16);
  EXPECT_EQ(fp16.points.exact, 5);
  EXPECT_LT(fp16.G.exact, fp16.G.total);
  EXPECT_FALSE(fp16.all_exact());
}

TEST(AnalyzeCli, JsonAndErrors) {
  auto r = testing::run_cli("analyze --tile 4,3 --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_NEAR(j["matrices"]["V"]["1d"]["kappa2"].get<double>(), 42.47, 0.01);
  EXPECT_TRUE(j["verified"].get<bool>());
  for (const char* bad : {"analyze", "analyze --tile 40,3", "analyze --tile 4,3 --points '0,1,1,2,-2,inf'",
                          "analyze --tile 4,3 --format yaml", "analyze /nonexistent.json"}) {
    r = testing::run_cli(bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("nova: error: "), std::string::npos) << bad;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << bad << ": " << r.output;
  }
}

// Conditioning and cost of matrices that compute no convolution mean nothing: refused, as bench does.
TEST(AnalyzeCli, RefusesAFileThatFailsVerification) {
  const std::string file = testing::write_unverified_transform(testing::temp_dir());
  ASSERT_FALSE(file.empty());
  const auto r = testing::run_cli("analyze " + file);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nova: error: '" + file + "' fails exact verification"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1D identity fails"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
}

}  // namespace
}  // namespace nova
