// The low-precision Winograd paths (bf16, int8, fp16): every kernel path this CPU can run against the
// float64 reference (bound from the format's unit roundoff through the first-order prediction) and
// against the emulation of its precision preset (within 10 %), portable and SIMD kernels bit-identical,
// results identical across thread counts, int8 calibration and saturation counts, NaN propagation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conv/algorithm_choice.hpp"
#include "conv/cpu_supports.hpp"
#include "conv/kernels/kernel_table.hpp"
#include "conv/kernels/lowp_kernels.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/first_order.hpp"
#include "nova/numerics/format.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::conv {
namespace {

using testing::rel_l2;
using testing::same_bits;

// A precision with its GEMM arithmetic forced: for kFp16 kFp32 or kFp16, for kBf16 kFma or kDot
// (others ignore both).
struct Variant {
  Precision prec;
  Fp16Arithmetic arith = Fp16Arithmetic::kFp32;
  Bf16Arithmetic bf16 = Bf16Arithmetic::kFma;
};
bool fp16_fma(Variant v) {
  return v.prec == Precision::kFp16 && v.arith == Fp16Arithmetic::kFp16;
}
bool bf16_dot(Variant v) {
  return v.prec == Precision::kBf16 && v.bf16 == Bf16Arithmetic::kDot;
}
std::string name_of(Variant v) {
  return to_string(v.prec) + (fp16_fma(v) ? "fma" : "") + (bf16_dot(v) ? "dot" : "");
}
// Every low-precision variant: bf16 on FMAs and on vdpbf16ps, int8, fp16 with FP32 arithmetic, fp16
// with fp16 FMAs.
const Variant kVariants[] = {{Precision::kBf16},
                             {Precision::kBf16, Fp16Arithmetic::kFp32, Bf16Arithmetic::kDot},
                             {Precision::kInt8},
                             {Precision::kFp16, Fp16Arithmetic::kFp32},
                             {Precision::kFp16, Fp16Arithmetic::kFp16}};

const char* preset_of(Variant v) {
  switch (v.prec) {
    case Precision::kBf16:
      return "bf16-storage";
    case Precision::kFp16:
      return fp16_fma(v) ? "fp16-fma" : "fp16-storage";
    case Precision::kInt8:
      return "int8-tap-channel";
    case Precision::kInt8Spatial:
      return "int8-spatial";
    case Precision::kFp32:
      return "fp32";
  }
  return "fp32";
}

// A layer of the harness (Gaussian data, "same" padding) whose input and weights are exactly
// representable in the precision's storage format, so that the engine (FP32 in, FP32 out) and the
// preset see the same stored data.
LayerDataset layer(Precision p, int64_t N, int64_t C, int64_t HW, int64_t K, int r, uint64_t seed) {
  LayerDataset d = make_layer_dataset(N, C, HW, HW, K, r, DataKind::kGaussian, seed);
  const Format f = p == Precision::kBf16   ? Format::kBf16
                   : p == Precision::kFp16 ? Format::kFp16
                                           : Format::kFp32;
  round_in_place(f, d.input);
  round_in_place(f, d.weights);
  return d;
}

struct LowpRun {
  std::vector<float> out;
  std::string path;
  LowpStats stats;
};

LowpRun run_lowp(const LayerDataset& d, Variant var, TileSize tile, LowpKernel kernel, int threads,
                 int block = 0) {
  const Precision prec = var.prec;
  const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
  PlanOptions o;
  o.precision = prec;
  o.fp16_arithmetic = var.arith;
  o.bf16_arithmetic = var.bf16;
  o.tile = tile;
  o.lowp_kernel = kernel;
  o.threads = threads;
  o.tile_block = block;
  const Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
  LowpRun r;
  r.out.assign(static_cast<std::size_t>(d.shape.output_size()), -1.0f);
  plan.execute(x.data(), r.out.data());
  r.path = plan.gemm_path();
  r.stats = plan.stats();
  EXPECT_EQ(plan.precision(), prec);
  EXPECT_NE(plan.describe().find(to_string(prec) + " GEMM: " + r.path), std::string::npos) << plan.describe();
  return r;
}

// A plan with these options on input x, calibrated on `sample` first where one is given: its output
// (preset to -1, so unwritten elements show), description and stats.
LowpRun run_planned(const LayerDataset& d, const std::vector<float>& w, const std::vector<float>& x,
                    const PlanOptions& o, const std::vector<float>* sample) {
  Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
  if (sample != nullptr) {
    const float* samples[] = {sample->data()};
    plan.calibrate(samples);
  }
  LowpRun r;
  r.out.assign(static_cast<std::size_t>(d.shape.output_size()), -1.0f);
  plan.execute(x.data(), r.out.data());
  r.path = plan.describe();
  r.stats = plan.stats();
  return r;
}

// Where the plans run the avx2 path (no AVX-512): its kernels for bf16 on FMAs, fp16 with FP32
// arithmetic (F16C) and int8 (kernels/avx2/gemm_lowp_avx2.cpp); the others stay portable there.
std::string avx2_kernel(Variant v) {
  if (best_isa() != Isa::kAvx2) return "";
  if (v.prec == Precision::kBf16 && !bf16_dot(v)) return "avx2-fma";
#if defined(__x86_64__) || defined(__i386__)
  if (v.prec == Precision::kFp16 && !fp16_fma(v) && nova::conv::cpu_supports(nova::conv::CpuFeature::kF16c))
    return "avx2-f16c";
#endif
  return v.prec == Precision::kInt8 ? "avx2" : "";
}
bool simd_supported(Variant v) {
  if (!avx2_kernel(v).empty()) return true;
  const bool bf16_fma = v.prec == Precision::kBf16 && !bf16_dot(v);
  return (fp16_fma(v) ? fp16_arithmetic_supported() : bf16_fma || lowp_simd_supported(v.prec)) &&
         best_isa() == Isa::kAvx512;
}
std::string simd_name(Variant v) {
  if (!avx2_kernel(v).empty()) return avx2_kernel(v);
  if (v.prec == Precision::kBf16 && !bf16_dot(v)) return "avx512-fma";
  return fp16_fma(v) ? "avx512-fp16" : lowp_simd_name(v.prec);
}

// The kernel a plan asked for SIMD kernels runs: the AMX one where this process admitted it (int8; bf16
// dot products when the padded channel count is whole tiles of 32), otherwise the AVX-512 one, or the
// AVX2 one on the avx2 path.
std::string simd_path(Variant v, int64_t channels) {
  if (!avx2_kernel(v).empty()) return avx2_kernel(v);
  if (v.prec == Precision::kInt8 && amx_int8_supported()) return "amx-int8";
  if (bf16_dot(v) && amx_bf16_supported() && (channels + 15) / 16 % 2 == 0) return "amx-bf16";
  return simd_name(v);
}

std::vector<LowpKernel> kernels_for(Variant v) {
  std::vector<LowpKernel> k = {LowpKernel::kPortable};
  if (simd_supported(v)) k.push_back(LowpKernel::kSimd);
  return k;
}

struct Case {
  Variant var;
  TileSize tile;
};

class LowpAccuracy : public ::testing::TestWithParam<Case> {};

TEST_P(LowpAccuracy, MatchesReferenceAndPresetEmulation) {
  const Case c = GetParam();
  const Precision prec = c.var.prec;
  const LayerDataset d = layer(prec, 1, 40, 23, 48, c.tile.r, 7);
  const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights, {});
  const TransformF64 t = default_transform(c.tile).to_f64();
  const PrecisionModel model = precision_preset(preset_of(c.var));
  const double emulated = ErrorEvaluator(d, model, c.tile).evaluate(t).rel_l2;
  // First-order prediction of the error of rounding U and V with unit roundoff u. For int8, u is half
  // a quantization step relative to the largest |value| of a tap, which is larger than the rms of the
  // values by the crest factor of Gaussian data (<= 5 at these sizes): u * 5. fp16 FMAs: the
  // stagewise prediction of the whole model (its fp16 sums cost more than the rounding of U and V).
  const double u =
      prec == Precision::kInt8 ? model.operand_unit_roundoff() * 5.0 : model.operand_unit_roundoff();
  const double bound =
      3.0 * (fp16_fma(c.var) ? predicted_rel_error_2d(t, model, d.shape.C) : predicted_rel_error_2d(t, u));
  std::vector<float> first;
  for (LowpKernel k : kernels_for(c.var)) {
    const LowpRun r = run_lowp(d, c.var, c.tile, k, 2);
    const double e = rel_l2(r.out, ref);
    SCOPED_TRACE(name_of(c.var) + " " + c.tile.to_string() + " " + r.path);
    EXPECT_EQ(r.path, k == LowpKernel::kPortable ? std::string("portable") : simd_path(c.var, d.shape.C));
    if (std::getenv("NOVA_LOWP_VERBOSE") != nullptr)
      std::printf("%s %s %-12s engine %.4e emulated %.4e ratio %.4f bound %.3e\n", name_of(c.var).c_str(),
                  c.tile.to_string().c_str(), r.path.c_str(), e, emulated, e / emulated, bound);
    EXPECT_LT(e, bound) << "emulated " << emulated;
    EXPECT_NEAR(e / emulated, 1.0, 0.10) << "engine " << e << " emulated " << emulated;
    if (first.empty()) {
      first = r.out;
    } else if (r.path == "amx-bf16") {  // FP32 sums in another order: within a few FP32 roundings
      const std::vector<double> portable(first.begin(), first.end());
      EXPECT_LT(rel_l2(r.out, portable), 1e-5) << "portable and AMX kernels differ beyond summation order";
    } else {
      EXPECT_TRUE(same_bits(r.out, first)) << "portable and SIMD kernels differ";
    }
  }
}

std::vector<Case> accuracy_cases() {
  std::vector<Case> out;
  for (Variant v : kVariants)
    for (TileSize t : {TileSize{2, 3}, TileSize{4, 3}, TileSize{6, 3}, TileSize{4, 5}}) out.push_back({v, t});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return name_of(info.param.var) + "_F" + std::to_string(info.param.tile.m) + "x" +
         std::to_string(info.param.tile.r);
}

INSTANTIATE_TEST_SUITE_P(AllTiles, LowpAccuracy, ::testing::ValuesIn(accuracy_cases()), case_name);

// On small and large inputs the fp16 plans shift V (Lowp.Fp16ScalesVUpWhereTheInputIsSmall); the harness's
// shifted presets model that, and predict the plans within 10 % there as the unshifted presets do on
// unit-scale data (MatchesReferenceAndPresetEmulation).
TEST(Lowp, Fp16PlansAgreeWithTheShiftedPresetsAtAnyInputScale) {
  for (const Variant v :
       {Variant{Precision::kFp16, Fp16Arithmetic::kFp32}, Variant{Precision::kFp16, Fp16Arithmetic::kFp16}}) {
    const PrecisionModel model = precision_preset(fp16_fma(v) ? "fp16-fma-shifted" : "fp16-storage-shifted");
    for (const TileSize tile : {TileSize{4, 3}, TileSize{6, 3}}) {
      for (const int k : {-24, 0, 14}) {
        LayerDataset d = layer(Precision::kFp16, 1, 40, 23, 48, 3, 7);
        for (double& x : d.input) x = std::ldexp(x, k);
        const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights, {});
        const double emulated =
            ErrorEvaluator(d, model, tile).evaluate(default_transform(tile).to_f64()).rel_l2;
        const LowpRun r = run_lowp(d, v, tile, LowpKernel::kAuto, 2);
        const double e = rel_l2(r.out, ref);
        SCOPED_TRACE(name_of(v) + " " + tile.to_string() + " 2^" + std::to_string(k));
        EXPECT_EQ(r.stats.v_shift != 0, k != 0);
        EXPECT_NEAR(e / emulated, 1.0, 0.10) << "engine " << e << " emulated " << emulated;
      }
    }
  }
}

TEST(Lowp, IdenticalAcrossThreadsAndBlockings) {
  for (Variant v : kVariants) {
    // 70 channels: fp16 FMA chunks of 32, 32 and 6 (+ 10 padding channels)
    const LayerDataset d = layer(v.prec, 2, fp16_fma(v) ? 70 : 21, 17, 35, 3, 3);
    for (LowpKernel k : kernels_for(v)) {
      const LowpRun base = run_lowp(d, v, TileSize{4, 3}, k, 1);
      for (int threads : {1, 2})
        for (int block : {0, 5, -1}) {
          const LowpRun r = run_lowp(d, v, TileSize{4, 3}, k, threads, block);
          EXPECT_TRUE(same_bits(r.out, base.out))
              << name_of(v) << " " << r.path << " threads=" << threads << " block=" << block;
        }
    }
  }
}

