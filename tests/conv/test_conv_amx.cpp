// AMX for the int8 and bf16 GEMMs (src/conv/amx_support.cpp). The development and CI machines have no
// AMX; these tests passed on a borrowed 16-core Xeon with AMX (session 11, docs/engine.md, "AMX").
// Tested here: the AMX kernels' code on a scalar model of the tile instructions; the checks that admit
// the real kernels (int8: bit for bit against VNNI; bf16: the error bound of FP32 summation), which
// must reject a kernel that is wrong anywhere they look; plans naming the kernel they run and why. On
// a machine with AMX the last tests run the AMX kernels themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "conv/amx_support.hpp"
#include "conv/cpu_supports.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/conv.hpp"
#include "nova/error.hpp"

namespace nova::conv {
namespace {

// The reference kernel with one output changed by one ulp, in one case of the check's: rows, column
// vectors and channels as given.
template <int64_t kRows, int kNv, std::size_t kKc>
void off_by_one_ulp(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
                    const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  int8_gemm_portable()(rows, nv, kc, a, lda, b, comp, scale, c, ldc);
  if (rows == kRows && nv == kNv && kc == kKc) {
    float& x = c[static_cast<std::size_t>(rows - 1) * ldc + static_cast<std::size_t>(16 * nv - 1)];
    x = std::nextafter(x, 1e30f);
  }
}

TEST(Amx, Int8CheckAdmitsEqualKernelsAndRejectsADifference) {
  if (lowp_simd_supported(Precision::kInt8)) {
    EXPECT_TRUE(int8_gemms_agree(int8_gemm_avx512vnni(), int8_gemm_portable()));
  }
  EXPECT_TRUE(int8_gemms_agree(int8_gemm_portable(), int8_gemm_portable()));
  std::string where;
  // The cases the AMX kernel handles apart: the last row of a 32-row block, a 16-row block, the
  // VNNI tail; odd column counts; several 64-channel steps.
  EXPECT_FALSE(int8_gemms_agree(&off_by_one_ulp<32, 4, 512>, int8_gemm_portable(), &where));
  EXPECT_EQ(where, "rows 32, 4 column vector(s), 512 channels");
  EXPECT_FALSE(int8_gemms_agree(&off_by_one_ulp<48, 3, 192>, int8_gemm_portable(), &where));
  EXPECT_EQ(where, "rows 48, 3 column vector(s), 192 channels");
  EXPECT_FALSE(int8_gemms_agree(&off_by_one_ulp<17, 1, 64>, int8_gemm_portable(), &where));
  EXPECT_FALSE(int8_gemms_agree(&off_by_one_ulp<80, 2, 48>, int8_gemm_portable(), &where));
}

// The AMX kernel's blocking, addressing and dequantization, on the scalar model of the tile
// instructions: the VNNI kernel's bits in every case of the check.
TEST(Amx, Int8KernelOnTheTileModelEqualsVnni) {
  if (!lowp_simd_supported(Precision::kInt8)) GTEST_SKIP() << "no avx512-vnni path on this CPU";
  std::string where;
  EXPECT_TRUE(int8_gemms_agree(int8_gemm_amx_model(), int8_gemm_avx512vnni(), &where)) << where;
}

void faulting_kernel(int64_t, int, std::size_t, const uint8_t*, std::size_t, const int8_t*, const int32_t*,
                     const float*, float*, std::size_t) {
  std::raise(SIGSEGV);
}

void hanging_kernel(int64_t, int, std::size_t, const uint8_t*, std::size_t, const int8_t*, const int32_t*,
                    const float*, float*, std::size_t) {
  std::raise(SIGALRM);  // what the child's alarm does to a kernel that never returns, without the wait
}

// The admission runs the check in a child process: a kernel that differs is refused with the case, one
// that faults or hangs is refused with its signal, and the caller's process lives on.
TEST(Amx, Int8AdmissionSurvivesAFaultingKernel) {
  std::string why;
  EXPECT_TRUE(int8_gemm_admitted(int8_gemm_portable(), int8_gemm_portable(), why)) << why;
  EXPECT_FALSE(int8_gemm_admitted(&off_by_one_ulp<48, 3, 192>, int8_gemm_portable(), why));
  EXPECT_EQ(why, "the kernel differed from the reference (rows 48, 3 column vector(s), 192 channels)");
  EXPECT_FALSE(int8_gemm_admitted(&faulting_kernel, int8_gemm_portable(), why));
  EXPECT_EQ(why, "the kernel crashed in a test process (signal " + std::to_string(SIGSEGV) + ")");
  EXPECT_FALSE(int8_gemm_admitted(&hanging_kernel, int8_gemm_portable(), why));
  EXPECT_EQ(why, "the kernel did not finish within 60 s in a test process");
}

TEST(Amx, Int8PlanNamesItsKernel) {
  if (!lowp_simd_supported(Precision::kInt8)) GTEST_SKIP() << "no avx512-vnni path on this CPU";
  PlanOptions o;
  o.precision = Precision::kInt8;
  o.tile = TileSize{4, 3};
  const ConvShape shape{1, 64, 12, 12, 64, 3, 3, 1, 1};
  const testing::Problem pr = testing::random_problem(shape, 3);
  const Plan plan = Plan::create(shape, pr.weights.data(), pr.bias.data(), o);
  std::string why;
  if (amx_int8_supported(&why)) {
    EXPECT_EQ(plan.gemm_path(), "amx-int8");
  } else {
    EXPECT_EQ(plan.gemm_path(), "avx512-vnni");
    EXPECT_FALSE(why.empty());
    EXPECT_NE(plan.describe().find("amx: " + why), std::string::npos) << plan.describe();
  }
}

// Where the CPU has AMX-INT8 and Linux grants the tile state, the AMX kernel must pass its check: a
// failure there is a fault of the kernel (the engine falls back to VNNI, but this test says so).
TEST(Amx, Int8KernelEqualsVnniWhereTheMachineHasAmx) {
  std::string why;
  if (amx_int8_supported(&why)) {
    std::string where;
    EXPECT_TRUE(int8_gemms_agree(int8_gemm_amx(), int8_gemm_avx512vnni(), &where)) << where;
    return;
  }
  ASSERT_EQ(why.find("not used"), std::string::npos) << why;
  GTEST_SKIP() << "AMX not usable here: " << why;
}

// --- bf16 ---

bool bf16_simd() {
  return lowp_simd_supported(Precision::kBf16);
}

// Random normal bf16 values with exponents over a wide range (2^-20 .. 2^20), so that the order of the
// FP32 sums matters.
std::vector<uint16_t> random_bf16(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    const uint32_t r = rng();
    x = static_cast<uint16_t>((r & 0x8000u) | ((107u + (r >> 20) % 41u) << 7) | (r & 0x7Fu));
  }
  return v;
}

// C in channel order, one bf16_dp_step per channel: what the tile model's TDPBF16PS (the SDM's
// pseudocode) makes of any blocking.
std::vector<float> channel_order(int64_t rows, int nv, std::size_t kc, const std::vector<uint16_t>& a,
                                 std::size_t lda, const std::vector<uint16_t>& b, std::size_t ldc) {
  const std::size_t w = static_cast<std::size_t>(16 * nv);
  std::vector<float> c(static_cast<std::size_t>(rows) * ldc, -1.0f);
  for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i)
    for (std::size_t j = 0; j < w; ++j) {
      float acc = 0.0f;
      for (std::size_t ch = 0; ch < kc; ++ch)
        acc =
            bf16_dp_step(acc, bf16_daz(a[i * lda + ch]), bf16_daz(b[(ch / 2) * (2 * w) + 2 * j + (ch & 1)]));
      c[i * ldc + j] = acc;
    }
  return c;
}

