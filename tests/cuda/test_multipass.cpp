// The CUDA multi-pass path: its host half and the emulation of its passes (the kernels' own per-thread
// code) against the float64 reference, exact integer data and the CPU engine's fp16 plans; the device
// plan against the emulation where a GPU is present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "conv/conv_test_util.hpp"
#include "cuda/multipass_prepare.hpp"
#include "cuda/tensor_convert.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"
#include "nova/exact/points.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/format.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova::cuda {
namespace {

using conv::testing::Problem;
using conv::testing::random_problem;
using conv::testing::reference;
using conv::testing::rel_l2;
using conv::testing::same_bits;
using ::testing::HasSubstr;

ConvShape layer(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t r = 3, int64_t pad = 1) {
  ConvShape s;
  s.N = N, s.C = C, s.H = H, s.W = W, s.K = K, s.R = r, s.S = r, s.pad_h = pad, s.pad_w = pad;
  return s;
}

// The GEMM's column-major arguments put M[a][k][t] = sum_c U[a][k][c] V[a][c][t] where the passes read and
// write them (the layouts of multipass_math.hpp), checked on values against that formula in float64.
TEST(CudaMultipass, GemmArgumentsComputeTheRowMajorProductsThePassesUse) {
  const ConvShape s = layer(2, 5, 9, 7, 3);
  const Problem p = random_problem(s, 1);
  const detail::MultipassPlanData plan = detail::prepare_multipass(s, p.weights, p.bias, {});
  const detail::TileGeometry& g = plan.input_pass.g;
  const int nn = g.n * g.n;
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  std::vector<uint16_t> V(static_cast<std::size_t>(nn * g.C * g.tiles()));
  for (auto& v : V) v = static_cast<uint16_t>(encode_bits(Format::kFp16, u(rng)));
  std::vector<float> M(static_cast<std::size_t>(nn * g.K * g.tiles()), -1.0f);
  detail::gemm_fp16_fp32_host(plan.gemm, V.data(), plan.u_fp16.data(), M.data());
  auto val = [](uint16_t b) { return decode_bits(Format::kFp16, b); };
  double worst = 0.0;
  for (int a = 0; a < nn; ++a)
    for (int64_t k = 0; k < g.K; ++k)
      for (int64_t t = 0; t < g.tiles(); ++t) {
        double sum = 0.0, mag = 0.0;
        for (int64_t c = 0; c < g.C; ++c) {
          const double x = val(plan.u_fp16[static_cast<std::size_t>((a * g.K + k) * g.C + c)]) *
                           val(V[static_cast<std::size_t>(g.v_index(a, c, t))]);
          sum += x;
          mag += std::abs(x);
        }
        worst =
            std::max(worst, std::abs(M[static_cast<std::size_t>(g.m_index(a, k, t))] - sum) / (mag + 1e-30));
      }
  EXPECT_LT(worst, 5 * std::ldexp(1.0, -24));  // FP32 sums of 5 exact products
}

// Integers in [-2, 2] and F(2,3) on 0, 1, -1, inf: every transformed value is a small dyadic number, exact
// in fp16 and in FP32 sums (five points or more bring a factor 3 into G, which no fp16 holds exactly), so the
// passes must give the direct convolution exactly; any indexing slip, a wrong pad, a missed partial tile or a
// scale not undone shows as a difference.
TEST(CudaMultipass, ExactOnSmallIntegersWithDyadicTransforms) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> q(-2, 2);
  const Transform f23 = Transform::construct({2, 3}, parse_points("0, 1, -1, inf"));
  for (const ConvShape& s : {layer(2, 3, 7, 9, 4), layer(1, 5, 6, 5, 3, 3, 0), layer(3, 2, 5, 8, 2, 3, 2)}) {
    Problem p = random_problem(s, 4);
    for (auto* v : {&p.input, &p.weights, &p.bias})
      for (float& x : *v) x = static_cast<float>(q(rng));
    CudaPlanOptions o;
    o.transform = f23;
    CudaRunStats stats;
    const std::vector<float> got = emulate(s, p.weights, p.bias, p.input, o, &stats);
    const std::vector<double> want = reference(p, conv::Layout::kNCHW, false);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << s.to_string() << " at " << i;
    EXPECT_EQ(stats.output_nonfinite, 0);
  }
}

