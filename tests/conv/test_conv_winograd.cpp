// Winograd paths against the float64 reference: every default tile, generated and generic tile code,
// every kernel path the CPU can run, NCHW and NHWC, random shapes with odd sizes, channel counts that
// are not multiples of the vector width, padding 0..2, batch 1..3, partial edge tiles, bias and ReLU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "conv/algorithm_choice.hpp"
#include "conv/aligned_buffer.hpp"
#include "conv/cpu_supports.hpp"
#include "conv/kernels/kernel_table.hpp"
#include "conv/plan_impl.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::conv {
namespace {

using testing::Problem;

// Relative L2 error allowed: a few times what FP32 Winograd with these points is expected to reach
// (DESIGN.md: up to ~40x direct FP32 for F(8,3)); data in [-1, 1], reductions of a few hundred terms.
double tolerance(TileSize t) {
  if (t.n() <= 6) return 2e-6;
  if (t.n() <= 8) return 1e-5;
  if (t.n() <= 9) return 4e-5;
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

struct WinogradCase {
  TileSize tile;
  Isa isa;
  Layout layout;
  bool generated;
};

class WinogradRandom : public ::testing::TestWithParam<WinogradCase> {};

TEST_P(WinogradRandom, MatchesFloat64Reference) {
  const WinogradCase c = GetParam();
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

std::vector<WinogradCase> all_cases() {
  std::vector<WinogradCase> out;
  for (const TileSize& t : default_tiles())
    for (Isa isa : testing::runnable_isas())
      for (Layout l : {Layout::kNCHW, Layout::kNHWC})
        for (bool g : {true, false}) out.push_back({t, isa, l, g});
  return out;
}

std::string winograd_case_name(const ::testing::TestParamInfo<WinogradCase>& info) {
  const WinogradCase& c = info.param;
  return "F" + std::to_string(c.tile.m) + "x" + std::to_string(c.tile.r) + "_" + to_string(c.isa) + "_" +
         to_string(c.layout) + (c.generated ? "_generated" : "_generic");
}

INSTANTIATE_TEST_SUITE_P(AllTiles, WinogradRandom, ::testing::ValuesIn(all_cases()), winograd_case_name);

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

// An ill-conditioned transform ran silently into useless results (F(10,3) on the standard points: relative
// error 27 to 48; a point 1e20: every output NaN). The plan's reason now cautions where the first-order
// prediction exceeds 10 %, and the measured error agrees with it; the transforms nova ships do not.
TEST(WinogradTransforms, IllConditionedTransformsAreCautionedAndTheCautionIsBorneOut) {
  const ConvShape s{1, 8, 30, 30, 4};  // N, C, H, W, K; 3x3, padding 1
  const testing::Problem p = testing::random_problem(s, 9);
  const std::vector<double> want = testing::reference(p, Layout::kNCHW, false);
  PlanOptions o;
  o.transform = Transform::construct(TileSize{10, 3}, parse_points("0, ±1, ±2, ±3, ±4, ±5, inf"));
  std::optional<Plan> plan;
  const double err = testing::rel_l2(testing::run(p, o, &plan), want);
  const std::string reason = plan->reason();
  const std::string caution = "caution: the transform's predicted relative error in fp32 is ";
  const auto at = reason.find(caution);
  ASSERT_NE(at, std::string::npos) << reason;
  const double predicted = std::stod(reason.substr(at + caution.size()));
  EXPECT_GT(err, 0.1);             // the caution is borne out ...
  EXPECT_LT(err, 10 * predicted);  // ... by about the predicted amount (first order: a proxy, not a bound)
  EXPECT_GT(err, predicted / 10);
  // Every default transform (fp32) and the low-precision catalogue's tiles of bf16 and fp16 run without it.
  for (const TileSize& t : default_tiles()) {
    PlanOptions d;
    d.transform = default_transform(t);
    if (t.r != 3) continue;
    for (const Precision precision : {Precision::kFp32, Precision::kBf16, Precision::kFp16}) {
      if (precision != Precision::kFp32 && t.n() > 8) continue;  // the automatic choice's limits
      d.precision = precision;
      const Plan q = Plan::create(s, p.weights.data(), p.bias.data(), d);
      EXPECT_EQ(q.reason().find("predicted relative error"), std::string::npos)
          << t.to_string() << " " << q.reason();
    }
  }
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

// The engine in FP32 is no worse than the error harness's fp32 emulation of the same transform on the
// same layer (Gaussian data, float64 reference) by more than 10 %, for every default tile: users can
// read the harness's tables as the engine's. (U = G g G^T is rounded once from float64 and the
// transforms use FMAs, so the engine is usually below the emulation.) The errors also grow with the
// tile as the automatic choice assumes: F(7,3) between F(6,3) and F(8,3).
TEST(WinogradAccuracy, EveryDefaultTileWithinTheHarnessFp32Emulation) {
  std::map<int, double> err_by_m3;
  for (const TileSize& t : default_tiles()) {
    const LayerDataset d = make_layer_dataset(1, 48, 29, 29, 40, t.r, DataKind::kGaussian, 11);
    const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights, {});
    const double emulated =
        ErrorEvaluator(d, precision_preset("fp32"), t).evaluate(default_transform(t).to_f64()).rel_l2;
    PlanOptions o;
    o.tile = t;
    o.threads = 2;
    const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
    const Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
    std::vector<float> y(static_cast<std::size_t>(d.shape.output_size()));
    plan.execute(x.data(), y.data());
    const double e = testing::rel_l2(y, ref);
    EXPECT_LE(e, 1.10 * emulated) << t.to_string() << ": engine " << e << ", harness fp32 " << emulated;
    EXPECT_GT(e, 0.0) << t.to_string();
    if (t.r == 3) err_by_m3[t.m] = e;
  }
  ASSERT_EQ(err_by_m3.count(7), 1u);
  EXPECT_GT(err_by_m3[7], err_by_m3[6]);
  EXPECT_LT(err_by_m3[7], err_by_m3[8]);
}

// The estimate's streaming term counts the transformed filters at the size the AVX2 low-precision GEMMs
// read them (int8 codes, 16-bit bf16, fp16 and int16 words), so on a layer whose U streams (1x512x7x7:
// 4 tiles, 512 x 512 channels) int8 is estimated below the 16-bit precisions, which tie. AVX-512 keeps
// FP32's bytes for every precision (its low-precision choices were measured with them, and the AMX
// kernels' row padding is not in the model): there they all tie. Nothing else in the estimate depends
// on the precision, so a tie must be exact.
TEST(WinogradChoice, Avx2LowPrecisionEstimatesStreamUAtItsStoredSize) {
  const ConvShape s{1, 512, 7, 7, 512, 3, 3, 1, 1};
  for (const TileSize t : {TileSize{2, 3}, TileSize{4, 3}}) {
    auto ms = [&](Isa isa, Precision p) {
      return estimate_winograd(s, Layout::kNCHW16c, 2, isa, t, 1.0, p).ms;
    };
    const double int8 = ms(Isa::kAvx2, Precision::kInt8), bf16 = ms(Isa::kAvx2, Precision::kBf16);
    EXPECT_LT(int8, bf16) << t.to_string();
    EXPECT_EQ(ms(Isa::kAvx2, Precision::kFp16), bf16) << t.to_string();
    EXPECT_EQ(ms(Isa::kAvx2, Precision::kInt8Spatial), bf16) << t.to_string();
    EXPECT_EQ(ms(Isa::kAvx512, Precision::kInt8), ms(Isa::kAvx512, Precision::kBf16)) << t.to_string();
    EXPECT_EQ(ms(Isa::kAvx512, Precision::kInt8), ms(Isa::kAvx512, Precision::kFp16)) << t.to_string();
  }
}

// The cache rules follow the machines they were measured on: the EPYC's for AVX2 on any CPU and for
// AVX-512 on AMD CPUs, the Xeon's for AVX-512 elsewhere and for the portable path. Under the EPYC's rules an
// AVX-512 estimate prices U as AVX2's does (the stored size for low precision, memory's rate when asked),
// under the Xeon's it does not (4 bytes for every precision, one flat rate), whatever the machine; the
// default is the ISA's rules from before session 47. A plan uses the machine's rules and says so where they
// are not the ISA's usual ones.
TEST(WinogradChoice, CacheRulesFollowTheMachinesTheyWereMeasuredOn) {
  EXPECT_EQ(memory_rules(Isa::kAvx2, false), MemoryRules::kEpyc);
  EXPECT_EQ(memory_rules(Isa::kAvx2, true), MemoryRules::kEpyc);
  EXPECT_EQ(memory_rules(Isa::kAvx512, true), MemoryRules::kEpyc);
  EXPECT_EQ(memory_rules(Isa::kAvx512, false), MemoryRules::kXeon);
  EXPECT_EQ(memory_rules(Isa::kPortable, true), MemoryRules::kXeon);
  const ConvShape s{1, 512, 7, 7, 512, 3, 3, 1, 1};  // U streams: 4 tiles, 512 x 512 channels
  const TileSize t{4, 3};
  auto ms = [&](MemoryRules rules, Precision p, bool from_memory = false) {
    return estimate_winograd(s, Layout::kNCHW16c, 2, Isa::kAvx512, t, 1.0, p, from_memory, rules).ms;
  };
  EXPECT_LT(ms(MemoryRules::kEpyc, Precision::kInt8), ms(MemoryRules::kEpyc, Precision::kBf16));
  EXPECT_GT(ms(MemoryRules::kEpyc, Precision::kFp32, true), ms(MemoryRules::kEpyc, Precision::kFp32));
  EXPECT_EQ(ms(MemoryRules::kXeon, Precision::kInt8), ms(MemoryRules::kXeon, Precision::kBf16));
  EXPECT_EQ(ms(MemoryRules::kXeon, Precision::kFp32, true), ms(MemoryRules::kXeon, Precision::kFp32));
  EXPECT_EQ(estimate_winograd(s, Layout::kNCHW16c, 2, Isa::kAvx512, t).ms,
            ms(MemoryRules::kXeon, Precision::kFp32));
  EXPECT_EQ(estimate_winograd(s, Layout::kNCHW16c, 2, Isa::kAvx2, t).ms,
            estimate_winograd(s, Layout::kNCHW16c, 2, Isa::kAvx2, t, 1.0, Precision::kFp32, false,
                              MemoryRules::kEpyc)
                .ms);
  // The plan: the machine's rules, named in the reason where they are not the ISA's usual ones.
  const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
  PlanOptions o;
  o.threads = 2;
  const Plan plan = Plan::create(s, w.data(), nullptr, o);
  const bool epyc_avx512 = plan.isa() == Isa::kAvx512 && cpu_is_amd();
  EXPECT_EQ(plan.reason().find("cache rules of the AMD EPYC") != std::string::npos, epyc_avx512)
      << plan.reason();
  std::string reason;
  choose_algorithm(s, Layout::kNCHW16c, 2, Isa::kAvx512, Precision::kFp32, &reason, 1.0, false,
                   MemoryRules::kEpyc);
  EXPECT_NE(reason.find("cache rules of the AMD EPYC"), std::string::npos) << reason;
  choose_algorithm(s, Layout::kNCHW16c, 2, Isa::kAvx2, Precision::kFp32, &reason);
  EXPECT_EQ(reason.find("cache rules"), std::string::npos) << reason;
}

// Filters priced at memory's rate (PlanOptions::filters_from_memory, the drop-in's plans): on AVX2 FP32
// every Winograd estimate is at least the L3-priced one, strictly more where U's streaming outlasts the
// products (1x512x7x7's 37.7 MB at F(4,3)), and the direct path's is unchanged; the automatic choice then
// never takes a tile with more transformed filters than before, and takes a smaller one on 1x512x7x7 and
// 1x256x14x14 (the layers measured in ResNet-18, docs/engine-log.md "Session 24"). Other precisions and paths
// price U alike either way. The plan's reason says how it priced them.
TEST(WinogradChoice, FiltersFromMemoryNeverFavourLargerFilters) {
  int smaller = 0;
  for (const auto& [N, C, HW, K] : {std::array<int64_t, 4>{1, 64, 56, 64},
                                    {1, 128, 28, 128},
                                    {1, 256, 14, 256},
                                    {1, 512, 7, 512},
                                    {8, 64, 56, 64},
                                    {8, 128, 28, 128},
                                    {8, 256, 14, 256},
                                    {8, 512, 7, 512},
                                    {1, 64, 224, 64},
                                    {1, 512, 14, 512},
                                    {1, 512, 28, 512}}) {
    const ConvShape s{N, C, HW, HW, K, 3, 3, 1, 1};
    for (const TileSize& t : default_tiles()) {
      if (t.r != 3) continue;
      const double warm = estimate_winograd(s, Layout::kNHWC, 2, Isa::kAvx2, t).ms;
      const double cold =
          estimate_winograd(s, Layout::kNHWC, 2, Isa::kAvx2, t, 1.0, Precision::kFp32, true).ms;
      EXPECT_GE(cold, warm) << s.to_string() << " " << t.to_string();
      for (Precision p : {Precision::kBf16, Precision::kInt8})
        EXPECT_EQ(estimate_winograd(s, Layout::kNHWC, 2, Isa::kAvx2, t, 1.0, p, true).ms,
                  estimate_winograd(s, Layout::kNHWC, 2, Isa::kAvx2, t, 1.0, p, false).ms);
      EXPECT_EQ(estimate_winograd(s, Layout::kNHWC, 2, Isa::kAvx512, t, 1.0, Precision::kFp32, true).ms,
                estimate_winograd(s, Layout::kNHWC, 2, Isa::kAvx512, t).ms);
    }
    std::string warm_reason, cold_reason;
    const AlgorithmEstimate warm =
        choose_algorithm(s, Layout::kNHWC, 2, Isa::kAvx2, Precision::kFp32, &warm_reason);
    const AlgorithmEstimate cold =
        choose_algorithm(s, Layout::kNHWC, 2, Isa::kAvx2, Precision::kFp32, &cold_reason, 1.0, true);
    ASSERT_TRUE(warm.tile && cold.tile) << warm_reason << " / " << cold_reason;
    EXPECT_LE(cold.tile->n(), warm.tile->n()) << s.to_string() << ": " << cold_reason;
    if (cold.tile->n() < warm.tile->n()) ++smaller;
    if (N == 1 && ((C == 512 && HW == 7) || (C == 256 && HW == 14))) {
      EXPECT_LT(cold.tile->n(), warm.tile->n())
          << s.to_string() << ": " << warm_reason << " / " << cold_reason;
    }
    EXPECT_NE(cold_reason.find("filters priced at memory's rate"), std::string::npos) << cold_reason;
    EXPECT_EQ(warm_reason.find("memory"), std::string::npos) << warm_reason;
  }
  EXPECT_GE(smaller, 2);
  // The option reaches the plan's choice.
  const ConvShape s{1, 512, 7, 7, 512, 3, 3, 1, 1};
  const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
  PlanOptions o;
  o.threads = 2;
  o.filters_from_memory = true;
  EXPECT_NE(Plan::create(s, w.data(), nullptr, o).reason().find("memory's rate"), std::string::npos);
}

// The automatic FP32 choice takes the 9-point tile F(7,3) only when its estimate beats every smaller
// tile's by kNinePointMargin, and says why when it does not; it never takes F(8,3). Checked against the
// estimates themselves on the layer set (and more), so the rule, not the model, is what is tested.
TEST(WinogradChoice, NinePointTileOnlyByItsMargin) {
  int taken = 0, refused = 0;
  for (const auto& [N, C, HW, K] : {std::array<int64_t, 4>{1, 64, 56, 64},
                                    {1, 128, 28, 128},
                                    {8, 64, 56, 64},
                                    {8, 128, 28, 128},
                                    {8, 256, 14, 256},
                                    {8, 512, 7, 512},
                                    {1, 64, 224, 64},
                                    {4, 96, 21, 96}}) {
    const ConvShape s{N, C, HW, HW, K, 3, 3, 1, 1};
    const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
    PlanOptions o;
    o.threads = 2;
    o.isa = best_isa();
    const Plan plan = Plan::create(s, w.data(), nullptr, o);
    ASSERT_TRUE(plan.tile().has_value()) << plan.reason();
    double nine = HUGE_VAL, smaller = HUGE_VAL;
    TileSize smaller_tile{0, 0};
    for (const TileSize& t : default_tiles()) {
      if (t.r != 3 || t.n() > 9) continue;
      const double ms = estimate_winograd(s, o.layout, 2, best_isa(), t, 1.0, Precision::kFp32, false,
                                          memory_rules(best_isa(), cpu_is_amd()))
                            .ms;
      if (t.n() == 9) {
        nine = ms;
      } else if (ms < smaller) {
        smaller = ms;
        smaller_tile = t;
      }
    }
    const bool want_nine = nine * kNinePointMargin <= smaller;
    EXPECT_EQ(plan.tile()->m, want_nine ? 7 : smaller_tile.m) << s.to_string() << ": " << plan.reason();
    EXPECT_NE(plan.tile()->m, 8) << s.to_string();
    if (want_nine) ++taken;
    if (!want_nine && nine < smaller) {
      ++refused;
      EXPECT_NE(plan.reason().find("F(7,3): not 8 % faster"), std::string::npos) << plan.reason();
    }
    // Asked for Winograd without a tile: the same rule.
    o.algorithm = AlgorithmChoice::kWinograd;
    const Plan wino = Plan::create(s, w.data(), nullptr, o);
    EXPECT_EQ(wino.tile()->m, plan.tile()->m) << s.to_string() << ": " << wino.reason();
  }
  // The layers were picked for AVX-512 at 2 threads, where the rule both takes and refuses F(7,3).
  if (best_isa() == Isa::kAvx512) {
    EXPECT_GT(taken, 0);
    EXPECT_GT(refused, 0);
  }
}

}  // namespace
}  // namespace nova::conv

namespace nova::conv {
namespace {

// The stride between Winograd positions of V and M, for 1-, 2- and 4-byte elements: room for the data,
// every position on a cache line (AMX tile rows of bf16 and int8 V load as one line each), and an odd
// number of lines, so that any 64 consecutive positions of a tile fall into the 64 different sets of a
// 64-set L1 (the set index of each position's first line).
TEST(WinogradLayout, PositionStrideIsAnOddNumberOfLinesForEveryElementSize) {
  for (int64_t rows = 1; rows <= 300; ++rows)
    for (int64_t cols : {16, 32, 48, 64, 256, 512, 1008, 1024})
      for (int64_t bytes : {1, 2, 4}) {
        const auto stride = static_cast<int64_t>(position_stride(rows, cols, bytes));
        ASSERT_GE(stride, rows * cols);
        ASSERT_EQ(stride * bytes % 64, 0) << rows << " x " << cols << ", " << bytes << "-byte elements";
        ASSERT_EQ(stride * bytes / 64 % 2, 1) << rows << " x " << cols << ", " << bytes << "-byte elements";
        std::vector<bool> set_used(64, false);
        for (int64_t a = 0; a < 64; ++a) {
          const int64_t set = a * stride * bytes / 64 % 64;
          ASSERT_FALSE(set_used[static_cast<std::size_t>(set)])
              << rows << " x " << cols << ", position " << a;
          set_used[static_cast<std::size_t>(set)] = true;
        }
      }
}

// Buffers of 4 MiB and more are 2 MiB aligned for transparent huge pages, with their whole size
// usable; smaller ones 64-byte aligned. A resize keeps the count asked for.
TEST(WinogradLayout, AlignedBufferAlignsLargeBuffersForHugePages) {
  for (const std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20,
                                  (std::size_t{1} << 20) + 17, std::size_t{3} << 20}) {
    AlignedBuffer b(count);
    ASSERT_EQ(b.size(), count);
    const auto address = reinterpret_cast<std::uintptr_t>(b.data());
    const bool large = count * sizeof(float) >= (std::size_t{4} << 20);
    EXPECT_EQ(address % (large ? std::size_t{2} << 20 : 64), 0u) << count;
    std::fill(b.data(), b.data() + count, 2.0f);  // every element is writable (ASan checks the bounds)
    EXPECT_EQ(b.data()[count - 1], 2.0f);
  }
}

// A plan whose U is on huge pages (21 MB at F(7,3) with 256 channels) against the float64 reference.
TEST(WinogradLayout, PlanWithLargeFiltersMatchesTheReference) {
  const ConvShape s{1, 256, 9, 9, 256, 3, 3, 1, 1, 1, 1, 1};
  const testing::Problem p = testing::random_problem(s, 23);
  PlanOptions o;
  o.tile = TileSize{7, 3};
  o.threads = 2;
  const std::vector<float> y = testing::run(p, o);
  EXPECT_LT(testing::rel_l2(y, testing::reference(p, o.layout, o.relu)), 1e-4);
}

// The GEMM kernels' prefetching form (WinogradPlan::prefetch_u) computes what the plain one computes, bit
// for bit, for every row count and panel width of every kernel path this CPU runs.
TEST(WinogradKernels, PrefetchingGemmGivesThePlainKernelsBits) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Isa isa : testing::runnable_isas()) {
    const GemmTable& g = kernels(isa).gemm;
    for (std::size_t kc : {std::size_t{1}, std::size_t{37}, std::size_t{300}}) {
      for (int rows = 1; rows <= g.mr; ++rows) {
        for (int nv = 1; nv <= g.nv; ++nv) {
          const std::size_t width = 16 * static_cast<std::size_t>(nv);
          std::vector<float> a(static_cast<std::size_t>(rows) * kc), b(kc * width), ahead(kc * 16);
          for (float& x : a) x = d(rng);
          for (float& x : b) x = d(rng);
          const std::size_t ldc = width + 16;
          std::vector<float> plain(static_cast<std::size_t>(rows) * ldc, 7.0f), pf(plain);
          g.fn[rows - 1][nv - 1](kc, a.data(), kc, b.data(), width, plain.data(), ldc);
          g.prefetching[rows - 1][nv - 1](kc, a.data(), kc, b.data(), width, pf.data(), ldc, ahead.data());
          ASSERT_EQ(pf, plain) << to_string(isa) << " kc=" << kc << " rows=" << rows << " nv=" << nv;
        }
      }
    }
  }
}

