// The machine behind measured figures, for the reports and benchmarks that print them.
#pragma once

#include <string>

namespace nova {

// "<CPU model from /proc/cpuinfo>, <n> hardware threads" ("unknown CPU" where the model is not listed).
std::string machine_description();

}  // namespace nova
