// The stage proxy against independent references: DESIGN.md's closed form when only U and V are
// rounded, the measured error of the harness, and its behaviour under exact power-of-two scalings.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error_message.hpp"
#include "nova/analysis/vandermonde.hpp"
#include "nova/catalogue/catalogue.hpp"
#include "nova/catalogue/rank_correlation.hpp"
#include "nova/catalogue/reference_points.hpp"
#include "nova/catalogue/scaling_search.hpp"
#include "nova/catalogue/stage_proxy.hpp"
#include "nova/error.hpp"
#include "nova/numerics/first_order.hpp"

namespace nova {
namespace {

PrecisionModel storage_only(Format f) {
  PrecisionModel m = precision_preset("fp64");
  m.name = "uv-only";
  m.filter_transform.format = f;
  m.input_transform.format = f;
  return m;
}

TEST(StageProxy, ReducesToTheClosedFormWhenOnlyUAndVAreRounded) {
  // bf16: the closed form knows no subnormals, and bf16's range keeps every U and V normal.
  ProxyOptions o;
  o.headroom = 1;
  for (const auto& tile : {TileSize{4, 3}, TileSize{6, 3}, TileSize{4, 5}}) {
    for (const auto& s : reference_sets(tile)) {
      const TransformF64 t = reference_transform(s);
      const double u = format_info(Format::kBf16).unit_roundoff;
      const double expected = predicted_rel_error_2d(t, u);  // c u P / (m r), c = 1/sqrt(3)
      const double got = stage_proxy(t, storage_only(Format::kBf16), o);
      EXPECT_NEAR(got / expected, 1.0, 1e-9) << s.label;
    }
  }
}

TEST(StageProxy, PredictsTheMeasuredErrorWithinAFactorOfOnePointFive) {
  ProxyOptions o;
  o.headroom = 1;
  for (const std::string preset : {"fp32", "fp16-storage", "fp16-all", "bf16-storage", "int8-tap"}) {
    const PrecisionModel model = precision_preset(preset);
    const ErrorEvaluator ev(make_tile_dataset({4, 3}, DataKind::kGaussian, 256, 16, 5), model);
    for (const auto& s : reference_sets({4, 3})) {
      const TransformF64 t = reference_transform(s);
      const double measured = ev.score(t), predicted = stage_proxy(t, model, o);
      ASSERT_TRUE(std::isfinite(measured)) << preset << " " << s.label;
      EXPECT_LT(predicted / measured, 1.5) << preset << " " << s.label;
      EXPECT_GT(predicted / measured, 1 / 1.5) << preset << " " << s.label;
    }
  }
}

TEST(StageProxy, PowerOfTwoScalingsChangeNothingForFloatStorageButMatterForPerTensorInt8) {
  const auto set = reference_sets({4, 3}).front();
  FloatBase base;
  ASSERT_TRUE(float_base({4, 3}, set.finite, base));
  ScalingChoice shifted = ScalingChoice::wincnn(6);
  shifted.e1 = {1, -1, 2, 0, -2, 1};
  shifted.e2 = {-1, 3, 0, 2, 1, -2};
  ProxyOptions o;
  o.headroom = 1;
  const auto a = apply_scaling(base, ScalingChoice::wincnn(6)), b = apply_scaling(base, shifted);
  const auto fp16 = precision_preset("fp16-storage"), int8 = precision_preset("int8-tensor");
  EXPECT_NEAR(stage_proxy(a, fp16, o) / stage_proxy(b, fp16, o), 1.0, 1e-3);
  EXPECT_GT(std::fabs(stage_proxy(a, int8, o) / stage_proxy(b, int8, o) - 1.0), 0.1);
}

TEST(StageProxy, SeesFp16SubnormalsThatTheClosedFormMisses) {
  // Standard F(6,3) points in the wincnn scaling: G's rows 1/N_p put U near fp16's subnormal range.
  ProxyOptions o;
  o.headroom = 1;
  const auto t = reference_transform(reference_sets({6, 3}).front());
  const double closed = predicted_rel_error_2d(t, format_info(Format::kFp16).unit_roundoff);
  EXPECT_GT(stage_proxy(t, storage_only(Format::kFp16), o), closed * 1.01);
}

TEST(StageProxy, FlagsOverflowOfTheStandardF83PointsInFp16) {
  const auto t = reference_transform(reference_sets({8, 3}).front());
  EXPECT_TRUE(std::isinf(stage_proxy(t, precision_preset("fp16-storage"))));
  EXPECT_TRUE(std::isfinite(stage_proxy(t, precision_preset("fp32"))));
}

TEST(Spearman, MatchesTheTieFreeFormula) {
  // rho = 1 - 6 sum d^2 / (n (n^2 - 1)) without ties.
  const std::vector<double> x{1, 2, 3, 4, 5}, y{2, 1, 4, 3, 5};
  EXPECT_NEAR(spearman(x, y), 1 - 6.0 * 4 / (5 * 24), 1e-12);
  const std::vector<double> z{5, 4, 3, 2, 1};
  EXPECT_NEAR(spearman(x, z), -1, 1e-12);
  const std::vector<double> w{1, 1, 1, 1, 1};
  EXPECT_EQ(spearman(x, w), 0);
  EXPECT_THROW(spearman(std::vector<double>{1, 2}, std::vector<double>{1, 2}), Error);
  EXPECT_THROW(spearman(x, std::vector<double>{1, 2, 3}), Error);
}

TEST(Spearman, RanksInfinityAboveEveryFiniteValue) {
  const double inf = HUGE_VAL;
  EXPECT_NEAR(spearman(std::vector<double>{1, 2, 3, inf}, std::vector<double>{10, 20, 30, 40}), 1.0, 1e-12);
}

TEST(ProxyCorrelation, RanksRandomPointSetsBetterThanKappaV) {
  TrainingData tr;
  tr.tiles = 128;
  tr.channels = 8;
  for (const std::string preset : {"fp16-storage", "int8-tensor"}) {
    const auto s = proxy_correlation({6, 3}, preset, 24, 3, tr);
    EXPECT_GE(s.rho_proxy, 0.9) << preset;
    EXPECT_GT(s.rho_proxy, s.rho_kappa) << preset;
  }
}

// fp16-all rounds every stage to fp16, the output transform included: the partial sums of A^T M and
// (A^T M) A are far larger than Y for F(8,3) and F(6,5) and overflow where Y would not. The proxy
// must see that: it agrees with the measurement on which random sets overflow, and ranks them.
TEST(ProxyCorrelation, SeesTheOutputTransformOverflowOfFp16All) {
  TrainingData tr;
  tr.tiles = 128;
  tr.channels = 8;
  for (const TileSize tile : {TileSize{8, 3}, TileSize{6, 5}}) {
    const auto s = proxy_correlation(tile, "fp16-all", 24, 5, tr, 2.5, false);
    int disagree = 0;
    for (std::size_t i = 0; i < s.proxy.size(); ++i) disagree += std::isinf(s.proxy[i]) != std::isinf(s.measured[i]);
    EXPECT_LE(disagree, 1) << tile.to_string();
    EXPECT_GE(s.rho_proxy, 0.95) << tile.to_string();
  }
  // Sets near the catalogue's entry: most usable, so that the ranking among finite errors is tested.
  const auto centre = finite_doubles(catalogue_transform({8, 3}, "fp16-all").points());
  const auto s = proxy_correlation({8, 3}, "fp16-all", 24, 6, tr, 0.15, false, centre);
  EXPECT_GE(s.usable, 12);
  EXPECT_GE(s.rho_proxy, 0.9);
}

}  // namespace
}  // namespace nova

namespace nova {
namespace {

TEST(ProxyCorrelation, SpreadsThatCannotGiveDistinctSetsAreRefused) {
  // The points are drawn on a 1/64 grid, at least 0.05 apart. Below one grid step every set was its
  // centre and each rho read 0 (a study of 6 copies of one set); where q points do not fit (a tiny
  // spread, or inf) the study retried whole sets forever.
  TrainingData tr;
  tr.tiles = 16;
  tr.channels = 2;
  const std::vector<double> centre{0, 1, -1, 2, -2};
  const std::string same = testing::error_of([&] {
    proxy_correlation({4, 3}, "fp16-storage", 6, 0, tr, 1e-9, false, centre);
  });
  EXPECT_NE(same.find("at least 1/64"), std::string::npos) << same;
  for (const double spread : {0.05, 1e-300, HUGE_VAL}) {
    const std::string m = testing::error_of([&] {
      proxy_correlation({4, 3}, "fp16-storage", 6, 0, tr, spread);
    });
    EXPECT_NE(m.find("spread"), std::string::npos) << spread << ": " << m;
  }
}

}  // namespace
}  // namespace nova
