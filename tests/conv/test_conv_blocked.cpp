// The NCHW16c layout (oneDNN's nChw16c). For the same algorithm and tile the engine computes the same
// values whatever the layout of its tensors, so a plan's NCHW16c output, converted back to NCHW, must
// equal the NCHW plan's output bit for bit: Winograd at every precision, typed tensors, calibration, the
// direct path. (A random sweep of 276 shapes, precisions, tensor types, thread counts and orders, run
// while this was written, found no difference.) The output padding
// lanes must be zero, and the input padding lanes must never be read as data.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "conv_test_util.hpp"
#include "nova/error.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::conv {
namespace {

using testing::same_bits;

std::vector<float> to_blocked(const std::vector<float>& x, const ConvShape& s) {
  return nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
}

// The plan's output in NCHW16c (floats, padding lanes included).
std::vector<float> run_blocked(const testing::Problem& p, PlanOptions o, const std::vector<float>& x16,
                               const float* calibration = nullptr, LowpStats* stats = nullptr) {
  o.layout = Layout::kNCHW16c;
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), o);
  if (calibration != nullptr) {
    const float* samples[] = {calibration};
    plan.calibrate(samples);
  }
  std::vector<float> out(static_cast<std::size_t>(output_elements(p.shape, Layout::kNCHW16c)), -7.0f);
  plan.execute(x16.data(), out.data());
  if (stats != nullptr) *stats = plan.stats();
  return out;
}

// Every padding lane (channels K..16*ceil(K/16)-1) is +0.
bool padding_lanes_zero(const std::vector<float>& out16, const ConvShape& s) {
  const int64_t Kb = (s.K + 15) / 16, pixels = s.out_h() * s.out_w();
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = s.K; c < Kb * 16; ++c) {
        const float v = out16[static_cast<std::size_t>(((n * Kb + Kb - 1) * pixels + p) * 16 + c % 16)];
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        if (bits != 0) return false;
      }
  return true;
}

std::vector<float> back_to_nchw(const std::vector<float>& out16, const ConvShape& s) {
  return nchw16c_to_nchw(std::span<const float>(out16), s.N, s.K, s.out_h(), s.out_w());
}

TEST(BlockedLayout, SameBitsAsNchwAtEveryPrecision) {
  for (const ConvShape& s :
       {ConvShape{2, 37, 19, 23, 21, 3, 3, 1, 1}, ConvShape{1, 16, 12, 12, 32, 3, 3, 1, 1},
        ConvShape{1, 20, 14, 14, 18, 5, 5, 2, 2}}) {
    const testing::Problem p = testing::random_problem(s, 21);
    const std::vector<float> x16 = to_blocked(p.input, s);
    for (Precision prec :
         {Precision::kFp32, Precision::kBf16, Precision::kInt8, Precision::kFp16, Precision::kInt8Spatial}) {
      if (prec == Precision::kInt8Spatial && s.R == 5) continue;  // runs the direct path: covered below
      for (int block : {0, -1}) {
        SCOPED_TRACE(s.to_string() + " " + to_string(prec) + " block " + std::to_string(block));
        PlanOptions o;
        o.precision = prec;
        o.threads = 2;
        o.tile_block = block;
        o.relu = true;
        // The same tile in both layouts: the automatic choice weighs each layout's copy costs, so on
        // some shapes it picks differently (then the results differ, both correct).
        o.algorithm = AlgorithmChoice::kWinograd;
        o.tile = s.R == 3 ? TileSize{4, 3} : TileSize{2, 5};
        const std::vector<float> nchw = testing::run(p, o);
        const std::vector<float> out16 = run_blocked(p, o, x16);
        EXPECT_TRUE(padding_lanes_zero(out16, s));
        EXPECT_TRUE(same_bits(back_to_nchw(out16, s), nchw));
      }
    }
    // int8 calibrated on the sample in each plan's own layout: the same scales, the same bits.
    PlanOptions o;
    o.precision = Precision::kInt8;
    o.algorithm = AlgorithmChoice::kWinograd;
    o.tile = s.R == 3 ? TileSize{4, 3} : TileSize{2, 5};
    Plan nchw_plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
    const float* samples[] = {p.input.data()};
    nchw_plan.calibrate(samples);
    std::vector<float> nchw(static_cast<std::size_t>(s.output_size()));
    nchw_plan.execute(p.input.data(), nchw.data());
    const std::vector<float> out16 = run_blocked(p, o, x16, x16.data());
    EXPECT_TRUE(same_bits(back_to_nchw(out16, s), nchw)) << s.to_string();
  }
}

