// The AVX2 low-precision kernels (kernels/avx2/gemm_lowp_avx2.cpp) against the portable ones, bit for
// bit: the GEMMs on their blocking's edges and on operands that would saturate a narrower sum, the
// roundings on ties, subnormals, overflow, NaN and Inf, and whole plans of the avx2 path. They run
// wherever the avx2 path does, AVX-512 machines included (as a forced path there).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "conv/cpu_supports.hpp"
#include "conv/kernels/int16_kernels.hpp"
#include "conv/kernels/kernel_table.hpp"
#include "conv/kernels/lowp_kernels.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/conv.hpp"

namespace nova::conv {
namespace {

using testing::same_bits;

bool avx2() {
  return isa_supported(Isa::kAvx2);
}
bool f16c() {
#if defined(__x86_64__) || defined(__i386__)
  return nova::conv::cpu_supports(nova::conv::CpuFeature::kF16c);
#else
  return false;
#endif
}

// 16-bit patterns of fp16 or bf16 values over much of the format's range, with a few specials.
std::vector<uint16_t> bits16(std::size_t count, bool bf16, std::mt19937& rng) {
  std::vector<uint16_t> v(count);
  for (auto& x : v)
    x = bf16 ? static_cast<uint16_t>((rng() & 0x8000u) | ((60u + rng() % 140u) << 7) | (rng() & 0x7Fu))
             : static_cast<uint16_t>((rng() & 0x8000u) | ((1u + rng() % 29u) << 10) | (rng() & 0x3FFu));
  return v;
}

TEST(LowpAvx2, WidenedGemmsEqualThePortableOnes) {
  if (!avx2() || !f16c()) GTEST_SKIP() << "no avx2 path with F16C on this CPU";
  std::mt19937 rng(31);
  for (const bool bf16 : {false, true}) {
    const WidenedGemmFn simd = bf16 ? bf16_fma_gemm_avx2() : fp16_gemm_avx2();
    const WidenedGemmFn portable = bf16 ? bf16_fma_gemm_portable() : fp16_gemm_portable();
    for (int nv = 1; nv <= kMaxNV; ++nv)
      for (const int64_t rows : {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{8}, int64_t{13}, int64_t{14}})
        for (const std::size_t kc : {std::size_t{16}, std::size_t{80}})
          for (const bool scaled : {false, true}) {
            const std::size_t w = static_cast<std::size_t>(16 * nv), lda = kc + 3, ldc = w + 5;
            std::vector<float> a(static_cast<std::size_t>(rows) * lda);
            for (auto& v : a) {
              const float x = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
              v = bf16 ? round_bf16(x) : round_fp16(x);
            }
            const std::vector<uint16_t> b = bits16(kc * w, bf16, rng);
            if (rows == 13) {  // NaN and Inf propagate alike
              a[2 * lda + 1] = std::numeric_limits<float>::quiet_NaN();
              a[7 * lda] = std::numeric_limits<float>::infinity();
            }
            std::vector<float> scale(w);
            for (std::size_t j = 0; j < w; ++j) scale[j] = std::ldexp(1.0f, static_cast<int>(j % 9) - 4);
            const float* s = scaled ? scale.data() : nullptr;
            std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
            simd(rows, nv, kc, a.data(), lda, b.data(), s, got.data(), ldc);
            portable(rows, nv, kc, a.data(), lda, b.data(), s, want.data(), ldc);
            EXPECT_TRUE(same_bits(got, want)) << (bf16 ? "bf16" : "fp16") << " rows " << rows << " nv " << nv
                                              << " kc " << kc << " scaled " << scaled;
          }
  }
}

// Exact int32 sums whatever the operands: all-extreme codes and weights, where vpmaddubsw's int16 pair
// sums (255 * 127 * 2) would saturate, and random ones, on every row and column tail.
TEST(LowpAvx2, Int8GemmEqualsThePortableOneAndDoesNotSaturate) {
  if (!avx2()) GTEST_SKIP() << "no avx2 path on this CPU";
  std::mt19937 rng(32);
  // kc from one quad group to 272 channels, in an order that grows and shrinks the kernel's per-thread
  // widened copies between calls; 67 rows take two of its runs of V rows (60 and 7).
  for (const std::size_t kc : {std::size_t{64}, std::size_t{16}, std::size_t{272}, std::size_t{32}})
    for (int nv = 1; nv <= kMaxNV; ++nv)
      for (const int64_t rows : {int64_t{1}, int64_t{4}, int64_t{6}, int64_t{11}, int64_t{13}, int64_t{67}})
        for (const bool extreme : {true, false}) {
          const std::size_t w = static_cast<std::size_t>(16 * nv), lda = kc + 4, ldc = w + 3;
          std::vector<uint8_t> a(static_cast<std::size_t>(rows) * lda);
          std::vector<int8_t> b(kc * w);
          for (auto& v : a) v = extreme ? uint8_t{255} : static_cast<uint8_t>(rng() & 0xFFu);
          for (std::size_t i = 0; i < b.size(); ++i)
            b[i] = extreme ? static_cast<int8_t>(i % 3 == 0 ? -127 : 127)
                           : static_cast<int8_t>(rng() % 255u) - 127;
          std::vector<int32_t> comp(w);
          std::vector<float> scale(w);
          for (std::size_t j = 0; j < w; ++j) {
            int32_t sum = 0;
            for (std::size_t c = 0; c < kc; ++c) sum += b[(c / 4) * (4 * w) + 4 * j + (c & 3)];
            comp[j] = 128 * sum;
            scale[j] = 1.0f / static_cast<float>(j + 3);
          }
          std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
          int8_gemm_avx2()(rows, nv, kc, a.data(), lda, b.data(), comp.data(), scale.data(), got.data(), ldc);
          int8_gemm_portable()(rows, nv, kc, a.data(), lda, b.data(), comp.data(), scale.data(), want.data(),
                               ldc);
          EXPECT_TRUE(same_bits(got, want))
              << "kc " << kc << " rows " << rows << " nv " << nv << " extreme " << extreme;
          // One element against its definition, in int64.
          int64_t sum = 0;
          for (std::size_t c = 0; c < kc; ++c) sum += int64_t{a[c]} * b[(c / 4) * (4 * w) + (c & 3)];
          EXPECT_EQ(f32_bits(got[0]), f32_bits(static_cast<float>(sum - comp[0]) * scale[0]));
        }
}

// The panels form (one call for a position's run of panels, V's rows widened once) against the portable
// kernel called panel by panel with the scales its callers form: panels of 16 to 64 columns, a last panel
// narrower than the others, and rows in one and in two of the kernel's runs.
TEST(LowpAvx2, Int8PanelsGemmEqualsThePortableOnePanelByPanel) {
  if (!avx2()) GTEST_SKIP() << "no avx2 path on this CPU";
  std::mt19937 rng(33);
  for (const std::size_t kc : {std::size_t{48}, std::size_t{144}})
    for (const int64_t panel : {int64_t{16}, int64_t{32}, int64_t{64}})
      for (const int64_t width : {panel, 3 * panel, 2 * panel + 16})
        for (const int64_t rows : {int64_t{5}, int64_t{67}}) {
          const std::size_t lda = kc + 8, ldc = static_cast<std::size_t>(width) + 5;
          std::vector<uint8_t> a(static_cast<std::size_t>(rows) * lda);
          for (auto& v : a) v = static_cast<uint8_t>(rng() & 0xFFu);
          std::vector<int8_t> b(kc * static_cast<std::size_t>(width));
          for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng() % 255u) - 127);
          std::vector<int32_t> comp(static_cast<std::size_t>(width));
          std::vector<float> u_scale(static_cast<std::size_t>(width));
          for (std::size_t j = 0; j < u_scale.size(); ++j) {
            comp[j] = static_cast<int32_t>(rng() % 20001u) - 10000;
            u_scale[j] = std::uniform_real_distribution<float>(1e-3f, 1e-2f)(rng);
          }
          const float v_scale = 0.0173f;
          std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
          int8_panels_gemm_avx2()(rows, width, panel, kc, a.data(), lda, b.data(), comp.data(), v_scale,
                                  u_scale.data(), got.data(), ldc);
          for (int64_t k0 = 0; k0 < width; k0 += panel) {
            const int64_t cols = std::min(panel, width - k0);
            std::vector<float> scale(static_cast<std::size_t>(cols));
            for (int64_t j = 0; j < cols; ++j) scale[static_cast<std::size_t>(j)] = v_scale * u_scale[k0 + j];
            int8_gemm_portable()(rows, static_cast<int>(cols / 16), kc, a.data(), lda,
                                 b.data() + static_cast<std::size_t>(k0) * kc, comp.data() + k0, scale.data(),
                                 want.data() + k0, ldc);
          }
          EXPECT_TRUE(same_bits(got, want))
              << "kc " << kc << " panel " << panel << " width " << width << " rows " << rows;
        }
}

