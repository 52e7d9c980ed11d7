// One value of the int8 GEMM's V operand (lowp_kernels.hpp, "int8"), and the running max |V| of the
// per-call scales, in scalar code: the portable conversion pass and the portable in-register form of the
// input transform (the AVX2 and AVX-512 forms are their vector types' own). In an anonymous namespace, as the
// vector types are, so that a copy compiled with one ISA's flags is never picked by the linker for another
// path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// code = RNE(clamp(x * inv, -127, 127)) + 128; NaN/Inf give 128 and set nonfinite; |x * inv| > 127.5
// counts as saturated.
inline uint8_t int8_code(float x, float inv, int64_t& saturated, int& nonfinite) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const bool finite = (bits & 0x7FFFFFFFu) < 0x7F800000u;
  nonfinite |= finite ? 0 : 1;
  float y = finite ? x * inv : 0.0f;
  saturated += std::fabs(y) > 127.5f ? 1 : 0;
  y = std::min(std::max(y, -127.0f), 127.0f);
  y = (y + 12582912.0f) - 12582912.0f;  // round to nearest even (|y| < 2^22)
  return static_cast<uint8_t>(static_cast<int>(y) + 128);
}

// The in-register quantization of the scalar vector types (16 lanes, one store at a time).
struct Int8TallyScalar {
  int64_t saturated = 0;
  int nonfinite = 0;
};
inline void int8_codes16(const float* x, uint8_t* dst, float inv, Int8TallyScalar& t) {
  for (int l = 0; l < 16; ++l) dst[l] = int8_code(x[l], inv, t.saturated, t.nonfinite);
}
inline int64_t int8_tally_result(const Int8TallyScalar& t, int* bad) {
  *bad |= t.nonfinite;
  return t.saturated;
}

// max(m, |x|) as bit patterns (magnitudes compare as their bit patterns), x left out when NaN or Inf: one
// step of the int8 per-call scales' max |V| (AmaxFn, and the lanes below).
inline uint32_t max_finite_magnitude(uint32_t m, float x) {
  uint32_t a;
  std::memcpy(&a, &x, 4);
  a &= 0x7FFFFFFFu;
  return a < 0x7F800000u && a > m ? a : m;
}

// m[l] = max(m[l], |x[l]|) over the finite x: the largest |V| per lane for the int8 per-call scales.
inline void lane_amax16(float* m, const float* x) {
  for (int l = 0; l < 16; ++l) {
    uint32_t b;
    std::memcpy(&b, &m[l], 4);
    b = max_finite_magnitude(b, x[l]);
    std::memcpy(&m[l], &b, 4);
  }
}

}  // namespace