// Plans on FP32 NCHW16c and NHWC tensors of whole channel blocks read the input in place (no blocked
// copy; tiles that reach into the padding staged): the same bits as the NCHW plan, which copies, for
// every tile, padding 0..4 (tiles wholly in the padding), partial tiles, images smaller than a tile,
// fused and phased orders, 1 and 2 threads. A channel count with padding lanes keeps the copy.
TEST(BlockedLayout, InputReadInPlaceGivesTheCopysBits) {
  int in_place = 0;
  for (const TileSize& tile :
       {TileSize{2, 3}, TileSize{4, 3}, TileSize{6, 3}, TileSize{7, 3}, TileSize{4, 5}})
    for (int pad : {0, 1, 2, 4})
      for (const auto& [N, C, H, W] :
           {std::array<int64_t, 4>{2, 32, 17, 23}, {1, 16, 3, 4}, {1, 48, 14, 14}}) {
        ConvShape s{N, C, H, W, 24, tile.r, tile.r, pad, pad};
        if (s.out_h() < 1 || s.out_w() < 1) continue;
        const testing::Problem p = testing::random_problem(s, static_cast<uint32_t>(31 * pad + H));
        const std::vector<float> x16 = to_blocked(p.input, s);
        for (int block : {0, 3, -1})
          for (int threads : {1, 2}) {
            SCOPED_TRACE(s.to_string() + " " + tile.to_string() + " block " + std::to_string(block) +
                         " threads " + std::to_string(threads));
            PlanOptions o;
            o.tile = tile;
            o.tile_block = block;
            o.threads = threads;
            o.relu = pad == 1;
            const std::vector<float> nchw = testing::run(p, o);
            o.layout = Layout::kNCHW16c;
            const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
            ASSERT_NE(plan.describe().find("input read in place"), std::string::npos) << plan.describe();
            ++in_place;
            std::vector<float> out16(static_cast<std::size_t>(output_elements(s, Layout::kNCHW16c)), -7.0f);
            plan.execute(x16.data(), out16.data());
            EXPECT_TRUE(same_bits(back_to_nchw(out16, s), nchw));
            o.layout = Layout::kNHWC;
            std::optional<Plan> nhwc_plan;
            const std::vector<float> nhwc = testing::run(p, o, &nhwc_plan);
            ASSERT_NE(nhwc_plan->describe().find("input read in place"), std::string::npos);
            EXPECT_TRUE(
                same_bits(nhwc_to_nchw(std::span<const float>(nhwc), s.N, s.K, s.out_h(), s.out_w()), nchw));
          }
      }
  EXPECT_GT(in_place, 0);
  // The low-precision plans read FP32 tensors in place too (their transforms quantize or round V, not the
  // input): the same bits as their NCHW plans, per-call and calibrated int8 scales included.
  for (Precision prec : {Precision::kBf16, Precision::kInt8, Precision::kFp16})
    for (int pad : {1, 4})
      for (int block : {0, -1}) {
        const ConvShape s{2, 32, 13, 11, 20, 3, 3, pad, pad};
        const testing::Problem p = testing::random_problem(s, static_cast<uint32_t>(7 + pad));
        SCOPED_TRACE(s.to_string() + " " + to_string(prec) + " block " + std::to_string(block));
        PlanOptions o;
        o.precision = prec;
        o.tile = TileSize{4, 3};
        o.tile_block = block;
        o.threads = 2;
        const std::vector<float> nchw = testing::run(p, o);
        const std::vector<float> x16 = to_blocked(p.input, s);
        o.layout = Layout::kNCHW16c;
        const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
        ASSERT_NE(plan.describe().find("input read in place"), std::string::npos) << plan.describe();
        std::vector<float> out16(static_cast<std::size_t>(output_elements(s, Layout::kNCHW16c)), -7.0f);
        plan.execute(x16.data(), out16.data());
        EXPECT_TRUE(same_bits(back_to_nchw(out16, s), nchw));
        o.layout = Layout::kNHWC;
        const std::vector<float> nhwc = testing::run(p, o);
        EXPECT_TRUE(
            same_bits(nhwc_to_nchw(std::span<const float>(nhwc), s.N, s.K, s.out_h(), s.out_w()), nchw));
        if (prec == Precision::kInt8) {  // calibrated on the sample, read in place in both plans' layouts
          o.layout = Layout::kNCHW;
          Plan nchw_plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
          const float* samples[] = {p.input.data()};
          nchw_plan.calibrate(samples);
          std::vector<float> cal(static_cast<std::size_t>(s.output_size()));
          nchw_plan.execute(p.input.data(), cal.data());
          o.layout = Layout::kNCHW16c;
          EXPECT_TRUE(same_bits(back_to_nchw(run_blocked(p, o, x16, x16.data()), s), cal));
        }
      }
  // 20 channels: the last block has padding lanes, which the copy zeroes, so the plan keeps it; NCHW is
  // always copied (transposed into channel blocks); typed tensors of whole blocks are read in place
  // (staged and widened by runs of tiles); int8-spatial quantizes in the copy (but for int8 tensors at
  // the call's own scale: Int8Spatial.Int8CodesReadInPlaceGiveTheCopysBits).
  const ConvShape s{1, 20, 9, 9, 8, 3, 3, 1, 1};
  const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.1f);
  PlanOptions o;
  o.layout = Layout::kNCHW16c;
  o.tile = TileSize{4, 3};
  EXPECT_EQ(Plan::create(s, w.data(), nullptr, o).describe().find("in place"), std::string::npos);
  o.layout = Layout::kNHWC;
  EXPECT_EQ(Plan::create(s, w.data(), nullptr, o).describe().find("in place"), std::string::npos);
  const ConvShape s32{1, 32, 9, 9, 8, 3, 3, 1, 1};
  const std::vector<float> w32(static_cast<std::size_t>(s32.weight_size()), 0.1f);
  o.layout = Layout::kNCHW;
  EXPECT_EQ(Plan::create(s32, w32.data(), nullptr, o).describe().find("in place"), std::string::npos);
  o.layout = Layout::kNCHW16c;
  o.precision = Precision::kBf16;
  o.input = {DataType::kBf16, 1.0f};
  EXPECT_NE(Plan::create(s32, w32.data(), nullptr, o).describe().find("input read in place"),
            std::string::npos);
  o.input = {};
  o.precision = Precision::kInt8Spatial;
  EXPECT_EQ(Plan::create(s32, w32.data(), nullptr, o).describe().find("in place"), std::string::npos);
}

