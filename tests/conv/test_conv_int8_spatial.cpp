// The int8-spatial path: input quantized per tensor and filters per output channel before exact
// integer transforms. Its result must be the float64 direct convolution of the quantized data up to
// FP32 rounding (the closed form: Winograd adds no error of its own), also on data built to drive the
// int32 sums past 2^31 if the plan did not split the channels; its error must match the int8-spatial
// preset's emulation; portable and SIMD kernels, orders and thread counts give the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "conv_test_util.hpp"
#include "nova/error.hpp"
#include "nova/exact/points.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::conv {
namespace {

using testing::rel_l2;
using testing::same_bits;

std::vector<LowpKernel> spatial_kernels() {
  std::vector<LowpKernel> k = {LowpKernel::kPortable};
  // The SIMD kernels of the default path: AVX512-VNNI, or AVX2 where the CPU has no AVX-512.
  if ((lowp_simd_supported(Precision::kInt8Spatial) && best_isa() == Isa::kAvx512) ||
      best_isa() == Isa::kAvx2)
    k.push_back(LowpKernel::kSimd);
  return k;
}

std::vector<float> run(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                       TileSize tile, LowpKernel kernel, int threads = 2, int block = 0,
                       LowpStats* stats = nullptr, std::optional<Isa> isa = std::nullopt) {
  PlanOptions o;
  o.precision = Precision::kInt8Spatial;
  o.tile = tile;
  o.lowp_kernel = kernel;
  o.threads = threads;
  o.tile_block = block;
  o.isa = isa;
  const Plan plan = Plan::create(s, w.data(), nullptr, o);
  EXPECT_EQ(plan.precision(), Precision::kInt8Spatial);
  EXPECT_NE(plan.describe().find("int8-spatial GEMM"), std::string::npos) << plan.describe();
  std::vector<float> y(static_cast<std::size_t>(s.output_size()));
  plan.execute(x.data(), y.data());
  if (stats != nullptr) *stats = plan.stats();
  return y;
}

// The data as the engine quantizes it: input per tensor (s = max|x| / 127 in FP32, codes RNE(x * (1/s))
// in FP32), weights per output channel (s = max|w_k| / 127, codes RNE(w / s) in float64).
void quantized(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
               std::vector<double>* xq, std::vector<double>* wq) {
  float amax = 0.0f;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  const float sx = amax / 127.0f, inv = 1.0f / sx;
  xq->resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    (*xq)[i] = static_cast<double>(std::clamp(std::nearbyint(x[i] * inv), -127.0f, 127.0f)) * sx;
  const int64_t per_k = s.C * s.R * s.S;
  wq->resize(w.size());
  for (int64_t k = 0; k < s.K; ++k) {
    double m = 0.0;
    for (int64_t i = 0; i < per_k; ++i) m = std::max(m, std::fabs(static_cast<double>(w[k * per_k + i])));
    const double sw = m > 0.0 ? m / 127.0 : 1.0;
    for (int64_t i = 0; i < per_k; ++i) {
      const auto idx = static_cast<std::size_t>(k * per_k + i);
      (*wq)[idx] = std::clamp(std::nearbyint(static_cast<double>(w[idx]) / sw), -127.0, 127.0) * sw;
    }
  }
}

TEST(Int8Spatial, EqualsTheDirectConvolutionOfTheQuantizedData) {
  for (TileSize tile : {TileSize{2, 3}, TileSize{4, 3}}) {
    const ConvShape s{2, 37, 19, 22, 29};  // 3x3, padding 1 (the ConvShape defaults)
    const testing::Problem p = testing::random_problem(s, 21, false);
    std::vector<double> xq, wq;
    quantized(s, p.input, p.weights, &xq, &wq);
    const std::vector<double> ref_q = reference_conv2d(s, xq, wq, {});
    for (LowpKernel k : spatial_kernels()) {
      const std::vector<float> y = run(s, p.input, p.weights, tile, k);
      // Only FP32 rounding of the dequantized sums and of the output transform remains.
      EXPECT_LT(rel_l2(y, ref_q), 2e-6) << tile.to_string() << " kernel " << static_cast<int>(k);
    }
  }
}

// A transform whose B^T has fractions (the lagrange scaling puts the 1/N_p normalizers there): the plan
// makes an integer B' from it and runs the generic tile code with B' instead of the generated code for
// the default transform. The result is still the direct convolution of the quantized data.
TEST(Int8Spatial, FractionalInputTransformsRunTheGenericCodeExactly) {
  for (const auto& [tile, points] :
       {std::pair{TileSize{2, 3}, "0, 1, -1, inf"}, std::pair{TileSize{4, 3}, "0, ±1, ±2, inf"}}) {
    const Transform lagrange =
        Transform::construct(tile, parse_points(points), ScalingSpec{"lagrange", {}, {}});
    bool fractional = false;
    for (std::size_t i = 0; i < lagrange.BT().rows(); ++i)
      for (std::size_t j = 0; j < lagrange.BT().cols(); ++j)
        fractional = fractional || lagrange.BT()(i, j).get_den() != 1;
    ASSERT_TRUE(fractional) << tile.to_string();
    const ConvShape s{2, 21, 13, 17, 11};
    const testing::Problem p = testing::random_problem(s, 33, false);
    std::vector<double> xq, wq;
    quantized(s, p.input, p.weights, &xq, &wq);
    const std::vector<double> ref_q = reference_conv2d(s, xq, wq, {});
    PlanOptions o;
    o.precision = Precision::kInt8Spatial;
    o.transform = lagrange;
    o.threads = 2;
    const Plan plan = Plan::create(s, p.weights.data(), nullptr, o);
    std::vector<float> y(static_cast<std::size_t>(s.output_size()));
    plan.execute(p.input.data(), y.data());
    EXPECT_LT(rel_l2(y, ref_q), 2e-6) << tile.to_string() << ": " << plan.describe();
    EXPECT_NE(plan.describe().find("} generic"), std::string::npos) << plan.describe();
  }
}

// Every channel carries the same pattern, chosen so that one tap's integer product is as large as the
// plan's bound allows in every channel: with 512 channels the exact sum (about 1.5e10) is far beyond
// int32, so a plan that summed all channels in one int32 run would return garbage.
TEST(Int8Spatial, ChannelRunsKeepTheInt32SumsExactAtTheWorstCase) {
  const ConvShape s{1, 512, 6, 6, 16};  // 3x3, padding 1 (the ConvShape defaults)
  const TileSize tile{4, 3};
  const Transform t = Transform::construct(tile, standard_points(5, true));
  // Tap (3, 3): B^T row 3 and G row 3 (scaled to integers: [0,-2,-1,2,1,0] and [1,2,4]).
  std::vector<float> x(static_cast<std::size_t>(s.input_size())),
      w(static_cast<std::size_t>(s.weight_size()));
  for (int64_t c = 0; c < s.C; ++c)
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        const double b = to_double(t.BT()(3, static_cast<std::size_t>(i))) *
                         to_double(t.BT()(3, static_cast<std::size_t>(j)));
        x[static_cast<std::size_t>((c * 6 + i) * 6 + j)] = b > 0 ? 1.0f : b < 0 ? -1.0f : 0.5f;
      }
  for (int64_t k = 0; k < s.K; ++k)
    for (int64_t c = 0; c < s.C; ++c)
      for (int i = 0; i < 9; ++i)
        w[static_cast<std::size_t>((k * s.C + c) * 9 + i)] = k % 2 == 0 ? 1.0f : -0.5f;
  std::vector<double> xq, wq;
  quantized(s, x, w, &xq, &wq);
  const std::vector<double> ref_q = reference_conv2d(s, xq, wq, {});
  for (LowpKernel k : spatial_kernels()) {
    const std::vector<float> y = run(s, x, w, tile, k, 1);
    EXPECT_LT(rel_l2(y, ref_q), 2e-6) << "kernel " << static_cast<int>(k);
  }
}