// The phased order on a layer of few tiles and several channel blocks (1x70x7x7 -> 50 at F(4,3): 4
// tiles, 5 input and 4 output blocks) splits its transforms over groups of channel blocks when the
// threads outnumber its chunks of tiles (PhasedTasks in winograd_execute.cpp). Every thread count gives
// the fused plan's bits, and a NaN input marks and poisons the same tiles: the marks of one tile are
// set from several tasks, each poisoning its own output channels. FP32, each low precision, int8
// per call (conversion pass) and calibrated (quantized by the transform), int8-spatial.
TEST(Lowp, PhasedTasksSplitChannelBlocksWhereTilesAreFew) {
  struct Setup {
    Variant var;
    bool calibrate;
  };
  const Setup setups[] = {{{Precision::kFp32}, false},
                          {{Precision::kBf16}, false},
                          {{Precision::kBf16, Fp16Arithmetic::kFp32, Bf16Arithmetic::kDot}, false},
                          {{Precision::kFp16, Fp16Arithmetic::kFp32}, false},
                          {{Precision::kFp16, Fp16Arithmetic::kFp16}, false},
                          {{Precision::kInt8}, false},
                          {{Precision::kInt8}, true},
                          {{Precision::kInt8Spatial}, false},
                          {{Precision::kInt8Spatial}, true}};
  for (const Setup& su : setups) {
    const Variant v = su.var;
    const LayerDataset d = layer(v.prec, 1, 70, 7, 50, 3, 21);
    const std::vector<float> w(d.weights.begin(), d.weights.end());
    std::vector<float> x(d.input.begin(), d.input.end());
    x[static_cast<std::size_t>((33 * 7 + 3) * 7 + 5)] = std::nanf("");  // channel 33 (block 2): tiles 1, 3
    const std::vector<float> clean(d.input.begin(), d.input.end());
    auto run = [&](int threads, int block) {
      PlanOptions o;
      o.precision = v.prec;
      o.fp16_arithmetic = v.arith;
      o.bf16_arithmetic = v.bf16;
      o.tile = TileSize{4, 3};
      o.threads = threads;
      o.tile_block = block;
      return run_planned(d, w, x, o, su.calibrate ? &clean : nullptr);
    };
    const LowpRun fused = run(1, 0);
    SCOPED_TRACE(name_of(v) + (su.calibrate ? " calibrated" : "") + ": " + fused.path);
    const bool flags = v.prec == Precision::kInt8 || v.prec == Precision::kInt8Spatial;
    if (flags) {
      EXPECT_EQ(fused.stats.nonfinite_tiles, 2);
    }
    int64_t nans = 0;
    for (float y : fused.out) nans += std::isnan(y) ? 1 : 0;
    EXPECT_GT(nans, 0);
    for (int threads : {1, 2, 3, 5, 16}) {
      const LowpRun r = run(threads, -1);
      EXPECT_NE(r.path.find(" phased"), std::string::npos);
      EXPECT_TRUE(same_bits(r.out, fused.out)) << "threads=" << threads;
      EXPECT_EQ(r.stats.nonfinite_tiles, fused.stats.nonfinite_tiles) << "threads=" << threads;
      EXPECT_EQ(r.stats.saturated, fused.stats.saturated) << "threads=" << threads;
    }
  }
}

// The fused order with each block's output channels in parts (PlanOptions::k_parts, a task per block and
// part, the input transform repeated per part): every split, block size and thread count gives the bits
// of the unsplit plan, and the counts of the input transform (int8 values saturated against a calibration
// on half the input, tiles holding NaN) once, not once per part. 130 output channels: 144 padded, so at
// least 3 panels on every path (64 columns on AVX-512, 16 on AVX2).
TEST(Lowp, FusedOutputChannelPartsGiveTheUnsplitBitsAndCounts) {
  struct Setup {
    Variant var;
    bool calibrate;
  };
  const Setup setups[] = {{{Precision::kFp32}, false},      {{Precision::kBf16}, false},
                          {{Precision::kFp16}, false},      {{Precision::kInt8}, false},
                          {{Precision::kInt8}, true},       {{Precision::kInt8Spatial}, false},
                          {{Precision::kInt8Spatial}, true}};
  for (const Setup& su : setups) {
    const Variant v = su.var;
    const LayerDataset d = layer(v.prec, 2, 40, 11, 130, 3, 27);
    const std::vector<float> w(d.weights.begin(), d.weights.end());
    std::vector<float> x(d.input.begin(), d.input.end());
    x[static_cast<std::size_t>((1 * 40 + 17) * 11 * 11 + 4 * 11 + 6)] = std::nanf("");  // image 1, channel 17
    std::vector<float> half(d.input.begin(), d.input.end());
    for (float& value : half) value *= 0.5f;
    auto run = [&](int threads, int block, int parts) {
      PlanOptions o;
      o.precision = v.prec;
      o.tile = TileSize{4, 3};
      o.threads = threads;
      o.tile_block = block;
      o.k_parts = parts;
      return run_planned(d, w, x, o, su.calibrate ? &half : nullptr);
    };
    const LowpRun base = run(1, 5, 1);
    SCOPED_TRACE(name_of(v) + (su.calibrate ? " calibrated" : "") + ": " + base.path);
    ASSERT_EQ(base.path.find("output channels in"), std::string::npos);
    if (v.prec == Precision::kInt8 || v.prec == Precision::kInt8Spatial) {
      EXPECT_GT(base.stats.nonfinite_tiles, 0);
    }
    if (su.calibrate && v.prec == Precision::kInt8) {
      EXPECT_GT(base.stats.saturated, 0);
    }
    for (int parts : {2, 3, 5})
      for (int threads : {1, 2, 3})
        for (int block : {5, 12}) {
          const LowpRun r = run(threads, block, parts);
          EXPECT_NE(r.path.find(" parts)"), std::string::npos) << r.path;
          EXPECT_TRUE(same_bits(r.out, base.out))
              << "parts=" << parts << " threads=" << threads << " block=" << block;
          EXPECT_EQ(r.stats.nonfinite_tiles, base.stats.nonfinite_tiles) << "parts=" << parts;
          EXPECT_EQ(r.stats.saturated, base.stats.saturated) << "parts=" << parts;
        }
  }
}

// The int8 operand is written by the input transform itself where the scales are known before V (the
// fused order, and the phased one when calibrated); the phased order with per-call scales still
// quantizes an FP32 V in a conversion pass. On every ISA the two must give the same result, NaN tiles
// included (the ISAs' FP32 transforms may differ from each other in rounding: AVX2 contracts to FMAs).
TEST(Lowp, Int8QuantizedByTheTransformEqualsTheConversionPass) {
  const LayerDataset d = layer(Precision::kInt8, 2, 21, 17, 35, 3, 12);
  const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
  std::vector<float> with_nan(x), half(x);
  with_nan[static_cast<std::size_t>((1 * 21 + 5) * 17 * 17 + 8 * 17 + 3)] =
      std::nanf("");  // image 1, channel 5
  for (auto& v : half) v *= 0.5f;
  auto run = [&](Isa isa, int block, const float* sample, const std::vector<float>& input) {
    PlanOptions o;
    o.precision = Precision::kInt8;
    o.tile = TileSize{4, 3};
    o.isa = isa;
    o.threads = 2;
    o.tile_block = block;
    Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
    if (sample != nullptr) {
      const float* samples[] = {sample};
      plan.calibrate(samples);
    }
    LowpRun r;
    r.out.assign(static_cast<std::size_t>(d.shape.output_size()), -1.0f);
    plan.execute(input.data(), r.out.data());
    r.stats = plan.stats();
    return r;
  };
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    SCOPED_TRACE(to_string(isa));
    // The conversion pass: phased, per call. Calibrating on the same input stores the per-call scales
    // (Int8CalibrationStoresScalesAndCountsSaturation), so the calibrated runs must match it too.
    const LowpRun pass = run(isa, -1, nullptr, x);
    const LowpRun pass_nan = run(isa, -1, nullptr, with_nan);
    EXPECT_GE(pass_nan.stats.nonfinite_tiles, 1);
    const LowpRun saturating = run(isa, 0, half.data(), x);
    EXPECT_GT(saturating.stats.saturated, 0);
    for (int block : {0, 5, -1}) {
      SCOPED_TRACE("block " + std::to_string(block));
      if (block != -1) {  // per call: the fused order quantizes in the transform
        EXPECT_TRUE(same_bits(run(isa, block, nullptr, x).out, pass.out));
        const LowpRun n = run(isa, block, nullptr, with_nan);
        EXPECT_TRUE(same_bits(n.out, pass_nan.out));
        EXPECT_EQ(n.stats.nonfinite_tiles, pass_nan.stats.nonfinite_tiles);
      }
      EXPECT_TRUE(same_bits(run(isa, block, x.data(), x).out, pass.out));  // calibrated: both orders
      EXPECT_EQ(run(isa, block, x.data(), with_nan).stats.nonfinite_tiles, pass_nan.stats.nonfinite_tiles);
      const LowpRun sat = run(isa, block, half.data(), x);
      EXPECT_TRUE(same_bits(sat.out, saturating.out));
      EXPECT_EQ(sat.stats.saturated, saturating.stats.saturated);
    }
  }
}

// The generic path's input coefficients (B^T) of a tile's default transform.
GenericCoeffs input_coeffs(TileSize tile) {
  const TransformF64 f = default_transform(tile).to_f64();
  GenericCoeffs c;
  c.m = f.m;
  c.n = f.n;
  for (int p = 0; p < f.n; ++p)
    for (int j = 0; j < f.n; ++j) {
      c.bt[p * f.n + j] = static_cast<float>(f.bt(p, j));
      if (f.bt(p, j) != 0.0) c.bt_idx[p][c.bt_nnz[p]++] = static_cast<unsigned char>(j);
    }
  return c;
}

// The tile transforms the transform tests check on an ISA: the generic path on F(4,3) and F(6,3) (ctx:
// their coefficients) and every generated transform (ctx null), each with the vcvtneps2bf16 stores the
// plans use instead where the CPU has AVX512-BF16 (from `hw`; null where it is Bf16HwInputFns{}).
struct TransformPath {
  const TileFns* fns;
  const GenericCoeffs* ctx;
  InputTileFp16Fn hw_bits;
  InputTileWordsFromWordsFn hw_from_bf16;
};
std::vector<TransformPath> transform_paths(const TransformTable& table, const Bf16HwInputFns& hw,
                                           const GenericCoeffs& c43, const GenericCoeffs& c63) {
  std::vector<TransformPath> paths = {{&table.generic, &c43, hw.generic, hw.generic_from_bf16},
                                      {&table.generic, &c63, hw.generic, hw.generic_from_bf16}};
  for (int g = 0; g < table.generated_count; ++g)
    paths.push_back({&table.generated[g], nullptr, hw.generated ? hw.generated[g] : nullptr,
                     hw.generated_from_bf16 ? hw.generated_from_bf16[g] : nullptr});
  return paths;
}

// The same at the level of one tile, where the saturated values and the NaN/Inf flag can be checked
// exactly: each ISA's in-register quantization (InputTileInt8Fn) against the portable conversion of
// the same ISA's FP32 transform, with scales that saturate about a quarter of the values.
TEST(Lowp, Int8TileQuantizationEqualsTheScalarDefinition) {
  const LowpConvertFns scalar = lowp_convert_portable();
  std::mt19937 rng(5);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    const TileFns& fns = kernels(isa).transforms.generic;
    ASSERT_NE(fns.input_int8, nullptr) << to_string(isa);
    for (TileSize tile : {TileSize{4, 3}, TileSize{6, 3}}) {
      const GenericCoeffs c = input_coeffs(tile);
      const int n = c.n, nn = n * n, cbs = 3;
      const std::ptrdiff_t sx = 16, sy = 16 * n, scb = 16 * nn;
      const std::size_t pos = 16 * cbs;
      for (int trial = 0; trial < 4; ++trial) {  // saturating, NaN, -Inf, in range (the fast store)
        SCOPED_TRACE(to_string(isa) + " " + tile.to_string() + " trial " + std::to_string(trial));
        std::vector<float> src(static_cast<std::size_t>(cbs * scb));
        for (float& v : src) v = gauss(rng);
        if (trial == 1) src[static_cast<std::size_t>(scb + 3 * sy + 2 * sx + 7)] = std::nanf("");
        if (trial == 2) src[static_cast<std::size_t>(2 * scb + 5)] = -INFINITY;
        std::vector<float> v(static_cast<std::size_t>(nn) * pos), inv(static_cast<std::size_t>(nn));
        fns.input(&c, src.data(), sy, sx, scb, cbs, v.data(), pos);
        for (int a = 0; a < nn; ++a) {  // 127 / the 75th percentile of |V| at this position
          std::vector<float> mags;
          for (std::size_t i = 0; i < pos; ++i)
            if (std::isfinite(v[a * pos + i])) mags.push_back(std::fabs(v[a * pos + i]));
          std::nth_element(mags.begin(), mags.begin() + static_cast<std::ptrdiff_t>(mags.size() * 3 / 4),
                           mags.end());
          const float ref =
              trial == 3 ? *std::max_element(mags.begin(), mags.end()) : mags[mags.size() * 3 / 4];
          inv[static_cast<std::size_t>(a)] = 127.0f / std::max(ref, 1e-3f);
        }
        std::vector<uint8_t> want(v.size()), got(v.size(), 0);
        int64_t want_sat = 0;
        int want_bad = 0;
        for (int a = 0; a < nn; ++a)
          want_sat += scalar.int8(v.data() + a * pos, want.data() + a * pos, static_cast<int64_t>(pos),
                                  inv[static_cast<std::size_t>(a)], &want_bad);
        int got_bad = 0;
        const int64_t got_sat =
            fns.input_int8(&c, src.data(), sy, sx, scb, cbs, got.data(), pos, inv.data(), &got_bad);
        EXPECT_EQ(got, want);
        EXPECT_EQ(got_sat, want_sat);
        if (trial == 3)
          EXPECT_EQ(want_sat, 0);
        else
          EXPECT_GT(want_sat, static_cast<int64_t>(v.size()) / 8);
        EXPECT_EQ(got_bad, want_bad);
        EXPECT_EQ(want_bad, trial == 1 || trial == 2 ? 1 : 0);
        // The per-call scale pass's max |V| per position, kept per lane by the transform (input_amax).
        std::vector<float> lane_max(static_cast<std::size_t>(nn) * 16, 0.0f);
        fns.input_amax(&c, src.data(), sy, sx, scb, cbs, lane_max.data());
        for (int a = 0; a < nn; ++a)
          EXPECT_EQ(scalar.amax(lane_max.data() + a * 16, 16),
                    scalar.amax(v.data() + a * pos, static_cast<int64_t>(pos)))
              << "position " << a;
      }
    }
  }
}

