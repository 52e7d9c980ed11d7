// The direct path against the float64 reference: shapes Winograd cannot run (stride, dilation,
// groups, non-square and 1x1 kernels) fall back to it, and the plan says why; forced direct on
// Winograd shapes; every kernel path; NCHW and NHWC.
#include <gtest/gtest.h>

#include <random>

#include "conv/plan_impl.hpp"
#include "conv_test_util.hpp"

namespace nova::conv {
namespace {

struct DirectCase {
  const char* name;
  ConvShape shape;
  const char* reason_mentions;
};

ConvShape make(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t pad,
               int64_t stride, int64_t dilation, int64_t groups) {
  return ConvShape{N, C, H, W, K, R, S, pad, pad, stride, dilation, groups};
}

TEST(DirectFallback, UnsupportedShapesRunDirectAndSayWhy) {
  const DirectCase cases[] = {
      {"stride2", make(2, 7, 15, 13, 9, 3, 3, 1, 2, 1, 1), "stride"},
      {"dilation2", make(1, 5, 13, 11, 6, 3, 3, 2, 1, 2, 1), "dilation"},
      {"groups3", make(2, 9, 11, 9, 12, 3, 3, 1, 1, 1, 3), "groups"},
      {"depthwise", make(1, 8, 9, 9, 8, 3, 3, 1, 1, 1, 8), "groups"},
      // The depthwise kernel's 16-channel vectors and its tail (37 = 2 x 16 + 5), a channel multiplier
      // (Kg = 3), 5x5 taps with stride and dilation, and taps cut by the image's edges (padding 3).
      {"depthwise37", make(2, 37, 12, 10, 37, 3, 3, 1, 1, 1, 37), "groups"},
      {"depthwise_x3", make(1, 18, 11, 13, 54, 3, 3, 1, 1, 1, 18), "groups"},
      {"depthwise5_s2_d2", make(1, 21, 19, 17, 21, 5, 5, 3, 2, 2, 21), "stride"},
      {"nonsquare", make(1, 5, 10, 9, 7, 3, 5, 2, 1, 1, 1), "non-square"},
      {"onebyone", make(3, 21, 7, 5, 19, 1, 1, 0, 1, 1, 1), "1x1"},
      {"stride3_5x5", make(1, 4, 17, 19, 5, 5, 5, 2, 3, 1, 1), "stride"},
  };
  for (const DirectCase& c : cases) {
    for (Isa isa : testing::runnable_isas()) {
      for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
        const testing::Problem p = testing::random_problem(c.shape, 42);
        PlanOptions o;
        o.layout = layout;
        o.isa = isa;
        o.relu = layout == Layout::kNHWC;
        o.threads = 2;
        std::optional<Plan> plan;
        const std::vector<float> got = testing::run(p, o, &plan);
        EXPECT_EQ(plan->algorithm(), Algorithm::kDirect) << c.name;
        EXPECT_NE(plan->reason().find(c.reason_mentions), std::string::npos)
            << c.name << ": " << plan->reason();
        EXPECT_EQ(plan->describe().find("depthwise") != std::string::npos, c.shape.groups == c.shape.C)
            << c.name << ": " << plan->describe();
        EXPECT_LT(testing::rel_l2(got, testing::reference(p, layout, o.relu)), 1e-6)
            << c.name << " " << to_string(isa);
      }
    }
  }
}

// Options only Winograd plans read, given to a plan that runs direct, are named in its reason as not used;
// the same options on a Winograd plan are not.
TEST(DirectFallback, NamesTheWinogradOptionsItDoesNotUse) {
  PlanOptions o;
  o.tile_block = 4;
  o.k_parts = 2;
  o.allow_generated = false;
  o.precision = Precision::kBf16;
  o.bf16_arithmetic = Bf16Arithmetic::kFma;
  const ConvShape stride2 = make(1, 16, 12, 12, 16, 3, 3, 1, 2, 1, 1);
  const testing::Problem p = testing::random_problem(stride2, 7);
  const Plan direct = Plan::create(stride2, p.weights.data(), nullptr, o);
  ASSERT_EQ(direct.algorithm(), Algorithm::kDirect);
  EXPECT_NE(
      direct.reason().find(
          "Winograd options not used: tile_block 4, k_parts 2, generic tile transforms, the bf16 arithmetic "
          "choice"),
      std::string::npos)
      << direct.reason();
  const ConvShape stride1 = make(1, 16, 12, 12, 16, 3, 3, 1, 1, 1, 1);
  o.algorithm = AlgorithmChoice::kWinograd;
  const Plan winograd = Plan::create(stride1, testing::random_problem(stride1, 7).weights.data(), nullptr, o);
  ASSERT_EQ(winograd.algorithm(), Algorithm::kWinograd);
  EXPECT_EQ(winograd.reason().find("not used"), std::string::npos) << winograd.reason();
  o = PlanOptions{};  // no Winograd option given: nothing named
  const Plan plain = Plan::create(stride2, p.weights.data(), nullptr, o);
  EXPECT_EQ(plain.reason().find("not used"), std::string::npos) << plain.reason();
}

TEST(DirectFallback, ForcedDirectOnRandomWinogradShapes) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const ConvShape s = make(pick(1, 3), pick(1, 37), 2 * pick(2, 8) + 1, 2 * pick(2, 8) + 1, pick(1, 37), 3,
                             3, pick(0, 2), 1, 1, 1);
    for (Isa isa : testing::runnable_isas()) {
      const testing::Problem p = testing::random_problem(s, rng());
      PlanOptions o;
      o.algorithm = AlgorithmChoice::kDirect;
      o.isa = isa;
      o.layout = trial % 2 ? Layout::kNHWC : Layout::kNCHW;
      std::optional<Plan> plan;
      const std::vector<float> got = testing::run(p, o, &plan);
      EXPECT_EQ(plan->algorithm(), Algorithm::kDirect);
      EXPECT_LT(testing::rel_l2(got, testing::reference(p, o.layout, false)), 1e-6) << s.to_string();
    }
  }
}