// The AMX kernel's blocking (32- and 16-row blocks, the zero-padded last block, 1..4 column vectors,
// several tile depths) on the tile model: every element is the channel-order sum of its own row and
// column, bit for bit, whatever block the row fell in. Channel counts that are not whole tiles go to
// avx512-bf16 whole.
TEST(Amx, Bf16KernelOnTheTileModelSumsEachElementInChannelOrder) {
  if (!bf16_simd()) GTEST_SKIP() << "no avx512-bf16 path on this CPU";
  uint32_t seed = 1;
  for (const std::size_t kc : {std::size_t{32}, std::size_t{96}, std::size_t{256}})
    for (int nv = 1; nv <= kMaxNV; ++nv)
      for (const int64_t rows :
           {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{33}, int64_t{50}, int64_t{80}}) {
        const std::size_t w = static_cast<std::size_t>(16 * nv), lda = kc + 16, ldc = w + 16;
        const std::vector<uint16_t> a = random_bf16(static_cast<std::size_t>(rows) * lda, seed++);
        const std::vector<uint16_t> b = random_bf16(kc * w, seed++);
        std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f);
        bf16_gemm_amx_model()(rows, nv, kc, a.data(), lda, b.data(), got.data(), ldc);
        EXPECT_TRUE(testing::same_bits(got, channel_order(rows, nv, kc, a, lda, b, ldc)))
            << "rows " << rows << ", nv " << nv << ", kc " << kc;
      }
  // 48 channels: 1.5 tiles, handed to avx512-bf16.
  const std::size_t kc = 48, lda = 64, ldc = 48;
  const std::vector<uint16_t> a = random_bf16(40 * lda, 77), b = random_bf16(kc * 32, 78);
  std::vector<float> got(40 * ldc, -1.0f), want(got);
  bf16_gemm_amx_model()(40, 2, kc, a.data(), lda, b.data(), got.data(), ldc);
  bf16_gemm_avx512bf16()(40, 2, kc, a.data(), lda, b.data(), want.data(), ldc);
  EXPECT_TRUE(testing::same_bits(got, want));
}

