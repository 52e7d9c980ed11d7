// The fp16-arithmetic GEMM (PlanOptions::fp16_arithmetic = kFp16): the AVX512-FP16 kernel against its
// portable twin bit for bit (ties, subnormals, overflow, every row count and panel width, channel
// counts that end inside a chunk), the chunk length against the fp16-fma preset, and how plans choose
// and name the arithmetic. The engine against the preset's emulation is in test_conv_lowp.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "conv/kernels/lowp_kernels.hpp"
#include "nova/conv/conv.hpp"
#include "nova/error.hpp"
#include "nova/numerics/format.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova::conv {
namespace {

// fp16 operands that make many exact FMA results land on fp16 midpoints, below the normal range and
// beyond the largest finite value: few significant bits, powers of two, subnormals, large values.
// scale: a power of two applied to every value (2^-12: products and sums in fp16's subnormal range).
std::vector<uint16_t> operands(std::size_t count, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  const double special[] = {1.0,        1.5,     1.0 + 1.0 / 1024, 1.0 + 3.0 / 1024, 0.75,  2048.0,
                            1.0 / 2048, 0x1p-24, 0x3p-24,          0x1p-14,          255.0, 300.0};
  std::vector<uint16_t> v(count);
  for (auto& x : v) {
    const uint32_t r = rng();
    double d;
    switch (r % 4) {
      case 0:
        d = special[(r >> 2) % std::size(special)];
        break;
      case 1:
        d = std::ldexp(static_cast<double>((r >> 2) % 2048), -static_cast<int>((r >> 13) % 30));
        break;
      default:
        d = std::ldexp(static_cast<double>(static_cast<int32_t>(r >> 8) % 4096) / 4096.0,
                       static_cast<int>((r >> 2) % 6));
        break;
    }
    if ((r >> 31) != 0u) d = -d;
    d *= scale;
    x = static_cast<uint16_t>(encode_bits(Format::kFp16, round_to(Format::kFp16, d)));
  }
  return v;
}

TEST(Fp16Fma, SimdKernelMatchesPortableBitForBit) {
  if (!fp16_arithmetic_supported()) GTEST_SKIP() << "this CPU has no AVX512-FP16";
  const Fp16FmaGemmFn simd = fp16_fma_gemm_avx512fp16(), portable = fp16_fma_gemm_portable();
  int64_t cases = 0, nonfinite = 0, subnormal = 0;
  for (double scale : {1.0, 0x1p-12})
    for (std::size_t kc : {16u, 32u, 48u, 80u, 160u})
      for (int nv = 1; nv <= 4; ++nv)
        for (int64_t rows : {1, 5, 12, 13, 31}) {
          const std::size_t lda = kc + 16, ldc = 16 * static_cast<std::size_t>(nv) + 32;
          const auto a =
              operands(static_cast<std::size_t>(rows) * lda, static_cast<uint32_t>(kc * 131 + rows), scale);
          const auto b =
              operands(kc * 16 * static_cast<std::size_t>(nv), static_cast<uint32_t>(nv * 7 + kc), scale);
          std::vector<float> c1(static_cast<std::size_t>(rows) * ldc, -7.0f), c2(c1);
          simd(rows, nv, kc, a.data(), lda, b.data(), nullptr, c1.data(), ldc);
          portable(rows, nv, kc, a.data(), lda, b.data(), nullptr, c2.data(), ldc);
          ASSERT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)), 0)
              << "kc " << kc << " nv " << nv << " rows " << rows << " scale " << scale;
          for (std::size_t i = 0; i < c1.size(); ++i) {
            nonfinite += std::isfinite(c1[i]) ? 0 : 1;
            subnormal += c1[i] != 0.0f && std::fabs(c1[i]) < 0x1p-14f ? 1 : 0;
          }
          ++cases;
        }
  EXPECT_EQ(cases, 2 * 5 * 4 * 5);
  EXPECT_GT(nonfinite, 0);  // the data reached fp16 overflow in some sums
  EXPECT_GT(subnormal, 0);  // and fp16 subnormal results in others
}