// The compile-time tile sizes the kernels dispatch to run the same arithmetic as the run-time loops.
template <int NP, int MP>
void expect_same_tiles(const ConvShape& s, TileSize tile) {
  const Problem p = random_problem(s, 5);
  CudaPlanOptions o;
  o.tile = tile;
  const detail::MultipassPlanData plan = detail::prepare_multipass(s, p.weights, p.bias, o);
  ASSERT_EQ(plan.input_pass.g.n, NP);
  float a[detail::kMaxTilePoints * detail::kMaxTilePoints],
      b[detail::kMaxTilePoints * detail::kMaxTilePoints];
  const auto load = [&p](int64_t j) { return p.input[static_cast<std::size_t>(j)]; };
  for (int64_t i = 0; i < plan.input_pass.g.N * s.C * plan.input_pass.g.tiles_h * plan.input_pass.g.tiles_w;
       ++i) {
    detail::input_pass_tile<NP>(plan.input_pass, load, i, -3, a);
    detail::input_pass_tile<0>(plan.input_pass, load, i, -3, b);
    ASSERT_EQ(std::memcmp(a, b, sizeof(float) * NP * NP), 0) << i;
  }
  std::vector<float> M(static_cast<std::size_t>(NP * NP * s.K * plan.input_pass.g.tiles()));
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : M) x = u(rng);
  std::vector<float> y1(static_cast<std::size_t>(s.output_size())), y2(y1.size());
  const auto into = [](std::vector<float>& y) {
    return [&y](int64_t j, float v) { return y[static_cast<std::size_t>(j)] = v; };
  };
  for (int64_t i = 0; i < s.N * s.K * plan.input_pass.g.tiles_h * plan.input_pass.g.tiles_w; ++i) {
    detail::output_pass_tile<NP, MP>(plan.output_pass, M.data(), plan.u_pow2.data(), plan.bias.data(), i, 2,
                                     into(y1));
    detail::output_pass_tile<0, 0>(plan.output_pass, M.data(), plan.u_pow2.data(), plan.bias.data(), i, 2,
                                   into(y2));
  }
  EXPECT_TRUE(same_bits(y1, y2));
}

TEST(CudaMultipass, CompileTimeTileSizesMatchTheRunTimeLoops) {
  expect_same_tiles<4, 2>(layer(1, 3, 7, 6, 2), {2, 3});
  expect_same_tiles<6, 4>(layer(2, 2, 9, 11, 3), {4, 3});
  expect_same_tiles<8, 6>(layer(2, 2, 13, 11, 3), {6, 3});
  expect_same_tiles<10, 8>(layer(1, 2, 10, 9, 2, 3, 1), {8, 3});
  expect_same_tiles<6, 2>(layer(1, 2, 7, 9, 3, 5, 2), {2, 5});
  expect_same_tiles<8, 4>(layer(2, 2, 9, 11, 3, 5, 2), {4, 5});
}