// The transforms from bf16 and fp16 tensors' own elements (the in-place reads of such tensors) give the
// bits of the same transforms on the elements widened by the ISA's conversion, for every V store the
// plans use: FP32 V, bf16 bits (AVX-512F and vcvtneps2bf16 stores), bf16 values as floats, fp16 bits,
// fp16 values as floats; on generated and generic tiles, with NaN, Inf, subnormal and large elements.
TEST(Lowp, TransformsFromWordsEqualThoseOfTheWidenedElements) {
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> bits(0, 0xFFFF);
  int checked = 0;
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    const KernelTable& k = kernels(isa);
    const TransformTable& table = k.transforms;
    const bool hw = isa == Isa::kAvx512 && lowp_simd_supported(Precision::kBf16);
    const Bf16HwInputFns hw_fns = hw ? bf16_hw_input_fns_avx512bf16() : Bf16HwInputFns{};
    const GenericCoeffs c43 = input_coeffs(TileSize{4, 3}), c63 = input_coeffs(TileSize{6, 3});
    for (const TransformPath& path : transform_paths(table, hw_fns, c43, c63)) {
      // Named, not a structured binding: the lambda below captures them (clang 14).
      const TileFns* fns = path.fns;
      const GenericCoeffs* ctx = path.ctx;
      const InputTileFp16Fn hw_bits = path.hw_bits;
      const InputTileWordsFromWordsFn hw_from_bf16 = path.hw_from_bf16;
      if (fns->floats_from_bf16 == nullptr) continue;  // the ISA stages widened copies instead
      const int n = ctx ? ctx->n : kMaxGenericN, nn = n * n, cbs = 2;
      const std::ptrdiff_t sx = 16, sy = 16 * n, scb = 16 * nn;
      const std::size_t pos = 16 * cbs, count = static_cast<std::size_t>(cbs * scb);
      for (DataType type : {DataType::kBf16, DataType::kFp16}) {
        SCOPED_TRACE(to_string(isa) + (ctx ? " generic n=" + std::to_string(n) : " generated") + " " +
                     to_string(type));
        const bool bf16 = type == DataType::kBf16;
        std::vector<uint16_t> src(count);
        for (uint16_t& e : src) {  // mostly values near 1 (exponents near the bias), some of any bits
          const int b = bits(rng);
          e = static_cast<uint16_t>(b % 4 == 0 ? b : (b & 0x80FF) | (bf16 ? 0x3F00 : 0x3C00));
        }
        src[7] = bf16 ? 0x7FC0 : 0x7E00;   // NaN
        src[40] = bf16 ? 0xFF80 : 0xFC00;  // -Inf
        src[81] = 0x0003;                  // subnormal
        std::vector<float> widened(count);
        k.convert.widen[static_cast<int>(type)](src.data(), widened.data(), static_cast<int64_t>(count),
                                                1.0f);
        // `ref` on the widened elements against `from` on the elements themselves; each exists where the
        // other does (the buffers start equal: a smaller tile leaves the same zeros in both).
        const auto check = [&](auto ref, auto from, auto& want, auto& got, const char* what) {
          EXPECT_EQ(ref == nullptr, from == nullptr) << what;
          if (ref == nullptr || from == nullptr) return;
          ref(ctx, widened.data(), sy, sx, scb, cbs, want.data(), pos);
          from(ctx, src.data(), sy, sx, scb, cbs, got.data(), pos);
          EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(got[0]))) << what;
          ++checked;
        };
        std::vector<float> want_f(static_cast<std::size_t>(nn) * pos), got_f(want_f.size());
        std::vector<uint16_t> want_w(want_f.size()), got_w(want_f.size());
        check(fns->input, bf16 ? fns->floats_from_bf16 : fns->floats_from_fp16, want_f, got_f, "FP32 V");
        check(bf16 ? fns->input_bf16_round : fns->input_fp16_round,
              bf16 ? fns->rounded_from_bf16 : fns->rounded_from_fp16, want_f, got_f, "rounded V");
        check(bf16 ? fns->input_bf16 : fns->input_fp16, bf16 ? fns->words_from_bf16 : fns->words_from_fp16,
              want_w, got_w, "V bits");
        if (bf16 && hw_bits != nullptr) check(hw_bits, hw_from_bf16, want_w, got_w, "V bits (vcvtneps2bf16)");
      }
    }
  }
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_GT(checked, 0);
  }
}

// bf16 written by the transform itself (input_bf16: bits for the dot-product and AMX GEMMs;
// input_bf16_round: bf16 values as floats for the FMA GEMM) must be the ISA's FP32 transform followed by
// the scalar definitions (bf16_bits_rne, round_bf16), on generated and generic tiles, with values that
// round up, ties, subnormals, values that overflow to infinity, NaN and Inf in the input.
TEST(Lowp, Bf16ByTheTransformEqualsTheScalarDefinition) {
  std::mt19937 rng(17);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  int checked = 0;
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    const TransformTable& table = kernels(isa).transforms;
    // The generic path on two tiles, and every generated transform (buffers sized for the largest
    // tile: a smaller one leaves the rest zero in both results).
    // With AVX512-BF16, also the vcvtneps2bf16 stores the plans use for bf16 bits (Bf16HwInputFns):
    // the same bits except that FP32 subnormals become zeros of their sign.
    const bool hw = isa == Isa::kAvx512 && lowp_simd_supported(Precision::kBf16);
    const Bf16HwInputFns hw_fns = hw ? bf16_hw_input_fns_avx512bf16() : Bf16HwInputFns{};
    if (hw) {
      ASSERT_EQ(hw_fns.generated_count, table.generated_count);
    }
    const GenericCoeffs c43 = input_coeffs(TileSize{4, 3}), c63 = input_coeffs(TileSize{6, 3});
    for (const TransformPath& path : transform_paths(table, hw_fns, c43, c63)) {
      const TileFns* fns = path.fns;
      const GenericCoeffs* ctx = path.ctx;
      const InputTileFp16Fn hw_bits = path.hw_bits;
      if (fns->input_bf16 == nullptr) continue;  // the conversion pass runs instead
      ASSERT_NE(fns->input_bf16_round, nullptr);
      {
        const int n = ctx ? ctx->n : kMaxGenericN, nn = n * n, cbs = 2;
        const std::ptrdiff_t sx = 16, sy = 16 * n, scb = 16 * nn;
        const std::size_t pos = 16 * cbs;
        for (int trial = 0; trial < 3; ++trial) {  // plain, special values, huge and tiny scales
          SCOPED_TRACE(to_string(isa) + (ctx ? " generic n=" + std::to_string(n) : " generated") + " trial " +
                       std::to_string(trial));
          std::vector<float> src(static_cast<std::size_t>(cbs * scb));
          for (float& v : src) v = gauss(rng);
          if (trial == 1) {
            src[static_cast<std::size_t>(scb + 3 * sy + 2 * sx + 7)] = std::nanf("");
            src[static_cast<std::size_t>(5)] = -INFINITY;
            src[static_cast<std::size_t>(sy + 9)] = f32_from_bits(0x3F808000u);  // a tie
            src[static_cast<std::size_t>(2 * sy + 11)] = 3e38f;                  // V overflows
          }
          if (trial == 2)
            for (std::size_t i = 0; i < src.size(); ++i) src[i] *= i % 2 ? 1e-39f : 1e37f;  // subnormals
          std::vector<float> v(static_cast<std::size_t>(nn) * pos);
          fns->input(ctx, src.data(), sy, sx, scb, cbs, v.data(), pos);
          std::vector<uint16_t> want_bits(v.size()), got_bits(v.size(), 0);
          std::vector<float> want_round(v.size()), got_round(v.size(), 0.0f);
          for (std::size_t i = 0; i < v.size(); ++i) {
            want_bits[i] = bf16_bits_rne(v[i]);
            want_round[i] = round_bf16(v[i]);
          }
          fns->input_bf16(ctx, src.data(), sy, sx, scb, cbs, got_bits.data(), pos);
          fns->input_bf16_round(ctx, src.data(), sy, sx, scb, cbs, got_round.data(), pos);
          EXPECT_EQ(got_bits, want_bits);
          EXPECT_TRUE(same_bits(got_round, want_round));
          if (hw_bits != nullptr) {
            std::vector<uint16_t> want_hw(v.size()), got_hw(v.size(), 0);
            int flushed = 0;
            for (std::size_t i = 0; i < v.size(); ++i) {
              const bool subnormal = std::fpclassify(v[i]) == FP_SUBNORMAL;
              flushed += subnormal ? 1 : 0;
              want_hw[i] = subnormal ? static_cast<uint16_t>(f32_bits(v[i]) >> 16 & 0x8000u) : want_bits[i];
            }
            hw_bits(ctx, src.data(), sy, sx, scb, cbs, got_hw.data(), pos);
            EXPECT_EQ(got_hw, want_hw);
            if (trial == 2) {
              EXPECT_GT(flushed, 0) << "no subnormal V to check the flush on";
            }
          }
          ++checked;
        }
      }
    }
  }
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_GT(checked, 0) << "no transform here writes bf16";
  }
}

// At the level of a whole plan: bf16 dot products on V stored by the transform (AVX-512 transforms,
// vcvtneps2bf16 where the CPU has it) give the bits of the conversion pass (the AVX2 transforms have no
// bf16 store, so their plan converts V in a pass; the portable kernel, the AVX-512 one's bits), on data
// with subnormal V values, ties and a NaN, for a generated and a generic tile, both blocking orders.
TEST(Lowp, Bf16StoredByTheTransformGivesTheConversionPassResult) {
  if (!isa_supported(Isa::kAvx512) || !isa_supported(Isa::kAvx2))
    GTEST_SKIP() << "needs the avx512 and avx2 paths";
  LayerDataset d = layer(Precision::kBf16, 2, 19, 13, 21, 3, 44);
  for (std::size_t i = 0; i < d.input.size(); i += 7) d.input[i] *= 1e-38;  // subnormal V values
  d.input[5] = std::nan("");
  const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
  for (const bool generic : {false, true})
    for (const int block : {0, -1}) {
      SCOPED_TRACE(std::string(generic ? "generic" : "generated") + " block " + std::to_string(block));
      std::vector<float> out[2];
      for (int k = 0; k < 2; ++k) {
        PlanOptions o;
        o.precision = Precision::kBf16;
        o.bf16_arithmetic = Bf16Arithmetic::kDot;
        o.tile = TileSize{4, 3};
        o.isa = k == 0 ? Isa::kAvx512 : Isa::kAvx2;
        o.lowp_kernel = LowpKernel::kPortable;
        o.allow_generated = !generic;
        o.tile_block = block;
        const Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
        out[k].assign(static_cast<std::size_t>(d.shape.output_size()), -1.0f);
        plan.execute(x.data(), out[k].data());
      }
      EXPECT_TRUE(same_bits(out[0], out[1]));
      EXPECT_TRUE(std::isnan(out[0][5]));  // output (0, 0, 5) reads input (0, 0, 5)
    }
}

// The plan names its order and, when fused, its block of tiles; an AMX plan's automatic blocks are whole
// multiples of the 16 rows its tile kernels take at a time (checked where the process admits AMX).
TEST(Lowp, DescribeNamesTheBlockingAndAmxBlocksAreWholeTiles) {
  const ConvShape s{8, 64, 56, 56, 64, 3, 3, 1, 1};
  const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
  for (const Precision prec : {Precision::kFp32, Precision::kBf16, Precision::kInt8}) {
    SCOPED_TRACE(to_string(prec));
    PlanOptions o;
    o.precision = prec;
    o.tile = TileSize{4, 3};
    o.threads = 2;
    o.tile_block = 5;
    EXPECT_NE(Plan::create(s, w.data(), nullptr, o).describe().find(" fused (blocks of 5 tiles)"),
              std::string::npos);
    o.tile_block = -1;
    EXPECT_NE(Plan::create(s, w.data(), nullptr, o).describe().find(" phased"), std::string::npos);
    o.tile_block = 0;
    const Plan plan = Plan::create(s, w.data(), nullptr, o);
    const std::string d = plan.describe();
    const std::string key = " fused (blocks of ";
    const std::size_t at = d.find(key);
    ASSERT_NE(at, std::string::npos) << d;  // 1568 tiles of 64 channels: the fused order
    const int block = std::stoi(d.substr(at + key.size()));
    EXPECT_GT(block, 0);
    if (plan.gemm_path().rfind("amx", 0) == 0) {
      EXPECT_EQ(block % 16, 0) << d;
    }
  }
}

// AMX plans of few tiles: bf16, whose tile kernel pads a block's last rows to a whole pass, takes one
// block per thread where rounding to 16 rows would leave a short last block (49 tiles at 2 threads:
// 16, 16, 16, 1 became 25 and 24, the same passes); int8, whose rows under 16 go to the VNNI kernel,
// keeps whole 16-row blocks. Both give the bits of other blockings. Runs where the plans use AMX.
TEST(Lowp, AmxBf16PlansOfFewTilesTakeOneBlockPerThread) {
  const ConvShape s{1, 64, 14, 14, 64, 3, 3, 1, 1};  // F(2,3): 7 x 7 = 49 tiles
  std::mt19937 rng(3);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> w(static_cast<std::size_t>(s.weight_size())),
      x(static_cast<std::size_t>(s.input_size()));
  for (float& v : w) v = 0.1f * gauss(rng);
  for (float& v : x) v = gauss(rng);
  for (const Precision prec : {Precision::kBf16, Precision::kInt8}) {
    SCOPED_TRACE(to_string(prec));
    PlanOptions o;
    o.precision = prec;
    o.tile = TileSize{2, 3};
    o.threads = 2;
    const Plan plan = Plan::create(s, w.data(), nullptr, o);
    if (plan.gemm_path().rfind("amx", 0) != 0) GTEST_SKIP() << "no AMX GEMM here: " << plan.gemm_path();
    const std::string expected =
        prec == Precision::kBf16 ? " fused (blocks of 25 tiles)" : " fused (blocks of 16 tiles)";
    EXPECT_NE(plan.describe().find(expected), std::string::npos) << plan.describe();
    o.tile_block = 16;
    const Plan sixteen = Plan::create(s, w.data(), nullptr, o);
    std::vector<float> y(static_cast<std::size_t>(s.output_size())), y16(y.size());
    plan.execute(x.data(), y.data());
    sixteen.execute(x.data(), y16.data());
    EXPECT_EQ(0, std::memcmp(y.data(), y16.data(), y.size() * sizeof(float)));
  }
}

