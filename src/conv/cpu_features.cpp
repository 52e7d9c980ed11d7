// Run-time instruction-set detection (cpuid and the OS's saved register state, through GCC/Clang's
// __builtin_cpu_supports), and the names of the paths.
#include "nova/conv/conv.hpp"
#include "nova/error.hpp"

namespace nova::conv {

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return true;
#if defined(__x86_64__) || defined(__i386__)
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f");
#else
    case Isa::kAvx2:
    case Isa::kAvx512:
      return false;
#endif
  }
  return false;
}

Isa best_isa() {
  if (isa_supported(Isa::kAvx512)) return Isa::kAvx512;
  if (isa_supported(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kPortable;
}

std::string to_string(Isa isa) {
  switch (isa) {
    case Isa::kPortable: return "portable";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

Isa parse_isa(const std::string& text) {
  if (text == "portable") return Isa::kPortable;
  if (text == "avx2") return Isa::kAvx2;
  if (text == "avx512") return Isa::kAvx512;
  throw Error("unknown kernel path '" + text + "' (expected portable, avx2 or avx512)");
}

std::string to_string(Layout layout) { return layout == Layout::kNCHW ? "nchw" : "nhwc"; }

Layout parse_layout(const std::string& text) {
  if (text == "nchw" || text == "NCHW") return Layout::kNCHW;
  if (text == "nhwc" || text == "NHWC") return Layout::kNHWC;
  throw Error("unknown layout '" + text + "' (expected nchw or nhwc)");
}

std::string to_string(Algorithm algorithm) { return algorithm == Algorithm::kWinograd ? "winograd" : "direct"; }

}  // namespace nova::conv