TEST(Int8Spatial, MatchesThePresetEmulationAndBeatsWinogradDomainInt8) {
  const LayerDataset d = make_layer_dataset(1, 40, 23, 23, 48, 3, DataKind::kGaussian, 7);
  const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
  const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights, {});
  for (TileSize tile : {TileSize{2, 3}, TileSize{4, 3}}) {
    const Transform t = Transform::construct(tile, standard_points(tile.n() - 1, true));
    const double emulated =
        ErrorEvaluator(d, precision_preset("int8-spatial"), tile).evaluate(t.to_f64()).rel_l2;
    const double e = rel_l2(run(d.shape, x, w, tile, LowpKernel::kAuto), ref);
    EXPECT_NEAR(e / emulated, 1.0, 0.10) << tile.to_string() << " engine " << e << " emulated " << emulated;
    PlanOptions o;
    o.precision = Precision::kInt8;
    o.tile = tile;
    const Plan lance = Plan::create(d.shape, w.data(), nullptr, o);
    std::vector<float> y(static_cast<std::size_t>(d.shape.output_size()));
    lance.execute(x.data(), y.data());
    if (tile.m == 4) {
      EXPECT_LT(3.0 * e, rel_l2(y, ref)) << "int8-spatial " << e;  // measured: about 8x at F(4,3)
    }
  }
}

