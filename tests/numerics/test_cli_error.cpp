// `nova error` end to end: exit codes, messages, and a sanity property of its numbers.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cli_runner.hpp"
#include "nova/numerics/npy.hpp"

namespace nova {
namespace {

using testing::run_cli;

double rel_l2(const std::string& args) {
  const auto r = run_cli("error " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  return j["results"][0]["rel_l2"].get<double>();
}

TEST(CliError, JsonResultsAndTileOrdering) {
  const double e23 = rel_l2("--tile 2,3 --points \"0,±1,inf\" --precision fp16-storage --tiles 500 --channels 8");
  const double e43 = rel_l2("--tile 4,3 --points \"0,±1,±2,inf\" --precision fp16-storage --tiles 500 --channels 8");
  EXPECT_GT(e23, 0);
  EXPECT_GT(e43, e23);
  const auto r = run_cli("error --tile 4,3 --points \"0,±1,±2,inf\" --points \"0,±1/2,±2,inf\" --precision fp32,int8-tap "
                         "--tiles 100 --channels 4 --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["results"].size(), 4U);
  const auto d = run_cli("error --tile 4,3 --precision fp32 --direct --tiles 100 --channels 4 --format json");
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_EQ(nlohmann::json::parse(d.output)["results"][0]["algorithm"], "direct");
  EXPECT_EQ(j["tile"], "F(4,3)");
}

TEST(CliError, TextLayerAndNpyData) {
  auto r = run_cli("error --tile 4,3 --layer 1,3,10,9,2 --precision fp16-all --data relu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("fp16-all"), std::string::npos);
  EXPECT_NE(r.output.find("1x3x10x9->2"), std::string::npos);
  const std::string dir = testing::temp_dir();
  const std::vector<int64_t> shape = {1, 2, 7, 7};
  write_npy(dir + "/input.npy", shape, std::vector<double>(98, 0.5));
  r = run_cli("error --tile 2,3 --data " + dir + " --layer 1,2,7,7,3");
  EXPECT_EQ(r.status, 0) << r.output;
  r = run_cli("error --tile 2,3 --data " + dir + "/input.npy --format json");
  EXPECT_EQ(r.status, 0) << r.output;
}

// Options that the data or the transform file decide were ignored: --layer beyond its K, --weights with
// generated data, --tile beside a file, --tiles and --channels beside a layer.
TEST(CliError, OptionsTheDataOrFileFixMustAgree) {
  const std::string dir = testing::temp_dir();
  write_npy(dir + "/input.npy", std::vector<int64_t>{1, 2, 7, 7}, std::vector<double>(98, 0.5));
  write_npy(dir + "/w.npy", std::vector<int64_t>{3, 2, 3, 3}, std::vector<double>(54, 0.25));
  ASSERT_EQ(run_cli("transform --tile 2,3 --format json -o " + dir + "/f23.json").status, 0);
  const struct {
    std::string args, expect;
  } cases[] = {
      {"--tile 2,3 --data " + dir + "/input.npy --layer 2,8,20,20,16",
       "--layer 2,8,20,20,16 disagrees with the data: N,C,H,W,K = 1,2,7,7,16"},
      {"--tile 2,3 --data " + dir + "/input.npy --weights " + dir + "/w.npy --layer 1,2,7,7,4",
       "--layer 1,2,7,7,4 disagrees with the data: N,C,H,W,K = 1,2,7,7,3 from '" + dir + "/input.npy' and '" +
           dir + "/w.npy'"},
      {"--tile 2,3 --weights " + dir + "/w.npy", "--weights needs --data FILE.npy"},
      {dir + "/f23.json --tile 6,3", "--tile 6,3 disagrees with the tile of '" + dir + "/f23.json' (F(2,3))"},
      // --tiles and --channels shape tile data only; beside a layer they were ignored.
      {"--tile 2,3 --layer 1,2,8,8,2 --tiles 5",
       "--tiles applies to tile data; --layer gives a layer, whose shape fixes the tiles and channels"},
      {"--tile 2,3 --layer 1,2,8,8,2 --channels 64",
       "--channels applies to tile data; --layer gives a layer"},
      {"--tile 2,3 --data " + dir + "/input.npy --channels 2",
       "--channels applies to tile data; the --data file gives a layer"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli("error " + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("nova: error: " + c.expect), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_EQ(run_cli("error " + dir + "/f23.json --tile 2,3 --tiles 64").status, 0);
}

TEST(CliError, BadInputGivesOneLineErrorAndStatus2) {
  const std::string dir = testing::temp_dir();
  std::ofstream(dir + "/model.json") << "{\"input\": ";
  std::ofstream(dir + "/bad.npy") << "not an npy file";
  struct Case {
    std::string args, expect;
  } cases[] = {
      {"error --tile 4,3 --precision fp16-storagee", "unknown precision model"},
      {"error --tile 4,3 --precision " + dir + "/model.json", "not valid JSON"},
      {"error --tile 4,3 --data " + dir + "/bad.npy", "magic"},
      {"error --tile 4,3 --tiles 0", "at least 1"},
      {"error --tile 4,3 --data cauchy", "unknown data kind"},
      {"error --tile 4,3 --layer 1,2,3", "N,C,H,W,K"},
      {"error --tile 4,3 --points \"0,1,1,2,-2,inf\"", "uplicate"},
      {"error --points \"0,±1,inf\"", "--tile"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

// A transform that fails verification computes no convolution: its "error" would be a number about nothing.
TEST(CliError, RefusesAFileThatFailsVerification) {
  const std::string file = testing::write_unverified_transform(testing::temp_dir());
  ASSERT_FALSE(file.empty());
  const auto r = run_cli("error " + file);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nova: error: '" + file + "' fails exact verification"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
}

// `nova verify` refuses a file whose "float64" copy disagrees with its exact matrices; the commands that
// read a transform took it, using the exact matrices, and so handed the faulty file on as good.
TEST(CliError, EveryCommandRefusesWhatVerifyRefuses) {
  const std::string file = testing::temp_dir() + "/stale_float64.json";
  ASSERT_EQ(run_cli("transform --tile 2,3 --format json -o " + file).status, 0);
  nlohmann::json j;
  std::ifstream(file) >> j;
  ASSERT_TRUE(j["float64"]["AT"][0][0].is_number());
  j["float64"]["AT"][0][0] = 5.0;
  std::ofstream(file) << j.dump(1);
  const std::string reason = "fails verification (nova verify): \"float64\" AT[0][0] is 5.0, not 1.0";
  EXPECT_EQ(run_cli("verify " + file).status, 1);
  for (const std::string& cmd :
       {"error " + file, "analyze " + file, "bench conv --shape 1,2,6,6,2 --repeat 1 --transform " + file,
        "cuda conv --emulate --shape 1,2,6,6,2 --transform " + file}) {
    const auto r = run_cli(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("nova: error: '" + file + "' " + reason), std::string::npos) << cmd << "\n"
                                                                                         << r.output;
  }
  // The same file with its copy put right is read by all of them.
  j["float64"]["AT"][0][0] = 1.0;
  std::ofstream(file) << j.dump(1);
  EXPECT_EQ(run_cli("analyze " + file).status, 0);
}

TEST(CliError, ListsPresets) {
  const auto r = run_cli("error --list-precisions");
  ASSERT_EQ(r.status, 0);
  for (const char* p : {"fp16-storage", "int8-tap", "fp8-e4m3-storage", "seed-int8"}) EXPECT_NE(r.output.find(p), std::string::npos) << p;
}

}  // namespace
}  // namespace nova