// NCHW tensors with small filters run the direct GEMM with output channels as rows, packed straight from
// the NCHW input (DirectPlan::nchw_rows); larger filters the NHWC im2col. Both sum each output's
// products in the (u, v, c) order of the NHWC plan, so every NCHW plan gives the NHWC plan's bits, and
// the plan says which form it runs. Cases: stride 1-3, dilation, groups, 1x1 and 7x7, padding wider than
// the kernel's reach, output planes that end mid-panel, batch 2, and filters past each threshold (a
// reduction over 512, weights over 256 KB); and the other forms' NCHW stores (16 channels at a time
// through the transposing band store): blocks across images, a last block of 5 channels, depthwise; and
// depthwise, which runs on the NCHW planes themselves where output rows have 32 pixels or more (96 at
// strides above 1; the plan says which form). The NHWC plans with short kernel rows (one group, dilation
// 1, S * C <= 32 floats) read inside pixels' rows in place (DirectPlan::rows_in_place) and say so: the
// same bits again.
TEST(DirectFallback, NchwSmallFiltersGiveTheNhwcBits) {
  struct Case {
    ConvShape shape;
    bool rows;
  };
  const Case cases[] = {
      {make(1, 3, 23, 29, 20, 3, 3, 1, 1, 1, 1), true},
      {make(2, 3, 30, 27, 17, 7, 7, 3, 2, 1, 1), true},
      {make(1, 5, 17, 16, 9, 3, 3, 3, 3, 1, 1), true},
      {make(1, 12, 19, 21, 18, 3, 3, 2, 1, 2, 3), true},
      {make(1, 16, 9, 11, 33, 1, 1, 0, 1, 1, 1), true},
      {make(1, 6, 5, 40, 7, 5, 5, 4, 2, 1, 1), true},
      // Short kernel rows (S * C <= 32 floats) that NHWC reads in place for pixels whose taps are all inside
      // (the rest through the im2col): an image narrower and shorter than the 7x7 kernel (no such pixel),
      // padding past the kernel's reach, two images.
      {make(2, 3, 5, 6, 16, 7, 7, 3, 2, 1, 1), true},
      {make(2, 4, 13, 31, 21, 3, 3, 4, 1, 1, 1), true},
      // Output channels in whole panels with a reduction of at most 32 (a first layer's): the NHWC GEMM
      // writes the output itself, the bias and ReLU in the segments kernel for the inside pixels and as a
      // pass over the im2col's rows for the others.
      {make(1, 3, 23, 29, 32, 3, 3, 1, 1, 1, 1), true},
      {make(2, 2, 17, 21, 16, 3, 3, 2, 1, 1, 1), true},
      // Groups of at most 4 channels with output rows of 14 pixels or more read im2col^T's rows from the
      // planes split into column phases (DirectPlan::nchw_phases; above: 23x29 3x3, 30x27 7x7 stride 2
      // (rows of 14), 3 groups of 4 channels at dilation 2, padding past the kernel's reach): stride 3 with
      // dilation 2 over 2 channels, and one input channel without groups (a GEMM, not depthwise), two
      // images, rows of 17 and 30 pixels (a last panel of 1 and 14 pixels).
      {make(1, 2, 20, 50, 24, 3, 3, 2, 3, 2, 1), true},
      {make(2, 1, 9, 30, 20, 5, 5, 2, 1, 1, 1), true},
      // Grouped convolutions take the phases with up to 32 channels per group (ResNeXt's 3x3 layers):
      // 3 groups of 8 at stride 2 (rows of 15), 2 groups of 32 of 5 output channels each; 40 channels per
      // group pack panels.
      {make(1, 24, 10, 30, 24, 3, 3, 1, 2, 1, 3), true},
      {make(1, 64, 6, 20, 10, 3, 3, 1, 1, 1, 2), true},
      {make(1, 80, 5, 16, 16, 3, 3, 1, 1, 1, 2), true},
      {make(1, 64, 12, 13, 16, 3, 3, 1, 1, 2, 1), false},  // a reduction of 576
      {make(1, 40, 9, 10, 200, 3, 3, 1, 2, 1, 1), false},  // weights of 281 KB
      // 1x1 at stride 1 without padding over more than 32 channels: the GEMM reads the pixels' channels
      // where they lie (DirectPlan::pixels_in_place; NCHW from the NHWC copy, weights above the NCHW-rows
      // form's limit), also a group's channels at an offset (2 groups of 192), pixel blocks across two
      // images; with padding or at stride 2 the im2col copies them.
      {make(2, 300, 7, 9, 250, 1, 1, 0, 1, 1, 1), false},
      {make(2, 384, 5, 11, 400, 1, 1, 0, 1, 1, 2), false},
      {make(1, 300, 6, 7, 250, 1, 1, 1, 1, 1, 1), false},
      {make(1, 300, 9, 8, 250, 1, 1, 0, 2, 1, 1), false},
      // The NCHW stores of the other forms (16 channels at a time through the transposing band store):
      // pixel blocks across two images, a last block of 5 channels, depthwise with a multiplier.
      {make(2, 64, 7, 9, 37, 3, 3, 1, 1, 2, 1), false},  // a reduction of 576, 35 pixels per image
      {make(2, 37, 11, 10, 37, 3, 3, 1, 1, 1, 37), false},
      {make(2, 18, 9, 13, 54, 5, 5, 2, 2, 1, 18), false},
      // Depthwise with a multiplier at stride 1 on NCHW planes (output rows of 32 pixels or more):
      // dilation, padding past the kernel's reach. Shorter rows take the NHWC form.
      {make(1, 18, 9, 40, 54, 5, 5, 4, 1, 2, 18), false},
      // At stride 2 with rows of 96 pixels or more (the plane's columns in phases); and a shorter strided
      // row, which takes the NHWC form.
      {make(1, 18, 9, 200, 54, 5, 5, 2, 2, 1, 18), false},
      {make(1, 18, 9, 70, 54, 5, 5, 2, 2, 1, 18), false},
      {make(1, 18, 9, 13, 54, 5, 5, 4, 1, 2, 18), false},
      // Depthwise without a multiplier: runs of pixels, NCHW through packed bands of 16 channels (a last
      // block of 5 channels, rows of 300 pixels at stride 3 with dilation, padding past the kernel's reach,
      // two images).
      {make(2, 21, 5, 37, 21, 3, 3, 1, 1, 1, 21), false},
      {make(2, 21, 11, 300, 21, 3, 3, 1, 3, 2, 21), false},
      {make(1, 37, 9, 13, 37, 5, 5, 4, 1, 2, 37), false},
  };
  for (const Case& c : cases)
    for (Isa isa : testing::runnable_isas()) {
      const testing::Problem p = testing::random_problem(c.shape, 43);
      PlanOptions o;
      o.isa = isa;
      o.algorithm = AlgorithmChoice::kDirect;
      o.relu = true;
      o.threads = 2;
      std::optional<Plan> plan;
      o.layout = Layout::kNCHW;
      const std::vector<float> nchw = testing::run(p, o, &plan);
      const std::string described = plan->describe();
      o.layout = Layout::kNHWC;
      std::optional<Plan> nhwc_plan;
      const std::vector<float> nhwc = testing::run(p, o, &nhwc_plan);
      SCOPED_TRACE(c.shape.to_string() + " " + to_string(isa));
      const bool in_place = c.shape.groups == 1 && c.shape.dilation == 1 && c.shape.S * c.shape.C <= 32;
      EXPECT_EQ(nhwc_plan->describe().find("short kernel rows") != std::string::npos, in_place)
          << nhwc_plan->describe();
      // NHWC takes the column phases only with groups (then with output rows transposed).
      const int64_t kg = c.shape.K / c.shape.groups;
      const int64_t cg = c.shape.C / c.shape.groups;
      const bool lanes = c.shape.groups > 1 && c.shape.K == c.shape.C && (cg == 2 || cg == 4 || cg == 8);
      EXPECT_EQ(nhwc_plan->describe().find("output channels in lanes") != std::string::npos, lanes)
          << nhwc_plan->describe();
      const bool nhwc_phases = !lanes && c.rows && c.shape.groups > 1 && c.shape.C / c.shape.groups > 1 &&
                               c.shape.C / c.shape.groups <= 32 && kg <= (c.shape.stride == 1 ? 8 : 4) &&
                               c.shape.out_w() >= 14;
      EXPECT_EQ(nhwc_plan->describe().find("output rows transposed") != std::string::npos, nhwc_phases)
          << nhwc_plan->describe();
      EXPECT_EQ(described.find("small filter on NCHW") != std::string::npos, c.rows) << described;
      const bool phases =
          c.rows && c.shape.C / c.shape.groups <= (c.shape.groups > 1 ? 32 : 4) && c.shape.out_w() >= 14;
      EXPECT_EQ(described.find("split into column phases") != std::string::npos, phases) << described;
      const bool depthwise = c.shape.groups == c.shape.C && c.shape.groups > 1,
                 runs = depthwise && c.shape.K == c.shape.C;
      const bool planes = depthwise && !runs && c.shape.out_w() >= (c.shape.stride == 1 ? 32 : 96);
      EXPECT_EQ(described.find("depthwise on NCHW planes") != std::string::npos, planes) << described;
      EXPECT_EQ(described.find("runs of a row's pixels") != std::string::npos, runs) << described;
      const std::vector<float> as_nhwc =
          nchw_to_nhwc(std::span<const float>(nchw), c.shape.N, c.shape.K, c.shape.out_h(), c.shape.out_w());
      EXPECT_TRUE(as_nhwc == nhwc);
      EXPECT_LT(testing::rel_l2(nchw, testing::reference(p, Layout::kNCHW, true)), 1e-6);
    }
}