// Kernels the bound check must refuse, each wrong in one way: a product left out, a write beyond the
// panel's columns, a NaN operand turned into a number.
void drops_last_pair(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda,
                     const uint16_t* b, float* c, std::size_t ldc) {
  bf16_gemm_portable()(rows, nv, kc - 2, a, lda, b, c, ldc);
}
void writes_past_the_panel(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda,
                           const uint16_t* b, float* c, std::size_t ldc) {
  bf16_gemm_portable()(rows, nv, kc, a, lda, b, c, ldc);
  if (rows == 50 && nv == 3) c[49 * ldc + 48] = 0.0f;
}
void loses_nan(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
               float* c, std::size_t ldc) {
  bf16_gemm_portable()(rows, nv, kc, a, lda, b, c, ldc);
  for (int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < 16 * nv; ++j)
      if (std::isnan(c[static_cast<std::size_t>(i) * ldc + static_cast<std::size_t>(j)]))
        c[static_cast<std::size_t>(i) * ldc + static_cast<std::size_t>(j)] = 0.0f;
}
// vdpbf16ps's sums, with every element moved by a hundred ulps: outside the bound wherever the sum is
// not small next to its terms.
void hundred_ulps_off(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda,
                      const uint16_t* b, float* c, std::size_t ldc) {
  bf16_gemm_portable()(rows, nv, kc, a, lda, b, c, ldc);
  for (int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < 16 * nv; ++j) {
      float& x = c[static_cast<std::size_t>(i) * ldc + static_cast<std::size_t>(j)];
      for (int u = 0; u < 100; ++u) x = std::nextafter(x, 1e30f);
    }
}

TEST(Amx, Bf16BoundCheckAdmitsCorrectSumsAndRejectsFaults) {
  std::string where;
  EXPECT_TRUE(bf16_gemm_within_bound(bf16_gemm_portable(), &where)) << where;
  if (bf16_simd()) {
    EXPECT_TRUE(bf16_gemm_within_bound(bf16_gemm_avx512bf16(), &where)) << where;
    EXPECT_TRUE(bf16_gemm_within_bound(bf16_gemm_amx_model(), &where)) << where;
  }
  EXPECT_FALSE(bf16_gemm_within_bound(&drops_last_pair, &where));
  EXPECT_NE(where.find("rows 1, 1 column vector(s), 32 channels, C[0]["), std::string::npos) << where;
  EXPECT_FALSE(bf16_gemm_within_bound(&writes_past_the_panel, &where));
  EXPECT_EQ(where,
            "rows 50, 3 column vector(s), 32 channels, C[49][48]: written outside the panel's columns");
  EXPECT_FALSE(bf16_gemm_within_bound(&loses_nan, &where));
  EXPECT_EQ(where, "rows 20, 2 column vector(s), 64 channels, C[3][0]: a NaN operand lost");
  EXPECT_FALSE(bf16_gemm_within_bound(&hundred_ulps_off, &where));
  EXPECT_NE(where.find("bound"), std::string::npos) << where;
}

void faulting_bf16_kernel(int64_t, int, std::size_t, const uint16_t*, std::size_t, const uint16_t*, float*,
                          std::size_t) {
  std::raise(SIGSEGV);
}