// The segmented form (the direct path's NHWC rows read in place, gemm_ukernel_segments) computes what the
// plain kernel computes on a copy of the concatenated rows, bit for bit: rows a pixel stride apart that
// overlap (stride * C below the segment length, as at the 7x7 stride-2 stem's 3 channels), 1 to 7
// segments, every row count and panel width of every kernel path this CPU runs.
TEST(DirectKernels, SegmentedRowsGiveThePlainKernelsBitsOnTheirCopy) {
  std::mt19937 rng(37);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Isa isa : testing::runnable_isas()) {
    const GemmTable& g = kernels(isa).gemm;
    for (const auto& [nseg, seg_len, pixel_stride, seg_gap] :
         {std::array<std::size_t, 4>{7, 21, 6, 672}, {3, 192, 128, 1800}, {1, 5, 5, 0}, {2, 1, 3, 40}}) {
      for (int rows = 1; rows <= g.mr; ++rows) {
        for (int nv = 1; nv <= g.nv; ++nv) {
          const std::size_t width = 16 * static_cast<std::size_t>(nv), kc = nseg * seg_len;
          // The input: segment s of row i at s * seg_gap + i * pixel_stride.
          std::vector<float> input(nseg * seg_gap + static_cast<std::size_t>(rows) * pixel_stride + seg_len);
          for (float& x : input) x = d(rng);
          std::vector<float> b(kc * width);
          for (float& x : b) x = d(rng);
          std::vector<const float*> seg(nseg);
          std::vector<float> copy(static_cast<std::size_t>(rows) * kc);
          for (std::size_t sgm = 0; sgm < nseg; ++sgm) {
            seg[sgm] = input.data() + sgm * seg_gap;
            for (int i = 0; i < rows; ++i)
              for (std::size_t k = 0; k < seg_len; ++k)
                copy[static_cast<std::size_t>(i) * kc + sgm * seg_len + k] =
                    seg[sgm][static_cast<std::size_t>(i) * pixel_stride + k];
          }
          const std::size_t ldc = width + 16;
          std::vector<float> plain(static_cast<std::size_t>(rows) * ldc, 7.0f), segmented(plain);
          g.fn[rows - 1][nv - 1](kc, copy.data(), kc, b.data(), width, plain.data(), ldc);
          g.segments[rows - 1][nv - 1](nseg, seg_len, seg.data(), pixel_stride, b.data(), width, nullptr,
                                       false, segmented.data(), ldc);
          ASSERT_EQ(segmented, plain)
              << to_string(isa) << " segments=" << nseg << "x" << seg_len << " rows=" << rows << " nv=" << nv;
          // With the epilogue: each column's bias (one NaN, whose column must stay NaN through the ReLU),
          // then ReLU, bit for bit against the plain sums + bias and the direct path's v < 0 test (which
          // keeps -0). Columns past the panel (ldc > width) stay as they were.
          std::vector<float> bias(width);
          for (float& x : bias) x = d(rng);
          bias[0] = std::numeric_limits<float>::quiet_NaN();
          if (width > 3) bias[3] = -0.0f;
          for (bool relu : {false, true}) {
            std::vector<float> want(plain), got(static_cast<std::size_t>(rows) * ldc, 7.0f);
            for (int i = 0; i < rows; ++i)
              for (std::size_t j = 0; j < width; ++j) {
                float& w = want[static_cast<std::size_t>(i) * ldc + j];
                w = w + bias[j];
                if (relu && w < 0.0f) w = 0.0f;
              }
            g.segments[rows - 1][nv - 1](nseg, seg_len, seg.data(), pixel_stride, b.data(), width,
                                         bias.data(), relu, got.data(), ldc);
            for (std::size_t e = 0; e < got.size(); ++e)
              ASSERT_TRUE(std::memcmp(&got[e], &want[e], sizeof(float)) == 0 ||
                          (std::isnan(got[e]) && std::isnan(want[e])))
                  << to_string(isa) << " relu=" << relu << " rows=" << rows << " nv=" << nv << " element "
                  << e << ": " << got[e] << " against " << want[e];
          }
        }
      }
    }
  }
}

