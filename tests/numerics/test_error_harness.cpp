// The error harness against independent references: a native float32 implementation of the same
// pipeline, the float64 direct convolution, and the first-order rounding analysis.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>

#include "common/error_message.hpp"
#include "nova/error.hpp"
#include "nova/exact/transform.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/first_order.hpp"
#include "nova/numerics/fp16_v_shift.hpp"
#include "nova/numerics/precision_model.hpp"
#include "nova/numerics/quantization.hpp"
#include "nova/numerics/reference_conv.hpp"
#include "numerics/harness_size.hpp"
#include "numerics/sandwich.hpp"

namespace nova {
namespace {

// Every value of v rounded to format f (the definitions below spell out the emulator's roundings).
std::vector<double> rounded(Format f, std::vector<double> v) {
  for (double& x : v) x = round_to(f, x);
  return v;
}

TransformF64 make(const char* tile, const char* points, const char* scaling = "wincnn") {
  return Transform::construct(parse_tile(tile), parse_points(points), ScalingSpec::parse(scaling)).to_f64();
}

// L X L^T in float, sums in increasing index order starting from the first product: the order
// the harness documents for its arithmetic stages.
std::vector<float> sandwich_f32(const std::vector<float>& L, int P, int I, const float* X) {
  std::vector<float> tmp(static_cast<std::size_t>(P * I)), out(static_cast<std::size_t>(P * P));
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < I; ++j) {
      float s = L[static_cast<std::size_t>(p * I)] * X[j];
      for (int i = 1; i < I; ++i) s = s + L[static_cast<std::size_t>(p * I + i)] * X[i * I + j];
      tmp[static_cast<std::size_t>(p * I + j)] = s;
    }
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < P; ++q) {
      float s = tmp[static_cast<std::size_t>(p * I)] * L[static_cast<std::size_t>(q * I)];
      for (int j = 1; j < I; ++j) s = s + tmp[static_cast<std::size_t>(p * I + j)] * L[static_cast<std::size_t>(q * I + j)];
      out[static_cast<std::size_t>(p * P + q)] = s;
    }
  return out;
}

std::vector<float> to_f32(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

// The shifted fp16 presets (nova's fp16 engines on FP32 tensors) hold their error over the input's scale:
// inputs 2^-30 and 2^-20 times the data give exactly the same error (V shifted to the same binade), both
// within 10 % of unit scale's, as do 2^20; the same model without the shift loses the small inputs to
// fp16's subnormals.
TEST(ErrorHarness, ShiftedFp16PresetsHoldTheirErrorOverTheInputScale) {
  const LayerDataset base = make_layer_dataset(1, 16, 14, 14, 8, 3, DataKind::kGaussian, 3);
  const TransformF64 t = make("6,3", "0, 1, -1, 2, -2, 1/2, -1/2, inf");
  auto error_at = [&](const PrecisionModel& model, int k) {
    LayerDataset d = base;
    for (double& x : d.input) x = std::ldexp(x, k);
    return ErrorEvaluator(d, model, {6, 3}).evaluate(t).rel_l2;
  };
  for (const char* name : {"fp16-storage-shifted", "fp16-fma-shifted"}) {
    SCOPED_TRACE(name);
    const PrecisionModel model = precision_preset(name);
    const double unit = error_at(model, 0);
    EXPECT_GT(unit, 1e-4);  // fp16's rounding is there
    EXPECT_EQ(error_at(model, -30), error_at(model, -20));
    EXPECT_NEAR(error_at(model, -30) / unit, 1.0, 0.10);
    EXPECT_NEAR(error_at(model, 20) / unit, 1.0, 0.10);
    PrecisionModel unshifted = model;
    unshifted.v_shift = false;
    EXPECT_EQ(error_at(unshifted, 0), unit);  // unit-scale data is not shifted
    EXPECT_GT(error_at(unshifted, -30), 10 * unit);
  }
}

// The rule itself: its closed-form boundaries.
TEST(ErrorHarness, Fp16VShiftRule) {
  EXPECT_EQ(fp16_v_shift(16.0, 1.0, kFp16VLimitFp32Sums), 0);                     // unit scale: bound 16
  EXPECT_EQ(fp16_v_shift(16.0, 4094.0, kFp16VLimitFp32Sums), 0);                  // 65504 exactly: no shift
  EXPECT_EQ(fp16_v_shift(16.0, 4095.0, kFp16VLimitFp32Sums), 1);                  // past it: one binade down
  EXPECT_EQ(fp16_v_shift(16.0, 4095.0, kFp16VLimitFp16Sums), 4);                  // 65520 / 2^4 < 4096
  EXPECT_EQ(fp16_v_shift(16.0, std::ldexp(1.0, -30), kFp16VLimitFp32Sums), -30);  // bound 2^-26 -> [2^4, 2^5)
  EXPECT_EQ(fp16_v_shift(16.0, std::ldexp(1.0, -30), kFp16VLimitFp32Sums, -10), -10);  // the floor
  EXPECT_EQ(fp16_v_shift(16.0, std::nan(""), kFp16VLimitFp32Sums), 0);
  EXPECT_EQ(fp16_v_shift(16.0, HUGE_VAL, kFp16VLimitFp32Sums), 0);
  EXPECT_EQ(fp16_v_shift(16.0, 0.0, kFp16VLimitFp32Sums), 0);
}

TEST(ErrorHarness, Fp32ModelEqualsNativeFloatPipelineBitForBit) {
  const TransformF64 t = make("4,3", "0,±1,±2,1/2");  // six finite points: no infinity row
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 20, 5, 3);
  const int n = t.n, m = t.m, r = t.r;
  const int64_t T = ds.tiles, C = ds.channels;
  const auto AT = to_f32(t.AT), G = to_f32(t.G), BT = to_f32(t.BT);
  const auto d = to_f32(ds.d), g = to_f32(ds.g);
  const std::vector<double> y = emulate_winograd(t, precision_preset("fp32"), std::vector<double>(d.begin(), d.end()),
                                                 std::vector<double>(g.begin(), g.end()), T, C, T, true);
  for (int64_t tile = 0; tile < T; ++tile) {
    std::vector<float> M(static_cast<std::size_t>(n * n), 0.0f);
    for (int64_t c = 0; c < C; ++c) {
      const auto U = sandwich_f32(G, n, r, g.data() + (tile * C + c) * r * r);
      const auto V = sandwich_f32(BT, n, n, d.data() + (tile * C + c) * n * n);
      for (int a = 0; a < n * n; ++a) M[static_cast<std::size_t>(a)] = M[static_cast<std::size_t>(a)] + U[static_cast<std::size_t>(a)] * V[static_cast<std::size_t>(a)];
    }
    const auto Y = sandwich_f32(AT, m, n, M.data());
    for (int a = 0; a < m * m; ++a)
      ASSERT_EQ(y[static_cast<std::size_t>(tile * m * m + a)], static_cast<double>(Y[static_cast<std::size_t>(a)]))
          << "tile " << tile << " output " << a;
  }
}