// Random layers against the float64 reference: the error of fp16 storage with FP32 sums, level with the
// CPU engine's fp16 plans (FP32 arithmetic) on the same transform and data.
TEST(CudaMultipass, EmulationMatchesTheCpuEngineFp16ErrorOnRandomLayers) {
  std::mt19937 rng(7);
  int checked = 0;
  for (const TileSize tile : {TileSize{2, 3}, TileSize{4, 3}, TileSize{6, 3}, TileSize{7, 3}, TileSize{8, 3},
                              TileSize{2, 5}, TileSize{4, 5}}) {
    for (int rep = 0; rep < 2; ++rep) {
      std::uniform_int_distribution<int64_t> hw(tile.r, 17), ck(1, 19), nb(1, 3), pad(0, 2);
      ConvShape s = layer(nb(rng), ck(rng), hw(rng), hw(rng), ck(rng), tile.r, pad(rng));
      s.pad_w = pad(rng);
      if (s.out_h() < 1 || s.out_w() < 1) continue;
      const Problem p = random_problem(s, static_cast<unsigned>(rng()));
      CudaPlanOptions o;
      o.tile = tile;
      o.relu = rep == 1;
      MultipassDescription d;
      const std::vector<float> got = emulate(s, p.weights, p.bias, p.input, o, nullptr, &d);
      const std::vector<double> want = reference(p, conv::Layout::kNCHW, o.relu);
      const double err = rel_l2(got, want);

      conv::PlanOptions cpu;
      cpu.precision = conv::Precision::kFp16;
      cpu.fp16_arithmetic = conv::Fp16Arithmetic::kFp32;
      cpu.transform = balance_input_rows(conv::default_transform(tile));
      cpu.relu = o.relu;
      cpu.threads = 1;
      const double cpu_err = rel_l2(conv::testing::run(p, cpu), want);
      EXPECT_EQ(d.tile, tile);
      // Both round V and U once to fp16 and sum in FP32; U's scales differ, so the errors are alike, not
      // equal.
      EXPECT_LT(err, 1.5 * cpu_err + 1e-6) << s.to_string() << " " << tile.to_string();
      EXPECT_GT(err, cpu_err / 1.5 - 1e-6) << s.to_string() << " " << tile.to_string();
      EXPECT_LT(err, 0.05) << s.to_string();
      ++checked;
    }
  }
  EXPECT_GE(checked, 10);
}

// The error harness's fp16-storage preset (U and V rounded to fp16, FP32 sums) predicts the emulated path
// within 10 % on its own layer data (Gaussian, fp16-representable input and weights), as the CPU engine's
// fp16 plans are held to it; its shifted twin (V shifted into fp16's range, as the path does) does so at
// inputs 2^-24 and 2^14 times that data too. Users can trust the harness for the GPU path.
TEST(CudaMultipass, EmulationAgreesWithTheFp16StoragePresetsWithin10Percent) {
  for (const TileSize tile :
       {TileSize{2, 3}, TileSize{4, 3}, TileSize{6, 3}, TileSize{8, 3}, TileSize{4, 5}}) {
    for (const int k : {0, -24, 14}) {
      const PrecisionModel model = precision_preset(k == 0 ? "fp16-storage" : "fp16-storage-shifted");
      LayerDataset d = make_layer_dataset(1, 40, 23, 23, 48, tile.r, DataKind::kGaussian, 7);
      round_in_place(Format::kFp16, d.input);
      round_in_place(Format::kFp16, d.weights);
      for (double& x : d.input) x = std::ldexp(x, k);
      const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights, {});
      const double emulated_preset =
          ErrorEvaluator(d, model, tile).evaluate(conv::default_transform(tile).to_f64()).rel_l2;
      const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
      CudaPlanOptions o;
      o.tile = tile;
      CudaRunStats stats;
      const double e = rel_l2(emulate(d.shape, w, {}, x, o, &stats), ref);
      EXPECT_EQ(stats.v_shift != 0, k != 0) << tile.to_string() << " 2^" << k;
      EXPECT_NEAR(e / emulated_preset, 1.0, 0.10)
          << tile.to_string() << " 2^" << k << ": path " << e << ", preset " << emulated_preset;
    }
  }
}

// With fp16 tensors the path rounds the input and the output to fp16 as well: the harness models that with
// the shifted preset's input and output stages set to fp16 (a user's JSON model can say the same), and
// predicts the emulated path on its layer data to 4 digits (measured: F(2,3) 5.3925e-4 against 5.3939e-4,
// F(4,3) 1.3984e-3 / 1.3982e-3, F(6,3) 5.7519e-3 / 5.7544e-3, F(4,5) 5.5755e-3 / 5.5758e-3). Held to 2 %:
// the tensors' rounding adds 11 % to F(2,3)'s error (4.837e-4 with FP32 tensors), so a path that skipped it
// fails.
TEST(CudaMultipass, EmulationWithFp16TensorsAgreesWithTheHarnessModelOfThem) {
  PrecisionModel model = precision_preset("fp16-storage-shifted");
  model.name = "cuda-fp16-tensors";
  model.input.format = Format::kFp16;
  model.output.format = Format::kFp16;
  model.validate();
  for (const TileSize tile : {TileSize{2, 3}, TileSize{4, 3}, TileSize{6, 3}, TileSize{4, 5}}) {
    const LayerDataset d = make_layer_dataset(1, 40, 23, 23, 48, tile.r, DataKind::kGaussian, 8);
    std::vector<double> stored = d.input;
    round_in_place(Format::kFp16, stored);
    const std::vector<double> ref = reference_conv2d(d.shape, stored, d.weights, {});
    const double predicted =
        ErrorEvaluator(d, model, tile).evaluate(conv::default_transform(tile).to_f64()).rel_l2;
    const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
    CudaPlanOptions o;
    o.tile = tile;
    o.input = o.output = TensorType::kFp16;
    const double e = rel_l2(emulate(d.shape, w, {}, x, o), ref);
    EXPECT_NEAR(e / predicted, 1.0, 0.02) << tile.to_string() << ": path " << e << ", model " << predicted;
  }
}