TEST(BlockedLayout, DirectPathAndTypedTensors) {
  const ConvShape strided{2, 19, 17, 15, 23, 3, 3, 1, 1, 2};  // stride 2: the direct path
  ConvShape grouped{1, 32, 11, 13, 24, 3, 3, 1, 1};
  grouped.groups = 4;
  ConvShape depthwise{1, 20, 9, 11, 40, 3, 3, 1, 1};  // one input channel per group, two outputs each
  depthwise.groups = 20;
  // Depthwise without a multiplier: runs of output pixels read in place (a last block of 5 channels,
  // taps cut by the edges; 5x5 at stride 2 and dilation 2), against the NCHW forms' bits.
  ConvShape depthwise_runs{2, 37, 13, 21, 37, 3, 3, 1, 1};
  depthwise_runs.groups = 37;
  ConvShape depthwise_runs_strided{1, 21, 19, 17, 21, 5, 5, 3, 3, 2, 2};
  depthwise_runs_strided.groups = 21;
  // One pixel block of 30 pixels, its 290 output channels (a last block of 2) in parts, one per task.
  const ConvShape few_pixels{1, 160, 11, 9, 290, 3, 3, 1, 1, 2};
  // Grouped with rows of 14 pixels or more and at most 8 output channels per group (4 at stride 2): the
  // column phases, each output row's channels of every group transposed into the blocks (a last block of 4
  // channels); as many output as input channels per group, 4 (6 groups) or 8 (3 groups) at stride 2, the
  // grouped-lanes form (more: DirectFallback.GroupedLanesGiveTheNchwBits).
  ConvShape grouped_phases{2, 40, 9, 23, 36, 3, 3, 1, 1};
  grouped_phases.groups = 4;
  ConvShape grouped_phases_strided{1, 24, 12, 40, 24, 3, 3, 1, 1, 2};
  grouped_phases_strided.groups = 6;
  ConvShape grouped_strided{1, 24, 12, 40, 24, 3, 3, 1, 1, 2};
  grouped_strided.groups = 3;
  // Grouped lanes over more than one channel block with a last one of 4 channels (5 groups of 4), dilation 2.
  ConvShape grouped_lanes{2, 20, 9, 17, 20, 3, 3, 2, 2, 1, 2};
  grouped_lanes.groups = 5;
  for (const ConvShape& s : {strided, grouped, depthwise, depthwise_runs, depthwise_runs_strided, few_pixels,
                             grouped_phases, grouped_phases_strided, grouped_strided, grouped_lanes}) {
    const testing::Problem p = testing::random_problem(s, 5);
    PlanOptions o;
    o.threads = 2;
    o.relu = s.groups == s.C;
    const std::vector<float> nchw = testing::run(p, o);
    // The input's padding lanes (of a last partial block) hold NaN: no output may depend on them.
    std::vector<float> x16 = to_blocked(p.input, s);
    const int64_t cb = (s.C + 15) / 16;
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t px = 0; px < s.H * s.W; ++px)
        for (int64_t c = s.C; c < cb * 16; ++c)
          x16[static_cast<std::size_t>(((n * cb + cb - 1) * s.H * s.W + px) * 16 + c % 16)] =
              std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> out16 = run_blocked(p, o, x16);
    EXPECT_TRUE(padding_lanes_zero(out16, s)) << s.to_string();
    EXPECT_TRUE(same_bits(back_to_nchw(out16, s), nchw)) << s.to_string();
    o.layout = Layout::kNCHW16c;
    const int64_t cg = s.C / s.groups;
    const bool lanes = s.groups > 1 && s.K == s.C && (cg == 2 || cg == 4 || cg == 8);
    const bool phases = !lanes && s.groups > 1 && cg > 1 && cg <= 32 &&
                        s.K / s.groups <= (s.stride == 1 ? 8 : 4) && s.out_w() >= 14;
    const std::string described = Plan::create(s, p.weights.data(), p.bias.data(), o).describe();
    EXPECT_EQ(described.find("column phases") != std::string::npos, phases) << described;
    EXPECT_EQ(described.find("output channels in lanes") != std::string::npos, lanes) << described;
    o.layout = Layout::kNCHW;
    if (s.groups == s.C && s.K == s.C) {
      o.layout = Layout::kNCHW16c;
      EXPECT_NE(Plan::create(s, p.weights.data(), p.bias.data(), o).describe().find("runs of a row's pixels"),
                std::string::npos);
    }
  }
  // int8 input and bf16 output: the elements convert one by one, so the typed tensors correspond too.
  const ConvShape s{1, 24, 15, 15, 20, 3, 3, 1, 1};
  const testing::Problem p = testing::random_problem(s, 8);
  for (AlgorithmChoice algorithm : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
    PlanOptions o;
    o.algorithm = algorithm;
    if (algorithm == AlgorithmChoice::kWinograd) o.tile = TileSize{4, 3};
    o.input = {DataType::kInt8, 1.0f / 64.0f};
    o.output = {DataType::kBf16, 1.0f};
    auto typed_run = [&](Layout layout, const std::vector<float>& x) {
      o.layout = layout;
      std::vector<int8_t> xq(x.size());
      convert_from_fp32(x.data(), static_cast<int64_t>(x.size()), o.input, xq.data());
      const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
      const int64_t count = output_elements(s, layout);
      std::vector<uint16_t> y(static_cast<std::size_t>(count));
      plan.execute(static_cast<const void*>(xq.data()), static_cast<void*>(y.data()));
      std::vector<float> yf(static_cast<std::size_t>(count));
      convert_to_fp32(y.data(), count, o.output, yf.data());
      return yf;
    };
    const std::vector<float> nchw = typed_run(Layout::kNCHW, p.input);
    const std::vector<float> out16 = typed_run(Layout::kNCHW16c, to_blocked(p.input, s));
    EXPECT_TRUE(padding_lanes_zero(out16, s));
    EXPECT_TRUE(same_bits(back_to_nchw(out16, s), nchw));
  }
}