// The portable twin against double arithmetic rounded once by round_to (an independent rounding):
// fp16(fp16(x0*y0) + x1*y1) through a two-channel GEMM, on exact ties (to even), results that are
// fp16 subnormals, and overflow.
TEST(Fp16Fma, PortableFmaRoundsOnce) {
  const Fp16FmaGemmFn portable = fp16_fma_gemm_portable();
  auto bits = [](double v) { return static_cast<uint16_t>(encode_bits(Format::kFp16, v)); };
  auto gemm2 = [&](double x0, double y0, double x1, double y1) {
    std::vector<uint16_t> a(16, 0), b(16 * 16, 0);
    a[0] = bits(x0);
    a[1] = bits(x1);
    for (std::size_t j = 0; j < 16; ++j) {
      b[j] = bits(y0);
      b[16 + j] = bits(y1);
    }
    std::vector<float> c(16);
    portable(1, 1, 16, a.data(), 16, b.data(), nullptr, c.data(), 16);
    return static_cast<double>(c[0]);
  };
  auto want = [](double x0, double y0, double x1, double y1) {
    return round_to(Format::kFp16, round_to(Format::kFp16, x0 * y0) + x1 * y1);
  };
  const double cases[][4] = {
      {1.0 + 0x1p-10, 1.5, 0.0, 0.0},           // 1.5 + 3 * 2^-11: a tie, to even (1.5 + 2^-9)
      {1.0 + 0x1p-10, 1.0 + 0x1p-9, 0.0, 0.0},  // 1 + 3 * 2^-10 + 2^-19: just above a tie
      {1.0, 1.0, 0x1p-11, 1.0 + 0x1p-10},       // 1 + 2^-11 + 2^-21: above the tie after 1
      {1.0, 1.0, 0x1p-11, 1.0},                 // 1 + 2^-11: the tie, to even (1)
      {-1.0, 1.0, 0x1p-11, -3.0},               // -1 - 3 * 2^-11: a tie below -1, to even
      {0x1p-14, 0x1.8p-10, 0.0, 0.0},           // 1.5 * 2^-24: a subnormal tie, to even (2^-23)
      {0x1p-14, 0x1p-1, 0x1p-14, -0x1.ffcp-2},  // cancellation into the subnormal range
      {256.0, 255.0, 32.0, 1.0},                // 65280 + 32 = 65312: finite
      {256.0, 255.75, 16.0, 1.0},               // 65472 + 16 = 65488: the tie of 65472 and 65504, to even
      {256.0, 256.0, 0.0, 0.0},                 // 65536: overflow to inf
  };
  for (const auto& c : cases) {
    const double got = gemm2(c[0], c[1], c[2], c[3]), expected = want(c[0], c[1], c[2], c[3]);
    EXPECT_TRUE(got == expected || (std::isnan(got) && std::isnan(expected)))
        << c[0] << " * " << c[1] << " + " << c[2] << " * " << c[3] << ": " << got << " vs " << expected;
  }
  EXPECT_TRUE(std::isinf(gemm2(256.0, 256.0, 0.0, 0.0)));
  EXPECT_EQ(gemm2(1.0 + 0x1p-10, 1.5, 0.0, 0.0), 1.5 + 0x1p-9);
}

TEST(Fp16Fma, ChunkMatchesThePreset) {
  EXPECT_EQ(precision_preset("fp16-fma").accumulate_chunk, kFp16FmaChunk);
  EXPECT_EQ(precision_preset("fp16-fma").chunk_accumulate, Format::kFp32);
  EXPECT_EQ(kFp16FmaChunk % 16, 0);  // chunks end on the engine's 16-channel blocks (padding adds +0)
}