// Deep layers with few output pixels (one pixel block here: 30 and 25) split each block's output channels
// into parts, one task each, so that every thread gets work: the reference's values and the same bits for
// every thread count, in NHWC and NCHW (NCHW16c: BlockedLayout.DirectPathAndTypedTensors), with groups.
// Depthwise layers with few pixels take smaller pixel blocks instead (7x7: 13 pixels at 2 threads, 25 at
// 1): each pixel's sums are the same whatever its block.
TEST(DirectFallback, FewPixelsSplitOutputChannelsWithTheSameBits) {
  const ConvShape shapes[] = {
      make(1, 160, 11, 9, 290, 3, 3, 1, 2, 1, 1), make(1, 64, 9, 9, 96, 3, 3, 1, 2, 1, 2),
      make(1, 40, 7, 7, 40, 3, 3, 1, 1, 1, 40), make(2, 24, 7, 5, 48, 3, 3, 1, 1, 1, 24)};
  for (const ConvShape& s : shapes) {
    const testing::Problem p = testing::random_problem(s, 44);
    for (Isa isa : testing::runnable_isas()) {
      for (Layout layout : {Layout::kNHWC, Layout::kNCHW}) {
        PlanOptions o;
        o.isa = isa;
        o.layout = layout;
        o.relu = true;
        o.threads = 1;
        const std::vector<float> base = testing::run(p, o);
        SCOPED_TRACE(s.to_string() + " " + to_string(isa) + " " + to_string(layout));
        EXPECT_LT(testing::rel_l2(base, testing::reference(p, layout, true)), 1e-6);
        for (int threads : {2, 3, 5}) {
          o.threads = threads;
          ASSERT_EQ(testing::run(p, o), base) << "threads=" << threads;
        }
      }
    }
  }
}

