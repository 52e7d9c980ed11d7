// Winograd paths against the float64 reference: every default tile, generated and generic tile code,
// every kernel path the CPU can run, NCHW and NHWC, random shapes with odd sizes, channel counts that
// are not multiples of the vector width, padding 0..2, batch 1..3, partial edge tiles, bias and ReLU.
#include <gtest/gtest.h>

#include <random>

#include "conv_test_util.hpp"
#include "nova/conv/default_transforms.hpp"

namespace nova::conv {
namespace {

using testing::Problem;

// Relative L2 error allowed: a few times what FP32 Winograd with these points is expected to reach
// (DESIGN.md: up to ~40x direct FP32 for F(8,3)); data in [-1, 1], reductions of a few hundred terms.
double tolerance(TileSize t) {
  if (t.n() <= 6) return 2e-6;
  if (t.n() <= 8) return 1e-5;
  return 1e-4;
}

ConvShape random_shape(std::mt19937& rng, int r) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ConvShape s;
  s.N = pick(1, 3);
  s.C = pick(1, 37);
  s.K = pick(1, 37);
  s.H = 2 * pick(2, 9) + 1;  // odd
  s.W = 2 * pick(2, 9) + 1;
  s.R = s.S = r;
  s.pad_h = pick(0, 2);
  s.pad_w = pick(0, 2);
  if (s.H + 2 * s.pad_h < r) s.pad_h = r;
  if (s.W + 2 * s.pad_w < r) s.pad_w = r;
  return s;
}

struct Case {
  TileSize tile;
  Isa isa;
  Layout layout;
  bool generated;
};

class WinogradRandom : public ::testing::TestWithParam<Case> {};

TEST_P(WinogradRandom, MatchesFloat64Reference) {
  const Case c = GetParam();
  std::mt19937 rng(1000u + static_cast<unsigned>(c.tile.m * 31 + c.tile.r));
  for (int trial = 0; trial < 3; ++trial) {
    const ConvShape s = random_shape(rng, c.tile.r);
    const bool relu = trial == 1;
    const Problem p = testing::random_problem(s, rng(), trial != 2);
    PlanOptions o;
    o.layout = c.layout;
    o.relu = relu;
    o.tile = c.tile;
    o.isa = c.isa;
    o.threads = 2;
    o.allow_generated = c.generated;
    std::optional<Plan> plan;
    const std::vector<float> got = testing::run(p, o, &plan);
    ASSERT_EQ(plan->algorithm(), Algorithm::kWinograd) << plan->describe();
    ASSERT_EQ(plan->generated_transform(), c.generated) << plan->describe();
    const double err = testing::rel_l2(got, testing::reference(p, c.layout, relu));
    EXPECT_LT(err, tolerance(c.tile)) << plan->describe();
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const TileSize& t : default_tiles())
    for (Isa isa : testing::runnable_isas())
      for (Layout l : {Layout::kNCHW, Layout::kNHWC})
        for (bool g : {true, false}) out.push_back({t, isa, l, g});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "F" + std::to_string(c.tile.m) + "x" + std::to_string(c.tile.r) + "_" + to_string(c.isa) + "_" +
         to_string(c.layout) + (c.generated ? "_generated" : "_generic");
}

INSTANTIATE_TEST_SUITE_P(AllTiles, WinogradRandom, ::testing::ValuesIn(all_cases()), case_name);

// A transform that is not one of the defaults (other points, other scaling) runs through the generic
// tile code and is still correct.
TEST(WinogradTransforms, NonDefaultTransformUsesGenericPath) {
  const Transform t = Transform::construct(TileSize{4, 3}, parse_points("0, 1, -1, 1/2, -1/2, inf"),
                                           ScalingSpec::parse("lagrange"));
  ConvShape s;
  s.N = 2;
  s.C = 19;
  s.K = 21;
  s.H = 13;
  s.W = 11;
  const testing::Problem p = testing::random_problem(s, 7);
  PlanOptions o;
  o.transform = t;
  std::optional<Plan> plan;
  const std::vector<float> got = testing::run(p, o, &plan);
  EXPECT_EQ(plan->algorithm(), Algorithm::kWinograd);
  EXPECT_FALSE(plan->generated_transform());
  EXPECT_LT(testing::rel_l2(got, testing::reference(p, Layout::kNCHW, false)), 2e-6);
}

// The default transform given explicitly (a different Transform object, the same exact matrices) is
// recognised and runs the generated code.
TEST(WinogradTransforms, ExplicitDefaultTransformIsRecognised) {
  ConvShape s;
  s.C = 5;
  s.K = 3;
  s.H = s.W = 9;
  const testing::Problem p = testing::random_problem(s, 8);
  PlanOptions o;
  o.transform = Transform::construct(TileSize{6, 3}, default_points(TileSize{6, 3}));
  std::optional<Plan> plan;
  const std::vector<float> got = testing::run(p, o, &plan);
  EXPECT_TRUE(plan->generated_transform());
  EXPECT_LT(testing::rel_l2(got, testing::reference(p, Layout::kNCHW, false)), 1e-5);
}

// Images smaller than one tile, and one-pixel outputs.
TEST(WinogradEdges, TinyImagesAndPartialTiles) {
  for (const TileSize& t : default_tiles()) {
    for (int64_t hw : {int64_t{1}, int64_t{2}, int64_t{t.m + 1}}) {
      ConvShape s;
      s.C = 3;
      s.K = 17;
      s.H = hw;
      s.W = hw + 1;
      s.R = s.S = t.r;
      s.pad_h = s.pad_w = t.r / 2;
      const testing::Problem p = testing::random_problem(s, 9);
      PlanOptions o;
      o.tile = t;
      o.threads = 1;
      const std::vector<float> got = testing::run(p, o);
      EXPECT_LT(testing::rel_l2(got, testing::reference(p, Layout::kNCHW, false)), tolerance(t))
          << t.to_string() << " " << s.to_string();
    }
  }
}

}  // namespace
}  // namespace nova::conv
