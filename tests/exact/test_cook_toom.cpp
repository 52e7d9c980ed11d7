// The construction against independent references: the Winograd identity itself, a generic
// Vandermonde inverse, the matrices published by wincnn and by Lavin & Gray, and float64 direct
// correlation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "nova/error.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

RationalMatrix from_rows(std::initializer_list<std::initializer_list<const char*>> rows) {
  RationalMatrix x(rows.size(), rows.begin()->size());
  std::size_t i = 0;
  for (const auto& row : rows) {
    std::size_t j = 0;
    for (const char* v : row) x(i, j++) = parse_rational(v);
    ++i;
  }
  return x;
}

TEST(CookToom, ExactIdentityForAllSmallTilesWithAndWithoutInfinity) {
  for (int m = 1; m <= 10; ++m)
    for (int r = 1; r <= 7; ++r) {
      const TileSize tile{m, r};
      for (bool inf : {true, false}) {
        const PointList points = standard_points(inf ? tile.n() - 1 : tile.n(), inf);
        for (const char* conv : {"wincnn", "lagrange"}) {
          const Transform t = Transform::construct(tile, points, ScalingSpec::parse(conv));
          const Verification v = verify(t);
          ASSERT_TRUE(v) << tile.to_string() << " inf=" << inf << " " << conv << ": " << v.reason;
        }
      }
    }
}

TEST(CookToom, RandomRationalPointSetsVerify) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> num(-40, 40), den(1, 12), tile_m(1, 8), tile_r(1, 5), coin(0, 1);
  for (int trial = 0; trial < 60; ++trial) {
    const TileSize tile{tile_m(rng), tile_r(rng)};
    const bool inf = coin(rng) == 1;
    PointList points;
    std::set<Rational> used;
    while (static_cast<int>(points.size()) < (inf ? tile.n() - 1 : tile.n())) {
      Rational v(num(rng), den(rng));
      v.canonicalize();
      if (used.insert(v).second) points.push_back(Point::finite(v));
    }
    if (inf) points.insert(points.begin() + static_cast<long>(points.size() / 2), Point::infinity());  // anywhere
    const Transform t = Transform::construct(tile, points);
    ASSERT_TRUE(verify(t)) << tile.to_string() << " {" << to_string(points) << "}: " << verify(t).reason;
  }
}

// B^T of the lagrange convention equals the transposed inverse of the full Vandermonde matrix (with
// the row [0 .. 0 1] for infinity), computed here by generic Gauss-Jordan elimination.
TEST(CookToom, LagrangeBTIsTheInverseVandermondeTransposed) {
  for (const char* text : {"0, 1, -1, 2, -2, inf", "0, 3/5, -3/5, 1, -1, 7/6, -7/6, inf", "1/3, 2, -5, 7/2"}) {
    const PointList points = parse_points(text);
    const int n = static_cast<int>(points.size());
    RationalMatrix V(static_cast<std::size_t>(n), static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p) {
      Rational power = 1;
      for (int j = 0; j < n; ++j) {
        if (points[static_cast<std::size_t>(p)].infinite) {
          V(static_cast<std::size_t>(p), static_cast<std::size_t>(j)) = j == n - 1 ? 1 : 0;
        } else {
          V(static_cast<std::size_t>(p), static_cast<std::size_t>(j)) = power;
          power *= points[static_cast<std::size_t>(p)].value;
        }
      }
    }
    const LagrangeTriple t = lagrange_triple(TileSize{n - 2, 3}, points);
    EXPECT_EQ(t.BT, V.inverse().transpose()) << text;
  }
}

