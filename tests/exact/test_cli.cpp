// The CLI's contract: one-line errors and non-zero exits for bad input; files that round-trip.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

using testing::run_cli;

void expect_error(const std::string& args, const std::string& message_part) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find("nova: error: "), std::string::npos) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message_part), std::string::npos) << args << "\n" << r.output;
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "not one line: " << r.output;
}

// --balance-rows: each B^T row's L1 norm in [2, 4), by powers of two against the plain transform's rows,
// A^T's columns by the inverse, G unchanged, and the file verifies exactly.
TEST(Cli, TransformBalanceRowsIsExactAndPutsRowNormsInTwoToFour) {
  for (const std::string tile : {"4,3", "6,3", "8,3", "4,5"}) {
    const auto plain_run = run_cli("transform --format json --tile " + tile);
    const auto balanced_run = run_cli("transform --format json --balance-rows --tile " + tile);
    ASSERT_EQ(balanced_run.status, 0) << balanced_run.output;
    const Transform plain = transform_from_json(nlohmann::json::parse(plain_run.output));
    const Transform balanced = transform_from_json(nlohmann::json::parse(balanced_run.output));
    EXPECT_TRUE(verify(balanced)) << tile;
    EXPECT_EQ(balanced.G(), plain.G()) << tile;
    for (std::size_t p = 0; p < balanced.BT().rows(); ++p) {
      Rational norm(0), ratio(0);
      for (std::size_t j = 0; j < balanced.BT().cols(); ++j) {
        norm += abs(balanced.BT()(p, j));
        if (plain.BT()(p, j) != 0) ratio = balanced.BT()(p, j) / plain.BT()(p, j);
      }
      EXPECT_GE(norm, Rational(2)) << tile << " row " << p;
      EXPECT_LT(norm, Rational(4)) << tile << " row " << p;
      const mpz_class num = ratio.get_num(), den = ratio.get_den();  // a power of two, either way up
      EXPECT_TRUE((num == 1 && (den & (den - 1)) == 0) || (den == 1 && (num & (num - 1)) == 0))
          << tile << " row " << p << ": " << ratio.get_str();
      for (std::size_t i = 0; i < balanced.AT().rows(); ++i)
        EXPECT_EQ(balanced.AT()(i, p) * ratio, plain.AT()(i, p)) << tile;
    }
  }
}

TEST(Cli, TransformBadInput) {
  expect_error("transform --tile 4,3 --points '0,0.5,1/2,1,-1,inf'", "duplicate point 1/2");
  expect_error("transform --tile 4,3 --points '0,1,-1,2,inf,inf'", "two infinities");
  expect_error("transform --tile 6,3 --points '0,1,-1,inf'", "needs n = m+r-1 = 8 points");
  expect_error("transform --tile 2,3 --points '0,1/0,-1,inf'", "zero denominator");
  expect_error("transform --tile 2,3 --points '0,one,-1,inf'", "bad point 'one'");
  expect_error("transform --tile 0,3", "at least 1");
  expect_error("transform --tile 3,0", "at least 1");
  expect_error("transform --tile 30,5", "beyond nova's limit of 32");
  expect_error("transform --tile banana", "cannot parse tile");
  expect_error("transform --tile 2,3 --format yaml", "unknown --format");
  expect_error("transform --tile 2,3 --scaling d1=1,2", "4 Winograd positions");
  // A diagonal given twice: the last one silently won (D1 = 2,2,2,2, D2 = 1).
  expect_error("transform --tile 2,3 --scaling 'd1=1,1,1,1;D1=2,2,2,2'", "gives D1 twice");
  expect_error("transform --tile 2,3 --scaling 'd2=1,1,1,1;d2=2,2,2,2'", "gives D2 twice");
  expect_error("transform --tile 2,3 -o /nonexistent/dir/x.json", "cannot write '/nonexistent/dir/x.json'");
  expect_error("transform --tile 2,3 --points ''", "--points: the value is empty");
  expect_error("transform --tile 2,3 --points ' , '", "empty entry in point list ' , '");
  expect_error("analyze --tile 2,3 --points ''", "--points: the value is empty");
  for (const char* name : {"a-b", "1abc", "namespace", "and"})
    expect_error(std::string("transform --tile 2,3 --format cpp --name ") + name,
                 std::string("--name '") + name + "' is not a C++ identifier");
  // 1e40 is beyond float's range: the header's float arrays would hold `inff`, which does not compile; 1e-50
  // (met first) below it, a nonzero entry written as 0.
  expect_error(
      "transform --tile 4,3 --points '0,±1e-50,±1e40,inf' --format cpp",
      "cannot write a C++ header: AT_f32[1][1] = 1/1000000000... (53 characters) is beyond float's range");
  expect_error(
      "transform --tile 2,3 --points '0,1,-1,1e40' --format cpp",
      "cannot write a C++ header: AT_f32[1][3] = 100000000000... (41 characters) is beyond float's range");
  // Options that would be ignored: --no-infinity beside --points, --scaling beside a file.
  expect_error("transform --tile 2,3 --points '0,1,-1,2' --no-infinity",
               "--no-infinity is for the default points");
  const std::string file = testing::temp_dir() + "/scaled.json";
  ASSERT_EQ(run_cli("transform --tile 2,3 --format json -o " + file).status, 0);
  expect_error("analyze " + file + " --scaling lagrange", "give either FILE or --tile/--points/--scaling");
  expect_error("error " + file + " --scaling lagrange --tiles 16", "--scaling applies to --points");
  EXPECT_EQ(
      run_cli("error " + file + " --tile 2,3 --points '0,1,-1,inf' --scaling lagrange --tiles 16").status, 0);
}