// The conversion pass's int8 quantization and the per-call scales' max |x| (LowpConvertFns) of the AVX2
// and AVX512-VNNI kernels give the portable definitions' values: codes, saturated counts, the NaN/Inf flag
// and the max, bit for bit, for every length around the vector widths (tails), on data holding RNE ties,
// saturating values, NaN, both infinities, subnormals and -0.
TEST(Lowp, Int8ConversionAndAmaxKernelsGiveThePortableValues) {
  const LowpConvertFns scalar = lowp_convert_portable();
  std::vector<std::pair<std::string, std::pair<Int8QuantizeFn, AmaxFn>>> kernels_here;
  if (isa_supported(Isa::kAvx2)) kernels_here.push_back({"avx2", {int8_quantize_avx2(), amax_avx2()}});
  if (lowp_simd_supported(Precision::kInt8))
    kernels_here.push_back({"avx512-vnni", {int8_quantize_avx512vnni(), amax_avx512vnni()}});
  if (kernels_here.empty()) GTEST_SKIP() << "no SIMD conversion kernels on this CPU";
  std::mt19937 rng(31);
  std::normal_distribution<float> gauss(0.0f, 60.0f);
  const float inv = 1.0f;
  for (const auto& [name, fns] : kernels_here) {
    for (int64_t count : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 100, 1000}) {
      for (int variant = 0; variant < 4; ++variant) {
        SCOPED_TRACE(name + " count " + std::to_string(count) + " variant " + std::to_string(variant));
        std::vector<float> x(static_cast<std::size_t>(count));
        for (float& v : x) v = gauss(rng);
        // Exact RNE ties, the saturation edge, -0 and a subnormal at fixed places; NaN and infinities in
        // the later variants (one of them in the tail where the length leaves one).
        const float specials[] = {2.5f, -3.5f, 127.5f, -127.5f, 127.49f, 128.0f, -0.0f, 1.0e-40f};
        for (std::size_t i = 0; i < std::min<std::size_t>(x.size(), 8); ++i)
          x[(i * 5 + static_cast<std::size_t>(variant)) % x.size()] = specials[i];
        if (variant >= 1 && count > 0) x[static_cast<std::size_t>(count - 1)] = std::nanf("");
        if (variant >= 2 && count > 2) x[static_cast<std::size_t>(count / 2)] = INFINITY;
        if (variant >= 3 && count > 3) x[1] = -INFINITY;
        std::vector<uint8_t> want(x.size(), 7), got(x.size(), 9);
        int want_bad = 0, got_bad = 0;
        const int64_t want_sat = scalar.int8(x.data(), want.data(), count, inv, &want_bad);
        const int64_t got_sat = fns.first(x.data(), got.data(), count, inv, &got_bad);
        EXPECT_EQ(got, want);
        EXPECT_EQ(got_sat, want_sat);
        EXPECT_EQ(got_bad, want_bad);
        EXPECT_EQ(want_bad, variant >= 1 && count > 0 ? 1 : 0);
        const float want_max = scalar.amax(x.data(), count), got_max = fns.second(x.data(), count);
        EXPECT_EQ(std::bit_cast<uint32_t>(got_max), std::bit_cast<uint32_t>(want_max));
      }
    }
  }
}

// The in-register quantization decides per tile whether a fast store was exact. Here one value of the
// tile, the largest |V| of one position, is scaled onto the edges of the int8 range (ties of RNE at
// +-126.5 and +-127.5, just inside and outside +-127.5, +-128, far outside, beyond 1.5 * 2^23 where a
// rounding constant turns negative, and near FLT_MAX), everything else well inside. Codes, saturated
// counts and the NaN/Inf flag must equal the scalar definition.
TEST(Lowp, Int8TileQuantizationAtTheRangeEdges) {
  const LowpConvertFns scalar = lowp_convert_portable();
  std::mt19937 rng(8);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const float targets[] = {126.5f, 127.0f, 127.49f, 127.5f, 127.51f, 128.0f,  128.5f,
                           255.5f, 1.0e4f, 1.0e7f,  1.3e7f, 3.0e7f,  1.0e30f, 3.0e38f};
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    const TileFns& fns = kernels(isa).transforms.generic;
    const GenericCoeffs c = input_coeffs(TileSize{4, 3});
    const int n = c.n, nn = n * n, cbs = 2;
    const std::ptrdiff_t sx = 16, sy = 16 * n, scb = 16 * nn;
    const std::size_t pos = 16 * cbs;
    std::vector<float> base(static_cast<std::size_t>(cbs * scb));
    for (float& x : base) x = gauss(rng);
    int exact_ties = 0;
    for (float sign : {1.0f, -1.0f}) {
      std::vector<float> src(base.size());
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = sign * base[i];
      std::vector<float> v(static_cast<std::size_t>(nn) * pos);
      fns.input(&c, src.data(), sy, sx, scb, cbs, v.data(), pos);
      for (int a : {0, nn / 2 + 1, nn - 1}) {
        for (float t : targets) {
          SCOPED_TRACE(to_string(isa) + " sign " + std::to_string(sign) + " position " + std::to_string(a) +
                       " target " + std::to_string(t));
          std::vector<float> inv(static_cast<std::size_t>(nn));
          std::size_t top = 0;  // the largest |V| at each position: 100 there, except at a
          for (int b = 0; b < nn; ++b) {
            const float* vb = v.data() + static_cast<std::size_t>(b) * pos;
            std::size_t k = 0;
            for (std::size_t i = 1; i < pos; ++i)
              if (std::fabs(vb[i]) > std::fabs(vb[k])) k = i;
            inv[static_cast<std::size_t>(b)] = 100.0f / std::fabs(vb[k]);
            if (b == a) top = k;
          }
          // At a: the scale whose product with that |V| is t, or the nearest float to it.
          const float va = std::fabs(v[static_cast<std::size_t>(a) * pos + top]);
          float s = t / va;
          for (int step = 0; step < 64 && va * s != t; ++step)
            s = std::nextafter(s, va * s < t ? INFINITY : 0.0f);
          inv[static_cast<std::size_t>(a)] = s;
          if (va * s == t && (t == 126.5f || t == 127.5f)) ++exact_ties;
          std::vector<uint8_t> want(v.size()), got(v.size(), 0);
          int64_t want_sat = 0;
          int want_bad = 0, got_bad = 0;
          for (int b = 0; b < nn; ++b)
            want_sat += scalar.int8(v.data() + static_cast<std::size_t>(b) * pos,
                                    want.data() + static_cast<std::size_t>(b) * pos,
                                    static_cast<int64_t>(pos), inv[static_cast<std::size_t>(b)], &want_bad);
          const int64_t got_sat =
              fns.input_int8(&c, src.data(), sy, sx, scb, cbs, got.data(), pos, inv.data(), &got_bad);
          EXPECT_EQ(got, want);
          EXPECT_EQ(got_sat, want_sat);
          EXPECT_EQ(got_sat > 0, va * s > 127.5f);
          EXPECT_EQ(got_bad, 0);
          EXPECT_EQ(want_bad, 0);
        }
      }
    }
    EXPECT_GT(exact_ties, 0) << to_string(isa);  // the ties were reached exactly at least once
  }
}

TEST(Lowp, Int8CalibrationStoresScalesAndCountsSaturation) {
  const LayerDataset d = layer(Precision::kInt8, 1, 24, 20, 32, 3, 5);
  const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end());
  PlanOptions o;
  o.precision = Precision::kInt8;
  o.tile = TileSize{4, 3};
  Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
  std::vector<float> per_call(static_cast<std::size_t>(d.shape.output_size())), cal(per_call.size());
  plan.execute(x.data(), per_call.data());
  EXPECT_FALSE(plan.calibrated());
  EXPECT_EQ(plan.stats().saturated, 0);
  // Calibrated on the same input: the stored scales are the per-call ones, so the result is the same.
  const float* samples[] = {x.data()};
  plan.calibrate(samples);
  EXPECT_TRUE(plan.calibrated());
  ASSERT_EQ(plan.calibration_scales().size(), 36u);
  for (float s : plan.calibration_scales()) EXPECT_GT(s, 0.0f);
  plan.execute(x.data(), cal.data());
  EXPECT_TRUE(same_bits(cal, per_call));
  EXPECT_EQ(plan.stats().saturated, 0);
  // Calibrated on a sample half as large: values beyond the range saturate and are counted.
  std::vector<float> half(x);
  for (auto& v : half) v *= 0.5f;
  const float* half_samples[] = {half.data()};
  plan.calibrate(half_samples);
  plan.execute(x.data(), cal.data());
  EXPECT_GT(plan.stats().saturated, 0);
  const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights, {});
  EXPECT_GT(rel_l2(cal, ref), rel_l2(per_call, ref));  // clipping costs accuracy
  plan.clear_calibration();
  plan.execute(x.data(), cal.data());
  EXPECT_TRUE(same_bits(cal, per_call));
  // Bad calibration requests.
  EXPECT_THROW(plan.calibrate(std::span<const float* const>()), Error);
  std::vector<float> nan_sample(x);
  nan_sample[3] = std::nanf("");
  const float* nan_samples[] = {nan_sample.data()};
  EXPECT_THROW(plan.calibrate(nan_samples), Error);
  o.precision = Precision::kBf16;
  Plan bf = Plan::create(d.shape, w.data(), nullptr, o);
  EXPECT_THROW(bf.calibrate(samples), Error);
}

// All-zero calibration samples give no range: refused (every scale would be 1, data quantized in steps of
// 1), int8 and int8-spatial, and the plan stays as it was: uncalibrated, or on its earlier calibration.
TEST(Lowp, Int8CalibrationOnSamplesWithoutRange) {
  const ConvShape s{1, 16, 14, 14, 8, 3, 3, 0, 0};
  const testing::Problem q = testing::random_problem(s, 53);
  for (const Precision prec : {Precision::kInt8, Precision::kInt8Spatial}) {
    PlanOptions o;
    o.precision = prec;
    o.tile = TileSize{4, 3};
    Plan plan = Plan::create(s, q.weights.data(), nullptr, o);
    const std::vector<float> zeros(q.input.size(), 0.0f);
    const float* zero_samples[] = {zeros.data()};
    EXPECT_THROW(plan.calibrate(zero_samples), Error) << to_string(prec);
    EXPECT_FALSE(plan.calibrated());
    const float* samples[] = {q.input.data()};
    plan.calibrate(samples);
    EXPECT_THROW(plan.calibrate(zero_samples), Error);
    EXPECT_TRUE(plan.calibrated());  // the earlier calibration stays
  }
}

TEST(Lowp, NanInInputPropagates) {
  for (Variant var : kVariants) {
    const Precision p = var.prec;
    LayerDataset d = layer(p, 1, 16, 16, 16, 3, 9);
    const int64_t y = 7, x = 9;
    d.input[static_cast<std::size_t>((2 * 16 + y) * 16 + x)] = std::nan("");  // channel 2
    for (LowpKernel k : kernels_for(var)) {
      const LowpRun r = run_lowp(d, var, TileSize{4, 3}, k, 2);
      SCOPED_TRACE(name_of(var) + " " + r.path);
      int64_t nans = 0, nonfinite_other = 0;
      for (int64_t kk = 0; kk < 16; ++kk)
        for (int64_t oy = 0; oy < 16; ++oy)
          for (int64_t ox = 0; ox < 16; ++ox) {
            const float v = r.out[static_cast<std::size_t>((kk * 16 + oy) * 16 + ox)];
            const bool touches =
                std::abs(oy - y) <= 1 && std::abs(ox - x) <= 1;  // the direct receptive field
            if (touches) {
              EXPECT_TRUE(std::isnan(v)) << kk << " " << oy << " " << ox;
            }
            if (std::isnan(v))
              ++nans;
            else if (!std::isfinite(v))
              ++nonfinite_other;
          }
      EXPECT_EQ(nonfinite_other, 0);
      EXPECT_EQ(r.stats.output_nonfinite, nans);
      EXPECT_LE(nans, 16 * 4 * 16);  // at most the tiles whose input patch holds the NaN (4 of 4x4 outputs)
      if (p == Precision::kInt8) {
        EXPECT_GE(r.stats.nonfinite_tiles, 1);
        EXPECT_LE(r.stats.nonfinite_tiles, 4);
      }
    }
  }
}

// LowpStats::output_nonfinite equals the NaN and Inf values that the output tensor holds, counted here
// from the tensor itself: every precision, layout (K = 21: a partial block of output channels), FP32,
// bf16 and fp16 outputs, fused and phased orders, 1 and 2 threads. The input holds a NaN (image 0), an
// Inf (image 1) and rows of 1e5 (image 1), whose results fp16 outputs round to inf; the same plan then
// counts 0 on an input without them.
TEST(Lowp, OutputNonfiniteCountsWhatTheOutputTensorHolds) {
  const ConvShape s{2, 20, 13, 13, 21};  // 3x3, padding 1 (the ConvShape defaults)
  testing::Problem clean = testing::random_problem(s, 31);
  testing::Problem bad = clean;
  const auto at = [&](int64_t n, int64_t c, int64_t y, int64_t x) {
    return static_cast<std::size_t>(((n * s.C + c) * s.H + y) * s.W + x);
  };
  bad.input[at(0, 3, 2, 5)] = std::numeric_limits<float>::quiet_NaN();
  bad.input[at(1, 7, 10, 11)] = std::numeric_limits<float>::infinity();
  for (int64_t c = 0; c < s.C; ++c)
    for (int64_t x = 0; x < s.W; ++x) bad.input[at(1, c, 0, x)] = bad.input[at(1, c, 1, x)] = 1e5f;
  const int64_t OH = s.out_h(), OW = s.out_w(), Kb = (s.K + 15) / 16;
  const ConvertTable portable = convert_table_portable();
  for (Precision prec : {Precision::kBf16, Precision::kFp16, Precision::kInt8})
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW16c})
      for (DataType type : {DataType::kFp32, DataType::kBf16, DataType::kFp16})
        for (int block : {0, -1})
          for (int threads : {1, 2}) {
            SCOPED_TRACE(to_string(prec) + " " + to_string(layout) + " " + to_string(type) + " block " +
                         std::to_string(block) + " threads " + std::to_string(threads));
            PlanOptions o;
            o.precision = prec;
            o.layout = layout;
            o.output = {type, 1.0f};
            o.tile = TileSize{4, 3};
            o.tile_block = block;
            o.threads = threads;
            const Plan plan = Plan::create(s, clean.weights.data(), clean.bias.data(), o);
            const std::size_t out_count = static_cast<std::size_t>(output_elements(s, layout));
            std::vector<unsigned char> y(out_count * element_size(type));
            std::vector<float> values(out_count);
            // The NaN/Inf values the tensor holds, padding lanes of NCHW16c left out.
            const auto held = [&]() {
              portable.widen[static_cast<int>(type)](y.data(), values.data(), static_cast<int64_t>(out_count),
                                                     1.0f);
              int64_t count = 0;
              for (std::size_t i = 0; i < out_count; ++i) {
                const bool padding =
                    layout == Layout::kNCHW16c &&
                    static_cast<int64_t>(i) / (16 * OH * OW) % Kb * 16 + static_cast<int64_t>(i % 16) >= s.K;
                count += !padding && !std::isfinite(values[i]);
              }
              return count;
            };
            for (const testing::Problem* problem : {&bad, &clean}) {
              std::vector<float> x = problem->input;
              if (layout == Layout::kNHWC) x = nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W);
              if (layout == Layout::kNCHW16c)
                x = nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
              plan.execute(static_cast<const void*>(x.data()), static_cast<void*>(y.data()));
              const int64_t want = held();
              EXPECT_EQ(plan.stats().output_nonfinite, want);
              if (problem == &bad) {
                EXPECT_GE(want, 9 * s.K);  // the NaN's and the Inf's receptive fields at least
              } else {
                EXPECT_EQ(want, 0);
              }
            }
          }
}