TEST(Int8Spatial, SameBitsOnEveryKernelOrderAndThreadCount) {
  const ConvShape s{2, 48, 15, 15, 40};  // 3x3, padding 1 (the ConvShape defaults)
  const testing::Problem p = testing::random_problem(s, 5, false);
  std::vector<float> first;
  for (LowpKernel k : spatial_kernels())
    for (int threads : {1, 3})
      for (int block : {0, 7, -1}) {
        const std::vector<float> y = run(s, p.input, p.weights, TileSize{4, 3}, k, threads, block);
        if (first.empty())
          first = y;
        else
          EXPECT_TRUE(same_bits(y, first))
              << "kernel " << static_cast<int>(k) << " threads " << threads << " block " << block;
      }
  // The portable transforms convert V' to int16 in a pass of their own; the AVX-512 ones store it from
  // the transform (input_int16): the same bits, fused and phased, with a NaN in the input as well.
  std::vector<float> x_nan(p.input);
  x_nan[static_cast<std::size_t>(7 * 15 + 3)] = std::numeric_limits<float>::quiet_NaN();
  for (const std::vector<float>* x :
       {static_cast<const std::vector<float>*>(&p.input), static_cast<const std::vector<float>*>(&x_nan)})
    for (int block : {0, -1}) {
      LowpStats portable_stats, best_stats;
      const std::vector<float> portable = run(s, *x, p.weights, TileSize{4, 3}, LowpKernel::kPortable, 2,
                                              block, &portable_stats, Isa::kPortable);
      const std::vector<float> best =
          run(s, *x, p.weights, TileSize{4, 3}, LowpKernel::kAuto, 2, block, &best_stats);
      EXPECT_TRUE(same_bits(portable, best)) << "block " << block << (x == &x_nan ? ", NaN input" : "");
      EXPECT_EQ(portable_stats.nonfinite_tiles, best_stats.nonfinite_tiles);
      if (x == &x_nan) {
        EXPECT_GT(best_stats.nonfinite_tiles, 0);
      }
    }
}