// L X L^T with every operand, product and sum rounded by round_to (the scalar definition), in the
// documented order: an independent reference for the emulation's software-rounded arithmetic.
std::vector<double> sandwich_rounded(Format f, const std::vector<double>& L, int P, int I, const double* X) {
  auto R = [f](double v) { return round_to(f, v); };
  std::vector<double> x(static_cast<std::size_t>(I * I)), tmp(static_cast<std::size_t>(P * I)),
      out(static_cast<std::size_t>(P * P));
  for (int k = 0; k < I * I; ++k) x[static_cast<std::size_t>(k)] = R(X[k]);
  auto l = [&](int p, int i) { return R(L[static_cast<std::size_t>(p * I + i)]); };
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < I; ++j) {
      double s = R(l(p, 0) * x[static_cast<std::size_t>(j)]);
      for (int i = 1; i < I; ++i) s = R(s + R(l(p, i) * x[static_cast<std::size_t>(i * I + j)]));
      tmp[static_cast<std::size_t>(p * I + j)] = s;
    }
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < P; ++q) {
      double s = R(tmp[static_cast<std::size_t>(p * I)] * l(q, 0));
      for (int j = 1; j < I; ++j) s = R(s + R(tmp[static_cast<std::size_t>(p * I + j)] * l(q, j)));
      out[static_cast<std::size_t>(p * P + q)] = s;
    }
  return out;
}

// The -all presets (software-rounded fp16/bf16 arithmetic: lane-batched fast path, the general kernel
// for groups that leave the fast range, several threads for large batches) against the scalar
// definition, bit for bit; the data reach overflow and the subnormals on purpose.
TEST(ErrorHarness, SoftwareRoundedArithmeticEqualsTheScalarDefinitionBitForBit) {
  for (const char* preset : {"fp16-all", "bf16-all"}) {
    const PrecisionModel model = precision_preset(preset);
    const TransformF64 t = make("4,3", "0,±1,±2,inf");
    const int n = t.n, m = t.m, r = t.r;
    const int64_t T = 301, C = 117;  // T * C = 35217 matrices: more than one thread, not a multiple of 8
    TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, T, C, 11);
    for (int64_t i = 0; i < T * C; i += 97)  // whole tiles far out of range, both ways
      for (int k = 0; k < n * n; ++k) ds.d[static_cast<std::size_t>(i * n * n + k)] *= (i % 2 ? 1e-6 : 3e3);
    const std::vector<double> y = emulate_winograd(t, model, ds.d, ds.g, T, C, T, true);
    const auto AT = rounded(model.matrices, t.AT), G = rounded(model.matrices, t.G),
               BT = rounded(model.matrices, t.BT);
    int64_t mismatches = 0;
    for (int64_t tile = 0; tile < T; ++tile) {
      std::vector<double> M(static_cast<std::size_t>(n * n), 0.0);
      for (int64_t c = 0; c < C; ++c) {
        const auto U = rounded(model.filter_transform.format,
                               sandwich_rounded(model.transform_arith, G, n, r, ds.g.data() + (tile * C + c) * r * r));
        const auto V = rounded(model.input_transform.format,
                               sandwich_rounded(model.transform_arith, BT, n, n, ds.d.data() + (tile * C + c) * n * n));
        for (int a = 0; a < n * n; ++a) {
          const auto A = static_cast<std::size_t>(a);
          M[A] = round_to(model.accumulate, M[A] + round_to(model.product, U[A] * V[A]));
        }
      }
      const auto Y = rounded(model.output.format,
                             sandwich_rounded(model.output_arith, AT, m, n, rounded(model.gemm_output.format, M).data()));
      for (int a = 0; a < m * m; ++a) {
        const double got = y[static_cast<std::size_t>(tile * m * m + a)], want = Y[static_cast<std::size_t>(a)];
        mismatches += !(got == want || (std::isnan(got) && std::isnan(want)));
      }
    }
    EXPECT_EQ(mismatches, 0) << preset;
  }
}