// NaN or large values in the input's padding lanes are not data: no output changes, nothing is counted, and
// neither the scales nor fp16's V shift see them (int8-spatial's input scale, from a scan of the whole
// tensor, did: 1000 there zeroed every output; a calibration on such a sample too). A NaN in a real
// channel reaches the outputs it should, but never the output padding lanes.
TEST(BlockedLayout, PaddingLanesAreNotData) {
  const ConvShape s{1, 21, 13, 13, 19, 3, 3, 1, 1};
  const testing::Problem p = testing::random_problem(s, 9);
  const std::vector<float> clean = to_blocked(p.input, s);
  const int64_t Cb = 2, pixels = s.H * s.W;
  for (float garbage : {std::numeric_limits<float>::quiet_NaN(), 1000.0f, -3e38f}) {
    std::vector<float> dirty(clean);
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t c = s.C; c < Cb * 16; ++c)
        dirty[static_cast<std::size_t>(((Cb - 1) * pixels + px) * 16 + c % 16)] = garbage;
    for (Precision prec :
         {Precision::kFp32, Precision::kInt8, Precision::kInt8Spatial, Precision::kFp16, Precision::kBf16}) {
      for (AlgorithmChoice algorithm : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
        if (prec != Precision::kFp32 && algorithm == AlgorithmChoice::kDirect) continue;
        SCOPED_TRACE(to_string(prec) + (algorithm == AlgorithmChoice::kDirect ? " direct" : " winograd") +
                     " garbage " + std::to_string(garbage));
        PlanOptions o;
        o.precision = prec;
        o.algorithm = algorithm;
        LowpStats stats;
        const std::vector<float> want = run_blocked(p, o, clean);
        EXPECT_TRUE(same_bits(run_blocked(p, o, dirty, nullptr, &stats), want));
        EXPECT_EQ(stats.nonfinite_tiles, 0);
        if (prec == Precision::kInt8 || prec == Precision::kInt8Spatial) {  // calibrated on a dirty sample
          EXPECT_TRUE(
              same_bits(run_blocked(p, o, clean, dirty.data()), run_blocked(p, o, clean, clean.data())));
        }
        if (!std::isnan(garbage)) continue;
        std::vector<float> nan_in(clean);
        nan_in[static_cast<std::size_t>((0 * pixels + 6 * 13 + 6) * 16 + 3)] =
            std::numeric_limits<float>::quiet_NaN();
        const std::vector<float> out = run_blocked(p, o, nan_in);
        EXPECT_TRUE(padding_lanes_zero(out, s));
        EXPECT_TRUE(std::isnan(out[static_cast<std::size_t>((6 * 13 + 6) * 16)]));  // channel 0 at (6, 6)
      }
    }
  }
}