TEST(Int8Spatial, CalibrationSaturationAndNaN) {
  const ConvShape s{1, 16, 12, 12, 16};  // 3x3, padding 1 (the ConvShape defaults)
  testing::Problem p = testing::random_problem(s, 9, false);
  PlanOptions o;
  o.precision = Precision::kInt8Spatial;
  o.tile = TileSize{4, 3};
  Plan plan = Plan::create(s, p.weights.data(), nullptr, o);
  std::vector<float> per_call(static_cast<std::size_t>(s.output_size())), y(per_call.size());
  plan.execute(p.input.data(), per_call.data());
  float amax = 0.0f;
  for (float v : p.input) amax = std::max(amax, std::fabs(v));
  const float* samples[] = {p.input.data()};
  plan.calibrate(samples);
  ASSERT_EQ(plan.calibration_scales().size(), 1u);
  EXPECT_EQ(plan.calibration_scales()[0], amax / 127.0f);
  plan.execute(p.input.data(), y.data());
  EXPECT_TRUE(same_bits(y, per_call));  // the same scale as per call
  EXPECT_EQ(plan.stats().saturated, 0);
  std::vector<float> half(p.input);
  for (float& v : half) v *= 0.5f;
  const float* half_samples[] = {half.data()};
  plan.calibrate(half_samples);
  plan.execute(p.input.data(), y.data());
  EXPECT_GT(plan.stats().saturated, 0);
  // NaN: the tiles it reaches give NaN and are counted; the others are untouched.
  plan.clear_calibration();
  p.input[static_cast<std::size_t>(5 * 12 + 5)] = std::numeric_limits<float>::quiet_NaN();
  plan.execute(p.input.data(), y.data());
  EXPECT_GT(plan.stats().nonfinite_tiles, 0);
  EXPECT_TRUE(std::isnan(y[static_cast<std::size_t>(5 * 12 + 5)]));
  EXPECT_FALSE(std::isnan(y[static_cast<std::size_t>(11 * 12 + 11)]));
}

// int8 NCHW16c and NHWC tensors of whole channel blocks: a call at the plan's input scale (calibrated,
// or a tensor whose largest code is 127) reads the codes in place; a call at another scale quantizes in
// the copy. Either way the bits and saturation counts of the NCHW plan, which always copies, on the same
// codes: per call, calibrated to the tensor, and calibrated to half its range (codes requantized,
// saturating), fused and phased, 1 and 2 threads.
TEST(Int8Spatial, Int8CodesReadInPlaceGiveTheCopysBits) {
  const ConvShape s{2, 32, 13, 11, 20, 3, 3, 1, 1};
  const testing::Problem p = testing::random_problem(s, 23, false);
  const TensorFormat in{DataType::kInt8, 1.0f / 127.0f};
  std::vector<int8_t> codes(static_cast<std::size_t>(s.input_size()));
  convert_from_fp32(p.input.data(), s.input_size(), in, codes.data());
  std::vector<float> values(codes.size()), half(codes.size());
  convert_to_fp32(codes.data(), s.input_size(), in, values.data());
  int largest = 0;
  for (int8_t c : codes) largest = std::max(largest, std::abs(static_cast<int>(c)));
  ASSERT_EQ(largest, 127);  // so per-call scales are the tensor's scale
  for (std::size_t i = 0; i < values.size(); ++i) half[i] = 0.5f * values[i];
  for (Layout layout : {Layout::kNCHW16c, Layout::kNHWC})
    for (int calibration : {0, 1, 2})  // none, to the tensor, to half its range
      for (int block : {0, -1})
        for (int threads : {1, 2}) {
          SCOPED_TRACE(to_string(layout) + " calibration " + std::to_string(calibration) + " block " +
                       std::to_string(block) + " threads " + std::to_string(threads));
          PlanOptions o;
          o.precision = Precision::kInt8Spatial;
          o.tile = TileSize{4, 3};
          o.tile_block = block;
          o.threads = threads;
          o.input = in;
          const auto execute = [&](Layout l, std::vector<float>* y) {
            o.layout = l;
            Plan plan = Plan::create(s, p.weights.data(), nullptr, o);
            const bool reads_codes = plan.describe().find("int8 codes read in place") != std::string::npos;
            EXPECT_EQ(reads_codes, l != Layout::kNCHW) << plan.describe();
            const auto relayout = [&](const std::vector<float>& x) {
              return l == Layout::kNHWC      ? nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W)
                     : l == Layout::kNCHW16c ? nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W)
                                             : x;
            };
            if (calibration > 0) {
              const std::vector<float> sample = relayout(calibration == 1 ? values : half);
              const float* samples[] = {sample.data()};
              plan.calibrate(samples);
            }
            const std::vector<float> x = relayout(values);
            std::vector<int8_t> xc(static_cast<std::size_t>(input_elements(s, l)));
            convert_from_fp32(x.data(), input_elements(s, l), in, xc.data());
            y->assign(static_cast<std::size_t>(output_elements(s, l)), -7.0f);
            plan.execute(static_cast<const void*>(xc.data()), static_cast<void*>(y->data()));
            return plan.stats();
          };
          std::vector<float> want, got;
          const LowpStats want_stats = execute(Layout::kNCHW, &want);
          const LowpStats got_stats = execute(layout, &got);
          const std::vector<float> back =
              layout == Layout::kNHWC
                  ? nhwc_to_nchw(std::span<const float>(got), s.N, s.K, s.out_h(), s.out_w())
                  : nchw16c_to_nchw(std::span<const float>(got), s.N, s.K, s.out_h(), s.out_w());
          EXPECT_TRUE(same_bits(back, want));
          EXPECT_EQ(got_stats.saturated, want_stats.saturated);
          if (calibration == 2) {
            EXPECT_GT(want_stats.saturated, 0);
          } else {
            EXPECT_EQ(want_stats.saturated, 0);
          }
        }
}