// Chunked accumulation (fp16-fma: fp16 FMAs over chunks of channels, chunk sums in fp32) against a
// straightforward evaluation of its definition on a small case: C = 45 channels (chunks 32 + 13, and
// 9 x 5 for a custom chunk of 5), independent filters per tile, data that overflows nothing.
TEST(ErrorHarness, ChunkedAccumulationMatchesItsDefinition) {
  PrecisionModel five = precision_preset("fp16-fma");
  five.accumulate_chunk = 5;
  for (const PrecisionModel& model : {precision_preset("fp16-fma"), five}) {
    const TransformF64 t = make("4,3", "0,±1,±2,inf");
    const int n = t.n, m = t.m, r = t.r;
    const int64_t T = 23, C = 45;
    TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, T, C, 17);
    for (double& v : ds.d) v = round_to(Format::kFp16, v);
    for (double& v : ds.g) v = round_to(Format::kFp16, v);
    const std::vector<double> y = emulate_winograd(t, model, ds.d, ds.g, T, C, T, true);
    const auto AT = rounded(model.matrices, t.AT), G = rounded(model.matrices, t.G),
               BT = rounded(model.matrices, t.BT);
    const int64_t L = model.accumulate_chunk;
    int64_t mismatches = 0, differs_from_unchunked = 0;
    for (int64_t tile = 0; tile < T; ++tile) {
      std::vector<double> M(static_cast<std::size_t>(n * n), 0.0), plain(M);
      std::vector<double> part(M.size(), 0.0);
      for (int64_t c = 0; c < C; ++c) {
        const auto U = rounded(Format::kFp16,
                               sandwich_rounded(model.transform_arith, G, n, r, ds.g.data() + (tile * C + c) * r * r));
        const auto V = rounded(Format::kFp16,
                               sandwich_rounded(model.transform_arith, BT, n, n, ds.d.data() + (tile * C + c) * n * n));
        if (c % L == 0) std::fill(part.begin(), part.end(), 0.0);
        for (int a = 0; a < n * n; ++a) {
          const auto A = static_cast<std::size_t>(a);
          part[A] = round_to(Format::kFp16, part[A] + U[A] * V[A]);  // one fp16 FMA
          plain[A] = round_to(Format::kFp16, plain[A] + U[A] * V[A]);
        }
        if (c % L == L - 1 || c == C - 1)
          for (std::size_t a = 0; a < M.size(); ++a) M[a] = round_to(Format::kFp32, M[a] + part[a]);
      }
      const auto Y = rounded(Format::kFp32, sandwich_rounded(model.output_arith, AT, m, n, M.data()));
      const auto Yp = rounded(Format::kFp32, sandwich_rounded(model.output_arith, AT, m, n, plain.data()));
      for (int a = 0; a < m * m; ++a) {
        const double got = y[static_cast<std::size_t>(tile * m * m + a)], want = Y[static_cast<std::size_t>(a)];
        mismatches += got != want;
        differs_from_unchunked += got != Yp[static_cast<std::size_t>(a)];
      }
    }
    EXPECT_EQ(mismatches, 0) << "chunk " << L;
    EXPECT_GT(differs_from_unchunked, T * m * m / 2) << "chunk " << L;  // the chunks matter
  }
}

// The first-order model of chunked accumulation: the fp16-fma error grows with the chunk and stays
// within the stagewise model's factor 2; without chunks the weights are the running sum's.
TEST(ErrorHarness, ChunkedAccumulationFirstOrder) {
  PrecisionModel plain = precision_preset("fp16-fma");
  plain.accumulate_chunk = 0;
  plain.chunk_accumulate = Format::kFp64;
  EXPECT_EQ(accumulation_weights(plain, 40).accumulate, 40.0 * 41 / 2 - 1);
  EXPECT_EQ(accumulation_weights(plain, 40).chunk, 0.0);
  PrecisionModel c8 = precision_preset("fp16-fma");
  c8.accumulate_chunk = 8;
  // 40 channels in 5 chunks of 8: 5 * 36 steps inside; chunk sums of 16, 24, 32, 40 products.
  EXPECT_EQ(accumulation_weights(c8, 40).accumulate, 5 * 36.0);
  EXPECT_EQ(accumulation_weights(c8, 40).chunk, 16.0 + 24 + 32 + 40);
  const TransformF64 t = make("4,3", "0,±1,±2,inf");
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 400, 64, 8);
  double previous = 0.0;
  for (int L : {4, 16, 32, 64}) {
    PrecisionModel model = precision_preset("fp16-fma");
    model.accumulate_chunk = L;
    const double measured = ErrorEvaluator(ds, model).score(t);
    const double predicted = predicted_rel_error_2d(t, model, 64);
    std::cout << "fp16 fma, chunks of " << L << ": measured " << measured << ", predicted " << predicted << '\n';
    EXPECT_GT(measured / predicted, 0.5) << L;
    EXPECT_LT(measured / predicted, 2.0) << L;
    EXPECT_GT(measured, previous) << L;
    previous = measured;
  }
}

TEST(ErrorHarness, Fp64IsExactToRoundoffAndFp32ToSinglePrecision) {
  for (const char* spec : {"2,3|0,±1,inf", "4,3|0,±1,±2,inf", "6,3|0,±1,±2,±1/2,inf"}) {
    const std::string s(spec);
    const std::string tile = s.substr(0, s.find('|')), points = s.substr(s.find('|') + 1);
    const TransformF64 t = make(tile.c_str(), points.c_str());
    const TileDataset ds = make_tile_dataset(parse_tile(tile), DataKind::kGaussian, 300, 16, 1);
    const ErrorMetrics e64 = ErrorEvaluator(ds, precision_preset("fp64")).evaluate(t);
    EXPECT_LT(e64.rel_l2, 1e-13) << spec;
    const ErrorMetrics e32 = ErrorEvaluator(ds, precision_preset("fp32")).evaluate(t);
    const double u32 = format_info(Format::kFp32).unit_roundoff;
    EXPECT_LT(e32.rel_l2, 100 * u32) << spec;  // a few dozen roundings deep: far below fp16's u
    EXPECT_GT(e32.rel_l2, 0.1 * u32) << spec;  // and it does round
    EXPECT_EQ(e32.nan_count + e32.inf_count, 0);
  }
}

