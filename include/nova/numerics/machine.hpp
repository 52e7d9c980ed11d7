// The machine behind measured figures, for the reports and benchmarks that print them.
#pragma once

#include <string>

namespace nova {

// "<CPU model from /proc/cpuinfo> (family <f> model <m>), <n> hardware threads" ("unknown CPU" where the
// model is not listed; the cpuid family and model where /proc/cpuinfo gives them).
std::string machine_description();

}  // namespace nova
