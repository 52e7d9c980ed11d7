// `nova cuda info` and `nova cuda conv`: the emulated error against the library's own emulation and the
// float64 reference, the device refusal where there is none, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/cli_runner.hpp"
#include "nova/cuda/cuda_conv.hpp"

namespace nova::cuda {
namespace {

using nova::testing::run_cli;
using ::testing::HasSubstr;

TEST(CudaCli, InfoSaysWhatThisBuildAndMachineHave) {
  const auto r = run_cli("cuda info --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  std::string why;
  EXPECT_EQ(j.at("built_with_cuda").get<bool>(), built_with_cuda());
  EXPECT_EQ(j.at("device_available").get<bool>(), device_available(&why));
  if (!device_available()) {
    EXPECT_EQ(j.at("why").get<std::string>(), why);
  }
}

// NOVA_CUBLAS names the library to load, and only it: a path that fails is reported with dlopen's reason
// (never replaced silently by another cuBLAS).
TEST(CudaCli, NovaCublasNamesTheLibraryAndAFailingPathIsReported) {
  if (!built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  ::setenv("NOVA_CUBLAS", "/nonexistent/libcublas.so.13", 1);
  const auto r = run_cli("cuda info --format json");
  ::unsetenv("NOVA_CUBLAS");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_FALSE(j.at("cublas_loadable").get<bool>());
  EXPECT_THAT(j.at("cublas_why").get<std::string>(), HasSubstr("/nonexistent/libcublas.so.13"));
  EXPECT_THAT(j.at("cublas_why").get<std::string>(), HasSubstr("NOVA_CUBLAS"));
  const auto plain = nlohmann::json::parse(run_cli("cuda info --format json").output);
  EXPECT_TRUE(plain.at("cublas_loadable").get<bool>()) << plain.dump();
}

// The emulated layer's error is that of fp16 storage with FP32 sums: F(4,3) well below F(6,3), both within
// fp16's few digits, none NaN; small inputs are shifted up and keep that error.
TEST(CudaCli, EmulatedConvReportsTheErrorAndShift) {
  auto error_of = [](const std::string& args) {
    const auto r = run_cli("cuda conv --emulate --format json " + args);
    EXPECT_EQ(r.status, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j.at("stats").at("output_nonfinite").get<int64_t>(), 0);
    EXPECT_TRUE(j.at("emulated").get<bool>());
    return std::pair{j.at("rel_l2_error").get<double>(), j.at("stats").at("v_shift").get<int>()};
  };
  const auto [e43, s43] = error_of("--shape 1,16,14,14,8 --tile 4,3");
  const auto [e63, s63] = error_of("--shape 1,16,14,14,8");
  const auto [e63_small, s63_small] = error_of("--shape 1,16,14,14,8 --data-range 1e-7");
  EXPECT_LT(e43, e63);
  EXPECT_LT(e63, 2e-2);
  EXPECT_GT(e43, 1e-5);  // fp16's rounding is there
  EXPECT_EQ(s43, 0);
  EXPECT_EQ(s63, 0);
  EXPECT_LT(s63_small, -10);
  EXPECT_LT(e63_small, 2 * e63);
}

// --io: fp16 tensors add their rounding to the path's error (at the output; the input is rounded for the
// reference too), bf16's coarser rounding more; the JSON names the types.
TEST(CudaCli, TensorTypesAreReportedWithTheirError) {
  auto run = [](const std::string& io) {
    const auto r = run_cli("cuda conv --emulate --format json --shape 1,16,14,14,8 --tile 4,3 --io " + io);
    EXPECT_EQ(r.status, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j.at("input_type").get<std::string>(), io);
    EXPECT_EQ(j.at("output_type").get<std::string>(), io);
    return j.at("rel_l2_error").get<double>();
  };
  const double fp32 = run("fp32"), fp16 = run("fp16"), bf16 = run("bf16");
  EXPECT_GT(fp16, fp32);
  EXPECT_LT(fp16, 3 * fp32);  // fp16 outputs' rounding (2^-11 relative) beside the path's own error
  EXPECT_GT(bf16, 2 * fp16);  // bf16's 2^-8
  EXPECT_LT(bf16, 1e-2);
}

// fp16 tensors past 65504: the input holds Inf, the error against float64 is none (null) and the NaN/Inf
// outputs are counted.
TEST(CudaCli, Fp16InputsPastTheRangeGiveNoErrorFigure) {
  const auto r = run_cli("cuda conv --emulate --format json --shape 1,8,12,12,8 --io fp16 --data-range 1e6");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_TRUE(j.at("rel_l2_error").is_null());
  EXPECT_GT(j.at("input_nonfinite").get<int64_t>(), 0);
  EXPECT_GT(j.at("stats").at("output_nonfinite").get<int64_t>(), 0);
}

TEST(CudaCli, DeviceRunsAreRefusedClearlyWithoutADevice) {
  if (device_available()) GTEST_SKIP() << "a device is present";
  const auto r = run_cli("cuda conv --shape 1,8,12,12,8");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("--emulate runs the same passes on the host"));
}

TEST(CudaCli, BadInputGetsAMessageAndExitStatus2) {
  for (const auto& [args, says] :
       {std::pair{"cuda conv --emulate --shape 1,8,12", "--shape"},
        {"cuda conv --emulate --shape 1,8,12,12,8 --tile 4,5", "is for 5x5 kernels"},
        {"cuda conv --emulate --shape 1,8,12,12,8 --data-range nan", "--data-range"},
        {"cuda conv --emulate --shape 1,8,12,12,8 --repeat 0", "--repeat"},
        {"cuda conv --emulate --shape 1,8,12,12,8 --io int8", "fp32, fp16 or bf16"},
        {"cuda conv --emulate --shape 1,8,12,12,8 --transform /nonexistent.json", "nonexistent"},
        {"cuda conv --emulate --shape 1,8,12,12,8 -o /nonexistent-dir/x.json", "nonexistent-dir"}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(says)) << args;
  }
}

}  // namespace
}  // namespace nova::cuda
