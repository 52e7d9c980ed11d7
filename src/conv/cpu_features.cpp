// Run-time instruction-set detection (cpuid and the OS's saved register state: __builtin_cpu_supports,
// and cpu_supports for the features clang 14 cannot name), the size of the level-3 cache, and the names of
// the paths.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__clang__)
#include <cpuid.h>
#endif

#include "cpu_supports.hpp"
#include "nova/conv/conv.hpp"
#include "nova/error.hpp"
#include "plan_impl.hpp"

namespace nova::conv {

bool cpu_supports(CpuFeature feature) {
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__)
  switch (feature) {
    case CpuFeature::kF16c: return __builtin_cpu_supports("f16c");
    case CpuFeature::kAvx512Fp16: return __builtin_cpu_supports("avx512fp16");
    case CpuFeature::kAmxTile: return __builtin_cpu_supports("amx-tile");
    case CpuFeature::kAmxInt8: return __builtin_cpu_supports("amx-int8");
    case CpuFeature::kAmxBf16: return __builtin_cpu_supports("amx-bf16");
  }
  return false;
#elif defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 27)) == 0) return false;  // no OSXSAVE: no XCR0
  uint32_t xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const uint64_t xcr0 = (static_cast<uint64_t>(xcr0_hi) << 32) | xcr0_lo;
  const bool ymm_state = (xcr0 & 0x6) == 0x6;            // SSE, AVX
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;          // and opmask, ZMM0-15 upper halves, ZMM16-31
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;   // XTILECFG, XTILEDATA
  if (feature == CpuFeature::kF16c) return ymm_state && (c & (1u << 29)) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  switch (feature) {
    case CpuFeature::kAvx512Fp16: return zmm_state && (d & (1u << 23)) != 0;
    case CpuFeature::kAmxTile: return tile_state && (d & (1u << 24)) != 0;
    case CpuFeature::kAmxInt8: return tile_state && (d & (1u << 25)) != 0;
    case CpuFeature::kAmxBf16: return tile_state && (d & (1u << 22)) != 0;
    case CpuFeature::kF16c: break;
  }
  return false;
#else
  (void)feature;
  return false;
#endif
}

bool cpu_is_amd() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_is("amd");
#else
  return false;
#endif
}

namespace {

#if defined(__x86_64__) || defined(__i386__)
// The files under kernels/avx512 are compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl (the
// Skylake-SP set), so the compiler may use any of them there: the path needs all four. A CPU with
// AVX-512F alone (Knights Landing) takes the AVX2 path.
bool avx512_core_supported() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
#endif

}  // namespace

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return true;
#if defined(__x86_64__) || defined(__i386__)
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kAvx512:
      return avx512_core_supported();
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

bool lowp_simd_supported(Precision precision) {
#if defined(__x86_64__) || defined(__i386__)
  const bool avx512 = avx512_core_supported();
  switch (precision) {
    case Precision::kFp32: return true;
    case Precision::kBf16: return avx512 && __builtin_cpu_supports("avx512bf16");
    case Precision::kInt8:
    case Precision::kInt8Spatial: return avx512 && __builtin_cpu_supports("avx512vnni");
    case Precision::kFp16: return avx512;  // vcvtph2ps on zmm
  }
  return false;
#else
  return precision == Precision::kFp32;
#endif
}

bool fp16_arithmetic_supported() {
#if defined(__x86_64__) || defined(__i386__)
  // CPUID.(EAX=7,ECX=0):EDX[23] and the OS saving the AVX-512 state (XCR0), cpu_supports.hpp.
  return avx512_core_supported() && cpu_supports(CpuFeature::kAvx512Fp16);
#else
  return false;
#endif
}

std::string to_string(Fp16Arithmetic arithmetic) {
  switch (arithmetic) {
    case Fp16Arithmetic::kAuto: return "auto";
    case Fp16Arithmetic::kFp32: return "fp32";
    case Fp16Arithmetic::kFp16: return "fp16";
  }
  return "?";
}

Fp16Arithmetic parse_fp16_arithmetic(const std::string& text) {
  if (text == "auto") return Fp16Arithmetic::kAuto;
  if (text == "fp32") return Fp16Arithmetic::kFp32;
  if (text == "fp16") return Fp16Arithmetic::kFp16;
  throw Error("unknown fp16 arithmetic '" + text + "' (expected auto, fp32 or fp16)");
}

