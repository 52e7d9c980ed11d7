// The emulated tile transforms' fast paths (float lanes, one rounding per operation to the
// narrow format) against their definition computed in double with the software rounding kernel:
// the same bits for every format, over data that reaches subnormals, overflow, inf and NaN.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "nova/exact/transform.hpp"
#include "numerics/sandwich.hpp"

namespace nova {
namespace {

// Values with random sign and exponent in [lo_exp, hi_exp], some zeros, a few inf and NaN.
std::vector<double> wide_values(std::size_t count, int lo_exp, int hi_exp, bool specials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(lo_exp, hi_exp), pick(0, 99);
  std::vector<double> v(count);
  for (double& x : v) {
    const int kind = pick(rng);
    if (kind < 5) x = 0.0;
    else if (specials && kind == 5) x = HUGE_VAL;
    else if (specials && kind == 6) x = std::nan("");
    else x = std::ldexp(mant(rng), ex(rng)) * (kind % 2 ? -1.0 : 1.0);
  }
  return v;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

void expect_paths_agree(Format f, const std::vector<double>& L, int P, int I, const std::vector<double>& X) {
  const int64_t batch = static_cast<int64_t>(X.size()) / (int64_t{I} * I);
  std::vector<double> fast(static_cast<std::size_t>(batch * P * P)), ref(fast.size());
  detail::sandwich_range(f, L, P, I, X.data(), batch, fast.data());
  detail::sandwich_range_reference(f, L, P, I, X.data(), batch, ref.data());
  int64_t mismatches = 0, nonfinite = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    mismatches += same(fast[k], ref[k]) ? 0 : 1;
    nonfinite += std::isfinite(ref[k]) ? 0 : 1;
  }
  EXPECT_EQ(mismatches, 0) << format_name(f) << ": " << mismatches << " of " << ref.size() << " outputs differ";
  // The data must exercise the edges it is meant to (not all outputs overflowed, not none).
  EXPECT_LT(nonfinite, static_cast<int64_t>(ref.size()));
}

TEST(Sandwich, LanesMatchTheDefinitionForEveryFloatFormat) {
  // A real input transform (F(6,3), 8 x 8) and a batch that is not a multiple of the lane count.
  const TransformF64 t =
      Transform::construct(parse_tile("6,3"), parse_points("0,±1,±2,±1/2,inf"), ScalingSpec::parse("wincnn")).to_f64();
  struct Case {
    Format f;
    int lo_exp, hi_exp;
  };
  // Each format's data spans its subnormals and its overflow threshold.
  const Case cases[] = {{Format::kFp32, -140, 120},
                        {Format::kFp16, -28, 14},
                        {Format::kBf16, -135, 120},
                        {Format::kFp8E4M3, -10, 8},
                        {Format::kFp8E5M2, -18, 14}};
  for (const Case& c : cases) {
    const std::vector<double> X = wide_values(static_cast<std::size_t>(8 * 8 * 203), c.lo_exp, c.hi_exp, true, 7);
    expect_paths_agree(c.f, t.BT, 8, 8, X);
    // The filter transform's rectangular shape (8 x 3) and the output transform's (6 x 8).
    expect_paths_agree(c.f, t.G, 8, 3, wide_values(static_cast<std::size_t>(3 * 3 * 77), c.lo_exp, c.hi_exp, false, 8));
    expect_paths_agree(c.f, t.AT, 6, 8, wide_values(static_cast<std::size_t>(8 * 8 * 77), c.lo_exp, c.hi_exp, false, 9));
  }
}

TEST(Sandwich, Bf16ProductsBelowFloatNormalRangeAreExact) {
  // Products of bf16 values under 2^-126 are not always exact in float (their low bits can fall
  // below float's smallest subnormal 2^-149); sandwich.hpp argues why the lanes path still gives
  // the definition's result. Coefficients far below 1 and data near 2^-126 make such products
  // common.
  const std::vector<double> L = wide_values(6 * 6, -14, -1, false, 12);
  const std::vector<double> X = wide_values(static_cast<std::size_t>(6 * 6 * 100), -133, -110, false, 11);
  expect_paths_agree(Format::kBf16, L, 6, 6, X);
}

}  // namespace
}  // namespace nova
