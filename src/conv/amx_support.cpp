// AMX for the int8 GEMM (docs/engine.md, "AMX"). The AMX kernel (kernels/amx/gemm_int8_amx.cpp) has
// never run on a machine of this project, so the engine trusts it only after this process has run it
// beside the VNNI kernel and found the same bits: int8 sums are exact, so any difference is a fault.
#include "amx_support.hpp"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "nova/conv/conv.hpp"

namespace nova::conv {

namespace {

// CPU bits and Linux's permission for the tile state.
bool amx_tile_permitted(std::string& reason) {
#if defined(__x86_64__) && defined(__linux__)
  if (!lowp_simd_supported(Precision::kInt8)) {
    reason = "no avx512-vnni path on this CPU";
    return false;
  }
  // GCC's cpu model checks CPUID.(EAX=7,ECX=0):EDX[24,25] and that XCR0 enables the tile state.
  if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-int8")) {
    reason = "no AMX-INT8 on this CPU";
    return false;
  }
  // Linux (5.16 and later) grants the 8 KiB of tile data per process, on request.
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    reason = "Linux refused the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM)";
    return false;
  }
  return true;
#else
  reason = "AMX is used on x86-64 Linux only";
  return false;
#endif
}

}  // namespace

bool int8_gemms_agree(Int8GemmFn candidate, Int8GemmFn reference, std::string* where) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> code(1, 255), weight(-127, 127), offset(-40000, 40000);
  std::uniform_real_distribution<float> sc(1e-6f, 1e-3f);
  for (const std::size_t kc : {std::size_t{64}, std::size_t{48}, std::size_t{192}, std::size_t{512}}) {
    for (int nv = 1; nv <= kMaxNV; ++nv) {
      const std::size_t w = static_cast<std::size_t>(16 * nv);
      const std::size_t lda = kc + 16;  // rows apart by more than kc, as the engine's blocks can be
      const std::size_t ldc = w + 16;
      for (const int64_t rows : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{32},
                                 int64_t{48}, int64_t{50}, int64_t{80}}) {
        std::vector<uint8_t> a(static_cast<std::size_t>(rows) * lda);
        std::vector<int8_t> b(kc * w);
        std::vector<int32_t> comp(w);
        std::vector<float> scale(w);
        for (auto& x : a) x = static_cast<uint8_t>(code(rng));
        for (auto& x : b) x = static_cast<int8_t>(weight(rng));
        for (auto& x : comp) x = offset(rng);
        for (auto& x : scale) x = sc(rng);
        std::vector<float> got(static_cast<std::size_t>(rows) * ldc, -1.0f), want(got);
        candidate(rows, nv, kc, a.data(), lda, b.data(), comp.data(), scale.data(), got.data(), ldc);
        reference(rows, nv, kc, a.data(), lda, b.data(), comp.data(), scale.data(), want.data(), ldc);
        if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0) {
          if (where)
            *where = "rows " + std::to_string(rows) + ", " + std::to_string(nv) + " column vector(s), " +
                     std::to_string(kc) + " channels";
          return false;
        }
      }
    }
  }
  return true;
}

bool amx_int8_supported(std::string* reason) {
  static std::once_flag once;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    if (!amx_tile_permitted(why)) return;
    std::string where;
    ok = int8_gemms_agree(int8_gemm_amx(), int8_gemm_avx512vnni(), &where);
    if (!ok) why = "the AMX int8 kernel differed from the VNNI kernel (" + where + "); not used";
  });
  if (reason) *reason = why;
  return ok;
}

}  // namespace nova::conv