// The int8-spatial GEMM: exact int32 sums per run of `chunk` channels, converted and added in the
// portable kernel's order; runs that end mid-panel, one run, and operands at int16's extremes.
TEST(LowpAvx2, Int16GemmEqualsThePortableOne) {
  if (!avx2()) GTEST_SKIP() << "no avx2 path on this CPU";
  std::mt19937 rng(35);
  const Int16Fns simd = int16_fns_avx2(), portable = int16_fns_portable();
  for (int nv = 1; nv <= kMaxNV; ++nv)
    for (const int64_t rows : {int64_t{1}, int64_t{6}, int64_t{8}, int64_t{9}, int64_t{13}})
      for (const std::size_t chunk : {std::size_t{2}, std::size_t{10}, std::size_t{64}})
        for (const bool extreme : {true, false}) {
          const std::size_t kc = 48, w = static_cast<std::size_t>(16 * nv), lda = kc + 2, ldc = w + 1;
          std::vector<int16_t> a(static_cast<std::size_t>(rows) * lda), b(kc * w);
          for (auto& v : a)
            v = extreme ? int16_t{-32767} : static_cast<int16_t>(static_cast<int>(rng() % 4001u) - 2000);
          for (auto& v : b)
            v = extreme ? int16_t{-32767} : static_cast<int16_t>(static_cast<int>(rng() % 801u) - 400);
          std::vector<float> scale(w);
          for (std::size_t j = 0; j < w; ++j) scale[j] = 1.0f / static_cast<float>(3 * j + 7);
          // extreme: a pair's two products (32767^2 each) come within 2^17 of int32's limit: runs of one
          // pair there, as the plan's bound on the run length would make them.
          const std::size_t run = extreme ? 2 : chunk;
          std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
          simd.gemm(rows, nv, kc, run, a.data(), lda, b.data(), scale.data(), got.data(), ldc);
          portable.gemm(rows, nv, kc, run, a.data(), lda, b.data(), scale.data(), want.data(), ldc);
          EXPECT_TRUE(same_bits(got, want)) << "rows " << rows << " nv " << nv << " chunk " << run;
        }
}