// V's power-of-two shift: inputs far below unit scale are shifted up to the same binade whatever their
// scale, so inputs 2^-30 and 2^-20 times unit-scale ones give outputs exactly 2^-10 apart (the same fp16
// bits of V, the scales undone exactly), as do 2^16 and 2^20 (shifted down); unshifted, fp16 would have lost
// the small ones in its subnormals and overflowed the large ones. Their errors are those of unit scale.
TEST(CudaMultipass, VShiftKeepsTheOutputExactlyScaledOverTheInputRange) {
  const ConvShape s = layer(1, 8, 12, 12, 4);
  const Problem p = random_problem(s, 8, false);
  CudaRunStats base;
  const std::vector<float> y = emulate(s, p.weights, {}, p.input, {}, &base);
  EXPECT_EQ(base.v_shift, 0);
  const double base_err = rel_l2(y, reference(p, conv::Layout::kNCHW, false));
  for (const auto& [k1, k2] : {std::pair{-30, -20}, {16, 20}}) {
    CudaRunStats s1, s2;
    const Problem p1 = conv::testing::scaled(p, k1), p2 = conv::testing::scaled(p, k2);
    const std::vector<float> y1 = emulate(s, p.weights, {}, p1.input, {}, &s1);
    const std::vector<float> y2 = emulate(s, p.weights, {}, p2.input, {}, &s2);
    EXPECT_EQ(s2.v_shift - s1.v_shift, k2 - k1);
    EXPECT_EQ(s1.v_shift < 0, k1 < 0) << k1;
    std::vector<float> want(y1.size());
    for (std::size_t i = 0; i < y1.size(); ++i) want[i] = std::ldexp(y1[i], k2 - k1);
    EXPECT_TRUE(same_bits(y2, want)) << k1 << " " << k2;
    EXPECT_EQ(s1.output_nonfinite + s2.output_nonfinite, 0);
    const double err = rel_l2(y1, reference(p1, conv::Layout::kNCHW, false));
    EXPECT_LT(err, 1.1 * base_err) << k1;
  }
}