// wincnn's README prints these for showCookToomFilter((0,1,-1[,2,-2[,1/2,-1/2]]), m, 3).
TEST(CookToom, WincnnConventionReproducesWincnnOutput) {
  const Transform f23 = Transform::construct({2, 3}, parse_points("0,1,-1,inf"));
  EXPECT_EQ(f23.AT(), from_rows({{"1", "1", "1", "0"}, {"0", "1", "-1", "1"}}));
  EXPECT_EQ(f23.G(), from_rows({{"1", "0", "0"}, {"1/2", "1/2", "1/2"}, {"1/2", "-1/2", "1/2"}, {"0", "0", "1"}}));
  EXPECT_EQ(f23.BT(), from_rows({{"1", "0", "-1", "0"}, {"0", "1", "1", "0"}, {"0", "-1", "1", "0"}, {"0", "-1", "0", "1"}}));

  const Transform f43 = Transform::construct({4, 3}, parse_points("0,1,-1,2,-2,inf"));
  EXPECT_EQ(f43.G(), from_rows({{"1/4", "0", "0"},
                                {"-1/6", "-1/6", "-1/6"},
                                {"-1/6", "1/6", "-1/6"},
                                {"1/24", "1/12", "1/6"},
                                {"1/24", "-1/12", "1/6"},
                                {"0", "0", "1"}}));
  EXPECT_EQ(f43.BT(), from_rows({{"4", "0", "-5", "0", "1", "0"},
                                 {"0", "-4", "-4", "1", "1", "0"},
                                 {"0", "4", "-4", "-1", "1", "0"},
                                 {"0", "-2", "-1", "2", "1", "0"},
                                 {"0", "2", "-1", "-2", "1", "0"},
                                 {"0", "4", "0", "-5", "0", "1"}}));

  const Transform f63 = Transform::construct({6, 3}, parse_points("0,1,-1,2,-2,1/2,-1/2,inf"));
  EXPECT_EQ(f63.G(), from_rows({{"1", "0", "0"},
                                {"-2/9", "-2/9", "-2/9"},
                                {"-2/9", "2/9", "-2/9"},
                                {"1/90", "1/45", "2/45"},
                                {"1/90", "-1/45", "2/45"},
                                {"32/45", "16/45", "8/45"},
                                {"32/45", "-16/45", "8/45"},
                                {"0", "0", "1"}}));
  EXPECT_EQ(f63.BT(), from_rows({{"1", "0", "-21/4", "0", "21/4", "0", "-1", "0"},
                                 {"0", "1", "1", "-17/4", "-17/4", "1", "1", "0"},
                                 {"0", "-1", "1", "17/4", "-17/4", "-1", "1", "0"},
                                 {"0", "1/2", "1/4", "-5/2", "-5/4", "2", "1", "0"},
                                 {"0", "-1/2", "1/4", "5/2", "-5/4", "-2", "1", "0"},
                                 {"0", "2", "4", "-5/2", "-5", "1/2", "1", "0"},
                                 {"0", "-2", "4", "5/2", "-5", "-1/2", "1", "0"},
                                 {"0", "-1", "0", "21/4", "0", "-21/4", "0", "1"}}));
}

// Lavin & Gray (CVPR 2016), eq. (6): F(2,3) with points 0, 1, -1, inf. Their signs differ from the
// construction by a diagonal scaling, which equal_up_to_scaling recovers.
TEST(CookToom, LavinGrayF23IsTheConstructionUpToDiagonalScaling) {
  const RationalMatrix AT = from_rows({{"1", "1", "1", "0"}, {"0", "1", "-1", "-1"}});
  const RationalMatrix G = from_rows({{"1", "0", "0"}, {"1/2", "1/2", "1/2"}, {"1/2", "-1/2", "1/2"}, {"0", "0", "1"}});
  const RationalMatrix BT = from_rows({{"1", "0", "-1", "0"}, {"0", "1", "1", "0"}, {"0", "-1", "1", "0"}, {"0", "1", "0", "-1"}});
  ASSERT_TRUE(verify_1d(AT, G, BT));
  const Transform lavin = Transform::from_matrices({2, 3}, parse_points("0,1,-1,inf"), Scaling{}, AT, G, BT);
  std::vector<Rational> d1, d2;
  const Verification v = match_points(lavin, &d1, &d2);
  ASSERT_TRUE(v) << v.reason;
  EXPECT_EQ(d1[3], Rational(-1));  // the sign of the infinity column of AT
  const Transform rebuilt = Transform::construct({2, 3}, parse_points("0,1,-1,inf"), ScalingSpec{"custom", d1, d2});
  EXPECT_EQ(rebuilt.AT(), AT);
  EXPECT_EQ(rebuilt.G(), G);
  EXPECT_EQ(rebuilt.BT(), BT);
}

TEST(CookToom, AnyDiagonalScalingStaysExact) {
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> num(-9, 9), den(1, 9);
  const PointList points = parse_points("0, ±1, ±2, ±1/2, inf");
  for (int trial = 0; trial < 10; ++trial) {
    ScalingSpec spec{"custom", {}, {}};
    for (int p = 0; p < 8; ++p) {
      int a = 0;
      while (a == 0) a = num(rng);
      int b = 0;
      while (b == 0) b = num(rng);
      spec.d1.push_back(Rational(a, den(rng)));
      spec.d2.push_back(Rational(b, den(rng)));
    }
    for (auto& x : spec.d1) x.canonicalize();
    for (auto& x : spec.d2) x.canonicalize();
    const Transform t = Transform::construct({6, 3}, points, spec);
    ASSERT_TRUE(verify(t)) << verify(t).reason;
    EXPECT_EQ(t.scaling().d1, spec.d1);  // the scaling is part of the identity
    std::vector<Rational> d1, d2;
    ASSERT_TRUE(match_points(t, &d1, &d2));
    EXPECT_EQ(d1, spec.d1);
    EXPECT_EQ(d2, spec.d2);
  }
}