// The int8-spatial conversions: the input's int8 codes in place (ties, the clamp at +-127.5, NaN and Inf
// left as they are and not counted, products that overflow to Inf) and V' to int16 (the +-32767 limit,
// NaN, Inf), on counts with tails, against the portable definitions, bits and counts.
TEST(LowpAvx2, Int16ConversionsEqualThePortableOnes) {
  if (!avx2()) GTEST_SKIP() << "no avx2 path on this CPU";
  const Int16Fns simd = int16_fns_avx2(), portable = int16_fns_portable();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v = {0.0f,   -0.0f,   0.5f,    1.5f,     2.5f,      -2.5f,    126.5f,    127.49f,
                          127.5f, -127.5f, 127.51f, 300.0f,   -300.0f,   inf,      -inf,      nan,
                          3e38f,  -3e38f,  1e-40f,  32767.0f, -32767.0f, 32768.0f, -40000.0f, 1e9f};
  std::mt19937 rng(37);
  for (int i = 0; i < 300; ++i) v.push_back(std::uniform_real_distribution<float>(-200.0f, 200.0f)(rng));
  for (const float inv : {1.0f, 0.37f, 1e30f})
    for (const std::size_t count : {v.size(), v.size() - 5, std::size_t{3}}) {
      std::vector<float> got(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count)), want(got);
      const int64_t n = static_cast<int64_t>(count);
      EXPECT_EQ(simd.codes(got.data(), n, inv), portable.codes(want.data(), n, inv)) << "inv " << inv;
      EXPECT_TRUE(same_bits(got, want)) << "codes, inv " << inv << " count " << count;
    }
  for (const std::size_t count : {v.size(), v.size() - 5, std::size_t{3}, std::size_t{16}}) {
    std::vector<int16_t> got(count + 1, 77), want(count + 1, 77);
    int got_bad = 0, want_bad = 0;
    simd.convert(v.data(), got.data(), static_cast<int64_t>(count), &got_bad);
    portable.convert(v.data(), want.data(), static_cast<int64_t>(count), &want_bad);
    EXPECT_EQ(got, want) << "count " << count;  // the element past the end untouched in both
    EXPECT_EQ(got_bad, want_bad) << "count " << count;
  }
}