TEST(Fp16Fma, PlansChooseAndNameTheArithmetic) {
  EXPECT_EQ(parse_fp16_arithmetic("auto"), Fp16Arithmetic::kAuto);
  EXPECT_EQ(parse_fp16_arithmetic("fp32"), Fp16Arithmetic::kFp32);
  EXPECT_EQ(parse_fp16_arithmetic("fp16"), Fp16Arithmetic::kFp16);
  EXPECT_THROW(parse_fp16_arithmetic("fp8"), Error);
  for (Fp16Arithmetic a : {Fp16Arithmetic::kAuto, Fp16Arithmetic::kFp32, Fp16Arithmetic::kFp16})
    EXPECT_EQ(parse_fp16_arithmetic(to_string(a)), a);

  const ConvShape s{1, 40, 12, 12, 24, 3, 3, 1, 1};
  const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.01f);
  auto plan = [&](Fp16Arithmetic a, LowpKernel k, std::optional<Isa> isa = std::nullopt) {
    PlanOptions o;
    o.precision = Precision::kFp16;
    o.tile = TileSize{4, 3};
    o.fp16_arithmetic = a;
    o.lowp_kernel = k;
    o.isa = isa;
    return Plan::create(s, w.data(), nullptr, o);
  };
  const bool avx512 = best_isa() == Isa::kAvx512;
  const Plan automatic = plan(Fp16Arithmetic::kAuto, LowpKernel::kAuto);
  EXPECT_EQ(automatic.gemm_path(), fp16_arithmetic_supported() && avx512             ? "avx512-fp16"
                                   : lowp_simd_supported(Precision::kFp16) && avx512 ? "avx512-f16c"
                                   : best_isa() == Isa::kAvx2                        ? "avx2-f16c"
                                                                                     : "portable");
  const Plan forced32 = plan(Fp16Arithmetic::kFp32, LowpKernel::kAuto);
  EXPECT_NE(forced32.gemm_path(), "avx512-fp16");
  const Plan portable16 = plan(Fp16Arithmetic::kFp16, LowpKernel::kPortable);
  EXPECT_EQ(portable16.gemm_path(), "portable");
  EXPECT_NE(portable16.describe().find("fp16 fma emulated"), std::string::npos) << portable16.describe();
  const Plan portable32 = plan(Fp16Arithmetic::kFp32, LowpKernel::kPortable);
  EXPECT_NE(portable32.describe().find("portable (fp32)"), std::string::npos) << portable32.describe();
  // The automatic choice takes FP32 arithmetic on a path that cannot run the AVX512-FP16 kernel.
  const Plan on_portable_isa = plan(Fp16Arithmetic::kAuto, LowpKernel::kAuto, Isa::kPortable);
  EXPECT_NE(on_portable_isa.describe().find("portable (fp32)"), std::string::npos)
      << on_portable_isa.describe();
  if (fp16_arithmetic_supported() && avx512) {
    const Plan simd16 = plan(Fp16Arithmetic::kFp16, LowpKernel::kSimd);
    EXPECT_EQ(simd16.gemm_path(), "avx512-fp16");
    EXPECT_NE(simd16.describe().find("fp16 GEMM: avx512-fp16 (vfmadd231ph"), std::string::npos)
        << simd16.describe();
    EXPECT_THROW(plan(Fp16Arithmetic::kFp16, LowpKernel::kSimd, Isa::kAvx2), Error);  // needs the avx512 path
    // F(8,3): the automatic choice keeps FP32 arithmetic (fp16 sums have the least margin there) and says
    // why; forced fp16 arithmetic runs with a caution.
    const ConvShape s8{1, 40, 16, 16, 24, 3, 3, 1, 1};
    const std::vector<float> w8(static_cast<std::size_t>(s8.weight_size()), 0.01f);
    PlanOptions o;
    o.precision = Precision::kFp16;
    o.tile = TileSize{8, 3};
    const Plan auto8 = Plan::create(s8, w8.data(), nullptr, o);
    EXPECT_EQ(auto8.gemm_path(), "avx512-f16c");
    EXPECT_NE(
        auto8.describe().find("fp32 arithmetic: fp16 sums lose the most accuracy on tiles above 8 points"),
        std::string::npos)
        << auto8.describe();
    o.fp16_arithmetic = Fp16Arithmetic::kFp16;
    const Plan forced8 = Plan::create(s8, w8.data(), nullptr, o);
    EXPECT_EQ(forced8.gemm_path(), "avx512-fp16");
    EXPECT_NE(forced8.reason().find("caution"), std::string::npos) << forced8.reason();
  } else {
    EXPECT_THROW(plan(Fp16Arithmetic::kFp16, LowpKernel::kSimd), Error);
  }
}