// The direct GEMM's pixel blocks (balanced_pixel_block), over a sweep of pixel counts, caps, kernel rows
// and threads: a multiple of the kernel's rows, at most the cap; one block where the pixels fit in one;
// where they take a few blocks, as many as a multiple of the threads and of nearly one size (at most the
// rounding to whole row groups above an even share). The case that asked for it: 1x1024x14x14->512 on
// AVX2, 196 pixels under a cap of 126, was cut into 126 and 70.
TEST(DirectBlocking, PixelBlocksAreEvenAndShareOutAmongTheThreads) {
  EXPECT_EQ(balanced_pixel_block(196, 126, 6, 2), 102);  // blocks of 102 and 94
  for (int64_t mr : {4, 6, 8}) {
    for (int threads : {1, 2, 3, 4, 16}) {
      for (int64_t cap = mr; cap <= 144; cap = cap == 144 ? 145 : std::min<int64_t>(144, cap + 5 * mr)) {
        for (int64_t pixels = 1; pixels <= 4000; pixels += pixels < 300 ? 1 : 37) {
          const int64_t block = balanced_pixel_block(pixels, cap, mr, threads);
          SCOPED_TRACE(::testing::Message() << "pixels " << pixels << " cap " << cap << " mr " << mr
                                            << " threads " << threads << " block " << block);
          ASSERT_EQ(block % mr, 0);
          ASSERT_GE(block, mr);
          ASSERT_LE(block, cap);
          const int64_t blocks = ceil_div(pixels, block), fewest = ceil_div(pixels, cap);
          if (fewest == 1) {
            ASSERT_EQ(blocks, 1);
          } else if (fewest < 8 * threads) {
            const int64_t wanted = round_up(fewest, threads);
            ASSERT_LE(blocks, wanted);
            ASSERT_LT(block, ceil_div(pixels, wanted) + mr);
          }
        }
      }
    }
  }
}