TEST(LowpAvx2, RoundingsEqualTheScalarDefinitions) {
  if (!avx2() || !f16c()) GTEST_SKIP() << "no avx2 path with F16C on this CPU";
  std::mt19937 rng(33);
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          1.0f + 0x1p-11f,
                          1.0f + 0x3p-11f,  // fp16 ties, to even
                          1.0f + 0x1p-8f,
                          1.0f + 0x3p-8f,  // bf16 ties
                          65504.0f,
                          65520.0f,
                          1e6f,
                          0x1p-25f,
                          0x1p-20f,
                          1e-40f,
                          -1e-40f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::max()};
  for (int i = 0; i < 200; ++i)
    v.push_back(std::ldexp(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng),
                           static_cast<int>(rng() % 80u) - 40));
  {
    uint32_t snan_bits = 0x7F800123u;  // a signalling NaN with payload: made quiet, payload dropped alike
    float snan;
    __builtin_memcpy(&snan, &snan_bits, 4);
    v.push_back(snan);
  }
  for (const bool bf16 : {false, true})
    for (const std::size_t count : {v.size(), v.size() - 3, std::size_t{5}}) {  // tails through the scalar
      std::vector<float> got(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count)), want(got);
      (bf16 ? bf16_round_avx2() : fp16_round_avx2())(got.data(), static_cast<int64_t>(count));
      for (auto& x : want) x = bf16 ? round_bf16(x) : round_fp16(x);
      EXPECT_TRUE(same_bits(got, want)) << (bf16 ? "bf16" : "fp16") << " count " << count;
    }
}

