// `nova bench conv` and `nova bench paths`, the engine's commands. `bench conv`: its JSON, its --check
// error against the float64 reference in every layout (with the tile fixed the engine computes the same
// values in each, so the errors must be equal, calibrated int8 included: the calibration sample has to
// be in the plan's layout), and its bad-input messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/cli_runner.hpp"
#include "conv/cpu_supports.hpp"
#include "nova/conv/conv.hpp"

namespace nova::conv {
namespace {

nlohmann::json bench_json(const std::string& args) {
  const nova::testing::CliResult r =
      nova::testing::run_cli("bench conv --repeat 2 --threads 2 --check --format json " + args);
  EXPECT_EQ(r.status, 0) << r.output;
  if (r.status != 0) return {};
  return nlohmann::json::parse(r.output);
}

// An fp16 input past 65504 holds Inf: --check says the error against float64 is not defined there (null in
// JSON, with the count) rather than printing NaN, and the run's NaN/Inf outputs are counted.
TEST(BenchConvCli, CheckedErrorIsNoneWhereTheTypedInputHoldsInf) {
  const nlohmann::json j = bench_json("--shape 1,8,12,12,8 --io fp16 --data-range 1e6");
  ASSERT_TRUE(j.contains("rel_l2_error"));
  EXPECT_TRUE(j["rel_l2_error"].is_null());
  EXPECT_GT(j["input_nonfinite"].get<int64_t>(), 0);
  EXPECT_GT(j["stats"]["output_nonfinite"].get<int64_t>(), 0);
  const nlohmann::json fine = bench_json("--shape 1,8,12,12,8 --io fp16 --data-range 1e4");
  EXPECT_LT(fine["rel_l2_error"].get<double>(), 1e-2);
  EXPECT_FALSE(fine.contains("input_nonfinite"));
  const nova::testing::CliResult text =
      nova::testing::run_cli("bench conv --repeat 1 --check --shape 1,8,12,12,8 --io fp16 --data-range 1e6");
  EXPECT_NE(text.output.find("none (the input as its tensor type holds"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("nan"), std::string::npos) << text.output;
}

TEST(BenchConvCli, CheckedErrorIsTheSameInEveryLayout) {
  struct Case {
    std::string args;
    double bound;  // the relative L2 error the precision must stay under on this layer
  };
  for (const Case& c : {Case{"--dtype fp32 --tile 4,3", 1e-5}, Case{"--dtype int8 --calibrate --tile 4,3", 0.1},
                        Case{"--dtype bf16 --io bf16 --tile 4,3", 3e-2}, Case{"--dtype fp32 --stride 2", 1e-5}}) {
    const std::string shape = "--shape 2,20,13,11,18 " + c.args;
    const nlohmann::json nchw = bench_json(shape + " --layout nchw");
    ASSERT_TRUE(nchw.contains("rel_l2_error")) << c.args;
    const double e = nchw["rel_l2_error"].get<double>();
    EXPECT_GT(e, 0.0) << c.args;
    EXPECT_LT(e, c.bound) << c.args;
    for (const char* layout : {"nhwc", "nchw16c"}) {
      const nlohmann::json j = bench_json(shape + " --layout " + layout);
      EXPECT_EQ(j["layout"], layout);
      EXPECT_EQ(j["rel_l2_error"].get<double>(), e) << c.args << " " << layout;
      EXPECT_GT(j["median_ms"].get<double>(), 0.0);
      EXPECT_GT(j["cpu_ms_per_execute"].get<double>(), 0.0);
    }
  }
}

// --profile: the JSON's stage times (thread ms per execute) are those of the plan's algorithm, and they
// fit in threads x the profiled wall time.
TEST(BenchConvCli, ProfileGivesTheStagesOfThePlan) {
  for (const std::string args : {"--stride 1", "--stride 2"}) {
    const nlohmann::json j = bench_json("--shape 1,24,17,15,20 --profile " + args);
    ASSERT_TRUE(j.contains("profile")) << args;
    const nlohmann::json& st = j["profile"]["thread_ms"];
    const double wall = j["profile"]["wall_ms"].get<double>();
    EXPECT_GT(wall, 0.0);
    double sum = 0.0;
    for (const auto& [name, ms] : st.items())
      if (name != "idle") sum += ms.get<double>();
    EXPECT_NEAR(sum + st["idle"].get<double>(), wall * 2, 1e-9 * wall) << args;  // --threads 2
    EXPECT_GE(st["idle"].get<double>(), -1e-3) << args;
    if (j["algorithm"] == "winograd") {
      EXPECT_GT(st.value("gemm", 0.0), 0.0);
      EXPECT_GT(st.value("input", 0.0), 0.0);
      EXPECT_FALSE(st.contains("direct"));
    } else {
      EXPECT_GT(st.value("direct", 0.0), 0.0);
      EXPECT_FALSE(st.contains("gemm"));
    }
  }
  EXPECT_FALSE(bench_json("--shape 1,24,17,15,20").contains("profile"));
}

// Every figure names the machine and the data behind it (the text said neither; the JSON had the ISA).
TEST(BenchConvCli, NamesTheMachineAndTheData) {
  const nlohmann::json j = bench_json("--shape 1,8,8,8,8 --data-range 4");
  EXPECT_NE(j["machine"].get<std::string>().find("hardware threads"), std::string::npos);
  EXPECT_EQ(j["data_range"].get<double>(), 4.0);
  const nova::testing::CliResult r = nova::testing::run_cli("bench conv --shape 1,8,8,8,8 --repeat 1");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find(
                " hardware threads; input and bias uniform in [-1, 1], weights in [-0.1, 0.1]\n  median "),
            std::string::npos)
      << r.output;
}

TEST(BenchConvCli, BadRequestsGetAClearMessage) {
  const struct {
    std::string args, message;
  } cases[] = {{"--shape 1,8,8,8,8 --layout nchw8c", "unknown layout"},
               {"--shape 1,8,8 --repeat 1", "--shape wants N,C,H,W,K"},
               {"--shape 1,8,8,8,8 --dtype fp8 --repeat 1", "unknown precision"},
               {"--shape 1,8,8,8,8 --calibrate --repeat 1", "calibration is for int8"},
               {"--shape 1,8,8,8,8 --lowp-kernel tiles --repeat 1", "unknown low-precision kernel 'tiles'"},
               {"--shape 1,8,8,8,8 --dtype fp16 --lowp-kernel amx --repeat 1", "no AMX kernel for fp16 GEMMs"},
               {"--shape 1,8,8,8,8 --lowp-kernel amx --repeat 1", "no AMX kernel for fp32 GEMMs"}};
  for (const auto& c : cases) {
    const nova::testing::CliResult r = nova::testing::run_cli("bench conv " + c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << ": " << r.output;
  }
}

// Values that used to fall back silently to a default (a negative pad to kernel/2, a repeat count
// below 1 to the automatic one, a non-positive scale to the data's) or be ignored (--tile beside
// --transform) are refused, naming the option and the value.
TEST(BenchConvCli, OutOfRangeValuesAreRefusedNotReplaced) {
  const std::string file = nova::testing::temp_dir() + "/f43.json";
  ASSERT_EQ(nova::testing::run_cli("transform --tile 4,3 --format json -o " + file).status, 0);
  const struct {
    std::string args, message;
  } cases[] = {
      {"--pad -1", "--pad must be 0 or more, got -1"},
      {"--repeat 0", "--repeat must be 1 to 1000000, got 0"},
      {"--repeat -5", "--repeat must be 1 to 1000000, got -5"},
      {"--repeat 1000000000", "--repeat must be 1 to 1000000, got 1000000000"},
      {"--io int8 --input-scale 0", "--input-scale must be finite and > 0, got 0"},
      {"--io int8 --input-scale nan", "--input-scale must be finite and > 0, got nan"},
      {"--io int8 --output-scale -0.5", "--output-scale must be finite and > 0, got -0.5"},
      {"--k-parts -1", "--k-parts must be 0 (automatic) or more, got -1"},
      {"--input-scale 0.5", "--input-scale is for int8 input tensors; the input is fp32"},
      {"--io bf16 --output-scale 2", "--output-scale is for int8 output tensors; the output is bf16"},
      {"--transform " + file + " --tile 6,3", "--tile 6,3 disagrees with the tile of --transform"},
      // Accepted and not used: --algorithm direct timed the direct path with any of these.
      {"--algorithm direct --tile 6,3", "--tile is a Winograd option; --algorithm direct does not use it"},
      {"--algorithm direct --transform " + file, "--transform is a Winograd option"},
      {"--algorithm direct --tile-block 4", "--tile-block is a Winograd option"},
      {"--algorithm direct --k-parts 2", "--k-parts is a Winograd option"},
      {"--algorithm direct --generic", "--generic is a Winograd option"},
      {"--fp16-arith fp32", "--fp16-arith is for --dtype fp16 GEMMs; the precision is fp32"},
      {"--dtype bf16 --fp16-arith fp16", "--fp16-arith is for --dtype fp16 GEMMs; the precision is bf16"},
      {"--dtype fp16 --bf16-arith dot", "--bf16-arith is for --dtype bf16 GEMMs; the precision is fp16"},
      {"--lowp-kernel portable", "--lowp-kernel is for low-precision GEMMs; the precision is fp32"},
      // The reason is the precision's, not a missing default tile (F(2,5) and F(4,5) are defaults).
      {"--kernel 5 --algorithm winograd --dtype int8-spatial",
       "int8-spatial has no Winograd tile for 5x5 kernels (its integer transforms fit int16 for F(2,3) and "
       "F(4,3) "
       "only)"}};
  for (const auto& c : cases) {
    const nova::testing::CliResult r = nova::testing::run_cli("bench conv --shape 1,8,8,8,8 " + c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.output.find("nova: error: " + c.message), std::string::npos) << c.args << ": " << r.output;
  }
  // The tile the file has is accepted beside it.
  EXPECT_EQ(
      nova::testing::run_cli("bench conv --shape 1,8,8,8,8 --repeat 1 --transform " + file + " --tile 4,3")
          .status,
      0);
}

// A Winograd tile asked for on a shape Winograd cannot do is timed on the direct path (a plan never refuses
// a valid convolution); the command says so on stderr, not only inside the plan line.
TEST(BenchConvCli, AnUnusedWinogradRequestIsNoted) {
  for (const std::string what : {"stride", "groups", "dilation"}) {
    const auto r =
        nova::testing::run_cli("bench conv --shape 1,4,8,8,4 --repeat 1 --tile 6,3 --" + what + " 2");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("nova: note: direct: " + what + " 2 (Winograd needs " + what +
                            " 1); the requested transform is not used"),
              std::string::npos)
        << r.output;
  }
  const auto used = nova::testing::run_cli("bench conv --shape 1,4,8,8,4 --repeat 1 --tile 6,3");
  EXPECT_EQ(used.status, 0) << used.output;
  EXPECT_EQ(used.output.find("nova: note:"), std::string::npos) << used.output;
}

// A plan's caution reaches stderr too, where a script reading --format json would otherwise miss it.
TEST(BenchConvCli, CautionsAreRepeatedOnStderr) {
  const std::string file = nova::testing::temp_dir() + "/f10_3.json";
  ASSERT_EQ(nova::testing::run_cli("transform --tile 10,3 --format json -o " + file).status, 0);
  // stdout and stderr together: the JSON's reason has the caution too, without the "nova: " of stderr's line.
  const auto r =
      nova::testing::run_cli("bench conv --shape 1,4,16,16,4 --repeat 1 --format json --transform " + file);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("nova: caution: the transform's predicted relative error in fp32 is"),
            std::string::npos)
      << r.output;
  const auto quiet = nova::testing::run_cli("bench conv --shape 1,4,16,16,4 --repeat 1 --format json");
  EXPECT_EQ(quiet.output.find("caution"), std::string::npos) << quiet.output;
}

// `nova bench paths` names, for every precision, the kernel a plan made in this process runs.
TEST(BenchPathsCli, NamesTheKernelOfEveryPrecision) {
  for (const std::string isa : {"", "portable", "avx2", "avx512"}) {
    if (!isa.empty() && !isa_supported(parse_isa(isa))) continue;
    const nova::testing::CliResult r =
        nova::testing::run_cli("bench paths --format json" + (isa.empty() ? "" : " --isa " + isa));
    ASSERT_EQ(r.status, 0) << r.output;
    const nlohmann::json j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j["isa"], isa.empty() ? to_string(best_isa()) : isa);
    const Isa path = isa.empty() ? best_isa() : parse_isa(isa);
    EXPECT_EQ(j["conversions"], tensor_conversion_kernels(path));
    if (path == Isa::kPortable) {
      EXPECT_EQ(j["conversions"], "portable");
    }
#if defined(__x86_64__) || defined(__i386__)
    if (path == Isa::kAvx2 && nova::conv::cpu_supports(nova::conv::CpuFeature::kF16c)) {
      EXPECT_EQ(j["conversions"], "avx2-f16c");
    }
    if (path == Isa::kAvx512) {
      EXPECT_EQ(j["conversions"].get<std::string>().substr(0, 6), "avx512");
    }
#endif
    ASSERT_EQ(j["paths"].size(), 5u);
    for (const auto& p : j["paths"]) {
      const Precision precision = parse_precision(p["dtype"].get<std::string>());
      PlanOptions o;
      o.precision = precision;
      o.algorithm = AlgorithmChoice::kWinograd;
      o.tile = TileSize{4, 3};
      o.isa = isa.empty() ? best_isa() : parse_isa(isa);
      // 64 channels, as `bench paths` asks: AMX's bf16 choice depends on the channel count.
      const ConvShape s{1, 64, 10, 10, 64, 3, 3, 1, 1};
      const std::vector<float> w(static_cast<std::size_t>(s.weight_size()), 0.5f);
      const Plan plan = Plan::create(s, w.data(), nullptr, o);
      EXPECT_EQ(p["gemm_path"], plan.gemm_path()) << p;
      EXPECT_EQ(p["detail"], plan.gemm_detail()) << p;
      if (precision != Precision::kFp32 && o.isa == Isa::kAvx2) {  // its own kernels
        EXPECT_EQ(plan.gemm_path(), precision == Precision::kBf16   ? "avx2-fma"
                                    : precision == Precision::kFp16 ? "avx2-f16c"
                                                                    : "avx2");
      } else if (precision != Precision::kFp32 &&
                 (o.isa != Isa::kAvx512 || !lowp_simd_supported(precision))) {
        EXPECT_EQ(plan.gemm_path(), "portable");
      }
    }
  }
  const nova::testing::CliResult bad = nova::testing::run_cli("bench paths --isa avx1024");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("unknown kernel path"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace nova::conv
