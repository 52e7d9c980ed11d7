// __builtin_cpu_supports for the features whose names clang 14 does not know (f16c, avx512fp16 and the
// AMX ones): GCC's builtin itself under GCC (its cpu model reads cpuid and checks that the OS saves the
// registers the feature needs), and under clang the same two checks read here. The other features keep
// the builtin, which both compilers name.
#pragma once

namespace nova::conv {

enum class CpuFeature { kF16c, kAvx512Fp16, kAmxTile, kAmxInt8, kAmxBf16 };

// False on CPUs other than x86.
bool cpu_supports(CpuFeature feature);

// Whether the CPU is AMD's (cpuid's vendor "AuthenticAMD"): the cost model's cache rules follow the
// machines they were measured on (algorithm_choice.hpp, MemoryRules).
bool cpu_is_amd();

}  // namespace nova::conv