// JSON has no inf: entries beyond double's range are null in the "float64" arrays, and a warning says so;
// the exact matrices (the file's point) are complete and verify.
TEST(Cli, TransformJsonWarnsOfNullFloat64Entries) {
  const std::string file = testing::temp_dir() + "/big.json";
  auto r = run_cli("transform --tile 4,3 --points '0,±1e400,±1,inf' --format json -o " + file);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("nova: warning: some entries are beyond float64's range"), std::string::npos)
      << r.output;
  EXPECT_EQ(run_cli("verify " + file).status, 0);
  r = run_cli("transform --tile 4,3 --format json");
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
}

TEST(Cli, TransformWritesFilesThatVerify) {
  const std::string dir = testing::temp_dir();
  for (const char* tile : {"F(6,3)", "8,3", "4,5"}) {
    const std::string file = dir + "/t.json";
    auto r = run_cli(std::string("transform --tile '") + tile + "' --format json -o " + file);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_cli("verify " + file);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("OK"), std::string::npos);
  }
  auto r = run_cli("transform --tile 6,3 --points '0,±1,±2,±1/2,inf' --format cpp");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("#pragma once"), std::string::npos);
  r = run_cli("transform --tile 2,3 --no-infinity");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("points: 0, 1, -1, 2"), std::string::npos) << r.output;
}

TEST(Cli, VerifyReportsWrongMatricesWithExitOne) {
  const std::string dir = testing::temp_dir();
  const std::string file = dir + "/edited.json";
  ASSERT_EQ(run_cli("transform --tile 2,3 --format json -o " + file).status, 0);
  // Edit one entry by hand: BT[0][0] 1 -> 2.
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto pos = text.find("\"BT\": [\n    [\n      \"1\"");
  ASSERT_NE(pos, std::string::npos) << text;
  text.replace(text.find("\"1\"", pos), 3, "\"2\"");
  std::ofstream(file) << text;
  const auto r = run_cli("verify " + file);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED"), std::string::npos);
  EXPECT_NE(r.output.find("input j=0"), std::string::npos) << r.output;
}

// The derived keys are what a consumer without rationals reads: a file whose "float64" arrays (or "tile")
// contradict its exact matrices is wrong, though the matrices verify (it printed OK, exit 0).
TEST(Cli, VerifyChecksTheDerivedFloat64ArraysAndTile) {
  const std::string file = testing::temp_dir() + "/derived.json";
  ASSERT_EQ(run_cli("transform --tile 2,3 --format json -o " + file).status, 0);
  nlohmann::json good;
  std::ifstream(file) >> good;
  ASSERT_EQ(good["G"][1][0], "1/2");
  auto check = [&](const nlohmann::json& j, int status, const std::string& message) {
    std::ofstream(file) << j.dump(2);
    const auto r = run_cli("verify " + file);
    EXPECT_EQ(r.status, status) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  };
  check(good, 0, "OK");
  nlohmann::json j = good;
  j["float64"]["G"][1][0] = 0.7;  // the exact 1/2 is 0.5
  check(j, 1, "\"float64\" G[1][0] is 0.7, not 0.5, the nearest double to the exact 1/2");
  j = good;
  j["float64"]["BT"][3].erase(0);
  check(j, 1, "\"float64\" BT is not 4x4");
  j = good;
  j["tile"] = "F(3,2)";
  check(j, 1, "\"tile\" is \"F(3,2)\" but m, r make it F(2,3)");
  j = good;
  j["float64"]["AT"][0][0] = 1;  // an integer is the same double
  j.erase("tile");
  check(j, 0, "OK");
}