TEST(ErrorHarness, LayerWithPartialEdgeTilesMatchesReference) {
  // 11 x 13 is not a multiple of 4 or 6: the last row and column of tiles are cut off.
  const LayerDataset layer = make_layer_dataset(2, 3, 11, 13, 4, 3, DataKind::kRelu, 7);
  for (const char* tile : {"4,3", "6,3"}) {
    const TileSize ts = parse_tile(tile);
    const TransformF64 t = Transform::construct(ts, standard_points(ts.n() - 1, true)).to_f64();
    const ErrorEvaluator eval(layer, precision_preset("fp64"), ts);
    const ErrorMetrics e = eval.evaluate(t);
    EXPECT_EQ(e.count, 2 * 4 * 11 * 13) << tile;
    EXPECT_LT(e.rel_l2, 1e-12) << tile;
    const ErrorMetrics h = ErrorEvaluator(layer, precision_preset("fp16-storage"), ts).evaluate(t);
    EXPECT_GT(h.rel_l2, 1e-5) << tile;
    EXPECT_LT(h.rel_l2, 1.0) << tile;
  }
  const LayerDataset five = make_layer_dataset(1, 2, 9, 9, 2, 5, DataKind::kGaussian, 2);
  const TransformF64 f45 = make("4,5", "0,±1,±2,±1/2,inf");
  EXPECT_LT(ErrorEvaluator(five, precision_preset("fp64"), parse_tile("4,5")).evaluate(f45).rel_l2, 1e-12);
}

TEST(ErrorHarness, OutputsBeyondTheLayerDoNotSetTheOutputScale) {
  // H = 7 in F(2,3) tiles: output row 7 is computed and cropped. The input's last row is large and
  // the filters' first row carries the weight, so the cropped row (d[6] under g[0]) is 20x larger
  // than any output of the layer; with it in the per-tensor int8 output scale the error was 0.50.
  LayerDataset layer = make_layer_dataset(1, 2, 7, 8, 2, 3, DataKind::kGaussian, 2);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t x = 0; x < 8; ++x) layer.input[static_cast<std::size_t>((c * 7 + 6) * 8 + x)] = 100.0;
  for (std::size_t i = 0; i < layer.weights.size(); ++i) layer.weights[i] = i % 9 < 3 ? 1.0 : 0.01 * (i % 5);
  PrecisionModel model = precision_preset("fp64");
  model.output.format = Format::kInt8;  // symmetric, one scale for the tensor
  // Independent reference: the exact convolution quantized with s = max |y| / 127 over the layer.
  const std::vector<double> y = reference_conv2d(layer.shape, layer.input, layer.weights);
  double amax = 0;
  for (const double v : y) amax = std::max(amax, std::fabs(v));
  double err2 = 0, ref2 = 0;
  for (const double v : y) {
    const double q = std::nearbyint(v / (amax / 127)) * (amax / 127);
    err2 += (q - v) * (q - v);
    ref2 += v * v;
  }
  const double expected = std::sqrt(err2 / ref2);
  const ErrorEvaluator eval(layer, model, parse_tile("2,3"));
  EXPECT_NEAR(eval.evaluate(make("2,3", "0,±1,inf")).rel_l2 / expected, 1.0, 1e-6);
  EXPECT_NEAR(eval.evaluate_direct().rel_l2 / expected, 1.0, 1e-6);
  EXPECT_LT(expected, 0.02);
}

// The baseline: a float64 direct convolution is the reference to roundoff; in fp32 a direct
// convolution is more accurate than Winograd (DESIGN.md: Winograd costs accuracy even in fp32).
TEST(ErrorHarness, DirectBaseline) {
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 500, 16, 3);
  EXPECT_LT(ErrorEvaluator(ds, precision_preset("fp64")).evaluate_direct().rel_l2, 1e-15);
  const ErrorEvaluator fp32(ds, precision_preset("fp32"));
  const double direct = fp32.evaluate_direct().rel_l2;
  const double wino = fp32.score(make("4,3", "0,±1,±2,inf"));
  std::cout << "fp32 F(4,3): direct " << direct << ", Winograd " << wino << '\n';
  EXPECT_GT(direct, 0.0);
  EXPECT_LT(direct, wino);
  const LayerDataset layer = make_layer_dataset(1, 3, 10, 11, 2, 3, DataKind::kGaussian, 1);
  EXPECT_LT(ErrorEvaluator(layer, precision_preset("fp64"), parse_tile("4,3")).evaluate_direct().rel_l2, 1e-15);
}

TEST(ErrorHarness, LargerTilesHaveLargerFp16Error) {
  const PrecisionModel m = precision_preset("fp16-storage");
  const TileDataset d23 = make_tile_dataset(parse_tile("2,3"), DataKind::kGaussian, 2000, 8, 1);
  const TileDataset d43 = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 2000, 8, 1);
  const double e23 = ErrorEvaluator(d23, m).score(make("2,3", "0,±1,inf"));
  const double e43 = ErrorEvaluator(d43, m).score(make("4,3", "0,±1,±2,inf"));
  std::cout << "fp16-storage rel_l2: F(2,3) " << e23 << ", F(4,3) " << e43 << '\n';
  EXPECT_GT(e43, e23);
}