TEST(Lowp, PathsAndOptions) {
  EXPECT_EQ(parse_precision("bf16"), Precision::kBf16);
  EXPECT_EQ(parse_precision("int8"), Precision::kInt8);
  EXPECT_EQ(parse_precision("fp16"), Precision::kFp16);
  EXPECT_EQ(parse_precision("fp32"), Precision::kFp32);
  EXPECT_THROW(parse_precision("fp8"), Error);
  for (Precision p : {Precision::kBf16, Precision::kInt8, Precision::kFp16})
    EXPECT_EQ(parse_precision(to_string(p)), p);
  for (Bf16Arithmetic a : {Bf16Arithmetic::kAuto, Bf16Arithmetic::kFma, Bf16Arithmetic::kDot})
    EXPECT_EQ(parse_bf16_arithmetic(to_string(a)), a);
  EXPECT_THROW(parse_bf16_arithmetic("pairs"), Error);
  for (LowpKernel k :
       {LowpKernel::kAuto, LowpKernel::kPortable, LowpKernel::kSimd, LowpKernel::kAvx512, LowpKernel::kAmx})
    EXPECT_EQ(parse_lowp_kernel(to_string(k)), k);
  const LayerDataset d = layer(Precision::kBf16, 1, 8, 8, 8, 3, 1);
  const std::vector<float> w(d.weights.begin(), d.weights.end());
  PlanOptions o;
  o.precision = Precision::kBf16;
  o.tile = TileSize{2, 3};
  o.isa = Isa::kPortable;  // the portable path runs the portable kernels, and says why
  Plan plan = Plan::create(d.shape, w.data(), nullptr, o);
  EXPECT_EQ(plan.gemm_path(), "portable");
  EXPECT_NE(plan.describe().find("bf16 GEMM: portable"), std::string::npos) << plan.describe();
  o.lowp_kernel = LowpKernel::kSimd;  // the SIMD kernels need the avx512 path
  EXPECT_THROW(Plan::create(d.shape, w.data(), nullptr, o), Error);
  // The direct path runs in fp32 and says so.
  o = PlanOptions{};
  o.precision = Precision::kInt8;
  o.algorithm = AlgorithmChoice::kDirect;
  Plan direct = Plan::create(d.shape, w.data(), nullptr, o);
  EXPECT_EQ(direct.precision(), Precision::kFp32);
  EXPECT_NE(direct.reason().find("int8 requested but the direct path runs in fp32"), std::string::npos);
}

TEST(Lowp, BiasReluAndNhwc) {
  const testing::Problem p = testing::random_problem(ConvShape{2, 19, 13, 11, 21, 3, 3, 1, 1}, 4);
  for (Variant v : kVariants) {
    const Precision prec = v.prec;
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      PlanOptions o;
      o.precision = prec;
      o.fp16_arithmetic = v.arith;
      o.layout = layout;
      o.relu = true;
      o.tile = TileSize{4, 3};
      const std::vector<float> got = testing::run(p, o);
      const std::vector<double> ref = testing::reference(p, layout, true);
      EXPECT_LT(testing::rel_l2(got, ref), prec == Precision::kFp16 ? 1e-2 : 5e-2) << name_of(v);
    }
  }
}

// The automatic choice keeps int8 to tiles of at most 6 points, because larger ones cost far more
// accuracy: check the premise on the float64 reference (F(6,3) int8 several times the error of
// F(4,3) int8) and that no automatic int8 plan picks a larger tile, whatever the layer.
TEST(Lowp, AutomaticInt8ChoiceAvoidsInaccurateTiles) {
  const LayerDataset d = layer(Precision::kInt8, 1, 32, 24, 32, 3, 31);
  const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights);
  const double e43 = rel_l2(run_lowp(d, {Precision::kInt8}, TileSize{4, 3}, LowpKernel::kAuto, 1).out, ref);
  const double e63 = rel_l2(run_lowp(d, {Precision::kInt8}, TileSize{6, 3}, LowpKernel::kAuto, 1).out, ref);
  std::printf("int8 engine error: F(4,3) %.3g, F(6,3) %.3g\n", e43, e63);
  EXPECT_GT(e63, 2.0 * e43);

  int fp32_large = 0;  // layers where fp32 takes an 8- or 9-point tile: the rule must make a difference
  for (const auto& [N, C, HW, K] : {std::array<int64_t, 4>{1, 64, 56, 64},
                                    {8, 128, 28, 128},
                                    {1, 64, 224, 64},
                                    {1, 256, 14, 256},
                                    {2, 16, 100, 16},
                                    {1, 32, 128, 32}}) {
    const ConvShape s{N, C, HW, HW, K, 3, 3, 1, 1};
    const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
    PlanOptions o;
    o.precision = Precision::kInt8;
    o.threads = 2;  // the estimates depend on the thread count (all cores by default)
    const Plan plan = Plan::create(s, w.data(), nullptr, o);
    if (plan.tile()) {
      EXPECT_LE(plan.tile()->n(), 6) << s.to_string() << ": " << plan.reason();
    }
    o.precision = Precision::kFp32;
    const Plan fp32 = Plan::create(s, w.data(), nullptr, o);
    if (fp32.tile()) {
      EXPECT_LE(fp32.tile()->n(), 9) << s.to_string();  // F(7,3) at most, never F(8,3)
      fp32_large += fp32.tile()->n() >= 8 ? 1 : 0;
    }
  }
  // (The cost model's choice depends on the ISA's rates and the thread count; the layers above were
  // picked for AVX-512 and 2 threads.)
  if (best_isa() == Isa::kAvx512) {
    EXPECT_GT(fp32_large, 0) << "no layer here where the int8 rule changes the choice";
  }
  PlanOptions o;
  o.precision = Precision::kInt8;
  o.tile = TileSize{6, 3};
  const std::vector<float> w(static_cast<std::size_t>(d.shape.weight_size()), 0.01f);
  const Plan requested = Plan::create(d.shape, w.data(), nullptr, o);
  EXPECT_EQ(requested.tile()->m, 6);  // honoured, with a caution
  EXPECT_NE(requested.reason().find("caution"), std::string::npos) << requested.reason();
}

// int8 takes the tile with the fewest points among those whose estimate is within the margin of the
// fastest: checked against the cost model's own estimates, in both layouts, on the layer set and a few
// more. The rule must change at least one choice here (on AVX-512), and where it does, the engine's
// error on that layer must be smaller than with the tile the estimate alone would take.
TEST(Lowp, AutomaticInt8ChoicePrefersFewerPointsWhenTheEstimatesAreClose) {
  int changed = 0;
  for (const auto& [N, C, HW, K] : {std::array<int64_t, 4>{1, 64, 56, 64},
                                    {1, 128, 28, 128},
                                    {1, 256, 14, 256},
                                    {1, 512, 7, 512},
                                    {8, 256, 14, 256},
                                    {2, 16, 100, 16},
                                    {1, 32, 9, 48}})
    for (Layout layout : {Layout::kNCHW, Layout::kNCHW16c}) {
      const ConvShape s{N, C, HW, HW, K, 3, 3, 1, 1};
      const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
      PlanOptions o;
      o.precision = Precision::kInt8;
      o.layout = layout;
      const Plan plan = Plan::create(s, w.data(), nullptr, o);
      if (!plan.tile()) continue;
      // The GEMM speed the plan assumed (above 1 where it runs AMX kernels), as its reason states it.
      double speedup = 1.0;
      const std::string amx_note = "Winograd GEMMs estimated at ";
      if (const std::size_t at = plan.reason().find(amx_note); at != std::string::npos)
        speedup = std::stod(plan.reason().substr(at + amx_note.size()));
      if (speedup != 1.0) {
        EXPECT_EQ(plan.gemm_path(), "amx-int8") << plan.reason();
      }
      double fastest = 1e300;
      std::optional<TileSize> fastest_tile;
      std::vector<AlgorithmEstimate> allowed;
      for (const TileSize& t : default_tiles())
        if (t.r == 3 && auto_tile_allowed(t, Precision::kInt8)) {
          allowed.push_back(estimate_winograd(s, layout, plan.threads(), plan.isa(), t, speedup,
                                              Precision::kInt8, false,
                                              memory_rules(plan.isa(), cpu_is_amd())));
          if (allowed.back().ms < fastest) {
            fastest = allowed.back().ms;
            fastest_tile = t;
          }
        }
      std::optional<TileSize> want;
      for (const AlgorithmEstimate& e : allowed)
        if (e.ms <= kInt8AccuracyMargin * fastest && (!want || e.tile->n() < want->n())) want = e.tile;
      ASSERT_TRUE(want.has_value());
      EXPECT_EQ(plan.tile()->m, want->m)
          << s.to_string() << " " << to_string(layout) << ": " << plan.reason();
      if (plan.tile()->m != fastest_tile->m) {
        ++changed;
        EXPECT_NE(plan.reason().find("for accuracy"), std::string::npos) << plan.reason();
      }
    }
  if (best_isa() == Isa::kAvx512) {
    EXPECT_GT(changed, 0) << "no layer here where the margin changes the int8 choice";
  }
  // Why: on a layer of the size where it changes the choice, F(2,3) is the more accurate int8 tile.
  const LayerDataset d = layer(Precision::kInt8, 1, 32, 14, 32, 3, 37);
  const std::vector<double> ref = reference_conv2d(d.shape, d.input, d.weights);
  const double e23 = rel_l2(run_lowp(d, {Precision::kInt8}, TileSize{2, 3}, LowpKernel::kAuto, 1).out, ref);
  const double e43 = rel_l2(run_lowp(d, {Precision::kInt8}, TileSize{4, 3}, LowpKernel::kAuto, 1).out, ref);
  EXPECT_LT(e23, e43);
}

// bf16 V rounded in place for the FMA GEMM: the AVX-512 rounding against the portable one and against
// nova::numerics' bf16 (an independent definition), on ties, subnormals, the overflow edge, NaN and Inf,
// with a count that leaves a masked tail.
TEST(Lowp, Bf16RoundingInPlaceEqualsTheScalarDefinitions) {
  std::vector<uint32_t> bits = {0x3F808000u, 0x3F818000u, 0xBF808000u, 0x00008000u, 0x00018000u, 0x80017FFFu,
                                0x7F7FFFFFu, 0xFF7F8000u, 0x7F7F7FFFu, 0x7F800000u, 0xFF800000u, 0x7FC00001u,
                                0x7F800001u, 0xFFA00000u, 0x00000000u, 0x80000000u, 0x00000001u};
  std::mt19937 rng(21);
  while (bits.size() < 37) bits.push_back(static_cast<uint32_t>(rng()));
  std::vector<float> x(bits.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = f32_from_bits(bits[i]);
  std::vector<float> portable(x);
  lowp_convert_portable().bf16_round(portable.data(), static_cast<int64_t>(portable.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    SCOPED_TRACE(i);
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(portable[i]));
      EXPECT_EQ(f32_bits(portable[i]) & 0x00400000u, 0x00400000u);  // made quiet
      EXPECT_EQ(f32_bits(portable[i]) & 0xFFFFu, 0u);
    } else {
      EXPECT_EQ(static_cast<double>(portable[i]), round_to(Format::kBf16, static_cast<double>(x[i])));
    }
  }
  if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "no avx512 path on this CPU";
  std::vector<float> simd(x);
  bf16_round_avx512()(simd.data(), static_cast<int64_t>(simd.size()));
  EXPECT_TRUE(same_bits(simd, portable));
}

