// AMX for the int8 GEMM (src/conv/amx_support.cpp). No machine of this project has had AMX. Tested here:
// the AMX kernel's code on a scalar model of the tile instructions; the bit-for-bit check that admits
// the real kernel, which must reject a kernel that differs anywhere it looks; plans naming the kernel
// they run and why. On a machine with AMX the last test runs the AMX kernel itself.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <string>

#include "conv/amx_support.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/conv.hpp"

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

}  // namespace
}  // namespace nova::conv