// Whole plans of the avx2 path: the AVX2 kernels (automatic and asked for as "simd") give the portable
// kernels' bits, per-call and calibrated int8 scales included, and the plan names its kernel.
TEST(LowpAvx2, PlansOfTheAvx2PathGiveThePortableBits) {
  if (!avx2() || !f16c()) GTEST_SKIP() << "no avx2 path with F16C on this CPU";
  const ConvShape s{2, 21, 17, 19, 35, 3, 3, 1, 1};
  std::mt19937 rng(34);
  std::vector<float> x(static_cast<std::size_t>(s.input_size())),
      w(static_cast<std::size_t>(s.weight_size()));
  for (auto& v : x) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  for (auto& v : w) v = std::uniform_real_distribution<float>(-0.3f, 0.3f)(rng);
  const std::vector<float> clean = x;  // calibration samples must be finite
  x[100] = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    Precision prec;
    const char* path;
    bool calibrate;
  };
  for (const Case c : {Case{Precision::kBf16, "avx2-fma", false}, Case{Precision::kFp16, "avx2-f16c", false},
                       Case{Precision::kInt8, "avx2", false}, Case{Precision::kInt8, "avx2", true}})
    for (const TileSize tile : {TileSize{2, 3}, TileSize{4, 3}, TileSize{6, 3}})
      for (const int block : {0, -1}) {
        auto run = [&](LowpKernel k, std::string* path) {
          PlanOptions o;
          o.precision = c.prec;
          o.isa = Isa::kAvx2;
          o.lowp_kernel = k;
          o.tile = tile;
          o.threads = 2;
          o.tile_block = block;
          Plan plan = Plan::create(s, w.data(), nullptr, o);
          if (c.calibrate) {
            const float* samples[] = {clean.data()};
            plan.calibrate(samples);
          }
          std::vector<float> y(static_cast<std::size_t>(s.output_size()), -1.0f);
          plan.execute(x.data(), y.data());
          *path = plan.gemm_path();
          return y;
        };
        std::string pa, ps, pp;
        const std::vector<float> automatic = run(LowpKernel::kAuto, &pa), simd = run(LowpKernel::kSimd, &ps),
                                 portable = run(LowpKernel::kPortable, &pp);
        SCOPED_TRACE(to_string(c.prec) + " " + tile.to_string() + " block " + std::to_string(block) +
                     (c.calibrate ? " calibrated" : ""));
        EXPECT_EQ(pa, c.path);
        EXPECT_EQ(ps, c.path);
        EXPECT_EQ(pp, "portable");
        EXPECT_TRUE(same_bits(automatic, portable));
        EXPECT_TRUE(same_bits(simd, portable));
        std::size_t nans = 0;
        for (float v : automatic) nans += std::isnan(v) ? 1 : 0;
        EXPECT_GT(nans, 0u) << "the NaN input reaches the outputs of its tiles";
      }
}

// The widened paths' V rounding: the AVX2 input transform's store rounds V to bf16 values kept in
// floats for every plan on the avx2 ISA, and to fp16 values where the plan runs the avx2-f16c kernels
// (which checked for F16C); the fp16 plans of the portable kernels round V in a pass. The bits are the
// same either way (PlansOfTheAvx2PathGiveThePortableBits); the stage clocks say which one ran.
TEST(LowpAvx2, WidenedPathsRoundVInTheInputTransform) {
  if (!avx2() || !f16c()) GTEST_SKIP() << "no avx2 path with F16C on this CPU";
  const testing::Problem p = testing::random_problem(ConvShape{1, 32, 20, 20, 32}, 36);
  for (const Precision prec : {Precision::kBf16, Precision::kFp16})
    for (const LowpKernel k : {LowpKernel::kAuto, LowpKernel::kPortable}) {
      PlanOptions o;
      o.precision = prec;
      o.isa = Isa::kAvx2;
      o.lowp_kernel = k;
      o.tile = TileSize{4, 3};
      o.threads = 2;
      Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), o);
      plan.set_profiling(true);
      std::vector<float> y(static_cast<std::size_t>(p.shape.output_size()));
      for (int i = 0; i < 2; ++i) plan.execute(p.input.data(), y.data());
      const StageProfile s = plan.stage_profile();
      SCOPED_TRACE(to_string(prec) + " " + plan.gemm_path());
      EXPECT_GT(s.input_ms, 0.0);
      if (prec == Precision::kFp16 && k == LowpKernel::kPortable)
        EXPECT_GT(s.convert_ms, 0.0);
      else
        EXPECT_EQ(s.convert_ms, 0.0);
    }
}

}  // namespace
}  // namespace nova::conv