// The automatic bf16 arithmetic: vdpbf16ps on the avx512 path of an AMD CPU with AVX512-BF16 (where it runs
// at the FMA's rate), FP32 FMAs elsewhere. The automatic plan gives the bits of the plan that asks for that
// arithmetic, and says which it runs; the portable kernel takes the same arithmetic and gives the same bits.
TEST(Lowp, Bf16AutomaticArithmeticIsTheDotProductWhereItIsFast) {
  const ConvShape s{2, 32, 11, 13, 24, 3, 3, 1, 1};
  const testing::Problem pr = testing::random_problem(s, 47);
  auto plan = [&](Bf16Arithmetic arith, LowpKernel kernel) {
    PlanOptions o;
    o.precision = Precision::kBf16;
    o.bf16_arithmetic = arith;
    o.lowp_kernel = kernel;
    o.tile = TileSize{4, 3};
    o.threads = 2;
    return Plan::create(s, pr.weights.data(), pr.bias.data(), o);
  };
  const bool dot = best_isa() == Isa::kAvx512 && cpu_is_amd() && lowp_simd_supported(Precision::kBf16) &&
                   !amx_bf16_supported(nullptr);
  Plan automatic = plan(Bf16Arithmetic::kAuto, LowpKernel::kAuto);
  if (automatic.gemm_path() == "amx-bf16") GTEST_SKIP() << "AMX runs bf16 here";
  Plan same = plan(dot ? Bf16Arithmetic::kDot : Bf16Arithmetic::kFma, LowpKernel::kAuto);
  EXPECT_EQ(automatic.gemm_path(), same.gemm_path());
  EXPECT_EQ(automatic.gemm_path() == "avx512-bf16", dot) << automatic.describe();
  std::vector<float> y1(static_cast<std::size_t>(s.output_size())), y2(y1.size());
  automatic.execute(pr.input.data(), y1.data());
  same.execute(pr.input.data(), y2.data());
  EXPECT_TRUE(same_bits(y1, y2));
  Plan portable = plan(Bf16Arithmetic::kAuto, LowpKernel::kPortable);
  EXPECT_NE(portable.describe().find(dot ? "bf16 GEMM: portable (vdpbf16ps emulated"
                                         : "bf16 GEMM: portable (fp32 fma per channel"),
            std::string::npos)
      << portable.describe();
  std::vector<float> y3(y1.size());
  portable.execute(pr.input.data(), y3.data());
  EXPECT_TRUE(same_bits(y1, y3));
}

// The bf16 FMA GEMM: AVX-512 and portable kernels give the same bits on operands that include bf16
// subnormals (kept, not read as zero: the result differs from the dot kernels' there), for every row
// block and panel width.
TEST(Lowp, Bf16FmaKernelsAgreeBitForBit) {
  if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "no avx512 path on this CPU";
  std::mt19937 rng(22);
  for (int nv = 1; nv <= kMaxNV; ++nv)
    for (const int64_t rows : {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{13}}) {
      const std::size_t kc = 48, w = static_cast<std::size_t>(16 * nv), lda = kc + 3, ldc = w + 5;
      std::vector<float> a(static_cast<std::size_t>(rows) * lda);
      std::vector<uint16_t> b(kc * w);
      for (auto& v : a)  // bf16 values over a wide range, some subnormal
        v = bf16_to_float(static_cast<uint16_t>((rng() & 0x8000u) | ((rng() % 140u) << 7) | (rng() & 0x7Fu)));
      for (auto& v : b)
        v = static_cast<uint16_t>((rng() & 0x8000u) | ((60u + rng() % 140u) << 7) | (rng() & 0x7Fu));
      std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
      bf16_fma_gemm_avx512()(rows, nv, kc, a.data(), lda, b.data(), nullptr, got.data(), ldc);
      bf16_fma_gemm_portable()(rows, nv, kc, a.data(), lda, b.data(), nullptr, want.data(), ldc);
      EXPECT_TRUE(same_bits(got, want)) << "rows " << rows << ", nv " << nv;
      // One element against its definition: fma in channel order.
      float acc = 0.0f;
      for (std::size_t c = 0; c < kc; ++c)
        acc = std::fma(a[c], bf16_to_float(b[(c / 2) * (2 * w) + (c & 1)]), acc);
      EXPECT_EQ(f32_bits(want[0]), f32_bits(acc));
    }
}

