// 16 floats in one AVX-512 register. Include only from kernels/avx512/ files (compiled with -mavx512f).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace {

struct VecAvx512 {
  __m512 v;
  static VecAvx512 zero() { return {_mm512_setzero_ps()}; }
  static VecAvx512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static void store(float* p, VecAvx512 x) { _mm512_storeu_ps(p, x.v); }
  // As fp16 bits, round to nearest even (vcvtps2ph; masked form: see relu).
  static void store_fp16(uint16_t* p, VecAvx512 x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_maskz_cvtps_ph(static_cast<__mmask16>(0xFFFF), x.v,
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static VecAvx512 broadcast(float s) { return {_mm512_set1_ps(s)}; }
  static VecAvx512 add(VecAvx512 a, VecAvx512 b) { return {_mm512_add_ps(a.v, b.v)}; }
  static VecAvx512 sub(VecAvx512 a, VecAvx512 b) { return {_mm512_sub_ps(a.v, b.v)}; }
  static VecAvx512 neg(VecAvx512 a) { return {_mm512_sub_ps(_mm512_setzero_ps(), a.v)}; }
  static VecAvx512 mulc(VecAvx512 a, float c) { return {_mm512_mul_ps(a.v, _mm512_set1_ps(c))}; }
  // a*c + b
  static VecAvx512 fmac(VecAvx512 a, float c, VecAvx512 b) { return {_mm512_fmadd_ps(a.v, _mm512_set1_ps(c), b.v)}; }
  static VecAvx512 fma(VecAvx512 a, VecAvx512 b, VecAvx512 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  // max(0, a) with a second: a NaN propagates (as in the other paths). The masked form avoids GCC 12's
  // false maybe-uninitialized warning on _mm512_max_ps.
  static VecAvx512 relu(VecAvx512 a) {
    const __m512 z = _mm512_setzero_ps();
    return {_mm512_mask_max_ps(z, static_cast<__mmask16>(0xFFFF), z, a.v)};
  }
};

}  // namespace