// fp16 and bf16 tensors change only the values at the boundary: a plan with input type T1 and output type
// T2 gives, bit for bit, the FP32 plan's output on the input rounded to T1, rounded to T2 (the passes
// compute in FP32 whatever the types), with the max of the rounded input. bf16 inputs far past fp16's
// range (1e20) are shifted into it as FP32 ones are.
TEST(CudaMultipass, TensorTypesRoundOnlyAtTheBoundary) {
  const std::vector<TensorType> types = {TensorType::kFp32, TensorType::kFp16, TensorType::kBf16};
  int checked = 0;
  for (const TileSize tile : {TileSize{4, 3}, TileSize{6, 3}, TileSize{4, 5}}) {
    const ConvShape s = layer(2, 5, 13, 11, 6, tile.r, tile.r / 2);
    const Problem p = random_problem(s, 12);
    for (const TensorType in : types)
      for (const TensorType out : types) {
        CudaPlanOptions o;
        o.tile = tile;
        o.relu = out == TensorType::kFp16;
        o.input = in, o.output = out;
        CudaRunStats typed_stats, plain_stats;
        const std::vector<float> typed = emulate(s, p.weights, p.bias, p.input, o, &typed_stats);
        std::vector<float> x = p.input;
        for (float& v : x) v = round_to_type(in, v);
        CudaPlanOptions fp32 = o;
        fp32.input = fp32.output = TensorType::kFp32;
        std::vector<float> want = emulate(s, p.weights, p.bias, x, fp32, &plain_stats);
        for (float& v : want) v = round_to_type(out, v);
        EXPECT_TRUE(same_bits(typed, want))
            << tile.to_string() << " " << to_string(in) << " -> " << to_string(out);
        EXPECT_EQ(typed_stats.input_amax, plain_stats.input_amax);
        EXPECT_EQ(typed_stats.v_shift, plain_stats.v_shift);
        if (in != TensorType::kFp32 || out != TensorType::kFp32) {  // the rounding is there at all
          EXPECT_FALSE(same_bits(typed, emulate(s, p.weights, p.bias, p.input, fp32)));
        }
        ++checked;
      }
  }
  EXPECT_EQ(checked, 27);

  const ConvShape s = layer(1, 6, 10, 10, 4);
  const Problem p = conv::testing::scaled(random_problem(s, 13, false), 66);  // about 7e19
  CudaPlanOptions o;
  o.input = TensorType::kBf16;
  CudaRunStats stats;
  const std::vector<float> y = emulate(s, p.weights, {}, p.input, o, &stats);
  EXPECT_GT(stats.v_shift, 48);  // 2^66 down to below 2^16
  EXPECT_EQ(stats.output_nonfinite, 0);
  Problem rounded = p;
  for (float& v : rounded.input) v = round_to_type(TensorType::kBf16, v);
  EXPECT_LT(rel_l2(y, reference(rounded, conv::Layout::kNCHW, false)), 0.01);
}

// An output beyond fp16's 65504 is stored as Inf and counted, as the CPU engine's fp16 tensors are; an FP32
// or bf16 output of the same layer holds it.
TEST(CudaMultipass, Fp16OutputsPastItsRangeAreInfAndCounted) {
  const ConvShape s = layer(1, 4, 8, 8, 2);
  Problem p = random_problem(s, 14, false);
  for (float& v : p.weights) v = 1.0f;
  for (float& v : p.input) v = 3000.0f;  // interior outputs 4 x 9 x 3000 = 108000
  for (const TensorType out : {TensorType::kFp32, TensorType::kBf16, TensorType::kFp16}) {
    CudaPlanOptions o;
    o.output = out;
    CudaRunStats stats;
    const std::vector<float> y = emulate(s, p.weights, {}, p.input, o, &stats);
    int64_t inf = 0;
    for (float v : y) inf += std::isinf(v) ? 1 : 0;
    EXPECT_EQ(stats.output_nonfinite, inf) << to_string(out);
    if (out == TensorType::kFp16) {
      EXPECT_GE(inf, 36) << "the 6 x 6 interior at least";
    } else {
      EXPECT_EQ(inf, 0) << to_string(out);
    }
  }
}

TEST(CudaMultipass, TensorTypeNames) {
  for (const TensorType t : {TensorType::kFp32, TensorType::kFp16, TensorType::kBf16})
    EXPECT_EQ(parse_tensor_type(to_string(t)), t);
  EXPECT_EQ(element_bytes(TensorType::kFp32), 4);
  EXPECT_EQ(element_bytes(TensorType::kBf16), 2);
  try {
    parse_tensor_type("int8");
    ADD_FAILURE() << "int8 was taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("fp32, fp16 or bf16"));
  }
  const ConvShape s = layer(1, 2, 6, 6, 2);
  const Problem p = random_problem(s, 15);
  CudaPlanOptions o;
  o.output = static_cast<TensorType>(7);
  EXPECT_THROW(detail::prepare_multipass(s, p.weights, p.bias, o), Error);
}