TEST(CookToom, BadScalingsAndPointCountsAreErrors) {
  EXPECT_THROW(Transform::construct({6, 3}, parse_points("0, ±1, ±2, inf")), Error);  // 6 points for n = 8
  EXPECT_THROW(Transform::construct({2, 3}, parse_points("0,1,-1,inf"), ScalingSpec::parse("d1=1,0,1,1")), Error);
  EXPECT_THROW(Transform::construct({2, 3}, parse_points("0,1,-1,inf"), ScalingSpec::parse("d1=1,1")), Error);
  // The parser serves the CLI and the Python bindings alike: its messages name no command-line flag.
  for (const char* bad : {"balanced-ish", "d1=1,x", ";"}) {
    try {
      ScalingSpec::parse(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("scaling"), std::string::npos) << msg;
      EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
    }
  }
  try {
    Transform::construct({6, 3}, parse_points("0, ±1, ±2, inf"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs n = m+r-1 = 8 points"), std::string::npos) << e.what();
  }
}

TEST(Verify, NamesTheFailingEntry) {
  Transform good = Transform::construct({4, 3}, parse_points("0,±1,±2,inf"));
  RationalMatrix BT = good.BT();
  BT(2, 3) += Rational(1, 7);
  const Verification v = verify_1d(good.AT(), good.G(), BT);
  ASSERT_FALSE(v);
  EXPECT_NE(v.reason.find("input j=3"), std::string::npos) << v.reason;
  EXPECT_FALSE(verify_2d(good.AT(), good.G(), BT, true));
  EXPECT_FALSE(verify_2d(good.AT(), good.G(), BT, false));
  EXPECT_FALSE(verify_1d(good.AT(), good.G(), RationalMatrix(5, 5)));  // shape
}

// The 2D identity summed term by term over the Kronecker matrices (no factorisation).
TEST(Verify, Direct2DIdentity) {
  for (const auto& [tile, points] : std::vector<std::pair<TileSize, const char*>>{
           {{2, 3}, "0,±1,inf"}, {{4, 3}, "0,±1,±2,inf"}, {{6, 3}, "0,±1,±2,±1/2,inf"}, {{2, 5}, "0,±1,±2,inf"},
           {{3, 2}, "0,1,-1,2"}}) {
    const Transform t = Transform::construct(tile, parse_points(points));
    const Verification v = verify_2d(t.AT(), t.G(), t.BT(), /*separable=*/false);
    EXPECT_TRUE(v) << tile.to_string() << ": " << v.reason;
  }
}

// Float64 matrices applied to random data against a direct float64 correlation.
double correlation_error(const TransformF64& f, bool two_d, std::mt19937& rng) {
  std::normal_distribution<double> gauss;
  const int m = f.m, r = f.r, n = f.n;
  double err2 = 0, ref2 = 0;
  for (int trial = 0; trial < 20; ++trial) {
    if (!two_d) {
      std::vector<double> d(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(r));
      for (auto& x : d) x = gauss(rng);
      for (auto& x : g) x = gauss(rng);
      for (int i = 0; i < m; ++i) {
        double direct = 0, wino = 0;
        for (int k = 0; k < r; ++k) direct += g[k] * d[i + k];
        for (int p = 0; p < n; ++p) {
          double u = 0, v = 0;
          for (int k = 0; k < r; ++k) u += f.g(p, k) * g[k];
          for (int j = 0; j < n; ++j) v += f.bt(p, j) * d[j];
          wino += f.at(i, p) * u * v;
        }
        err2 += (wino - direct) * (wino - direct);
        ref2 += direct * direct;
      }
      continue;
    }
    std::vector<double> d(static_cast<std::size_t>(n * n)), g(static_cast<std::size_t>(r * r));
    for (auto& x : d) x = gauss(rng);
    for (auto& x : g) x = gauss(rng);
    // U = G g G^T, V = B^T d B, M = U .* V, Y = A^T M A.
    std::vector<double> U(static_cast<std::size_t>(n * n)), V(static_cast<std::size_t>(n * n)), tmp(static_cast<std::size_t>(n * n));
    for (int p = 0; p < n; ++p)
      for (int q = 0; q < n; ++q) {
        double u = 0, v = 0;
        for (int a = 0; a < r; ++a)
          for (int b = 0; b < r; ++b) u += f.g(p, a) * g[a * r + b] * f.g(q, b);
        for (int a = 0; a < n; ++a)
          for (int b = 0; b < n; ++b) v += f.bt(p, a) * d[a * n + b] * f.bt(q, b);
        U[p * n + q] = u;
        V[p * n + q] = v;
      }
    for (int i = 0; i < m; ++i)
      for (int i2 = 0; i2 < m; ++i2) {
        double y = 0, direct = 0;
        for (int p = 0; p < n; ++p)
          for (int q = 0; q < n; ++q) y += f.at(i, p) * U[p * n + q] * V[p * n + q] * f.at(i2, q);
        for (int a = 0; a < r; ++a)
          for (int b = 0; b < r; ++b) direct += g[a * r + b] * d[(i + a) * n + (i2 + b)];
        err2 += (y - direct) * (y - direct);
        ref2 += direct * direct;
      }
  }
  return std::sqrt(err2 / ref2);
}

TEST(CookToom, Float64MatricesComputeTheCorrelation) {
  std::mt19937 rng(11);
  for (const auto& [tile, points] : std::vector<std::pair<TileSize, const char*>>{
           {{2, 3}, "0,±1,inf"},
           {{4, 3}, "0,±1,±2,inf"},
           {{6, 3}, "0,±1,±2,±1/2,inf"},
           {{8, 3}, "0,±1,±2,±1/2,±1/4,inf"},
           {{8, 3}, "0,±2/5,±5/6,±1,±7/6,inf"},
           {{4, 5}, "0,±1,±2,±1/2,inf"},
           {{6, 5}, "0,±1,±2,±1/2,±1/4,inf"},
           {{6, 5}, "±1,±2,±1/2,±3/2,±1/4"}}) {
    const TransformF64 f = Transform::construct(tile, parse_points(points)).to_f64();
    EXPECT_LT(correlation_error(f, false, rng), 1e-12) << tile.to_string() << " {" << points << "} 1D";
    EXPECT_LT(correlation_error(f, true, rng), 1e-12) << tile.to_string() << " {" << points << "} 2D";
  }
}

}  // namespace
}  // namespace nova

