// 16 floats in two AVX2 registers. Include only from kernels/avx2/ files (compiled with -mavx2 -mfma).
#pragma once

#include <immintrin.h>

#include "../int8_code_scalar.hpp"

namespace {

struct VecAvx2 {
  __m256 lo, hi;
  // The int8 GEMM's V operand written by the input transform (kernel_table.hpp, InputTileInt8Fn), in
  // scalar code: the int8 GEMM of this path is the portable one.
  using Int8Tally = Int8TallyScalar;
  static void store_int8(uint8_t* p, VecAvx2 x, float inv, Int8Tally& t) {
    alignas(32) float lanes[16];
    store(lanes, x);
    int8_codes16(lanes, p, inv, t);
  }
  static int64_t int8_result(const Int8Tally& t, int* bad) { return int8_tally_result(t, bad); }
  static void amax_into(float* m, VecAvx2 x) {
    alignas(32) float lanes[16];
    store(lanes, x);
    lane_amax16(m, lanes);
  }
  static VecAvx2 zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static VecAvx2 load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void store(float* p, VecAvx2 x) {
    _mm256_storeu_ps(p, x.lo);
    _mm256_storeu_ps(p + 8, x.hi);
  }
  static VecAvx2 broadcast(float s) {
    const __m256 b = _mm256_set1_ps(s);
    return {b, b};
  }
  static VecAvx2 add(VecAvx2 a, VecAvx2 b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static VecAvx2 sub(VecAvx2 a, VecAvx2 b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
  static VecAvx2 neg(VecAvx2 a) { return sub(zero(), a); }
  static VecAvx2 mulc(VecAvx2 a, float c) {
    const __m256 k = _mm256_set1_ps(c);
    return {_mm256_mul_ps(a.lo, k), _mm256_mul_ps(a.hi, k)};
  }
  static VecAvx2 fmac(VecAvx2 a, float c, VecAvx2 b) {
    const __m256 k = _mm256_set1_ps(c);
    return {_mm256_fmadd_ps(a.lo, k, b.lo), _mm256_fmadd_ps(a.hi, k, b.hi)};
  }
  static VecAvx2 fma(VecAvx2 a, VecAvx2 b, VecAvx2 c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  static VecAvx2 relu(VecAvx2 a) {
    return {_mm256_max_ps(_mm256_setzero_ps(), a.lo), _mm256_max_ps(_mm256_setzero_ps(), a.hi)};  // NaN propagates
  }
};

}  // namespace