// DESIGN.md: with only U and V rounded, the 2D relative error is c u P / (m r). first_order.hpp
// derives c = 1/sqrt(3) from the distribution of round-to-nearest errors; check that the measured
// error follows the prediction across tiles and point sets (ratio reported, not hard-coded).
TEST(ErrorHarness, FirstOrderPredictionHolds) {
  PrecisionModel uv = precision_preset("fp64");
  uv.name = "uv-fp16";
  uv.filter_transform.format = uv.input_transform.format = Format::kFp16;
  const double u = format_info(Format::kFp16).unit_roundoff;
  for (const char* spec : {"2,3|0,±1,inf", "4,3|0,±1,±2,inf", "4,3|0,±1/2,±2,inf", "4,3|0,±5/6,±7/6,inf",
                           "6,3|0,±1,±2,±1/2,inf", "6,3|0,±3/5,±1,±7/6,inf", "6,3|0,±1,±2,±3,inf"}) {
    const std::string s(spec);
    const std::string tile = s.substr(0, s.find('|')), points = s.substr(s.find('|') + 1);
    const TransformF64 t = make(tile.c_str(), points.c_str());
    const TileDataset ds = make_tile_dataset(parse_tile(tile), DataKind::kGaussian, 3000, 8, 4);
    const double measured = ErrorEvaluator(ds, uv).score(t);
    const double predicted = predicted_rel_error_2d(t, u);
    const double c = kFirstOrderC * measured / predicted;
    std::cout << "F(" << tile << ") {" << points << "}: P = " << winograd_p(t) << ", measured " << measured
              << ", predicted " << predicted << ", c = " << c << '\n';
    EXPECT_GT(measured / predicted, 0.75) << spec;
    EXPECT_LT(measured / predicted, 1.33) << spec;
  }
}

// The stage-by-stage first-order model against measurement, for floating pipelines and transforms
// without range trouble. Agreement within a factor 2 is what a search proxy needs; the ratios are
// printed for the record.
TEST(ErrorHarness, StagewisePredictionTracksMeasurement) {
  // Only U and V rounded: the stagewise model reduces to c u P / (m r).
  PrecisionModel uv = precision_preset("fp64");
  uv.filter_transform.format = uv.input_transform.format = Format::kFp16;
  const TransformF64 f43 = make("4,3", "0,±1,±2,inf");
  EXPECT_NEAR(predicted_rel_error_2d(f43, uv, 8) / predicted_rel_error_2d(f43, format_info(Format::kFp16).unit_roundoff),
              1.0, 1e-12);
  for (const char* preset : {"fp32", "fp16-storage", "fp16-all", "bf16-storage", "bf16-all", "seed-fp16"}) {
    for (const char* spec : {"4,3|0,±1,±2,inf", "4,3|0,±5/6,±7/6,inf", "6,3|0,±1,±2,±1/2,inf", "6,3|0,±3/5,±1,±7/6,inf"}) {
      const std::string s(spec);
      const std::string tile = s.substr(0, s.find('|')), points = s.substr(s.find('|') + 1);
      const TransformF64 t = make(tile.c_str(), points.c_str());
      const TileDataset ds = make_tile_dataset(parse_tile(tile), DataKind::kGaussian, 500, 16, 6);
      const double measured = ErrorEvaluator(ds, precision_preset(preset)).score(t);
      const double predicted = predicted_rel_error_2d(t, precision_preset(preset), 16);
      std::cout << preset << " F(" << tile << ") {" << points << "}: measured " << measured << ", predicted "
                << predicted << ", ratio " << measured / predicted << '\n';
      EXPECT_GT(measured / predicted, 0.5) << preset << ' ' << spec;
      EXPECT_LT(measured / predicted, 2.0) << preset << ' ' << spec;
    }
  }
  EXPECT_THROW(predicted_rel_error_2d(f43, precision_preset("int8-tap"), 8), Error);
}

// Ranks of a vector (0 = smallest), for Spearman's rho.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) r[idx[i]] = static_cast<double>(i);
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  double d2 = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  const double n = static_cast<double>(ra.size());
  return 1 - 6 * d2 / (n * (n * n - 1));
}

// The proxy's use: ranking candidates. Random symmetric F(6,3) point sets {0, ±a, ±b, ±c, inf}
// with a, b, c drawn from small rationals; rank correlation with the measured error.
TEST(ErrorHarness, StagewisePredictionRanksRandomPointSets) {
  const std::vector<std::string> pool = {"1/4", "1/3", "2/5", "1/2", "3/5", "2/3", "3/4", "5/6", "1", "7/6",
                                         "5/4", "4/3", "3/2", "5/3", "2", "5/2", "3"};
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
  const TileDataset ds = make_tile_dataset(parse_tile("6,3"), DataKind::kGaussian, 400, 8, 8);
  for (const char* preset : {"fp16-storage", "fp16-all"}) {
    const PrecisionModel m = precision_preset(preset);
    const ErrorEvaluator eval(ds, m);
    std::vector<double> measured, predicted;
    while (measured.size() < 24) {
      std::size_t a = pick(rng), b = pick(rng), c = pick(rng);
      if (a == b || b == c || a == c) continue;
      const std::string pts = "0,±" + pool[a] + ",±" + pool[b] + ",±" + pool[c] + ",inf";
      const TransformF64 t = make("6,3", pts.c_str());
      const double e = eval.score(t);
      if (!std::isfinite(e)) continue;
      measured.push_back(e);
      predicted.push_back(predicted_rel_error_2d(t, m, 8));
    }
    const double rho = spearman(measured, predicted);
    std::cout << preset << ": Spearman rho (stagewise prediction vs measured, 24 random F(6,3) point sets) = " << rho << '\n';
    EXPECT_GT(rho, 0.9) << preset;
  }
}