namespace nova {
namespace {

// n = 32 is nova's limit: the largest tiles still build and verify exactly.
TEST(CookToom, LargestTilesVerify) {
  for (const TileSize tile : {TileSize{30, 3}, TileSize{28, 5}}) {
    const Transform t = Transform::construct(tile, standard_points(tile.n() - 1, true));
    EXPECT_EQ(t.n(), kMaxPoints);
    const Verification v = verify(t);
    EXPECT_TRUE(v) << tile.to_string() << ": " << v.reason;
  }
}

// balance_input_rows: the same points, verified exactly, every row of B^T with an L1 norm in [2, 4),
// G unchanged, and B^T's row p and A^T's column p scaled by reciprocal powers of two.
TEST(CookToom, BalancedInputRowsArePowerOfTwoRescalingsWithL1NormsInTwoToFour) {
  std::vector<std::pair<TileSize, std::string>> cases = {
      {{6, 3}, "0, 1/2, -1/2, 1, -1, 2, -2, inf"},
      {{8, 3}, "0, 3/7, -3/7, 4/5, -4/5, 5/4, -5/4, 19/8, -19/8, inf"},
      {{2, 3}, "0, 1, -1, inf"},
      {{4, 5}, "0, 1/2, -1/2, 1, -1, 2, -2, inf"},
      {{3, 2}, "0, 7, -1/9, 100"}};
  for (const auto& [tile, text] : cases)
    for (const char* scaling : {"wincnn", "lagrange", "custom"}) {
      const PointList points = parse_points(text);
      ScalingSpec spec{scaling, {}, {}};
      if (spec.convention == "custom") {  // arbitrary diagonals, relative to lagrange
        const auto n = static_cast<std::size_t>(tile.n());
        spec.d1.assign(n, Rational(1));
        spec.d2.assign(n, Rational(1));
        spec.d1[0] = 3;
        spec.d1[n - 1] = Rational(1, 5);
        spec.d2[1] = -7;
      }
      const Transform t = Transform::construct(tile, points, spec);
      const Transform b = balance_input_rows(t);
      const std::string what = tile.to_string() + " {" + text + "} " + scaling;
      ASSERT_TRUE(verify(b).ok) << what;
      EXPECT_TRUE(b.G() == t.G()) << what;
      EXPECT_TRUE(b.points() == t.points()) << what;
      for (int p = 0; p < b.n(); ++p) {
        Rational l1 = 0, factor = 0;
        for (int j = 0; j < b.n(); ++j) {
          l1 += abs(b.BT()(p, j));
          if (t.BT()(p, j) != 0) factor = b.BT()(p, j) / t.BT()(p, j);
        }
        EXPECT_TRUE(l1 >= 2 && l1 < 4) << what << " row " << p << ": " << to_string(l1);
        EXPECT_TRUE(is_power_of_two(factor)) << what << " row " << p << ": " << to_string(factor);
        for (int j = 0; j < b.n(); ++j) EXPECT_TRUE(b.BT()(p, j) == t.BT()(p, j) * factor) << what;
        for (int i = 0; i < b.m(); ++i) EXPECT_TRUE(b.AT()(i, p) * factor == t.AT()(i, p)) << what;
      }
    }
}

}  // namespace
}  // namespace nova