// The widened GEMMs' column scale (the fp16 U's exponent normalization undone): with powers of two,
// every column is the unscaled result times its scale, bit for bit, on both kernels and both formats.
TEST(Lowp, WidenedGemmColumnScaleIsExact) {
  std::mt19937 rng(23);
  struct Kernel {
    const char* name;
    WidenedGemmFn fn;
    bool simd;
  };
  std::vector<Kernel> kernels = {{"fp16 portable", fp16_gemm_portable(), false},
                                 {"bf16 portable", bf16_fma_gemm_portable(), false}};
  if (isa_supported(Isa::kAvx512)) {
    kernels.push_back({"fp16 avx512", fp16_gemm_avx512(), true});
    kernels.push_back({"bf16 avx512", bf16_fma_gemm_avx512(), true});
  }
  for (const Kernel& kern : kernels)
    for (int nv = 1; nv <= kMaxNV; ++nv) {
      const int64_t rows = 7;
      const std::size_t kc = 32, w = static_cast<std::size_t>(16 * nv), lda = kc + 1, ldc = w + 3;
      std::vector<float> a(static_cast<std::size_t>(rows) * lda);
      for (auto& v : a) v = round_fp16(std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
      std::vector<uint16_t> b(kc * w);  // fp16 values in [0.5, 2) or bf16 ones: both formats' normal range
      for (auto& v : b)
        v = static_cast<uint16_t>((rng() & 0x8000u) | ((14u + rng() % 2u) << 10) | (rng() & 0x3FFu));
      std::vector<float> scale(w);
      for (std::size_t j = 0; j < w; ++j) scale[j] = std::ldexp(1.0f, static_cast<int>(j % 41) - 20);
      std::vector<float> plain(static_cast<std::size_t>(rows) * ldc, -1.0f), scaled(plain);
      kern.fn(rows, nv, kc, a.data(), lda, b.data(), nullptr, plain.data(), ldc);
      kern.fn(rows, nv, kc, a.data(), lda, b.data(), scale.data(), scaled.data(), ldc);
      for (int64_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < w; ++j) {
          const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
          ASSERT_EQ(f32_bits(scaled[at]), f32_bits(plain[at] * scale[j]))
              << kern.name << " nv " << nv << " (" << i << ", " << j << ")";
        }
    }
}

// The fp16-arithmetic GEMMs' column scale: the same on the FP32 totals, both kernels.
TEST(Lowp, Fp16FmaGemmColumnScaleIsExact) {
  std::mt19937 rng(24);
  std::vector<std::pair<const char*, Fp16FmaGemmFn>> kernels = {{"portable", fp16_fma_gemm_portable()}};
  if (fp16_arithmetic_supported()) kernels.emplace_back("avx512-fp16", fp16_fma_gemm_avx512fp16());
  for (const auto& [name, fn] : kernels)
    for (int nv = 1; nv <= kMaxNV; ++nv) {
      const int64_t rows = 13;
      const std::size_t kc = 80, w = static_cast<std::size_t>(16 * nv), lda = kc + 2, ldc = w + 1;
      auto fp16_values = [&](std::size_t n) {
        std::vector<uint16_t> v(n);
        for (auto& x : v)
          x = static_cast<uint16_t>((rng() & 0x8000u) | ((13u + rng() % 3u) << 10) | (rng() & 0x3FFu));
        return v;
      };
      const std::vector<uint16_t> a = fp16_values(static_cast<std::size_t>(rows) * lda),
                                  b = fp16_values(kc * w);
      std::vector<float> scale(w);
      for (std::size_t j = 0; j < w; ++j) scale[j] = std::ldexp(1.0f, static_cast<int>(j % 37) - 18);
      std::vector<float> plain(static_cast<std::size_t>(rows) * ldc, -1.0f), scaled(plain);
      fn(rows, nv, kc, a.data(), lda, b.data(), nullptr, plain.data(), ldc);
      fn(rows, nv, kc, a.data(), lda, b.data(), scale.data(), scaled.data(), ldc);
      for (int64_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < w; ++j) {
          const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
          ASSERT_EQ(f32_bits(scaled[at]), f32_bits(plain[at] * scale[j])) << name << " nv " << nv;
        }
    }
}

// fp16 keeps U's exponent range (each column of U normalized by a power of two): scaling the weights
// by a power of two scales the output by it, bit for bit, with either arithmetic, also where plain
// fp16 U would underflow. F(8,3)'s fp32 catalogue transform scales a row of G by about 8e-4, and
// weights of 2^-20 put U far below fp16's smallest normal; without the normalization those taps became
// fp16 zeros (the error grew 4x at weights of 0.1, docs/engine-log.md, "Session 10").
TEST(Lowp, Fp16IsExactlyScaleEquivariant) {
  const ConvShape s{1, 24, 17, 15, 20, 3, 3, 1, 1};
  const testing::Problem p = testing::random_problem(s, 31);
  std::vector<Fp16Arithmetic> arithmetics = {Fp16Arithmetic::kFp32};
  if (fp16_arithmetic_supported()) arithmetics.push_back(Fp16Arithmetic::kFp16);
  for (const Fp16Arithmetic arith : arithmetics)
    for (const char* tile : {"8,3", "4,3"}) {
      PlanOptions o;
      o.precision = Precision::kFp16;
      o.fp16_arithmetic = arith;
      o.tile = parse_tile(tile);
      o.threads = 1;
      const std::vector<float> zero_bias(static_cast<std::size_t>(s.K), 0.0f);
      const Plan ref = Plan::create(s, p.weights.data(), zero_bias.data(), o);
      std::vector<float> y_ref(static_cast<std::size_t>(s.output_size()));
      ref.execute(p.input.data(), y_ref.data());
      for (const int shift : {-10, -20, 6}) {
        std::vector<float> ws(p.weights);
        for (auto& v : ws) v = std::ldexp(v, shift);
        const Plan plan = Plan::create(s, ws.data(), zero_bias.data(), o);
        std::vector<float> y(y_ref.size());
        plan.execute(p.input.data(), y.data());
        for (std::size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(f32_bits(y[i]), f32_bits(std::ldexp(y_ref[i], shift)))
              << ref.gemm_path() << " " << tile << ", weights x 2^" << shift << ", at " << i;
      }
    }
}

// The transform's B^T rows decide how far V lies from the input's binade: the default F(6,3) (the
// lagrange triple) has rows of L1 norm 12.5 and 1/12, which put V in fp16's subnormals at inputs of 1e-3
// (error 14x that at unit scale) and past its largest value at 1000 (NaN before V was shifted down per
// call, the test after this one), and F(8,3)'s overflowed at 1000 too. fp16 plans balance the rows by
// powers of two (balance_input_rows), and since session 40 an input whose V bound is below 1 has V
// shifted up (set_fp16_v_shift), so the error is that of unit-scale data from inputs of 2^-40 to 2^11,
// with FP32 and with fp16 arithmetic, and no output is NaN or Inf. The same F(6,3) given unbalanced keeps
// its rows' spread, 7 binades each way from the input's: inputs of 2^-6 cost it 4x the unit-scale error
// with fp16 arithmetic, whose products round to fp16 too, and 1.4x with FP32 arithmetic (V's bound, 156
// max |d|, is above 1 there, so V is not shifted up); from 2^-8 down the shift brings both back.
TEST(Lowp, Fp16KeepsItsAccuracyOverTheInputsRange) {
  const ConvShape s{1, 24, 17, 15, 20, 3, 3, 1, 1};
  const testing::Problem p = testing::random_problem(s, 37);
  std::vector<Fp16Arithmetic> arithmetics = {Fp16Arithmetic::kFp32, Fp16Arithmetic::kFp16};
  for (const Fp16Arithmetic arith : arithmetics)
    for (const char* tile : {"4,3", "6,3", "8,3"}) {
      PlanOptions o;
      o.precision = Precision::kFp16;
      o.fp16_arithmetic = arith;
      o.lowp_kernel = LowpKernel::kPortable;  // the SIMD kernels' bits (Lowp tests above), on any CPU
      o.tile = parse_tile(tile);
      o.threads = 1;
      PlanOptions unbalanced = o;
      unbalanced.transform = default_transform(*o.tile);
      auto error_at = [&](const PlanOptions& opt, int shift) {
        const testing::Problem q = testing::scaled(p, shift);
        return rel_l2(testing::run(q, opt), testing::reference(q, Layout::kNCHW, false));
      };
      const double unit = error_at(o, 0);
      ASSERT_LT(unit, 0.1) << tile;
      const std::vector<int> shifts = {-40, -20, -12, -8, -6, 4, 11};
      double worst_unbalanced = 0;
      for (const int shift : shifts) {
        const double e = error_at(o, shift);
        EXPECT_LE(e, 1.3 * unit) << tile << " " << to_string(arith) << " inputs x 2^" << shift << ": " << e
                                 << " against " << unit << " at unit scale";
        const double u = error_at(unbalanced, shift);
        worst_unbalanced = std::max(worst_unbalanced, std::isfinite(u) ? u : 1e30);
      }
      std::printf("fp16 %s %s: unit scale %.3g, worst unbalanced %.3g\n", tile, to_string(arith).c_str(),
                  unit, worst_unbalanced);
      if (std::string(tile) == "6,3" && arith == Fp16Arithmetic::kFp16) {
        EXPECT_GT(worst_unbalanced, 1.3 * unit) << tile;
      }
    }
}

// The V-shift tests' plans: layout, order (tile_block 0 fused, -1 phased) and ReLU; whether the plan
// reads its input in place and so shifts V down only after an overflow (execute_winograd).
struct Fp16Variant {
  const char* name;
  Layout layout;
  int tile_block;
  bool relu;
  bool shifts_after_overflow = false;
};

// Their options: the portable kernel (the SIMD kernels' bits, Lowp tests above, on any CPU), one thread.
PlanOptions fp16_options(const char* tile, Fp16Arithmetic arith, const Fp16Variant& var) {
  PlanOptions o;
  o.precision = Precision::kFp16;
  o.fp16_arithmetic = arith;
  o.lowp_kernel = LowpKernel::kPortable;
  o.tile = parse_tile(tile);
  o.layout = var.layout;
  o.tile_block = var.tile_block;
  o.relu = var.relu;
  o.threads = 1;
  return o;
}

// Inputs whose transform would take V past fp16's 65504 (the balanced transforms' rows have L1 norms
// up to 4, so |V| reaches 16 max |d|): the plan scales V by 2^-s for that call and the GEMMs' results
// by 2^s. Checked against the float64 reference and against the unit-scale run itself: inputs times 2^k
// must give that output times 2^k (up to V's rounding in fp16's subnormals at unit scale), finite,
// with the shift reported; at unit scale no shift. Copied inputs (NCHW: the shift read off the copy;
// phased and fused orders) and inputs read in place (NHWC of whole channel blocks: a pass over the input
// first); FP32 and fp16 input tensors; a transform the user passes (unbalanced, so its shift starts at
// smaller inputs); and the same bits at another thread count.
TEST(Lowp, Fp16ScalesVWhereTheInputWouldTakeItPastFp16Range) {
  const ConvShape s{2, 32, 13, 11, 24, 3, 3, 1, 1};
  const testing::Problem unit = testing::random_problem(s, 41);
  auto scaled = [&](int k) { return testing::scaled(unit, k); };
  // In place, V is shifted down only where it did overflow (execute_winograd): the bound below, a worst
  // case, can ask for more than the data needs.
  for (const Fp16Variant& var : {Fp16Variant{"nchw fused", Layout::kNCHW, 0, false, false},
                                 Fp16Variant{"nchw phased", Layout::kNCHW, -1, false, false},
                                 Fp16Variant{"nhwc in place", Layout::kNHWC, 0, false, true},
                                 Fp16Variant{"nhwc in place relu", Layout::kNHWC, 0, true, true}})
    for (const char* tile : {"4,3", "6,3", "8,3"}) {
      const PlanOptions o = fp16_options(tile, Fp16Arithmetic::kFp32, var);
      const std::string where = std::string(var.name) + " F(" + tile + ")";
      std::optional<Plan> plan;
      const std::vector<float> y1 = testing::run(unit, o, &plan);
      ASSERT_EQ(plan->stats().v_shift, 0) << where;
      const double unit_error = rel_l2(y1, testing::reference(unit, var.layout, var.relu));
      for (const int k : {13, 16, 40}) {
        const testing::Problem q = scaled(k);
        const std::vector<float> y = testing::run(q, o, &plan);
        const int shift = plan->stats().v_shift;
        // The balanced rows' largest L1 norm is in [2, 4), so |V| / max |d| is bounded by 4 to 16 (times
        // 1 + 2^-12), and max |d| is within 0.9 and 1 times 2^k: the least shift with bound * 2^-s <=
        // 65504 lies in [k - 14, k - 11]. At 2^16 this data's V passes 65504 (its values sum several
        // inputs of up to 2^16), so plans that shift only after an overflow shift as much.
        if (!var.shifts_after_overflow || k >= 16) {
          EXPECT_GE(shift, k - 14) << where << " inputs x 2^" << k;
        }
        EXPECT_LE(shift, k - 11) << where << " inputs x 2^" << k;
        std::vector<float> back(y.size());
        for (std::size_t i = 0; i < y.size(); ++i) back[i] = std::ldexp(y[i], -k);
        EXPECT_LT(rel_l2(back, testing::to_double(y1)), 1e-4) << where << " inputs x 2^" << k;
        EXPECT_LE(rel_l2(y, testing::reference(q, var.layout, var.relu)), 1.05 * unit_error)
            << where << " inputs x 2^" << k;
        if (k == 16) {
          PlanOptions two = o;
          two.threads = 2;
          EXPECT_TRUE(same_bits(testing::run(q, two), y)) << where << ": 2 threads";
        }
      }
      // The transform as given (rows unbalanced: F(6,3)'s L1 norms reach 12.5, so |V| 156 max |d|): V
      // shifted from inputs of 2^9 on, where the balanced transform's is not.
      PlanOptions given = o;
      given.transform = default_transform(*o.tile);
      const std::vector<float> yg = testing::run(scaled(9), given, &plan);
      if (std::string(tile) != "4,3" && !var.shifts_after_overflow) {
        EXPECT_GT(plan->stats().v_shift, 0) << where << " as given";
      }
      EXPECT_LE(rel_l2(yg, testing::reference(scaled(9), var.layout, var.relu)), 1.3 * unit_error)
          << where << " as given";
    }
  // An fp16 input tensor near fp16's largest values (the FP32 output holds what fp16 could not), with
  // each arithmetic: as accurate as the same plan on the unit-scale data. (The arithmetic is named: the
  // automatic choice is fp16 arithmetic where the CPU has AVX512-FP16, and its error is larger; session 47
  // found this test failing on such a CPU, where it had been written for FP32 arithmetic.)
  for (const Fp16Arithmetic arith : {Fp16Arithmetic::kFp32, Fp16Arithmetic::kFp16}) {
    PlanOptions o;
    o.precision = Precision::kFp16;
    o.fp16_arithmetic = arith;
    o.lowp_kernel = LowpKernel::kPortable;
    o.tile = TileSize{6, 3};
    o.threads = 1;
    const double unit_error = rel_l2(testing::run(unit, o), testing::reference(unit, Layout::kNCHW, false));
    o.input = TensorFormat{DataType::kFp16, 1.0f};
    testing::Problem q = scaled(15);  // |d| < 32768, fp16 values
    std::vector<uint16_t> x16(q.input.size());
    ASSERT_EQ(convert_from_fp32(q.input.data(), static_cast<int64_t>(q.input.size()), o.input, x16.data())
                  .saturated,
              0);
    convert_to_fp32(x16.data(), static_cast<int64_t>(x16.size()), o.input, q.input.data());
    Plan plan = Plan::create(s, q.weights.data(), q.bias.data(), o);
    std::vector<float> y(static_cast<std::size_t>(s.output_size()));
    plan.execute(x16.data(), y.data());
    EXPECT_GT(plan.stats().v_shift, 0) << to_string(arith);
    const double error = rel_l2(y, testing::reference(q, Layout::kNCHW, false));
    std::printf("fp16 input x 2^15, %s arithmetic: %.3g (unit scale %.3g)\n", to_string(arith).c_str(), error,
                unit_error);
    EXPECT_LE(error, 1.05 * unit_error) << to_string(arith);
  }
}

// Inputs so small that V would lie in fp16's subnormals (its bound, |V| / max |d| times max |d|, below 1):
// the plan scales V up by 2^-s (s < 0) to a bound in [2^4, 2^5) and the GEMMs' results down by 2^s, both
// exact. So two such inputs that differ by a power of two put the same fp16 bits in V, and their outputs
// differ by exactly that power (FP32 normals throughout), on every layout: copied inputs (NCHW, the
// shift from the copy's exact max), in place (NHWC, NCHW16c: from a sample of the input), fused and
// phased, with and without a ReLU, FP32 and fp16 arithmetic, and at another thread count. Before session
// 40, inputs of 2^-20 gave these plans 20x (FP32 arithmetic) to 300x their unit-scale error.
TEST(Lowp, Fp16ScalesVUpWhereTheInputIsSmall) {
  const ConvShape s{2, 32, 13, 11, 32, 3, 3, 1, 1};  // K of whole blocks: NCHW16c's output converts back
  const testing::Problem unit = testing::random_problem(s, 43);
  auto scaled = [&](int k) { return testing::scaled(unit, k); };
  for (const Fp16Arithmetic arith : {Fp16Arithmetic::kFp32, Fp16Arithmetic::kFp16})
    for (const Fp16Variant& var : {Fp16Variant{"nchw fused", Layout::kNCHW, 0, false},
                                   Fp16Variant{"nchw phased relu", Layout::kNCHW, -1, true},
                                   Fp16Variant{"nhwc in place", Layout::kNHWC, 0, false, true},
                                   Fp16Variant{"nhwc in place relu", Layout::kNHWC, 0, true, true},
                                   Fp16Variant{"nchw16c in place phased", Layout::kNCHW16c, -1, false, true}})
      for (const char* tile : {"4,3", "6,3", "8,3"}) {
        const PlanOptions o = fp16_options(tile, arith, var);
        const std::string where = std::string(var.name) + " F(" + tile + ") " + to_string(arith);
        std::optional<Plan> plan;
        const std::vector<float> y1 = testing::run(unit, o, &plan);
        ASSERT_EQ(plan->stats().v_shift, 0) << where;
        const double unit_error = rel_l2(y1, testing::reference(unit, var.layout, var.relu));
        const testing::Problem q20 = scaled(-20);
        const std::vector<float> y20 = testing::run(q20, o, &plan);
        const int shift20 = plan->stats().v_shift;
        // max |d| within 0.9 and 1 times 2^-20, |V| / max |d| within 4 and 16 (times 1 + 2^-12): the
        // bound within 2^-19 and 2^-16, brought to [2^4, 2^5).
        EXPECT_GE(shift20, -25) << where;
        EXPECT_LE(shift20, -20) << where;
        EXPECT_EQ(plan->stats().output_nonfinite, 0) << where;
        EXPECT_LE(rel_l2(y20, testing::reference(q20, var.layout, var.relu)), 1.3 * unit_error) << where;
        const std::vector<float> y30 = testing::run(scaled(-30), o, &plan);
        EXPECT_EQ(plan->stats().v_shift, shift20 - 10) << where;
        std::vector<float> back(y30.size());
        for (std::size_t i = 0; i < y30.size(); ++i) back[i] = std::ldexp(y30[i], 10);
        EXPECT_TRUE(same_bits(back, y20)) << where << ": inputs x 2^-30 against x 2^-20";
        PlanOptions two = o;
        two.threads = 2;
        EXPECT_TRUE(same_bits(testing::run(q20, two), y20)) << where << ": 2 threads";
      }
  // Weights below FP32's normals (2^-130 times unit scale): U's column scales are there already, and the
  // GEMMs' results times a scale shifted further down would round to zero. No shift then, never a
  // downward one.
  testing::Problem tiny = testing::scaled(unit, -20);
  for (auto& v : tiny.weights) v = std::ldexp(v, -130);
  std::optional<Plan> plan;
  const std::vector<float> y = testing::run(
      tiny, fp16_options("4,3", Fp16Arithmetic::kFp32, Fp16Variant{"", Layout::kNCHW, 0, false}), &plan);
  EXPECT_EQ(plan->stats().v_shift, 0);
  for (const float v : y) ASSERT_TRUE(std::isfinite(v));
}

// Plans that read their input in place take the upward shift from a sample of it (1 run of 16 values in
// 61). Where the sample misses the input's largest values, the shift can take V past fp16's range: the
// NaN/Inf it leaves in the output (with a ReLU, in M before it) makes the plan take the exact max and run
// again. Data: every value 2^-20 times a unit-scale one, but one value of 1 at a place the sample skips
// (element 16: the sample takes elements 0-15, 976-991, ...): the sample asks for V times 2^17 or so, and
// the value of 1 then overflows. The result must be the one of a plan that takes the exact max (NCHW),
// with no NaN/Inf and no shift.
TEST(Lowp, Fp16InPlacePlansRunAgainWhereTheSampleMissedTheLargestInput) {
  const ConvShape s{1, 32, 12, 10, 32, 3, 3, 1, 1};
  const testing::Problem q = testing::scaled(testing::random_problem(s, 53), -20);
  for (const Fp16Variant& var : {Fp16Variant{"nhwc", Layout::kNHWC, 0, false, true},
                                 Fp16Variant{"nhwc relu", Layout::kNHWC, 0, true, true},
                                 Fp16Variant{"nchw16c", Layout::kNCHW16c, 0, false, true},
                                 Fp16Variant{"nchw16c relu", Layout::kNCHW16c, 0, true, true}}) {
    const PlanOptions o = fp16_options("6,3", Fp16Arithmetic::kFp32, var);
    const std::string where = var.name;
    // Element 16 of the tensor in this layout: NHWC channel 16 of pixel (0, 0); NCHW16c channel 0 of
    // pixel (0, 1).
    testing::Problem big = q;
    big.input[static_cast<std::size_t>(var.layout == Layout::kNHWC ? 16 * s.H * s.W : 1)] = 1.0f;
    std::optional<Plan> plan;
    const std::vector<float> y = testing::run(big, o, &plan);
    EXPECT_EQ(plan->stats().v_shift, 0) << where;
    EXPECT_EQ(plan->stats().output_nonfinite, 0) << where;
    for (const float v : y) ASSERT_TRUE(std::isfinite(v)) << where;
    const double error = rel_l2(y, testing::reference(big, var.layout, var.relu));
    PlanOptions exact = o;
    exact.layout = Layout::kNCHW;
    const double exact_error =
        rel_l2(testing::run(big, exact), testing::reference(big, Layout::kNCHW, var.relu));
    EXPECT_LE(error, 1.1 * exact_error) << where;
    // Without the value of 1, the sample's shift stands.
    testing::run(q, o, &plan);
    EXPECT_LT(plan->stats().v_shift, -15) << where;
  }
}

// fp16 arithmetic sums 32 channels' products in fp16 before FP32 takes over. U's columns are at most
// 2^-2 (their normalization), so a chunk's sum stays finite only while |V| stays below about 65504 / 8.
// Data built for the worst case: every channel's first window is c times the sign pattern of the
// balanced B^T's row of largest L1 norm (in both directions), so that V at that tap is L1^2 c in every
// channel, and the weights are all 1, so that U's column there is one value: the chunk sums 32 equal
// products. V itself fits fp16 up to c = 65504 / L1^2; the sums overflowed from about a sixth of that.
// The plan's V shift keeps |V| <= 2^12 where fp16 arithmetic runs (a chunk's sum <= 2^15), so the
// output is finite and not garbage against the float64 reference (fp16 sums of 32 equal products are
// far from FP32's accuracy: F(6,3) loses 0.17 of the output at c = 64); c of 64 gives no shift.
// fp16 plans that read their input in place find V's overflow from the NaN/Inf results it leaves (with
// a fused ReLU, from the NaN/Inf in M before it) and run again shifted (execute_winograd): with a NaN in
// the input as well, they still shift, by the same amount as without it, and every output the NaN does
// not reach has the bits of the NaN-free run.
TEST(Lowp, Fp16InPlacePlansShiftAfterAnOverflowBesideNanInputs) {
  const ConvShape s{2, 32, 14, 13, 24};  // 3x3, padding 1 (the ConvShape defaults)
  testing::Problem clean = testing::random_problem(s, 47);
  for (auto& v : clean.input) v = std::ldexp(v, 17);
  testing::Problem poisoned = clean;
  poisoned.input[static_cast<std::size_t>(((1 * s.C + 5) * s.H + 6) * s.W + 4)] = std::nanf("");
  for (Layout layout : {Layout::kNHWC, Layout::kNCHW16c})
    for (int block : {0, -1})
      for (bool relu : {false, true}) {  // with a ReLU the plans watch M instead of the output
        PlanOptions o;
        o.relu = relu;
        o.precision = Precision::kFp16;
        o.fp16_arithmetic = Fp16Arithmetic::kFp32;
        o.tile = TileSize{6, 3};
        o.layout = layout;
        o.tile_block = block;
        o.threads = 2;
        const Plan plan = Plan::create(s, clean.weights.data(), clean.bias.data(), o);
        ASSERT_NE(plan.describe().find("input read in place"), std::string::npos) << plan.describe();
        const auto run = [&](const testing::Problem& q) {
          std::vector<float> x = q.input;
          if (layout == Layout::kNHWC) x = nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W);
          if (layout == Layout::kNCHW16c) x = nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
          std::vector<float> y(static_cast<std::size_t>(output_elements(s, layout)));
          plan.execute(x.data(), y.data());
          return y;
        };
        SCOPED_TRACE(to_string(layout) + " block " + std::to_string(block) + (relu ? " relu" : ""));
        const std::vector<float> y_clean = run(clean);
        const int shift = plan.stats().v_shift;
        EXPECT_GE(shift, 3);  // inputs up to 2^17: at least 2^17 * 4 / 65504
        EXPECT_EQ(plan.stats().output_nonfinite, 0);
        const std::vector<float> y = run(poisoned);
        EXPECT_EQ(plan.stats().v_shift, shift);
        int64_t nans = 0, differ = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
          if (std::isnan(y[i])) {
            ++nans;
          } else if (std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(y_clean[i])) {
            ++differ;
          }
        }
        EXPECT_GE(nans, 9 * s.K);
        EXPECT_EQ(plan.stats().output_nonfinite, nans);
        EXPECT_EQ(differ, 0);
        EXPECT_LT(rel_l2(layout == Layout::kNHWC
                             ? nhwc_to_nchw(std::span<const float>(y_clean), s.N, s.K, s.H, s.W)
                             : nchw16c_to_nchw(std::span<const float>(y_clean), s.N, s.K, s.H, s.W),
                         testing::reference(clean, Layout::kNCHW, relu)),
                  0.02);
      }
}