// The emulation streams its tiles in chunks over threads; a quantized stage whose scales span
// tiles gets them from a first pass. Against the pipeline written out on whole tensors (every
// transform materialized, then quantized at once): the same bits, for every kind of scale.
TEST(ErrorHarness, StreamedStagesEqualWholeTensorPipeline) {
  const TransformF64 t = make("4,3", "0,±1,±2,inf");
  const int n = 6, m = 4, r = 3;
  const int64_t T = 701, C = 48, nn = 36;  // 33648 matrices: two threads, many chunks each
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kRelu, T, C, 21);
  for (const char* preset : {"int8-tensor", "int8-channel", "int8-tap", "int8-tap-channel", "int8-tile",
                             "fp8-e4m3-storage", "fp16-all"}) {
    const PrecisionModel model = precision_preset(preset);
    ASSERT_FALSE(model.gemm_output.quantized() || model.output.quantized()) << preset;
    auto prepared = [&](std::vector<double> mat) {
      round_in_place(model.matrices, mat);
      return mat;
    };
    auto group_axes = [](Granularity g, std::vector<int> channel) -> std::vector<int> {
      switch (g) {
        case Granularity::kTensor: return {};
        case Granularity::kChannel: return channel;
        case Granularity::kTap: return {2};
        case Granularity::kTile: return {0, 1};
        case Granularity::kTapChannel: channel.push_back(2); return channel;
      }
      return {};
    };
    auto staged = [&](const StageFormat& st, std::vector<double>& x, std::vector<int> channel) {
      const int64_t dims[] = {T, C, nn};
      if (st.quantized())
        fake_quantize_grouped(st.format, st.scheme, x, dims, group_axes(st.granularity, std::move(channel)));
      else
        round_in_place(st.format, x, st.overflow);
    };
    std::vector<double> U(static_cast<std::size_t>(T * C * nn)), V(U.size());
    detail::sandwich_range_reference(model.transform_arith, prepared(t.G), n, r, ds.g.data(), T * C, U.data());
    detail::sandwich_range_reference(model.transform_arith, prepared(t.BT), n, n, ds.d.data(), T * C, V.data());
    staged(model.filter_transform, U, {0});  // paired data: a tile's own filter is its output channel
    staged(model.input_transform, V, {1});
    const Format acc_format = model.accumulate == Format::kInt32 ? Format::kFp64 : model.accumulate;
    std::vector<double> M(static_cast<std::size_t>(T * nn));
    for (int64_t tile = 0; tile < T; ++tile)
      for (int64_t a = 0; a < nn; ++a) {
        double acc = 0;
        for (int64_t c = 0; c < C; ++c) {
          const auto i = static_cast<std::size_t>((tile * C + c) * nn + a);
          acc = round_to(acc_format, acc + round_to(model.product, U[i] * V[i]));
        }
        M[static_cast<std::size_t>(tile * nn + a)] = acc;
      }
    round_in_place(model.gemm_output.format, M, model.gemm_output.overflow);
    std::vector<double> Y(static_cast<std::size_t>(T * m * m));
    detail::sandwich_range_reference(model.output_arith, prepared(t.AT), m, n, M.data(), T, Y.data());
    round_in_place(model.output.format, Y, model.output.overflow);

    const std::vector<double> streamed = emulate_winograd(t, model, ds.d, ds.g, T, C, T, true);
    ASSERT_EQ(streamed.size(), Y.size());
    int64_t differ = 0;
    for (std::size_t i = 0; i < Y.size(); ++i)
      differ += (streamed[i] == Y[i] || (std::isnan(streamed[i]) && std::isnan(Y[i]))) ? 0 : 1;
    EXPECT_EQ(differ, 0) << preset << ": " << differ << " of " << Y.size() << " outputs differ";
  }
}

// int8-spatial (ncnn's int8 Winograd): with the quantization before exact transforms, Winograd's
// error is the direct int8 convolution's, whatever the points; quantizing U and V after the
// transforms (the engine's int8-tap-channel, LANCE's placement) costs several times more.
TEST(ErrorHarness, SpatialInt8WinogradEqualsDirectInt8) {
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kRelu, 1500, 24, 13);
  const ErrorEvaluator spatial(ds, precision_preset("int8-spatial"));
  const double direct = spatial.evaluate_direct().rel_l2;
  EXPECT_GT(direct, 1e-3);  // int8 really quantizes
  for (const char* points : {"0,±1,±2,inf", "0,±5/8,±14/9,inf", "0,±1/2,±3,inf"}) {
    const double wino = spatial.score(make("4,3", points));
    // Equal up to the fp32 rounding of M and of the output (about 1e-7 of the int8 error).
    EXPECT_NEAR(wino / direct, 1.0, 1e-5) << points;
  }
  const double lance = ErrorEvaluator(ds, precision_preset("int8-tap-channel")).score(make("4,3", "0,±1,±2,inf"));
  EXPECT_GT(lance, 3.0 * direct);
}

TEST(ErrorHarness, PIsInvariantUnderDiagonalScaling) {
  const double a = winograd_p(make("6,3", "0,±1,±2,±1/2,inf", "wincnn"));
  const double b = winograd_p(make("6,3", "0,±1,±2,±1/2,inf", "lagrange"));
  const double c = winograd_p(make("6,3", "0,±1,±2,±1/2,inf", "d1=1,2,1/2,4,1,1,1,8;d2=3,1,1,1/4,1,2,1,1"));
  EXPECT_NEAR(a / b, 1.0, 1e-12);
  EXPECT_NEAR(a / c, 1.0, 1e-12);
}

TEST(ErrorHarness, OverflowIsCountedNotHidden) {
  TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 200, 4, 2);
  for (double& v : ds.d) v *= 2e3;  // d fits fp16, V (row norms of B^T about 6.5 each way) does not
  const ErrorMetrics e = ErrorEvaluator(ds, precision_preset("fp16-storage")).evaluate(make("4,3", "0,±1,±2,inf"));
  EXPECT_GT(e.nan_count + e.inf_count, 0);
  EXPECT_TRUE(std::isinf(e.rel_l2));
  EXPECT_TRUE(std::isinf(e.max_abs));  // an unbounded error, whatever the finite outputs' errors
  EXPECT_TRUE(std::isinf(e.elementwise));
  // fp8 storage with a per-tensor scale (saturating) does not overflow on the same data.
  const ErrorMetrics f8 = ErrorEvaluator(ds, precision_preset("fp8-e4m3-storage")).evaluate(make("4,3", "0,±1,±2,inf"));
  EXPECT_EQ(f8.nan_count + f8.inf_count, 0);
}

