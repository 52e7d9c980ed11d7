#include "nova/numerics/machine.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <thread>

namespace nova {

std::string machine_description() {
  // One pass over /proc/cpuinfo for the first value of each key; a key must be whole ("model" is not
  // "model name").
  constexpr std::array<const char*, 3> kKeys = {"model name", "cpu family", "model"};
  std::array<std::string, 3> values;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    for (std::size_t k = 0; k < kKeys.size(); ++k)
      if (values[k].empty() && key == kKeys[k]) {
        values[k] = line.substr(colon + 1);
        values[k].erase(0, values[k].find_first_not_of(" \t"));
      }
    if (!values[0].empty() && !values[1].empty() && !values[2].empty()) break;
  }
  std::string model = values[0].empty() ? "unknown CPU" : values[0];
  // A VM's model name can stand for several hosts ("AMD EPYC" under KVM has run on hosts with twice the
  // vector rate of others): the cpuid family and model tell more of them apart.
  if (!values[1].empty() && !values[2].empty())
    model += fmt::format(" (family {} model {})", values[1], values[2]);
  return fmt::format("{}, {} hardware threads", model, std::thread::hardware_concurrency());
}

}  // namespace nova