// With a fused ReLU, an overflow of V can leave nothing in the output to count: where V rounds to +inf at
// one position whose A^T column has a single nonzero (the point 0), M there is -inf for a negative U, the
// one output pixel that reads it is -inf, and the ReLU stores 0 where the float64 result is positive.
// Data built for that: the input window is u u^T and the kernel w z^T in channel 0, so V = p p^T
// (p = B^T u), U = (G w)(G z)^T, and the output at that pixel is the product of two 1D results, both made
// positive while U at the position is negative. fp16 plans that read the input in place and fuse the
// ReLU must still shift V and run again (they watch M, execute_winograd), giving the bits of a plan that
// takes max |d| before it runs (NCHW: from its copy), and not 0 at that pixel.
TEST(Lowp, Fp16ReluPlansInPlaceShiftWhereTheOverflowLeavesOnlyMinusInf) {
  const TileSize tile{4, 3};
  const Transform t = balance_input_rows(default_transform(tile));
  const int n = t.n(), m = tile.m, r = tile.r;
  const std::vector<double> at = t.AT().to_double(), g = t.G().to_double(),
                            bt_inv = t.BT().inverse().to_double();
  // The position: A^T's column and G's row with one nonzero each (the point 0).
  int a = -1, i0 = -1, j0 = -1;
  for (int k = 0; k < n && a < 0; ++k) {
    int rows = 0, cols = 0, last_row = -1, last_col = -1;
    for (int i = 0; i < m; ++i)
      if (at[static_cast<std::size_t>(i * n + k)] != 0) ++rows, last_row = i;
    for (int j = 0; j < r; ++j)
      if (g[static_cast<std::size_t>(k * r + j)] != 0) ++cols, last_col = j;
    if (rows == 1 && cols == 1) a = k, i0 = last_row, j0 = last_col;
  }
  ASSERT_GE(a, 0);
  const double at_a = at[static_cast<std::size_t>(i0 * n + a)];
  // w and z differ at tap j0 only: U[a][a] = (G w)_a (G z)_a = -0.05 G[a][j0]^2 < 0.
  std::vector<double> w(static_cast<std::size_t>(r), 1.0), z = w;
  w[static_cast<std::size_t>(j0)] = 1.0;
  z[static_cast<std::size_t>(j0)] = -0.05;
  std::vector<double> alpha(static_cast<std::size_t>(n), 0.0), beta = alpha;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < r; ++j) {
      alpha[static_cast<std::size_t>(k)] +=
          g[static_cast<std::size_t>(k * r + j)] * w[static_cast<std::size_t>(j)];
      beta[static_cast<std::size_t>(k)] +=
          g[static_cast<std::size_t>(k * r + j)] * z[static_cast<std::size_t>(j)];
    }
  // p: 300 at a (V there 90000: +inf in fp16), 150 elsewhere with the sign that makes each other term
  // of the second 1D result positive (|V| elsewhere at most 45000).
  std::vector<double> p(static_cast<std::size_t>(n));
  double y1 = 0, y2 = 0;
  for (int k = 0; k < n; ++k) {
    const double ak = at[static_cast<std::size_t>(i0 * n + k)] * beta[static_cast<std::size_t>(k)];
    p[static_cast<std::size_t>(k)] = k == a ? 300.0 : (ak < 0 ? -150.0 : 150.0);
    y1 += at[static_cast<std::size_t>(i0 * n + k)] * alpha[static_cast<std::size_t>(k)] *
          p[static_cast<std::size_t>(k)];
    y2 += ak * p[static_cast<std::size_t>(k)];
  }
  ASSERT_GT(y1, 0.0);
  ASSERT_GT(y2, 0.0);
  ASSERT_LT(alpha[static_cast<std::size_t>(a)] * beta[static_cast<std::size_t>(a)] * at_a * at_a, 0.0);
  std::vector<double> u(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      u[static_cast<std::size_t>(i)] +=
          bt_inv[static_cast<std::size_t>(i * n + k)] * p[static_cast<std::size_t>(k)];

  const ConvShape s{1, 16, n, n, 1, 3, 3, 0, 0};  // one tile, channel 0 only (16: read in place)
  testing::Problem q;
  q.shape = s;
  q.input.assign(static_cast<std::size_t>(s.input_size()), 0.0f);
  q.weights.assign(static_cast<std::size_t>(s.K * s.C * 9), 0.0f);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      q.input[static_cast<std::size_t>(y * n + x)] =
          static_cast<float>(u[static_cast<std::size_t>(y)] * u[static_cast<std::size_t>(x)]);
  for (int y = 0; y < r; ++y)
    for (int x = 0; x < r; ++x)
      q.weights[static_cast<std::size_t>(y * r + x)] =
          static_cast<float>(w[static_cast<std::size_t>(y)] * z[static_cast<std::size_t>(x)]);
  const std::vector<double> ref = testing::reference(q, Layout::kNCHW, true);
  const std::size_t at_pixel = static_cast<std::size_t>(i0 * m + i0);
  ASSERT_GT(ref[at_pixel], 0.0);

  for (const LowpKernel kernel : {LowpKernel::kAuto, LowpKernel::kPortable}) {
    PlanOptions o;
    o.precision = Precision::kFp16;
    o.fp16_arithmetic = Fp16Arithmetic::kFp32;
    o.lowp_kernel = kernel;
    o.tile = tile;
    o.relu = true;
    o.threads = 1;
    std::optional<Plan> plan;
    const std::vector<float> y_copy = testing::run(q, o, &plan);  // NCHW: max |d| from the copy, first
    const int shift = plan->stats().v_shift;
    EXPECT_GT(shift, 0);
    for (const Layout layout : {Layout::kNHWC, Layout::kNCHW16c})
      for (const int block : {0, -1}) {  // fused, phased
        SCOPED_TRACE(plan->gemm_path() + " " + to_string(layout) + " block " + std::to_string(block));
        PlanOptions in_place = o;
        in_place.layout = layout;
        in_place.tile_block = block;
        in_place.threads = 1 - block;
        const Plan p2 = Plan::create(s, q.weights.data(), nullptr, in_place);
        ASSERT_NE(p2.describe().find("input read in place"), std::string::npos) << p2.describe();
        const std::vector<float> x = layout == Layout::kNHWC
                                         ? nchw_to_nhwc(std::span<const float>(q.input), 1, s.C, n, n)
                                         : nchw_to_nchw16c(std::span<const float>(q.input), 1, s.C, n, n);
        std::vector<float> y(static_cast<std::size_t>(output_elements(s, layout)));
        p2.execute(x.data(), y.data());
        EXPECT_EQ(p2.stats().v_shift, shift);
        EXPECT_GT(y[layout == Layout::kNHWC ? at_pixel : at_pixel * kLanes], 0.0f);
        std::vector<float> back = layout == Layout::kNHWC
                                      ? nhwc_to_nchw(std::span<const float>(y), 1, 1, m, m)
                                      : nchw16c_to_nchw(std::span<const float>(y), 1, 1, m, m);
        EXPECT_TRUE(same_bits(back, y_copy));
        EXPECT_LT(rel_l2(back, ref), 0.01);
      }
  }
}

TEST(Lowp, Fp16ArithmeticChunkSumsStayFiniteOnAlignedData) {
  for (const char* tile : {"4,3", "6,3"}) {
    const TileSize ts = parse_tile(tile);
    const Transform balanced = balance_input_rows(default_transform(ts));
    const int n = balanced.n();
    int worst = 0;
    double worst_l1 = 0;
    for (int i = 0; i < n; ++i) {
      double l1 = 0;
      for (int j = 0; j < n; ++j) l1 += std::fabs(balanced.BT()(i, j).get_d());
      if (l1 > worst_l1) worst_l1 = l1, worst = i;
    }
    const ConvShape s{1, 64, 2 * n, 2 * n, 8, 3, 3, 0, 0};
    testing::Problem p = testing::random_problem(s, 43);
    std::fill(p.weights.begin(), p.weights.end(), 1.0f);
    for (const Layout layout : {Layout::kNCHW, Layout::kNHWC})  // from the copy; in place, after overflow
      for (const double c : {64.0, 0.5 * 65504.0 / (worst_l1 * worst_l1)}) {
        testing::Problem q = p;
        for (int64_t ch = 0; ch < s.C; ++ch)
          for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) {
              const double sy = balanced.BT()(worst, y) < 0 ? -1.0 : 1.0;
              const double sx = balanced.BT()(worst, x) < 0 ? -1.0 : 1.0;
              q.input[static_cast<std::size_t>((ch * s.H + y) * s.W + x)] = static_cast<float>(c * sy * sx);
            }
        PlanOptions o;
        o.precision = Precision::kFp16;
        o.fp16_arithmetic = Fp16Arithmetic::kFp16;
        o.lowp_kernel = LowpKernel::kPortable;
        o.tile = ts;
        o.threads = 1;
        o.layout = layout;
        std::optional<Plan> plan;
        const std::vector<double> ref = testing::reference(q, layout, false);
        const std::vector<float> y = testing::run(q, o, &plan);
        const double error = rel_l2(y, ref);
        PlanOptions fp32_arithmetic = o;
        fp32_arithmetic.fp16_arithmetic = Fp16Arithmetic::kFp32;
        std::printf(
            "fp16 arithmetic F(%s) %s, aligned first windows of %g: error %.3g (FP32 arithmetic %.3g), V "
            "shift %d\n",
            tile, to_string(layout).c_str(), c, error, rel_l2(testing::run(q, fp32_arithmetic), ref),
            plan->stats().v_shift);
        EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }))
            << tile << " " << to_string(layout) << " c = " << c;
        EXPECT_LT(error, 0.3) << tile << " c = " << c;  // fp16 sums of 32 equal products: not FP32's accuracy
        if (c == 64.0) {
          EXPECT_EQ(plan->stats().v_shift, 0) << tile;
        }
      }
  }
}

}  // namespace
}  // namespace nova::conv

// fp16_bits_rne (the fp16 plans' U) against the generic encoder nova::encode_bits, which rounds through
// round_to: every fp16 value, every midpoint between neighbours (exact ties, to even) and the doubles
// next to it on both sides, both signs; the overflow threshold, the subnormal range down to and past
// 2^-25, zeros, infinities, NaN, double subnormals; and random doubles over fp16's exponent range.
TEST(Lowp, Fp16BitsEqualTheGenericEncoder) {
  auto check = [](double x) {
    ASSERT_EQ(nova::conv::fp16_bits_rne(x), nova::encode_bits(nova::Format::kFp16, x)) << x;
  };
  for (uint32_t h = 0; h < 0x7C00u; ++h) {
    const double v = nova::decode_bits(nova::Format::kFp16, h);
    const double next = nova::decode_bits(nova::Format::kFp16, h + 1);  // 0x7C00: +inf past the largest
    const double mid = h + 1 < 0x7C00u ? (v + next) / 2 : 65520.0;      // exact in double
    for (double sign : {1.0, -1.0})
      for (double x : {v, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300)}) check(sign * x);
  }
  for (double x :
       {0.0, -0.0, std::ldexp(1.0, -25), std::ldexp(1.0, -26), std::ldexp(1.5, -25), std::ldexp(1.0, -24),
        std::ldexp(1.0, -14), 65504.0, 65519.0, 65520.0, 65536.0, 1e300, 5e-324, 1e-310,
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()})
    check(x);
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 17);
  for (int i = 0; i < 200000; ++i) check((i & 1 ? -1.0 : 1.0) * std::ldexp(mantissa(rng), exponent(rng)));
}