TEST(ErrorHarness, DataThatOverflowsTheStoredFormatIsCountedNotRefused) {
  // One input value of 1e5 is finite data, stored in fp16 as inf. The convolution of the stored data
  // is inf at the outputs that see it: the harness refused the layer, blaming "NaN or inf in the
  // data, or magnitudes that overflow float64". Now those outputs are counted.
  LayerDataset layer = make_layer_dataset(1, 2, 8, 8, 2, 3, DataKind::kGaussian, 1);
  layer.input[4 * 8 + 4] = 1e5;  // channel 0, row 4, column 4: in the 3x3 window of 9 outputs per filter
  const ErrorEvaluator eval(layer, precision_preset("fp16-storage"), parse_tile("2,3"));
  // The direct convolution in fp32 of the stored data: inf exactly where the window holds the inf
  // (one infinite term in each sum, Gaussian weights are not 0): 9 positions x 2 filters.
  const ErrorMetrics direct = eval.evaluate_direct();
  EXPECT_EQ(direct.nan_count + direct.inf_count, 18);
  const ErrorMetrics e = eval.evaluate(make("2,3", "0,±1,inf"));
  EXPECT_GE(e.nan_count + e.inf_count, 18);
  EXPECT_LT(e.nan_count + e.inf_count, e.count);
  EXPECT_EQ(e.rel_l2, HUGE_VAL);
  EXPECT_TRUE(std::isfinite(e.reference_rms));

  // Every value overflows: every output is non-finite, and the reference is that of the data as given
  // (fp64 storage keeps it as it is).
  LayerDataset all = make_layer_dataset(1, 2, 8, 8, 2, 3, DataKind::kGaussian, 1);
  for (std::size_t i = 0; i < all.input.size(); ++i) all.input[i] = i % 3 ? 1e5 : -7e4;
  const ErrorMetrics a = ErrorEvaluator(all, precision_preset("fp16-storage"), parse_tile("4,3"))
                             .evaluate(make("4,3", "0,±1,±2,inf"));
  EXPECT_EQ(a.nan_count + a.inf_count, a.count);
  const ErrorMetrics ref =
      ErrorEvaluator(all, precision_preset("fp64"), parse_tile("4,3")).evaluate(make("4,3", "0,±1,±2,inf"));
  EXPECT_EQ(a.reference_rms, ref.reference_rms);

  // Tile data (the evaluator takes it over, so no original is left to fall back on): a message that
  // names the overflow of the stored format, not the data.
  TileDataset ds = make_tile_dataset(parse_tile("2,3"), DataKind::kGaussian, 16, 2, 1);
  ds.d[7] = 1e5;
  const std::string msg = testing::error_of([&] { ErrorEvaluator(ds, precision_preset("fp16-storage")); });
  EXPECT_NE(msg.find("store 1 finite data values as inf or NaN"), std::string::npos) << msg;
}

TEST(ErrorHarness, NoMetricClaimsAccuracyWhenEveryOutputOverflows) {
  // fp16 storage of V for the point 1e3 overflows in every output: none finite to take a maximum of.
  const TileDataset ds = make_tile_dataset(parse_tile("2,3"), DataKind::kGaussian, 64, 8, 1);
  const ErrorEvaluator eval(ds, precision_preset("fp16-storage"));
  const ErrorMetrics e = eval.evaluate(make("2,3", "0,1,-1,1e3"));
  ASSERT_EQ(e.nan_count + e.inf_count, e.count);
  for (const double metric : {e.rel_l2, e.max_abs, e.elementwise}) EXPECT_EQ(metric, HUGE_VAL);
  EXPECT_TRUE(std::isfinite(e.reference_rms));
  EXPECT_GT(e.reference_rms, 0);
}

TEST(ErrorHarness, MetricsAreScaleInvariantWhereSquaresOverflow) {
  // Powers of two scale float64 arithmetic exactly, so the relative metrics may not change; at
  // 2^900 the outputs' squares overflow (their sum gave a rel_l2 of 0) and at 2^-900 they underflow.
  const TransformF64 t = make("4,3", "0,±1,±2,inf");
  const TileDataset base = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 50, 4, 3);
  const ErrorMetrics e = ErrorEvaluator(base, precision_preset("fp64")).evaluate(t);
  ASSERT_GT(e.rel_l2, 0);
  for (const int shift : {900, -900}) {
    TileDataset ds = base;
    for (double& v : ds.d) v = std::ldexp(v, shift / 2);
    for (double& v : ds.g) v = std::ldexp(v, shift - shift / 2);
    const ErrorMetrics s = ErrorEvaluator(ds, precision_preset("fp64")).evaluate(t);
    EXPECT_NEAR(s.rel_l2 / e.rel_l2, 1.0, 1e-12) << shift;
    EXPECT_NEAR(s.reference_rms / std::ldexp(e.reference_rms, shift), 1.0, 1e-12) << shift;
    EXPECT_NEAR(s.max_abs / std::ldexp(e.max_abs, shift), 1.0, 1e-12) << shift;
    EXPECT_NEAR(s.elementwise / e.elementwise, 1.0, 1e-12) << shift;
  }
}

TEST(ErrorHarness, UndefinedMetricsAreNotZero) {
  const TransformF64 t = make("4,3", "0,±1,±2,inf");
  TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 10, 2, 1);
  std::fill(ds.g.begin(), ds.g.end(), 0.0);  // every reference output is 0: no relative error to average
  const ErrorMetrics e = ErrorEvaluator(ds, precision_preset("fp16-all")).evaluate(t);
  EXPECT_TRUE(std::isnan(e.elementwise));
  // A reference that is not finite leaves nothing to measure against.
  TileDataset bad = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 10, 2, 1);
  bad.d[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(ErrorEvaluator(bad, precision_preset("fp32")), Error);
  LayerDataset layer = make_layer_dataset(1, 2, 8, 8, 2, 3, DataKind::kGaussian, 1);
  layer.input[3] = HUGE_VAL;
  EXPECT_THROW(ErrorEvaluator(layer, precision_preset("fp32"), parse_tile("4,3")), Error);
}