// The two arithmetics are different computations: on the same data their results differ, and the
// fp16 one is the less accurate (its sums are rounded to fp16).
TEST(Fp16Fma, ArithmeticsDiffer) {
  const ConvShape s{1, 64, 14, 14, 32, 3, 3, 1, 1};
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<float> x(static_cast<std::size_t>(s.input_size())),
      w(static_cast<std::size_t>(s.weight_size()));
  for (auto& v : x) v = static_cast<float>(round_to(Format::kFp16, nd(rng)));
  for (auto& v : w) v = static_cast<float>(round_to(Format::kFp16, 0.1 * nd(rng)));
  auto run = [&](Fp16Arithmetic a) {
    PlanOptions o;
    o.precision = Precision::kFp16;
    o.tile = TileSize{4, 3};
    o.fp16_arithmetic = a;
    o.lowp_kernel = LowpKernel::kPortable;
    o.threads = 1;
    std::vector<float> y(static_cast<std::size_t>(s.output_size()));
    Plan::create(s, w.data(), nullptr, o).execute(x.data(), y.data());
    return y;
  };
  const std::vector<float> y32 = run(Fp16Arithmetic::kFp32), y16 = run(Fp16Arithmetic::kFp16);
  int64_t differ = 0;
  for (std::size_t i = 0; i < y32.size(); ++i) differ += y32[i] != y16[i] ? 1 : 0;
  EXPECT_GT(differ, static_cast<int64_t>(y32.size()) / 2);
}

// V reaches the fp16 GEMM two ways: written as fp16 by the avx512 input transform, or by a
// conversion pass over the FP32 V (the other ISA paths). Both round to nearest even; the FP32
// transforms of the paths compute the same values, so the results are the same bits.
TEST(Fp16Fma, TransformWriteEqualsConversionPass) {
  if (!isa_supported(Isa::kAvx512) || !isa_supported(Isa::kAvx2))
    GTEST_SKIP() << "needs the avx512 and avx2 paths";
  const ConvShape s{1, 70, 15, 13, 24, 3, 3, 1, 1};
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  std::vector<float> x(static_cast<std::size_t>(s.input_size())),
      w(static_cast<std::size_t>(s.weight_size()));
  for (auto& v : x) v = nd(rng);
  for (auto& v : w) v = 0.1f * nd(rng);
  auto run = [&](Isa isa, int block) {
    PlanOptions o;
    o.precision = Precision::kFp16;
    o.tile = TileSize{4, 3};
    o.fp16_arithmetic = Fp16Arithmetic::kFp16;
    o.lowp_kernel = LowpKernel::kPortable;
    o.isa = isa;
    o.tile_block = block;
    o.threads = 2;
    std::vector<float> y(static_cast<std::size_t>(s.output_size()));
    Plan::create(s, w.data(), nullptr, o).execute(x.data(), y.data());
    return y;
  };
  for (int block : {0, -1}) {  // fused and phased orders
    const std::vector<float> a = run(Isa::kAvx512, block), b = run(Isa::kAvx2, block);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "block " << block;
  }
}

}  // namespace
}  // namespace nova::conv
