// Runs the built `nova` binary (NOVA_CLI_PATH) in a shell and captures stdout+stderr and the exit code.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nova::testing {

struct CliResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

inline CliResult run_cli(const std::string& args) {
  const std::string command = std::string(NOVA_CLI_PATH) + " " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t got;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), got);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return result;
}

// The directories temp_dir() made in this test program, removed with everything in them when it exits
// normally (a crash leaves them for a look, as does NOVA_KEEP_TEST_FILES=1). Each is removed by the
// process that made it: a forked child that exits removes its own, never its parent's.
class TempDirRegistry {
 public:
  void add(std::string dir) { dirs_.push_back({getpid(), std::move(dir)}); }
  TempDirRegistry() = default;
  TempDirRegistry(const TempDirRegistry&) = delete;
  TempDirRegistry& operator=(const TempDirRegistry&) = delete;
  ~TempDirRegistry() {
    if (std::getenv("NOVA_KEEP_TEST_FILES") != nullptr) return;
    for (const auto& [maker, dir] : dirs_) {
      if (maker != getpid()) continue;
      std::error_code ignored;  // one a test removed already: nothing to report at exit
      std::filesystem::remove_all(dir, ignored);
    }
  }

 private:
  std::vector<std::pair<pid_t, std::string>> dirs_;
};

inline TempDirRegistry& temp_dir_registry() {
  static TempDirRegistry registry;
  return registry;
}

// A fresh directory for the test's files, under $TMPDIR (or /tmp); removed when the program exits.
inline std::string temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string path = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/nova-test-XXXXXX";
  if (mkdtemp(path.data()) == nullptr)
    throw std::runtime_error("cannot make a temporary directory " + path + ": " + std::strerror(errno));
  temp_dir_registry().add(path);
  return path;
}

// The whole of a text file ("" when it cannot be read).
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Writes dir/unverified.json: F(2,3)'s transform with BT[0][0] edited 1 -> 2, which fails exact
// verification; returns its path (empty when `nova transform` failed).
inline std::string write_unverified_transform(const std::string& dir) {
  const std::string file = dir + "/unverified.json";
  if (run_cli("transform --tile 2,3 --format json -o " + file).status != 0) return "";
  std::string text = read_text_file(file);
  const auto pos = text.find("\"BT\": [\n    [\n      \"1\"");
  if (pos == std::string::npos) return "";
  text.replace(text.find("\"1\"", pos), 3, "\"2\"");
  std::ofstream(file) << text;
  return file;
}

}  // namespace nova::testing
