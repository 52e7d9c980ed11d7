// The power-of-two shift nova's fp16 paths apply to V = B^T d B before storing it in fp16 (the CPU
// engine's fp16 plans, src/conv/lowp.cpp; the CUDA multi-pass path; the error harness's "-shifted"
// presets). V is stored as V * 2^-shift and the GEMMs' results scaled back by 2^shift, exactly:
//   - down while V's bound, gain * max|d|, passes `limit` (fp16's 65504 for FP32 sums; 4096 for fp16 FMA
//     sums over chunks of 32 channels, whose chunk sums must stay finite);
//   - up, to a bound in [2^4, 2^5) (that of unit-scale data), where the bound lies below 1: below, much of
//     V sits in fp16's subnormals, which start at 2^-14; never below `floor_shift`.
// Unit-scale data is not shifted and keeps its bits. NaN or Inf data: no shift (they reach the output).
// Header-only and free of host-only calls, so that CUDA kernels run the same rule (NOVA_HD).
#pragma once

#include <climits>
#include <cmath>

#ifdef __CUDACC__
#define NOVA_HD __host__ __device__
#else
#define NOVA_HD
#endif

namespace nova {

inline constexpr double kFp16VLimitFp32Sums = 65504.0;
inline constexpr double kFp16VLimitFp16Sums = 4096.0;
inline constexpr double kFp16VRaiseBelow = 1.0;
inline constexpr int kFp16VRaiseTo = 4;  // log2 of the raised bound's binade

NOVA_HD inline int fp16_v_shift(double gain, double amax, double limit, int floor_shift = INT_MIN) {
  const double bound = gain * amax;
  if (!(bound <= 1e300)) return 0;  // NaN or Inf
  int shift = 0;
  while (bound > ldexp(limit, shift)) ++shift;  // at most about 1000 steps (bound < 1e300)
  if (bound > 0.0 && bound < kFp16VRaiseBelow) {
    const int raised = ilogb(bound) - kFp16VRaiseTo;
    shift = raised > floor_shift ? raised : floor_shift;
  }
  return shift;
}

// The floor of an upward shift for engines that normalize U's columns by powers of two: the GEMMs' column
// scales become 2^(e + shift), which must stay FP32 normals (exact multipliers; a subnormal one would
// round outputs FP32 holds as normals). `lowest_scale_exponent`: the smallest e (0 or below); weights
// below 2^-126 give column scales below it already, and then no upward shift at all.
NOVA_HD inline int fp16_v_shift_floor(int lowest_scale_exponent) {
  const int floor = -126 - lowest_scale_exponent;  // FLT_MIN is 2^-126
  return floor < 0 ? floor : 0;
}

}  // namespace nova