// The B-rows form (the NCHW direct path reading im2col^T's rows from column phases of the planes,
// gemm_ukernel_b_rows) computes what the plain kernel computes on a copy of those rows, then adds each row's
// bias and applies ReLU as the direct path's epilogue does (max(v, 0): NaN and -0 kept), bit for bit: rows at
// any float offset, repeated rows (a row of zeros stands for every tap outside the image), NaN in A, every
// row count and panel width of every kernel path this CPU runs.
TEST(DirectKernels, BRowsGiveThePlainKernelsBitsThenBiasAndRelu) {
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Isa isa : testing::runnable_isas()) {
    const GemmTable& g = kernels(isa).gemm;
    for (std::size_t kc : {std::size_t{1}, std::size_t{27}, std::size_t{147}}) {
      for (int rows = 1; rows <= g.mr; ++rows) {
        for (int nv = 1; nv <= g.nv; ++nv) {
          for (bool relu : {false, true}) {
            const std::size_t width = 16 * static_cast<std::size_t>(nv);
            std::vector<float> input(4096), zeros(width + 64, 0.0f);
            for (float& x : input) x = d(rng);
            const std::ptrdiff_t offset = 5;
            std::vector<const float*> b_rows(kc);
            std::vector<float> copy(kc * width);
            for (std::size_t k = 0; k < kc; ++k) {
              b_rows[k] = k % 5 == 4 ? zeros.data() : input.data() + (k * 97) % (input.size() - width - 64);
              for (std::size_t j = 0; j < width; ++j)
                copy[k * width + j] = b_rows[k][offset + static_cast<std::ptrdiff_t>(j)];
            }
            std::vector<float> a(static_cast<std::size_t>(rows) * kc), bias(static_cast<std::size_t>(rows));
            for (float& x : a) x = d(rng);
            for (float& x : bias) x = d(rng);
            if (rows > 1) a[kc] = std::numeric_limits<float>::quiet_NaN();  // row 1's sums are NaN
            const std::size_t ldc = width + 16;
            std::vector<float> expected(static_cast<std::size_t>(rows) * ldc, 7.0f), got(expected);
            g.fn[rows - 1][nv - 1](kc, a.data(), kc, copy.data(), width, expected.data(), ldc);
            for (int i = 0; i < rows; ++i)
              for (std::size_t j = 0; j < width; ++j) {
                float& v = expected[static_cast<std::size_t>(i) * ldc + j];
                v += bias[static_cast<std::size_t>(i)];
                if (relu) v = std::max(v, 0.0f);
              }
            g.b_rows[rows - 1][nv - 1](kc, a.data(), kc, b_rows.data(), offset, bias.data(), relu, got.data(),
                                       ldc);
            // memcmp: the NaN rows compare by their bits
            ASSERT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
                << to_string(isa) << " kc=" << kc << " rows=" << rows << " nv=" << nv << " relu=" << relu;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nova::conv