TEST(Cli, VerifyBadFiles) {
  const std::string dir = testing::temp_dir();
  std::ofstream(dir + "/missing.json") << R"({"m": 2, "r": 3, "AT": [[1,1,1,0],[0,1,-1,1]]})";
  expect_error("verify " + dir + "/missing.json", "no \"G\" key");
  std::ofstream(dir + "/garbage.json") << "not json at all";
  expect_error("verify " + dir + "/garbage.json", "not valid JSON");
  const auto r = run_cli("verify /nonexistent.json");
  EXPECT_NE(r.status, 0);
}

// Every file is reported, whatever comes before it (the first unreadable one stopped the run and nothing
// was printed); the status is the worst: 2 for an unreadable file, else 1 for a wrong transform.
TEST(Cli, VerifyReportsEveryFile) {
  const std::string dir = testing::temp_dir();
  ASSERT_EQ(run_cli("transform --tile 2,3 --format json -o " + dir + "/good.json").status, 0);
  const std::string wrong = testing::write_unverified_transform(dir);
  ASSERT_FALSE(wrong.empty());
  auto r = run_cli("verify " + dir + "/good.json " + wrong);
  EXPECT_EQ(r.status, 1) << r.output;
  r = run_cli("verify " + dir + "/missing.json " + dir + "/good.json " + wrong + " " + dir);
  EXPECT_EQ(r.status, 2) << r.output;
  for (const std::string& line :
       {"nova: error: cannot read '" + dir + "/missing.json': No such file or directory",
        dir + "/good.json: OK", wrong + ": FAILED: 1D identity fails",
        "nova: error: cannot read '" + dir + "': it is a directory"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  r = run_cli("verify --format json " + dir + "/good.json " + dir + "/missing.json");
  EXPECT_EQ(r.status, 2) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('[')));  // after the stderr line
  ASSERT_EQ(j.size(), 2u);
  EXPECT_TRUE(j[0]["verified"].get<bool>());
  EXPECT_NE(j[1]["error"].get<std::string>().find("cannot read"), std::string::npos);
  // A file name that is not UTF-8: the JSON writer threw (an internal error, exit 4, the report lost); the
  // byte is replaced by U+FFFD.
  r = run_cli("verify --format json " + dir + "/good.json \"$(printf '" + dir + "/g\\377.json')\"");
  EXPECT_EQ(r.status, 2) << r.output;
  const auto k = nlohmann::json::parse(r.output.substr(r.output.find('[')));
  ASSERT_EQ(k.size(), 2u) << r.output;
  EXPECT_NE(k[1]["file"].get<std::string>().find("g\xEF\xBF\xBD.json"), std::string::npos) << r.output;
}

TEST(Cli, DirectoryAndFullStdoutAreErrors) {
  // The JSON reader said "unexpected end of input" for a directory.
  expect_error("analyze /tmp", "cannot read '/tmp': it is a directory");
  if (std::ifstream("/dev/full").good()) {
    EXPECT_EQ(run_cli("transform --tile 2,3 >/dev/full").status, 2);
    EXPECT_EQ(run_cli("--help >/dev/full").status, 2);
  }
}

TEST(Cli, UnknownCommandIsNamed) {
  expect_error("export --tile 4,3", "unknown command 'export' (commands: report, transform");
  expect_error("trnasform --tile 4,3", "unknown command 'trnasform'");
}

// CLI11's own parse errors follow nova's convention too (it exits 105-114 with a second line).
TEST(Cli, ParseErrorsExitTwoOnOneLine) {
  expect_error("transform -t 2,3 -t 2,3", "--tile is given 2 times; it takes one value");
  expect_error("transform -t 2,3 --bogus", "--bogus");
  expect_error("transform", "--tile is required");
  expect_error("verify /tmp", "directory");
  expect_error("bench", "nova bench needs a command: conv, paths (nova bench --help says what each does)");
  expect_error("catalogue", "nova catalogue needs a command: list, show, export, search");
  expect_error("", "nova needs a command: report, transform");
  expect_error("bench conv --shape 1,2,3,4,5 --repeat x", "--repeat");
  // An option another command has: CLI11 checked the positional files first and blamed a file named 2.
  expect_error("error -t 2,3 --threads 2", "not expected: --threads");
  expect_error("error /nonexistent/t.json", "cannot read '/nonexistent/t.json': No such file or directory");
  EXPECT_EQ(run_cli("--version").status, 0);
  EXPECT_EQ(run_cli("bench conv --help").status, 0);
}