TEST(Amx, Bf16AdmissionSurvivesAFaultingKernel) {
  std::string why;
  EXPECT_TRUE(bf16_gemm_admitted(bf16_gemm_portable(), why)) << why;
  EXPECT_FALSE(bf16_gemm_admitted(&loses_nan, why));
  EXPECT_EQ(
      why,
      "the kernel's sums left the FP32 error bound (rows 20, 2 column vector(s), 64 channels, C[3][0]: a NaN "
      "operand lost)");
  EXPECT_FALSE(bf16_gemm_admitted(&faulting_bf16_kernel, why));
  EXPECT_EQ(why, "the kernel crashed in a test process (signal " + std::to_string(SIGSEGV) + ")");
}

Plan bf16_plan(int64_t channels) {
  PlanOptions o;
  o.precision = Precision::kBf16;
  o.tile = TileSize{4, 3};
  const ConvShape shape{1, channels, 12, 12, 32, 3, 3, 1, 1};
  const testing::Problem pr = testing::random_problem(shape, 5);
  return Plan::create(shape, pr.weights.data(), pr.bias.data(), o);
}

TEST(Amx, Bf16PlanNamesItsKernel) {
  if (!bf16_simd() || best_isa() != Isa::kAvx512) GTEST_SKIP() << "no avx512-bf16 path on this CPU";
  std::string why;
  const Plan whole = bf16_plan(64), partial = bf16_plan(40);  // 40 channels: padded to 48
  // Off AMX the automatic arithmetic is FP32 FMAs, or vdpbf16ps on AMD CPUs, where it runs at the FMA's rate.
  const bool dot = cpu_is_amd();
  const std::string vector_kernel = dot ? "avx512-bf16" : "avx512-fma";
  EXPECT_EQ(partial.gemm_path(), vector_kernel);
  if (amx_bf16_supported(&why)) {
    EXPECT_EQ(whole.gemm_path(), "amx-bf16");
    EXPECT_NE(partial.describe().find("amx: 48 channels (padded) are not whole tiles of 32"),
              std::string::npos)
        << partial.describe();
  } else {
    EXPECT_EQ(whole.gemm_path(), vector_kernel);
    EXPECT_FALSE(why.empty());
    EXPECT_NE(whole.describe().find(
                  dot ? "bf16 GEMM: avx512-bf16 (vdpbf16ps; amx: " + why + ")"
                      : "bf16 GEMM: avx512-fma (bf16 U widened, vfmadd231ps per channel; amx: " + why + ")"),
              std::string::npos)
        << whole.describe();
  }
}

Plan plan_asking(Precision precision, LowpKernel kernel, int64_t channels) {
  PlanOptions o;
  o.precision = precision;
  o.lowp_kernel = kernel;
  o.tile = TileSize{2, 3};
  const ConvShape shape{1, channels, 10, 10, 32, 3, 3, 1, 1};
  const testing::Problem pr = testing::random_problem(shape, 6);
  return Plan::create(shape, pr.weights.data(), pr.bias.data(), o);
}