TEST(CudaMultipass, NanAndInfInputsReachTheOutputAndAreCounted) {
  const ConvShape s = layer(1, 2, 8, 8, 3);
  Problem p = random_problem(s, 9);
  p.input[20] = std::numeric_limits<float>::quiet_NaN();
  CudaRunStats stats;
  std::vector<float> y = emulate(s, p.weights, p.bias, p.input, {}, &stats);
  EXPECT_TRUE(std::isnan(stats.input_amax));
  EXPECT_EQ(stats.v_shift, 0);
  int64_t nan = 0;
  for (float v : y) nan += std::isfinite(v) ? 0 : 1;
  EXPECT_GT(nan, 0);
  EXPECT_EQ(stats.output_nonfinite, nan);
  p.input[20] = std::numeric_limits<float>::infinity();
  y = emulate(s, p.weights, p.bias, p.input, {}, &stats);
  EXPECT_TRUE(std::isinf(stats.input_amax));
  EXPECT_GT(stats.output_nonfinite, 0);
}

TEST(CudaMultipass, BadInputIsRefusedWithAClearMessage) {
  const ConvShape s = layer(1, 2, 8, 8, 3);
  const Problem p = random_problem(s, 10);
  auto message = [&](ConvShape shape, std::vector<float> w, std::vector<float> b, CudaPlanOptions o) {
    try {
      detail::prepare_multipass(shape, w, b, o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ConvShape strided = s;
  strided.stride = 2;
  EXPECT_THAT(message(strided, p.weights, {}, {}), HasSubstr("stride 1"));
  ConvShape grouped = s;
  grouped.groups = 2;
  grouped.C = 2, grouped.K = 4;
  EXPECT_THAT(message(grouped, std::vector<float>(36), {}, {}), HasSubstr("groups 1"));
  EXPECT_THAT(message(s, std::vector<float>(5), {}, {}), HasSubstr("weights hold 5 values"));
  EXPECT_THAT(message(s, p.weights, std::vector<float>(2), {}), HasSubstr("bias holds 2 values"));
  std::vector<float> nan_w = p.weights;
  nan_w[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(message(s, nan_w, {}, {}), HasSubstr("weights contain NaN at index 7"));
  CudaPlanOptions wrong_tile;
  wrong_tile.tile = TileSize{4, 5};
  EXPECT_THAT(message(s, p.weights, {}, wrong_tile), HasSubstr("is for 5x5 kernels"));
  CudaPlanOptions big;
  big.transform =
      Transform::construct({11, 3}, parse_points("0, 1, -1, 2, -2, 1/2, -1/2, 3, -3, 1/3, -1/3, 4, inf"));
  EXPECT_THAT(message(s, p.weights, {}, big), HasSubstr("at most 12 points"));
  const Transform good = conv::default_transform({4, 3});
  RationalMatrix bt = good.BT();
  bt(0, 0) += Rational(1);
  CudaPlanOptions broken;
  broken.transform = Transform::from_matrices({4, 3}, good.points(), good.scaling(), good.AT(), good.G(), bt);
  EXPECT_THAT(message(s, p.weights, {}, broken), HasSubstr("fails exact verification"));
  EXPECT_THROW(emulate(s, p.weights, {}, std::vector<float>(3), {}), Error);
}

// cuBLAS is loaded on first use, not linked: a build with CUDA finds it (here without a device too).
TEST(CudaMultipass, CublasLoadsWhereTheBuildHasCuda) {
  std::string why;
  const bool loads = blas_loadable(&why);
  if (built_with_cuda()) {
    EXPECT_TRUE(loads) << why;
  } else {
    EXPECT_FALSE(loads);
    EXPECT_THAT(why, HasSubstr("built without CUDA"));
  }
}

// Without a device (or without CUDA in the build) a plan is refused with the reason; with one, the device
// runs the emulation's passes: the same shift and counts, the outputs apart only by cuBLAS's summation order.
TEST(CudaMultipass, DevicePlanRunsTheEmulatedPasses) {
  const ConvShape s = layer(2, 16, 20, 18, 24);
  Problem p = random_problem(s, 11);
  std::string why;
  if (!device_available(&why)) {
    EXPECT_FALSE(why.empty());
    try {
      CudaConvPlan::create(s, p.weights, p.bias);
      ADD_FAILURE() << "a plan was made without a device";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), why);
    }
    GTEST_SKIP() << why;
  }
  ASSERT_TRUE(built_with_cuda());
  for (const TileSize tile : {TileSize{4, 3}, TileSize{6, 3}, TileSize{8, 3}, TileSize{7, 3}}) {
    for (int k : {0, -24, 18}) {
      const Problem q = conv::testing::scaled(p, k);
      CudaPlanOptions o;
      o.tile = tile;
      o.relu = k == 0;
      CudaConvPlan plan = CudaConvPlan::create(s, q.weights, q.bias, o);
      const std::vector<float> got = plan.execute(q.input);
      const CudaRunStats gpu = plan.stats();
      CudaRunStats host;
      const std::vector<float> emulated = emulate(s, q.weights, q.bias, q.input, o, &host);
      const std::vector<double> want = reference(q, conv::Layout::kNCHW, o.relu);
      EXPECT_EQ(gpu.v_shift, host.v_shift) << tile.to_string() << " " << k;
      EXPECT_EQ(gpu.output_nonfinite, 0);
      EXPECT_EQ(gpu.input_amax, host.input_amax);
      const double err = rel_l2(got, want), host_err = rel_l2(emulated, want);
      EXPECT_LT(err, 1.25 * host_err) << tile.to_string() << " " << k;
      EXPECT_LT(rel_l2(got, std::vector<double>(emulated.begin(), emulated.end())), host_err / 2)
          << tile.to_string() << " " << k;
    }
  }
  // fp16 and bf16 tensors: the kernels' typed loads and stores against the emulation's.
  for (const auto& [in, out] : {std::pair{TensorType::kFp16, TensorType::kFp16},
                                {TensorType::kBf16, TensorType::kFp32},
                                {TensorType::kFp32, TensorType::kBf16}}) {
    CudaPlanOptions o;
    o.input = in, o.output = out;
    CudaConvPlan plan = CudaConvPlan::create(s, p.weights, p.bias, o);
    const std::vector<float> got = plan.execute(p.input);
    CudaRunStats host;
    const std::vector<float> emulated = emulate(s, p.weights, p.bias, p.input, o, &host);
    const CudaRunStats gpu = plan.stats();
    EXPECT_EQ(gpu.input_amax, host.input_amax) << to_string(in);
    EXPECT_EQ(gpu.v_shift, host.v_shift) << to_string(in);
    EXPECT_EQ(gpu.output_nonfinite, 0) << to_string(in);
    const double host_err = rel_l2(emulated, reference(p, conv::Layout::kNCHW, false));
    EXPECT_LT(rel_l2(got, std::vector<double>(emulated.begin(), emulated.end())), host_err / 2)
        << to_string(in) << " -> " << to_string(out);
  }
  // An input of more elements than pass 0's grid has threads (1,024 blocks of 256): its grid-stride loop
  // runs more than once a thread, and the largest |x| sits in the last element, the last loop's.
  {
    const ConvShape big = layer(1, 8, 256, 161, 4);  // 329,728 elements
    Problem q = random_problem(big, 12);
    q.input.back() = -7.5f;
    CudaConvPlan plan = CudaConvPlan::create(big, q.weights, q.bias);
    const std::vector<float> got = plan.execute(q.input);
    CudaRunStats host;
    const std::vector<float> emulated = emulate(big, q.weights, q.bias, q.input, {}, &host);
    EXPECT_EQ(plan.stats().input_amax, 7.5f);
    EXPECT_EQ(plan.stats().v_shift, host.v_shift);
    EXPECT_EQ(plan.stats().output_nonfinite, 0);  // M starts as NaN: the GEMM wrote all of it
    EXPECT_LT(rel_l2(got, std::vector<double>(emulated.begin(), emulated.end())),
              rel_l2(emulated, reference(q, conv::Layout::kNCHW, false)) / 2);
  }
  p.input[5] = std::numeric_limits<float>::quiet_NaN();
  CudaConvPlan plan = CudaConvPlan::create(s, p.weights, p.bias);
  const std::vector<float> got = plan.execute(p.input);
  CudaRunStats host;
  emulate(s, p.weights, p.bias, p.input, {}, &host);
  EXPECT_EQ(plan.stats().output_nonfinite, host.output_nonfinite);
  EXPECT_THROW(plan.execute_device(p.input.data(), nullptr), Error);  // host memory, null output
}

}  // namespace
}  // namespace nova::cuda