// Every command that takes --seed; catalogue generate's output goes to a file of the test's own.
std::vector<std::string> commands_taking_a_seed() {
  return {"error --tile 2,3",
          "discover --tile 2,3",
          "report",
          "catalogue search --tile 2,3 -p fp32",
          "catalogue generate -o " + testing::temp_dir() + "/unused.json",
          "catalogue correlation"};
}

// A negative seed was read into the unsigned seed as 2^64 - 1 and the run went on with it.
TEST(Cli, NegativeSeedsAreRefusedByEveryCommand) {
  for (const std::string& cmd : commands_taking_a_seed())
    expect_error(cmd + " --seed -1", "--seed: must be 0 or more, got -1");
}

// A seed beyond 2^64 - 1 was read (strtoull saturates) as 2^64 - 1 and the run went on with it.
TEST(Cli, SeedsBeyondTheUnsignedRangeAreRefusedByEveryCommand) {
  for (const std::string& cmd : commands_taking_a_seed())
    expect_error(cmd + " --seed 18446744073709551616",
                 "--seed: must be at most 18446744073709551615, got 18446744073709551616");
  // The largest seed itself is accepted.
  EXPECT_EQ(run_cli("error --tile 2,3 --tiles 2 --channels 1 --seed 18446744073709551615").status, 0);
}

// CLI11 reads integers with base 0: "--seed 010" ran with seed 8, "--tiles 0x10" measured 16 tiles.
TEST(Cli, IntegersAreDecimal) {
  auto r = run_cli("error -t 2,3 --seed 010 --tiles 0016 --channels 2 -f json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["data"]["source"], "gaussian seed 10") << r.output;
  EXPECT_EQ(j["data"]["tiles"], 16) << r.output;
  expect_error("error -t 2,3 --seed 0x10", "--seed: must be a decimal integer, got 0x10");
  expect_error("error -t 2,3 --tiles 0X10", "--tiles: must be a decimal integer, got 0X10");
  expect_error("error -t 2,3 --seed -010", "--seed: must be 0 or more, got -10");
}

// An unwritable --output is refused before the work (catalogue generate searched for minutes first), and
// the check leaves no empty file behind when the command then fails.
// temp_dir()'s directories go at a normal exit, each removed by the process that made it: a forked
// child's exit removes the child's own and leaves its parent's.
TEST(TestFiles, TemporaryDirectoriesGoAtExitWithTheProcessThatMadeThem) {
  const std::string parents = testing::temp_dir();
  std::ofstream(parents + "/kept.txt") << "parent";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::fflush(nullptr);  // the child's exit flushes its copy of stdio's buffers
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    const std::string childs = testing::temp_dir();
    std::ofstream(childs + "/made.txt") << "child";
    const bool sent = write(fds[1], childs.data(), childs.size()) == static_cast<ssize_t>(childs.size());
    close(fds[1]);
    std::exit(sent ? 0 : 1);  // a normal exit: static destructors run
  }
  close(fds[1]);
  std::string childs(4096, '\0');
  const ssize_t got = read(fds[0], childs.data(), childs.size());
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_GT(got, 0);
  childs.resize(static_cast<std::size_t>(got));
  EXPECT_FALSE(std::filesystem::exists(childs)) << childs << " outlived the child that made it";
  EXPECT_TRUE(std::filesystem::exists(parents + "/kept.txt")) << "the child's exit removed " << parents;
}