std::string error_of(Precision precision, LowpKernel kernel, int64_t channels) {
  try {
    (void)plan_asking(precision, kernel, channels);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// On a CPU without the AVX-512 kernels AMX plans run beside, asking for AMX says that, in the words of
// the admission (not only which AVX-512 kernel is missing).
TEST(Amx, PlansAskingForAmxWithoutAvx512SayWhy) {
  if (lowp_simd_supported(Precision::kInt8))
    GTEST_SKIP() << "this CPU runs the avx512-vnni kernels: PlansAskingForAmxGetItOrAClearError";
  EXPECT_EQ(
      error_of(Precision::kInt8, LowpKernel::kAmx, 64),
      "this process cannot run the amx-int8 GEMM: it needs the avx512-vnni kernels, which this CPU lacks");
  if (!isa_supported(Isa::kAvx512)) {
    EXPECT_EQ(
        error_of(Precision::kBf16, LowpKernel::kAmx, 64),
        "this process cannot run the amx-bf16 GEMM: it needs the avx512-fma kernels, which this CPU lacks");
  }
  EXPECT_EQ(error_of(Precision::kFp16, LowpKernel::kAmx, 64),
            "no AMX kernel for fp16 GEMMs (AMX kernels: int8, bf16)");
}

// LowpKernel::kAvx512 never runs AMX; kAmx runs it or says why not, in the words of the admission.
TEST(Amx, PlansAskingForAmxGetItOrAClearError) {
  if (!bf16_simd() || !lowp_simd_supported(Precision::kInt8) || best_isa() != Isa::kAvx512)
    GTEST_SKIP() << "no avx512-bf16 and avx512-vnni paths on this CPU";
  const Plan int8_vector = plan_asking(Precision::kInt8, LowpKernel::kAvx512, 64);
  EXPECT_EQ(int8_vector.gemm_path(), "avx512-vnni");
  EXPECT_NE(int8_vector.describe().find("amx: avx512 requested"), std::string::npos)
      << int8_vector.describe();
  const Plan bf16_vector = plan_asking(Precision::kBf16, LowpKernel::kAvx512, 64);
  EXPECT_EQ(bf16_vector.gemm_path(), cpu_is_amd() ? "avx512-bf16" : "avx512-fma");
  EXPECT_NE(bf16_vector.describe().find("amx: avx512 requested"), std::string::npos)
      << bf16_vector.describe();

  std::string why;
  if (amx_int8_supported(&why))
    EXPECT_EQ(plan_asking(Precision::kInt8, LowpKernel::kAmx, 64).gemm_path(), "amx-int8");
  else
    EXPECT_EQ(error_of(Precision::kInt8, LowpKernel::kAmx, 64),
              "this process cannot run the amx-int8 GEMM: " + why);
  if (amx_bf16_supported(&why)) {
    EXPECT_EQ(plan_asking(Precision::kBf16, LowpKernel::kAmx, 64).gemm_path(), "amx-bf16");
    EXPECT_EQ(error_of(Precision::kBf16, LowpKernel::kAmx, 40),
              "this process cannot run the amx-bf16 GEMM: 48 channels (padded) are not whole tiles of 32");
  } else {
    EXPECT_EQ(error_of(Precision::kBf16, LowpKernel::kAmx, 64),
              "this process cannot run the amx-bf16 GEMM: " + why);
  }
  EXPECT_EQ(error_of(Precision::kFp16, LowpKernel::kAmx, 64),
            "no AMX kernel for fp16 GEMMs (AMX kernels: int8, bf16)");
  PlanOptions fma;
  fma.precision = Precision::kBf16;
  fma.bf16_arithmetic = Bf16Arithmetic::kFma;
  fma.lowp_kernel = LowpKernel::kAmx;
  const ConvShape shape{1, 64, 10, 10, 32, 3, 3, 1, 1};
  const testing::Problem pr = testing::random_problem(shape, 6);
  try {
    (void)Plan::create(shape, pr.weights.data(), pr.bias.data(), fma);
    ADD_FAILURE() << "an AMX plan with FMA arithmetic was made";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "AMX runs bf16 as tile dot products: bf16 arithmetic 'fma' cannot run on it");
  }
  EXPECT_EQ(error_of(Precision::kFp32, LowpKernel::kAmx, 64),
            "no AMX kernel for fp32 GEMMs (AMX kernels: int8, bf16)");
}

// Where the CPU has AMX-BF16 and Linux grants the tile state, the AMX kernel must pass its check.
TEST(Amx, Bf16KernelWithinBoundWhereTheMachineHasAmx) {
  std::string why;
  if (amx_bf16_supported(&why)) {
    std::string where;
    EXPECT_TRUE(bf16_gemm_within_bound(bf16_gemm_amx(), &where)) << where;
    return;
  }
  ASSERT_EQ(why.find("not used"), std::string::npos) << why;
  GTEST_SKIP() << "AMX not usable here: " << why;
}

}  // namespace
}  // namespace nova::conv