// An int8 tensor at the plan's input scale has its codes read as given, -128 included (outside the
// symmetric range that quantization clamps to). The channel runs were sized for |code| <= 127: here 76
// channels of -128 and 127 codes follow the signs of tap (3, 3)'s B' row, and weight codes give |U'| =
// 6160 there, so the run was all 76 channels and its int32 sum reached 76 * 6160 * 4590 > 2^31 (output
// -201.8 against 385.3, relative error 52, nothing counted). Now runs of 74: the convolution of the codes.
TEST(Int8Spatial, Int8CodesOfMinus128ReadAsGivenKeepTheSumsExact) {
  ConvShape s{1, 76, 6, 6, 1};  // one F(4,3) tile: the input is its window
  s.pad_h = s.pad_w = 0;
  std::vector<float> w(static_cast<std::size_t>(s.weight_size()));
  for (int64_t c = 0; c < s.C; ++c)
    for (int i = 0; i < 9; ++i) {  // codes -127 but these: |U'(3,3)| = 127 * 49 - 63 = 6160
      const int code = i == 8 ? -124 : (i == 0 || i == 1 || i == 4 || i == 5) ? -126 : -127;
      w[static_cast<std::size_t>(c * 9 + i)] = static_cast<float>(code) / 127.0f;
    }
  const int b3[6] = {0, -2, -1, 2, 1, 0};  // B' row 3 of the points {0, +-1, +-2, inf}
  std::vector<int8_t> codes(static_cast<std::size_t>(s.input_size()));
  for (int64_t c = 0; c < s.C; ++c)
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        const int b = b3[i] * b3[j];
        codes[static_cast<std::size_t>((c * 6 + i) * 6 + j)] = static_cast<int8_t>(b > 0   ? -128
                                                                                   : b < 0 ? 127
                                                                                           : 0);
      }
  const float scale = 0.01f;
  std::vector<double> xd(codes.size()), wd(w.size());
  for (std::size_t i = 0; i < codes.size(); ++i) xd[i] = codes[i] * static_cast<double>(scale);
  for (std::size_t i = 0; i < w.size(); ++i)
    wd[i] = std::nearbyint(static_cast<double>(w[i]) * 127.0) / 127.0;
  const std::vector<double> ref = reference_conv2d(s, xd, wd, {});
  for (Layout layout : {Layout::kNCHW, Layout::kNHWC})
    for (LowpKernel k : spatial_kernels()) {
      SCOPED_TRACE(to_string(layout) + " kernel " + std::to_string(static_cast<int>(k)));
      std::vector<int8_t> x(codes);
      if (layout == Layout::kNHWC)
        for (int64_t c = 0; c < s.C; ++c)
          for (int64_t q = 0; q < 36; ++q)
            x[static_cast<std::size_t>(q * s.C + c)] = codes[static_cast<std::size_t>(c * 36 + q)];
      PlanOptions o;
      o.precision = Precision::kInt8Spatial;
      o.tile = TileSize{4, 3};
      o.lowp_kernel = k;
      o.layout = layout;
      o.threads = 1;
      o.input = {DataType::kInt8, scale};
      Plan plan = Plan::create(s, w.data(), nullptr, o);
      std::vector<float> sample(x.size(), 0.0f);
      sample[0] = 127.0f * scale;  // calibrated to the tensor's own scale: the codes are read as given
      const float* samples[] = {sample.data()};
      plan.calibrate(samples);
      ASSERT_EQ(plan.calibration_scales()[0], scale);
      std::vector<float> y(static_cast<std::size_t>(s.output_size()));
      plan.execute(static_cast<const void*>(x.data()), static_cast<void*>(y.data()));
      EXPECT_LT(rel_l2(y, ref), 1e-5) << plan.describe();  // measured 4.0e-6: FP32 rounding after the sums
    }
  // The bound is 128 for plans of FP32 input too: on codes within +-127 both run the same channel runs
  // and give the same bits (with 128 for int8 input alone, these weights made runs of 74 against 76, and
  // 148 of the 400 outputs differed).
  ConvShape t{1, 160, 10, 10, 4};
  std::vector<float> wt(static_cast<std::size_t>(t.weight_size()));
  for (std::size_t i = 0; i < wt.size(); ++i) wt[i] = w[i % w.size()];
  std::mt19937 rng(3);
  std::vector<int8_t> xt(static_cast<std::size_t>(t.input_size()));
  for (auto& c : xt) c = static_cast<int8_t>(std::uniform_int_distribution<int>(-127, 127)(rng));
  xt[0] = 127;  // per-call scale: the tensor's own
  std::vector<float> values(xt.size());
  convert_to_fp32(xt.data(), t.input_size(), {DataType::kInt8, scale}, values.data());
  PlanOptions o;
  o.precision = Precision::kInt8Spatial;
  o.tile = TileSize{4, 3};
  o.threads = 1;
  const Plan from_fp32 = Plan::create(t, wt.data(), nullptr, o);
  o.input = {DataType::kInt8, scale};
  const Plan from_int8 = Plan::create(t, wt.data(), nullptr, o);
  std::vector<float> a(static_cast<std::size_t>(t.output_size())), b(a.size());
  from_fp32.execute(values.data(), a.data());
  from_int8.execute(static_cast<const void*>(xt.data()), static_cast<void*>(b.data()));
  EXPECT_TRUE(same_bits(a, b)) << from_fp32.reason() << " | " << from_int8.reason();
}