TEST(Cli, UnwritableOutputIsRefusedBeforeTheWork) {
  expect_error("catalogue generate -o /nonexistent/d/g.json",
               "--output: cannot write '/nonexistent/d/g.json'");
  expect_error("discover --tile 8,3 -o /nonexistent/d.json", "--output: cannot write '/nonexistent/d.json'");
  expect_error("error --tile 2,3 -o /tmp", "--output: cannot write '/tmp': Is a directory");
  const std::string file = testing::temp_dir() + "/never.json";
  expect_error("transform --tile 2,3 --points '0,1,1,inf' -o " + file, "duplicate point");
  EXPECT_FALSE(std::ifstream(file).good()) << file << " was left behind";
  // A FIFO with a reader waiting: the check must not open it. Opening and closing it ended the reader's
  // stream where the reader saw that end before the real write opened the FIFO, which then blocked for ever
  // (a race: a probe hung; this run of it may not). The reader gets the whole transform.
  const std::string fifo = testing::temp_dir() + "/out.fifo", got = testing::temp_dir() + "/from_fifo.txt";
  ASSERT_EQ(std::system(("rm -f " + fifo + " && mkfifo " + fifo).c_str()), 0);
  const int status =
      std::system(("(cat " + fifo + " > " + got + " &) ; sleep 0.3; timeout 20 " + NOVA_CLI_PATH +
                   " transform --tile 2,3 -o " + fifo + "; s=$?; sleep 0.2; exit $s")
                      .c_str());
  EXPECT_EQ(status, 0) << "nova blocked writing to a FIFO";
  std::ifstream in(got);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("F(2,3)"), std::string::npos) << text;
}

// Runs checking the same new -o path at once all pass the check: each creates the file exclusively and
// removes it, and one that found it missing and then could not create it ("File exists": another run's
// file of the moment) refused a writable path. That made two CLI tests sharing a path fail now and then
// under ctest -j2; 64 concurrent runs had 3 such refusals here (session 38).
TEST(Cli, ConcurrentRunsCheckingOneOutputPathAllPassTheCheck) {
  const std::string dir = testing::temp_dir(), out = dir + "/shared.json";
  for (int round = 0; round < 4; ++round) {
    const std::string script = "cd " + dir + " && for i in $(seq 64); do " + NOVA_CLI_PATH +
                               " catalogue generate -o " + out + " --seed -1 > run$i.txt 2>&1 & done; wait";
    ASSERT_EQ(std::system(script.c_str()), 0);
    for (int i = 1; i <= 64; ++i) {
      std::ifstream in(dir + "/run" + std::to_string(i) + ".txt");
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      EXPECT_NE(text.find("--seed: must be 0 or more, got -1"), std::string::npos)
          << "round " << round << ", run " << i << ": " << text;
    }
  }
  EXPECT_FALSE(std::ifstream(out).good()) << out << " was left behind";
}

// -o on a symbolic link whose target does not exist yet writes the target (as the shell's > does); the
// check refused it with "File exists", and must remove the target it tried, not the link.
TEST(Cli, OutputThroughADanglingLinkWritesItsTarget) {
  const std::string link = testing::temp_dir() + "/dangling.json",
                    target = testing::temp_dir() + "/target.json";
  ASSERT_EQ(std::system(("rm -f " + link + " " + target + " && ln -s " + target + " " + link).c_str()), 0);
  const auto r = run_cli("transform --tile 2,3 --format json -o " + link);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(run_cli("verify " + target).status == 0) << target << " is not the transform";
  // A failing command leaves neither a target nor a changed link behind.
  ASSERT_EQ(std::system(("rm -f " + target).c_str()), 0);
  expect_error("transform --tile 2,3 --points '0,1,1,inf' -o " + link, "duplicate point");
  EXPECT_FALSE(std::ifstream(target).good()) << target << " was left behind";
  EXPECT_EQ(std::system(("test -L " + link).c_str()), 0) << "the link was removed";
  // A link into a directory that does not exist is still refused, naming the link.
  const std::string into_nowhere = testing::temp_dir() + "/into_nowhere.json";
  ASSERT_EQ(
      std::system(("rm -f " + into_nowhere + " && ln -s /nonexistent/dir/t.json " + into_nowhere).c_str()),
      0);
  expect_error("transform --tile 2,3 -o " + into_nowhere,
               "--output: cannot write '" + into_nowhere + "': No such file or directory");
}

TEST(Cli, HelpListsCommands) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("transform"), std::string::npos);
  EXPECT_NE(r.output.find("verify"), std::string::npos);
  r = run_cli("transform --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("--points"), std::string::npos);
}

