// Results do not depend on the thread count nor on the execution order (fused blocks of any size,
// or phased): bit-for-bit identical outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "conv_test_util.hpp"

namespace nova::conv {
namespace {

ConvShape shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K) { return ConvShape{N, C, H, W, K}; }

TEST(Determinism, IdenticalAcrossThreadCountsAndBlockings) {
  const testing::Problem p = testing::random_problem(shape(2, 21, 23, 19, 35), 11);
  for (Isa isa : testing::runnable_isas()) {
    for (AlgorithmChoice alg : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
      for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
        PlanOptions o;
        o.isa = isa;
        o.algorithm = alg;
        o.layout = layout;
        o.relu = true;
        o.tile = alg == AlgorithmChoice::kWinograd ? std::optional<TileSize>(TileSize{4, 3}) : std::nullopt;
        o.threads = 1;
        const std::vector<float> base = testing::run(p, o);
        for (int threads : {2, 3, 5}) {
          for (int block : {0, 1, 7, -1}) {
            o.threads = threads;
            o.tile_block = block;
            const std::vector<float> got = testing::run(p, o);
            ASSERT_EQ(got, base) << to_string(isa) << " threads=" << threads << " block=" << block;
          }
        }
      }
    }
  }
}

// Fused blocks whose static split leaves a thread idle (49 F(2,3) tiles in blocks of 16: 32 tiles against
// 17) run as two tasks per block, each for half the GEMM panels (WinogradPlan::k_parts): the same bits as
// one thread running whole blocks, in every precision and layout, and the input's counts (int8
// saturation, NaN/Inf tiles) taken once, not once per part.
TEST(Determinism, OutputChannelPartsGiveTheWholeBlocksBits) {
  const ConvShape s = shape(1, 32, 14, 14, 100);  // 100 output channels: panels of 64 and 48
  testing::Problem p = testing::random_problem(s, 13);
  p.input[static_cast<std::size_t>(5 * 14 * 14 + 3 * 14 + 9)] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> quiet = p.input;  // the calibration sample: a quarter of the values, no NaN
  for (float& v : quiet) v = std::isnan(v) ? 0.0f : 0.25f * v;
  int split = 0;
  for (Precision prec : {Precision::kFp32, Precision::kBf16, Precision::kFp16, Precision::kInt8,
                         Precision::kInt8Spatial})
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW16c})
      for (bool calibrated : {false, true}) {
        if (calibrated && prec != Precision::kInt8 && prec != Precision::kInt8Spatial) continue;
        SCOPED_TRACE(to_string(prec) + " " + to_string(layout) + (calibrated ? " calibrated" : ""));
        PlanOptions o;
        o.precision = prec;
        o.layout = layout;
        o.tile = TileSize{2, 3};
        o.tile_block = 16;
        o.relu = true;
        std::vector<float> x = p.input, sample = quiet;
        if (layout == Layout::kNHWC) {
          x = nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W);
          sample = nchw_to_nhwc(std::span<const float>(sample), s.N, s.C, s.H, s.W);
        } else if (layout == Layout::kNCHW16c) {
          x = nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
          sample = nchw_to_nchw16c(std::span<const float>(sample), s.N, s.C, s.H, s.W);
        }
        const auto execute = [&](int threads, LowpStats* stats) {
          o.threads = threads;
          Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
          if (calibrated) {
            const float* samples[] = {sample.data()};
            plan.calibrate(samples);
          }
          const bool parts = plan.describe().find("2 output-channel parts") != std::string::npos;
          EXPECT_EQ(parts, threads == 2) << plan.describe();
          split += parts ? 1 : 0;
          std::vector<float> out(static_cast<std::size_t>(output_elements(s, layout)), -7.0f);
          plan.execute(x.data(), out.data());
          *stats = plan.stats();
          return out;
        };
        LowpStats one, two;
        const std::vector<float> whole = execute(1, &one);
        const std::vector<float> parts = execute(2, &two);
        EXPECT_TRUE(testing::same_bits(parts, whole));
        EXPECT_EQ(two.saturated, one.saturated);
        EXPECT_EQ(two.nonfinite_tiles, one.nonfinite_tiles);
        if (prec == Precision::kInt8 || prec == Precision::kInt8Spatial) {
          EXPECT_GE(one.nonfinite_tiles, 1);  // the NaN reaches the counts
          if (calibrated) {
            EXPECT_GT(one.saturated, 0);  // beyond the sample's range
          }
        }
      }
  EXPECT_EQ(split, 21);  // every case's two-thread plan
}

TEST(Determinism, RepeatedExecuteIsStable) {
  const testing::Problem p = testing::random_problem(shape(1, 17, 15, 15, 20), 12);
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), PlanOptions{});
  std::vector<float> a(static_cast<std::size_t>(p.shape.output_size())), b(a.size());
  plan.execute(p.input.data(), a.data());
  plan.execute(p.input.data(), b.data());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace nova::conv
