#include "nova/numerics/machine.hpp"

#include <fmt/format.h>

#include <fstream>
#include <thread>

namespace nova {

namespace {

// The value of the first "<key> : value" line of /proc/cpuinfo whose key is exactly `key` ("model" must
// not match "model name"), or "" where there is none.
std::string cpuinfo_value(const std::string& key) {
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.rfind(key, 0) != 0) continue;
    if (line.find_first_not_of(" \t", key.size()) != colon) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return {};
}

}  // namespace

std::string machine_description() {
  std::string model = cpuinfo_value("model name");
  if (model.empty()) model = "unknown CPU";
  // A VM's model name can stand for several hosts ("AMD EPYC" under KVM has run on hosts with twice the
  // vector rate of others): the cpuid family and model tell more of them apart.
  const std::string family = cpuinfo_value("cpu family"), number = cpuinfo_value("model");
  if (!family.empty() && !number.empty()) model += fmt::format(" (family {} model {})", family, number);
  return fmt::format("{}, {} hardware threads", model, std::thread::hardware_concurrency());
}

}  // namespace nova