// An empty value meant the option's default, silently: `-o ''` wrote to stdout, `--catalogue ''` read the
// shipped catalogue, `--layer ''` measured tile data. Every option that takes a value refuses one.
TEST(Cli, EmptyOptionValuesAreRefused) {
  const std::string empty = "the value is empty (leave the option out for its default)";
  expect_error("transform -t 2,3 -o ''", "--output: " + empty);
  expect_error("transform -t 2,3 -f cpp --name ''", "--name: " + empty);
  expect_error("catalogue list --catalogue ''", "--catalogue: " + empty);
  expect_error("error -t 2,3 --layer ''", "--layer: " + empty);
  expect_error("bench conv --shape 1,4,8,8,4 --repeat 1 --isa ''", "--isa: " + empty);
  expect_error("catalogue correlation --around ' '", "--around: " + empty);
  expect_error("verify ''", empty);
  // A value that is there is taken as before.
  EXPECT_EQ(run_cli("transform -t 2,3 --name F23").status, 0);
}

// A word that names no subcommand of `catalogue`, `bench` or `cuda` was reported as a missing command.
TEST(Cli, UnknownSubcommandsAreNamed) {
  expect_error("catalogue nosuch", "unknown command 'nosuch' for nova catalogue (commands: list, show,");
  expect_error("bench nosuch", "unknown command 'nosuch' for nova bench (commands: conv, paths;");
  expect_error("cuda nosuch", "unknown command 'nosuch' for nova cuda (commands: ");
  expect_error("catalogue", "nova catalogue needs a command: list, show,");
}

// A list naming an item twice ran it twice (`error`: two identical rows) or, for catalogue generate, wrote
// a catalogue that nova itself then refused ("entry 1 (F(2,3) fp32) appears twice").
TEST(Cli, ListsNamingAnItemTwiceAreRefused) {
  const std::string out = testing::temp_dir() + "/twice.json";
  expect_error("error -t 2,3 --tiles 4 --channels 1 --precision fp16-storage,fp32,fp16-storage",
               "--precision lists 'fp16-storage' twice");
  expect_error("discover -t 2,3 --objective kappa-v:1,norm-product:0.5,kappa-v:2",
               "objective 'kappa-v' appears twice in 'kappa-v:1,norm-product:0.5,kappa-v:2'");
  expect_error("catalogue generate -o " + out + " --tiles '2,3;2,3' --presets fp32",
               "--tiles lists '2,3' twice");
  // Two spellings of one tile: the library's check (nova::generate_catalogue).
  expect_error("catalogue generate -o " + out + " --tiles '2,3;F(2,3)' --presets fp32",
               "catalogue generate: tile F(2,3) is listed twice");
  expect_error("catalogue generate -o " + out + " --tiles 2,3 --presets fp32,fp32",
               "--presets lists 'fp32' twice");
  expect_error("catalogue correlation --presets fp32,fp32 --count 4", "--presets lists 'fp32' twice");
  EXPECT_FALSE(std::filesystem::exists(out));
  // -p and --presets together: -p was dropped without a word.
  expect_error("catalogue correlation -p fp32 --presets fp16-storage --count 4",
               "give --precision or --presets, not both");
}

// The training sizes of the commands that measure error, named as the options are; --budget's message
// no longer contradicts the library's about 0.
TEST(Cli, SizesAndBudgetsNameTheirOption) {
  const std::string out = testing::temp_dir() + "/unused.json";
  expect_error("catalogue generate -o " + out + " --tiles 2,3 --presets fp32 --train-tiles 0",
               "--train-tiles and --train-channels must be positive, got 0 and 16");
  expect_error("catalogue correlation --count 4 --train-channels -1",
               "--train-tiles and --train-channels must be positive, got 256 and -1");
  expect_error("discover -t 2,3 --budget 0", "--budget must be a finite number of seconds > 0, got 0");
  expect_error("discover -t 2,3 --budget inf", "--budget must be a finite number of seconds > 0, got inf");
  expect_error("cuda conv --emulate --shape 1,2,6,6,2 --device -5", "--device");
}

// Shapes whose FP32 tensors cannot fit were tried: minutes of allocation and paging, or a bare "out of
// memory". 2^39 input values (2 TiB) are refused at once on any machine this runs on.
TEST(Cli, LayersBeyondTheMachinesMemoryAreRefusedWithTheirSize) {
  expect_error("bench conv --shape 1,8192,8192,8192,1 --repeat 1",
               "the layer's FP32 tensors need 2.05e+03 GiB (input 2.05e+03, output 0.25, weights 0.000275)");
  expect_error("cuda conv --emulate --shape 1,8192,8192,8192,1",
               "the layer's FP32 tensors need 2.05e+03 GiB");
}

}  // namespace
}  // namespace nova
