// Runs the built `nova` binary (NOVA_CLI_PATH) in a shell and captures stdout+stderr and the exit code.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

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

// A fresh temporary directory path for the test's files.
inline std::string temp_dir() {
  char tmpl[] = "/tmp/nova-test-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return dir ? std::string(dir) : std::string("/tmp");
}

// Writes dir/unverified.json: F(2,3)'s transform with BT[0][0] edited 1 -> 2, which fails exact
// verification; returns its path (empty when `nova transform` failed).
inline std::string write_unverified_transform(const std::string& dir) {
  const std::string file = dir + "/unverified.json";
  if (run_cli("transform --tile 2,3 --format json -o " + file).status != 0) return "";
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto pos = text.find("\"BT\": [\n    [\n      \"1\"");
  if (pos == std::string::npos) return "";
  text.replace(text.find("\"1\"", pos), 3, "\"2\"");
  std::ofstream(file) << text;
  return file;
}

}  // namespace nova::testing