TEST(BlockedLayout, NamesSizesAndErrors) {
  EXPECT_EQ(parse_layout("nchw16c"), Layout::kNCHW16c);
  EXPECT_EQ(parse_layout("nChw16c"), Layout::kNCHW16c);
  EXPECT_EQ(to_string(Layout::kNCHW16c), "nchw16c");
  EXPECT_THROW(parse_layout("nchw8c"), Error);
  const ConvShape s{2, 17, 5, 6, 33, 3, 3, 1, 1};
  EXPECT_EQ(input_elements(s, Layout::kNCHW16c), 2 * 32 * 5 * 6);
  EXPECT_EQ(output_elements(s, Layout::kNCHW16c), 2 * 48 * 5 * 6);
  EXPECT_EQ(input_elements(s, Layout::kNHWC), s.input_size());
  EXPECT_EQ(output_elements(s, Layout::kNCHW), s.output_size());
  // Overlap is judged on the blocked sizes: an output starting inside the padded input is refused.
  const testing::Problem p = testing::random_problem(s, 2);
  PlanOptions o;
  o.layout = Layout::kNCHW16c;
  const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
  std::vector<float> buf(
      static_cast<std::size_t>(input_elements(s, o.layout) + output_elements(s, o.layout)));
  EXPECT_THROW(plan.execute(buf.data(), buf.data() + s.input_size()), Error);
  EXPECT_NO_THROW(plan.execute(buf.data(), buf.data() + input_elements(s, o.layout)));
}

}  // namespace
}  // namespace nova::conv