// Grouped convolutions with 2, 4 or 8 channels per group in and out take the grouped-lanes form on NHWC
// (output channels in lanes, kernels/grouped_lanes_template.hpp) and say so: the NCHW form's bits (the
// same (u, v, c) chain), the float64 reference's values, the same bits at 1-3 threads, every kernel path.
// Cases: 3x3 at strides 1 and 2 (the unrolled four-pixel form) over rows whose length leaves 1-3 pixels
// after the fours, stride 3, dilation 2, 5x5 and 1x3 kernels (one pixel at a time), padding past the
// kernel's reach, images narrower than the kernel, K not a multiple of 16 (a last partial vector of 12
// or 8 channels), more than one piece of 64 channels, batch 2; relu with and without bias.
TEST(DirectFallback, GroupedLanesGiveTheNchwBits) {
  const ConvShape shapes[] = {
      make(1, 128, 9, 19, 128, 3, 3, 1, 1, 1, 32),  // ResNeXt's 4 per group, two pieces
      make(2, 24, 11, 14, 24, 3, 3, 1, 2, 1, 3),    // 8 per group at stride 2, a partial vector of 8
      make(1, 12, 7, 9, 12, 3, 3, 2, 1, 1, 6),      // 2 per group, 12 channels, padding 2
      make(1, 40, 13, 10, 40, 3, 3, 3, 3, 2, 5),    // stride 3, dilation 2, padding past the reach
      make(2, 16, 9, 7, 16, 5, 5, 2, 1, 1, 4),      // 5x5
      make(1, 32, 5, 3, 32, 3, 3, 1, 1, 1, 4),      // an image narrower than four pixels
      make(1, 8, 6, 11, 8, 1, 3, 0, 2, 1, 2),       // 1x3 at stride 2
  };
  for (const ConvShape& s : shapes)
    for (bool with_bias : {true, false}) {
      const testing::Problem p = testing::random_problem(s, 45, with_bias);
      for (Isa isa : testing::runnable_isas()) {
        PlanOptions o;
        o.isa = isa;
        o.algorithm = AlgorithmChoice::kDirect;
        o.relu = true;
        o.threads = 2;
        o.layout = Layout::kNCHW;
        const std::vector<float> nchw = testing::run(p, o);
        o.layout = Layout::kNHWC;
        std::optional<Plan> plan;
        const std::vector<float> nhwc = testing::run(p, o, &plan);
        SCOPED_TRACE(s.to_string() + " " + to_string(isa) + (with_bias ? " bias" : ""));
        EXPECT_NE(plan->describe().find("output channels in lanes"), std::string::npos) << plan->describe();
        EXPECT_TRUE(nchw_to_nhwc(std::span<const float>(nchw), s.N, s.K, s.out_h(), s.out_w()) == nhwc);
        EXPECT_LT(testing::rel_l2(nhwc, testing::reference(p, Layout::kNHWC, true)), 1e-6);
        for (int threads : {1, 3}) {
          o.threads = threads;
          ASSERT_EQ(testing::run(p, o), nhwc) << "threads=" << threads;
        }
      }
    }
}

// The automatic choice picks something and it is correct (whatever it picks).
TEST(AutoChoice, AutoPlanIsCorrectAndExplained) {
  const ConvShape shapes[] = {make(1, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1),
                              make(1, 32, 7, 7, 48, 3, 3, 1, 1, 1, 1),
                              make(1, 8, 20, 20, 8, 5, 5, 2, 1, 1, 1)};
  for (const ConvShape& s : shapes) {
    const testing::Problem p = testing::random_problem(s, 3);
    std::optional<Plan> plan;
    const std::vector<float> got = testing::run(p, PlanOptions{}, &plan);
    EXPECT_FALSE(plan->reason().empty());
    EXPECT_LT(testing::rel_l2(got, testing::reference(p, Layout::kNCHW, false)), 1e-5) << plan->describe();
  }
}

}  // namespace
}  // namespace nova::conv
