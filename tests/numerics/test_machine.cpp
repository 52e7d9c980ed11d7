// The machine line behind every benchmark figure names the CPU model, its cpuid family and model, and the
// thread count, read here from /proc/cpuinfo independently (a regular expression per line).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "nova/numerics/machine.hpp"

namespace nova {
namespace {

std::string first_match(const std::regex& re) {
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  std::smatch m;
  while (std::getline(cpu, line))
    if (std::regex_match(line, m, re)) return m[1].str();
  return {};
}

TEST(MachineDescription, NamesModelFamilyAndThreads) {
  const std::string d = machine_description();
  EXPECT_NE(d.find(std::to_string(std::thread::hardware_concurrency()) + " hardware threads"),
            std::string::npos)
      << d;
  const std::string name = first_match(std::regex(R"(model name\s*:\s*(.*\S)\s*)"));
  const std::string family = first_match(std::regex(R"(cpu family\s*:\s*(\S+)\s*)"));
  const std::string model = first_match(std::regex(R"(model\s*:\s*(\S+)\s*)"));
  if (name.empty()) {
    EXPECT_EQ(d.rfind("unknown CPU", 0), 0u) << d;
  } else {
    EXPECT_EQ(d.rfind(name, 0), 0u) << d;
  }
  if (family.empty() || model.empty()) GTEST_SKIP() << "/proc/cpuinfo gives no cpu family or model here";
  // "model" is its own key: "model name" must not be taken for it.
  EXPECT_NE(d.find("(family " + family + " model " + model + "), "), std::string::npos) << d;
}

}  // namespace
}  // namespace nova