TEST(ErrorHarness, FinerIntegerScalesDoNotHurt) {
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 1000, 8, 5);
  const TransformF64 t = make("4,3", "0,±1,±2,inf");
  const double tensor = ErrorEvaluator(ds, precision_preset("int8-tensor")).score(t);
  const double tap = ErrorEvaluator(ds, precision_preset("int8-tap")).score(t);
  std::cout << "int8 F(4,3) standard: per tensor " << tensor << ", per tap " << tap << '\n';
  EXPECT_LT(tap, tensor);
  EXPECT_GT(tap, precision_preset("int8-tap").operand_unit_roundoff() * 0.1);
}

TEST(ErrorHarness, DeterministicAndSeeded) {
  const TransformF64 t = make("4,3", "0,±1,±2,inf");
  const TileDataset a = make_tile_dataset(parse_tile("4,3"), DataKind::kUniform, 100, 4, 11);
  const TileDataset b = make_tile_dataset(parse_tile("4,3"), DataKind::kUniform, 100, 4, 11);
  const TileDataset c = make_tile_dataset(parse_tile("4,3"), DataKind::kUniform, 100, 4, 12);
  EXPECT_EQ(a.d, b.d);
  EXPECT_NE(a.d, c.d);
  for (double v : a.d) ASSERT_TRUE(v >= -1 && v <= 1);
  const TileDataset relu = make_tile_dataset(parse_tile("4,3"), DataKind::kRelu, 100, 4, 11);
  for (double v : relu.d) ASSERT_GE(v, 0.0);
  const ErrorEvaluator eval(a, precision_preset("fp16-all"));
  EXPECT_EQ(eval.evaluate(t).rel_l2, eval.evaluate(t).rel_l2);
}

TEST(ErrorHarness, BadInputIsAnError) {
  EXPECT_THROW(make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 0, 4, 1), Error);
  EXPECT_THROW(make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 10, 0, 1), Error);
  EXPECT_THROW(make_layer_dataset(1, 0, 8, 8, 1, 3, DataKind::kGaussian, 1), Error);
  EXPECT_THROW(make_layer_dataset(1, 1, 8, 8, 1, 4, DataKind::kGaussian, 1), Error);  // even filter
  EXPECT_THROW(parse_data_kind("laplace"), Error);
  const TileDataset ds = make_tile_dataset(parse_tile("4,3"), DataKind::kGaussian, 10, 2, 1);
  EXPECT_THROW(ErrorEvaluator(ds, precision_preset("fp16-storage")).evaluate(make("2,3", "0,±1,inf")), Error);
}

using testing::error_of;

TEST(ErrorHarness, OversizeRequestsAreRefusedNamingTheSizes) {
  const TileSize tile = parse_tile("4,3");
  // channels * n * n wraps to 0 (it divided by zero), or to a small product (it allocated the wrong size).
  for (const int64_t channels : {int64_t{1} << 62, int64_t{1024819115206086201}}) {
    const std::string msg = error_of([&] { make_tile_dataset(tile, DataKind::kGaussian, 1, channels, 1); });
    EXPECT_NE(msg.find(std::to_string(channels)), std::string::npos) << msg;
    EXPECT_NE(msg.find("F(4,3)"), std::string::npos) << msg;
  }
  EXPECT_NE(
      error_of([&] { make_tile_dataset(tile, DataKind::kGaussian, int64_t{1} << 40, int64_t{1} << 30, 1); }),
      "");
  // The limit is exact: the largest tile count that fits is admitted, one more is refused (checked on the
  // count alone: allocating 4 GiB is not a unit test's business).
  const int64_t per_tile = detail::tile_working_set(tile, 1, 3);
  const int64_t fits = kMaxHarnessValues / per_tile;
  EXPECT_EQ(detail::tile_working_set(tile, fits, 3), fits * per_tile);
  EXPECT_NO_THROW(detail::check_tile_working_set(tile, fits, 3));
  EXPECT_THROW(detail::check_tile_working_set(tile, fits + 1, 3), Error);
  // A tile dataset the machine would need 32 GiB for (admitted before) is refused.
  EXPECT_THROW(make_tile_dataset(tile, DataKind::kGaussian, int64_t{1} << 26, 1, 1), Error);

  // Layers: weights K * C * r * r overflow although the input is small; an input over the limit.
  EXPECT_NE(error_of([] {
              make_layer_dataset(1, int64_t{1} << 30, 3, 3, int64_t{1} << 40, 3, DataKind::kGaussian, 1);
            }).find("1073741824"),
            std::string::npos);
  EXPECT_THROW(make_layer_dataset(1, 1 << 20, 64, 64, 1, 3, DataKind::kGaussian, 1), Error);
  // A layer dataset built by hand: the evaluator refuses it for its size before comparing sizes.
  LayerDataset huge;
  huge.shape = ConvShape{1, int64_t{1} << 20, 1 << 10, 1 << 10, int64_t{1} << 20, 3, 3, 1, 1};
  const std::string msg = error_of([&] { ErrorEvaluator(huge, precision_preset("fp32"), tile); });
  EXPECT_NE(msg.find("limit"), std::string::npos) << msg;
  // The emulation's entry point: counts whose products overflow match no data.
  const TileDataset ds = make_tile_dataset(tile, DataKind::kGaussian, 2, 1, 1);
  EXPECT_THROW(emulate_winograd(make("4,3", "0,±1,±2,inf"), precision_preset("fp32"), ds.d, ds.g,
                                int64_t{1} << 62, 4, int64_t{1} << 62, true),
               Error);
}

}  // namespace
}  // namespace nova