TEST(Int8Spatial, TilesItCannotRunAreRefusedOrLeftToTheDirectPath) {
  const ConvShape s{1, 8, 16, 16, 8};  // 3x3, padding 1 (the ConvShape defaults)
  const testing::Problem p = testing::random_problem(s, 2, false);
  PlanOptions o;
  o.precision = Precision::kInt8Spatial;
  o.tile = TileSize{6, 3};
  try {
    Plan::create(s, p.weights.data(), nullptr, o);
    ADD_FAILURE() << "F(6,3) accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("int16"), std::string::npos) << e.what();
  }
  // The automatic choice keeps to F(2,3) / F(4,3); 5x5 kernels go to the direct path, which says so.
  o.tile.reset();
  const Plan three = Plan::create(s, p.weights.data(), nullptr, o);
  if (three.algorithm() == Algorithm::kWinograd) {
    EXPECT_LE(three.tile()->n(), 6);
  }
  ConvShape s5 = s;
  s5.R = s5.S = 5;
  s5.pad_h = s5.pad_w = 2;
  const testing::Problem p5 = testing::random_problem(s5, 3, false);
  const Plan five = Plan::create(s5, p5.weights.data(), nullptr, o);
  EXPECT_EQ(five.algorithm(), Algorithm::kDirect);
  EXPECT_NE(five.reason().find("int8-spatial"), std::string::npos) << five.reason();
  EXPECT_EQ(parse_precision("int8-spatial"), Precision::kInt8Spatial);
}

}  // namespace
}  // namespace nova::conv
