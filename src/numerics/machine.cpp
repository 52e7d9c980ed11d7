#include "nova/numerics/machine.hpp"

#include <fmt/format.h>

#include <fstream>
#include <thread>

namespace nova {

std::string machine_description() {
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpu, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 1);
      model.erase(0, model.find_first_not_of(" \t"));
      break;
    }
  return fmt::format("{}, {} hardware threads", model, std::thread::hardware_concurrency());
}

}  // namespace nova
