// The snap lattice against brute force (the seed's Algorithm 2, literally) and closed-form counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "nova/discover/lattice.hpp"
#include "nova/discover/neighbourhood.hpp"
#include "nova/error.hpp"

namespace nova {
namespace {

// Algorithm 2 of the seed: denominators ascending, numerators ascending, strict improvement.
double brute_snap(double x, int d_max, int ratio) {
  double best = 0, best_dist = INFINITY;
  for (int d = 1; d <= d_max; ++d) {
    for (int n = -ratio * d; n <= ratio * d; ++n) {
      const double f = static_cast<double>(n) / d;
      const double dist = std::abs(x - f);
      if (dist < best_dist) {
        best = f;
        best_dist = dist;
      }
    }
  }
  return best;
}

TEST(Lattice, SnapMatchesBruteForce) {
  std::mt19937_64 gen(3);
  for (const auto& [d_max, ratio] : {std::pair{10, 5}, std::pair{6, 3}, std::pair{1, 2}, std::pair{16, 1}}) {
    const RationalLattice lattice({d_max, ratio, PointDtype::kAny});
    std::uniform_real_distribution<double> u(-ratio - 1.0, ratio + 1.0);
    std::vector<double> xs;
    for (int i = 0; i < 3000; ++i) xs.push_back(u(gen));
    // Exact midpoints between neighbouring values: the tie rule matters there.
    for (std::size_t i = 0; i + 1 < lattice.size(); ++i) xs.push_back((lattice.value(i) + lattice.value(i + 1)) / 2);
    for (double x : xs) {
      EXPECT_EQ(lattice.value(lattice.nearest(x)), brute_snap(x, d_max, ratio)) << x << " d_max " << d_max;
    }
  }
}

TEST(Lattice, CountsByEulerPhi) {
  // Positive a/b in lowest terms with b <= 10, a <= 5b: 5 * sum_{b<=10} phi(b) = 5 * 32.
  auto phi = [](int b) {
    int c = 0;
    for (int a = 1; a <= b; ++a) c += std::gcd(a, b) == 1;
    return c;
  };
  int positives = 0;
  for (int b = 1; b <= 10; ++b) positives += 5 * phi(b);
  const RationalLattice lattice({10, 5, PointDtype::kAny});
  EXPECT_EQ(lattice.size(), static_cast<std::size_t>(2 * positives + 1));
  // Sorted, distinct.
  for (std::size_t i = 1; i < lattice.size(); ++i) EXPECT_LT(lattice.values()[i - 1], lattice.values()[i]);
}

TEST(Lattice, DtypesFollowTheirFormats) {
  const RationalLattice fp16({10, 5, PointDtype::kFp16});
  for (const auto& v : fp16.values()) {
    const auto den = v.get_den();
    EXPECT_EQ(mpz_popcount(den.get_mpz_t()), 1u) << v.get_str();  // a power of two
    EXPECT_LE(den, 8);
  }
  // 8 * 5 * 2 + 1 multiples of 1/8 in [-5, 5].
  EXPECT_EQ(fp16.size(), 81u);
  const RationalLattice int8({10, 5, PointDtype::kInt8});
  EXPECT_EQ(int8.size(), 11u);
  // bf16 keeps 8 significant bits: with denominators up to 1024 and |a| <= 5b, 257/256 is excluded.
  const RationalLattice bf16({1024, 5, PointDtype::kBf16});
  const RationalLattice fp16big({1024, 5, PointDtype::kFp16});
  EXPECT_LT(bf16.size(), fp16big.size());
  EXPECT_TRUE(std::find(fp16big.values().begin(), fp16big.values().end(), Rational(257, 256)) != fp16big.values().end());
  EXPECT_TRUE(std::find(bf16.values().begin(), bf16.values().end(), Rational(257, 256)) == bf16.values().end());
}

TEST(Lattice, BadSpecs) {
  EXPECT_THROW(RationalLattice({0, 5, PointDtype::kAny}), Error);
  EXPECT_THROW(RationalLattice({10, 0, PointDtype::kAny}), Error);
  EXPECT_THROW(RationalLattice({100000, 5, PointDtype::kAny}), Error);
  EXPECT_THROW(parse_point_dtype("fp32"), Error);
}

TEST(Lattice, NeighboursAreTheNearestInOrder) {
  const RationalLattice lattice({10, 5, PointDtype::kAny});
  const double x = 0.8123;
  const auto nb = lattice.neighbours(x, 7, 10.0);
  ASSERT_EQ(nb.size(), 7u);
  EXPECT_EQ(nb[0], lattice.nearest(x));
  for (std::size_t i = 1; i < nb.size(); ++i) {
    EXPECT_LE(std::abs(lattice.value(nb[i - 1]) - x), std::abs(lattice.value(nb[i]) - x));
  }
  // Brute force: no value outside the list is nearer than the farthest one in it.
  const double far = std::abs(lattice.value(nb.back()) - x);
  int nearer = 0;
  for (std::size_t i = 0; i < lattice.size(); ++i) nearer += std::abs(lattice.value(i) - x) < far;
  EXPECT_LE(nearer, 6);
  EXPECT_TRUE(lattice.neighbours(x, 7, 1e-6).empty());
}

TEST(Neighbourhood, RepairsRepeatedPointsWithTheBestDistinctSet) {
  // Two coordinates that snap to the same value: the search must return distinct values, and the
  // best by brute force over the same candidate sets.
  const RationalLattice lattice({4, 2, PointDtype::kAny});
  const double x[] = {0.49, 0.51, -1.0};
  ASSERT_FALSE(strictly_increasing(snap_indices(lattice, x, 0)));
  const ValueFunction f = [](std::span<const double> v) {
    double s = 0;
    for (double a : v) s += (a - 0.3) * (a - 0.3);
    return s;
  };
  Rng rng(1);
  NeighbourhoodOptions opt;
  const auto best = neighbourhood_search(lattice, x, 0, opt, f, rng);
  ASSERT_TRUE(best.has_value());
  EXPECT_TRUE(strictly_increasing(best->idx));
  double brute = INFINITY;
  for (auto a : lattice.neighbours(x[0], 3, 1.2)) {
    for (auto b : lattice.neighbours(x[1], 3, 1.2)) {
      for (auto c : lattice.neighbours(x[2], 3, 1.2)) {
        if (a == b || b == c || a == c) continue;
        const double v[] = {lattice.value(a), lattice.value(b), lattice.value(c)};
        brute = std::min(brute, f(v));
      }
    }
  }
  EXPECT_DOUBLE_EQ(best->value, brute);
}

TEST(Neighbourhood, PastTheDeadlineSearchesStopAtTheFirstValidCandidate) {
  // A time budget is honoured between evaluations: the repair returns its first distinct set (it
  // must return one if any exists), the polish returns its start.
  const RationalLattice lattice({4, 2, PointDtype::kAny});
  const double x[] = {0.49, 0.51, -1.0};
  long calls = 0;
  const ValueFunction f = [&](std::span<const double> v) {
    ++calls;
    double s = 0;
    for (double a : v) s += (a - 0.3) * (a - 0.3);
    return s;
  };
  const Deadline past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Rng rng(1);
  const auto first = neighbourhood_search(lattice, x, 0, NeighbourhoodOptions{}, f, rng, nullptr, past);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(strictly_increasing(first->idx));
  EXPECT_EQ(calls, 1);
  calls = 0;
  const LatticePoint start = *first;
  const LatticePoint polished = polish(lattice, start, 0, 6, f, nullptr, past);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(polished.idx, start.idx);
  // Without a deadline both run on (the same searches as above do more than one evaluation).
  Rng again(1);
  calls = 0;
  (void)polish(lattice, *neighbourhood_search(lattice, x, 0, NeighbourhoodOptions{}, f, again), 0, 6, f);
  EXPECT_GT(calls, 2);
}

}  // namespace
}  // namespace nova