namespace nova::conv {
namespace {

// The engine's use of the AMX kernels, on every machine: plans made while the scalar tile model stands in
// for the hardware (use_amx_model_for_tests) run the AMX code paths of lowp.cpp and winograd_build.cpp
// (the kernels' choice, the tile session per thread and block, blocks of whole 16-row tiles, the cost
// model's AMX rate) with kernels whose results are known: the model's int8 gives VNNI's bits, its bf16
// sums in channel order (within FP32 rounding of the other bf16 kernels). A plan that ran a model
// kernel outside a tile session would read poisoned tiles (the model's #UD stand-in) and fail these.
class AmxModelPlans : public ::testing::Test {
 protected:
  void SetUp() override { use_amx_model_for_tests(true); }
  void TearDown() override { use_amx_model_for_tests(false); }
};

// The F(4,3) plan made with `kernel` and `threads` (tile_block as given), its output on p's input, and
// its description.
struct ModelRun {
  std::vector<float> out;
  std::string path, describe;
};
ModelRun run_model(const testing::Problem& p, Precision prec, LowpKernel kernel, int threads, int block,
                   Layout layout = Layout::kNCHW) {
  PlanOptions o;
  o.precision = prec;
  o.lowp_kernel = kernel;
  o.threads = threads;
  o.tile_block = block;
  o.layout = layout;
  o.tile = TileSize{4, 3};  // the automatic choice prices AMX GEMMs apart: the same tile for every plan
  std::optional<Plan> plan;
  ModelRun r;
  r.out = testing::run(p, o, &plan);
  r.path = plan->gemm_path();
  r.describe = plan->describe();
  return r;
}

TEST_F(AmxModelPlans, Int8PlansRunTheTileKernelsInSessionsWithVnniBits) {
  if (!lowp_simd_supported(Precision::kInt8)) GTEST_SKIP() << "the int8 tile model needs avx512-vnni";
  // 2 x 64 x 22 x 22 -> 64: 72 F(4,3) tiles, 64 channels (one 64-byte tile row).
  const testing::Problem p = testing::random_problem(ConvShape{2, 64, 22, 22, 64, 3, 3, 1, 1}, 91);
  for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
    const ModelRun vnni = run_model(p, Precision::kInt8, LowpKernel::kAvx512, 2, 0, layout);
    for (const int threads : {1, 2})
      for (const int block : {0, 16, 24, -1}) {
        SCOPED_TRACE(std::to_string(threads) + " thread(s), block " + std::to_string(block));
        const ModelRun amx = run_model(p, Precision::kInt8, LowpKernel::kAuto, threads, block, layout);
        EXPECT_EQ(amx.path, "amx-int8") << amx.describe;
        EXPECT_TRUE(testing::same_bits(amx.out, vnni.out));
        if (block == 0 && amx.describe.find(" phased") == std::string::npos) {
          const std::string key = " fused (blocks of ";
          const std::size_t at = amx.describe.find(key);
          ASSERT_NE(at, std::string::npos) << amx.describe;
          EXPECT_EQ(std::stoi(amx.describe.substr(at + key.size())) % 16, 0) << amx.describe;
        }
      }
  }
  // The automatic choice priced the GEMMs at the AMX rate, and says so.
  PlanOptions o;
  o.precision = Precision::kInt8;
  const Plan plan = Plan::create(p.shape, p.weights.data(), nullptr, o);
  EXPECT_NE(plan.reason().find("the fp32 rate (AMX)"), std::string::npos) << plan.reason();
}

TEST_F(AmxModelPlans, Bf16PlansRunTheTileKernelsInSessions) {
  if (!lowp_simd_supported(Precision::kBf16)) GTEST_SKIP() << "the bf16 tile model needs avx512-bf16";
  const testing::Problem p = testing::random_problem(ConvShape{2, 64, 22, 22, 64, 3, 3, 1, 1}, 92);
  const std::vector<double> ref = testing::reference(p, Layout::kNCHW, false);
  const ModelRun first = run_model(p, Precision::kBf16, LowpKernel::kAuto, 1, 0);
  EXPECT_EQ(first.path, "amx-bf16") << first.describe;
  const ModelRun portable = run_model(p, Precision::kBf16, LowpKernel::kPortable, 1, 0);
  // Another summation order of the same bf16 products: FP32 rounding apart from the dot kernels.
  EXPECT_LT(testing::rel_l2(first.out, testing::to_double(portable.out)), 1e-5);
  EXPECT_LT(testing::rel_l2(first.out, ref), 2e-2);  // bf16 Winograd's error (1e-2 at F(4,3))
  for (const int threads : {1, 2})
    for (const int block :
         {0, 16, 24, -1}) {  // every row through the tiles: the same bits whatever the split
      SCOPED_TRACE(std::to_string(threads) + " thread(s), block " + std::to_string(block));
      const ModelRun r = run_model(p, Precision::kBf16, LowpKernel::kAuto, threads, block);
      EXPECT_EQ(r.path, "amx-bf16");
      EXPECT_TRUE(testing::same_bits(r.out, first.out));
    }
}

}  // namespace
}  // namespace nova::conv