std::string to_string(Bf16Arithmetic arithmetic) {
  switch (arithmetic) {
    case Bf16Arithmetic::kAuto: return "auto";
    case Bf16Arithmetic::kFma: return "fma";
    case Bf16Arithmetic::kDot: return "dot";
  }
  return "?";
}

Bf16Arithmetic parse_bf16_arithmetic(const std::string& text) {
  if (text == "auto") return Bf16Arithmetic::kAuto;
  if (text == "fma") return Bf16Arithmetic::kFma;
  if (text == "dot") return Bf16Arithmetic::kDot;
  throw Error("unknown bf16 arithmetic '" + text + "' (expected auto, fma or dot)");
}

std::string to_string(LowpKernel kernel) {
  switch (kernel) {
    case LowpKernel::kAuto: return "auto";
    case LowpKernel::kPortable: return "portable";
    case LowpKernel::kSimd: return "simd";
    case LowpKernel::kAvx512: return "avx512";
    case LowpKernel::kAmx: return "amx";
  }
  return "?";
}

LowpKernel parse_lowp_kernel(const std::string& text) {
  for (LowpKernel k : {LowpKernel::kAuto, LowpKernel::kPortable, LowpKernel::kSimd, LowpKernel::kAvx512,
                       LowpKernel::kAmx})
    if (text == to_string(k)) return k;
  throw Error("unknown low-precision kernel '" + text + "' (expected auto, portable, simd, avx512 or amx)");
}

std::string lowp_simd_name(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return to_string(best_isa());
    case Precision::kBf16: return "avx512-bf16";
    case Precision::kInt8: return "avx512-vnni";
    case Precision::kInt8Spatial: return "avx512-vnni";
    case Precision::kFp16: return "avx512-f16c";
  }
  return "?";
}

std::string to_string(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8: return "int8";
    case Precision::kFp16: return "fp16";
    case Precision::kInt8Spatial: return "int8-spatial";
  }
  return "?";
}

Precision parse_precision(const std::string& given) {
  std::string text = given;  // FP32 or fp32, as layouts take NCHW or nchw
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "fp32") return Precision::kFp32;
  if (text == "bf16") return Precision::kBf16;
  if (text == "int8") return Precision::kInt8;
  if (text == "fp16") return Precision::kFp16;
  if (text == "int8-spatial") return Precision::kInt8Spatial;
  throw Error("unknown precision '" + given + "' (expected fp32, bf16, int8, fp16 or int8-spatial)");
}

std::string to_string(Layout layout) {
  switch (layout) {
    case Layout::kNCHW:
      return "nchw";
    case Layout::kNHWC:
      return "nhwc";
    case Layout::kNCHW16c:
      return "nchw16c";
  }
  return "?";
}

Layout parse_layout(const std::string& text) {
  if (text == "nchw" || text == "NCHW") return Layout::kNCHW;
  if (text == "nhwc" || text == "NHWC") return Layout::kNHWC;
  if (text == "nchw16c" || text == "NCHW16c" || text == "nChw16c") return Layout::kNCHW16c;
  throw Error("unknown layout '" + text + "' (expected nchw, nhwc or nchw16c)");
}

namespace {
// The element counts of a shape that validate() refuses were negative (N = -2: -128), or a division by
// zero (stride 0: SIGFPE in output_elements); a layout that is none of Layout's values was counted as NCHW.
void check_counted(const ConvShape& s, Layout layout) {
  s.validate();
  if (layout != Layout::kNCHW && layout != Layout::kNHWC && layout != Layout::kNCHW16c)
    throw Error("layout " + std::to_string(static_cast<int>(layout)) +
                " is none of Layout's values (0 nchw, 1 nhwc, 2 nchw16c)");
}
}  // namespace

int64_t input_elements(const ConvShape& s, Layout layout) {
  check_counted(s, layout);
  const int64_t channels = layout == Layout::kNCHW16c ? (s.C + 15) / 16 * 16 : s.C;
  return s.N * channels * s.H * s.W;
}

int64_t output_elements(const ConvShape& s, Layout layout) {
  check_counted(s, layout);
  const int64_t channels = layout == Layout::kNCHW16c ? (s.K + 15) / 16 * 16 : s.K;
  return s.N * channels * s.out_h() * s.out_w();
}

std::string to_string(Algorithm algorithm) { return algorithm == Algorithm::kWinograd ? "winograd" : "direct"; }

}  // namespace nova::conv
