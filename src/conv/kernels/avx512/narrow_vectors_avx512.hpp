// ConvertTable's narrow conversions of one vector of 16 floats on AVX-512, shared by the conversions
// (convert_avx512.cpp) and the layout changes that narrow as they store (layout_avx512.cpp,
// kernels/avx512vbmi/), so that they all give the same bits and counts:
//   bf16_bits: round to nearest even on the bits, NaN kept as a quiet NaN of the same sign and payload top;
//   fp16_bits: vcvtps2ph, the IEEE conversion with round to nearest even;
//   Int8NarrowAvx512: RNE of x / scale, clamped to +-127, NaN to 0; clamped and NaN/Inf values counted.
// Include only from files compiled with AVX-512F/BW/VL; internal linkage, as every ISA's vector code.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace {

[[gnu::always_inline]] inline __m256i bf16_bits(__m512 x) {
  constexpr __mmask16 all = static_cast<__mmask16>(0xFFFF);
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m512i bias = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  const __m512i b = _mm512_castps_si512(x);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(b, abs_mask), inf);
  const __m512i lsb = _mm512_and_si512(_mm512_maskz_srli_epi32(all, b, 16), one);
  __m512i r = _mm512_maskz_srli_epi32(all, _mm512_add_epi32(_mm512_add_epi32(b, bias), lsb), 16);
  r = _mm512_mask_or_epi32(r, nan, _mm512_maskz_srli_epi32(all, b, 16), quiet);
  return _mm512_maskz_cvtepi32_epi16(all, r);
}

#if defined(__AVX512BF16__)
// bf16_bits by vcvtneps2bf16 where no lane is an FP32 subnormal, which that instruction would flush to
// zero; such a vector takes bf16_bits. The same bits as bf16_bits for every input (files compiled with
// AVX512-BF16 only): both round to nearest even and return NaNs quiet with the payload's top bits.
[[gnu::always_inline]] inline __m256i bf16_bits_hw(__m512 x) {
  if (_mm512_fpclass_ps_mask(x, 0x20) != 0) return bf16_bits(x);  // 0x20: FP32 denormal
  return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x));
}
#endif

[[gnu::always_inline]] inline __m256i fp16_bits(__m512 x) {
  return _mm512_maskz_cvtps_ph(static_cast<__mmask16>(0xFFFF), x,
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Two tiers, like the input transform's in-register quantization: a vector whose |x * inv| are all at
// most 127.5 (the common case) is rounded and clamped in five instructions; one holding a larger value,
// an Inf or a NaN takes the full path, which counts them. The masked forms compute the same as the plain
// intrinsics; GCC 12's plain forms use _mm512_undefined_* and trip a false -Wmaybe-uninitialized (GCC
// bug 105593).
class Int8NarrowAvx512 {
 public:
  explicit Int8NarrowAvx512(float inv_scale)
      : inv_(_mm512_set1_ps(inv_scale)),
        limit_(_mm512_set1_ps(127.0f)),
        half_over_(_mm512_set1_ps(127.5f)),
        inf_(_mm512_set1_ps(__builtin_inff())),
        code_max_(_mm512_set1_epi32(127)),
        code_min_(_mm512_set1_epi32(-127)) {}

  // The codes of the lanes of x in m (the others are 0 and not counted).
  [[gnu::always_inline]] inline __m128i operator()(__m512 x, __mmask16 m) {
    const __m512 q = _mm512_maskz_mul_ps(m, x, inv_);
    const __m512 a = _mm512_abs_ps(q);
    if (_mm512_mask_cmp_ps_mask(m, a, half_over_, _CMP_NLE_UQ) == 0) {  // no lane > 127.5, Inf or NaN
      // RNE gives at most +-128 here (from +-127.5), clamped to +-127 as the full path does.
      __m512i r = _mm512_maskz_cvt_roundps_epi32(kAll, q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      r = _mm512_maskz_min_epi32(kAll, _mm512_maskz_max_epi32(kAll, r, code_min_), code_max_);
      return _mm512_maskz_cvtepi32_epi8(kAll, r);
    }
    const __mmask16 nan = _mm512_mask_cmp_ps_mask(m, q, q, _CMP_UNORD_Q);
    // Inf in x, not in q: a finite x whose quotient overflows saturates (counted so), as in the portable
    // form.
    const __mmask16 infinite = _mm512_mask_cmp_ps_mask(m, _mm512_abs_ps(x), inf_, _CMP_EQ_OQ);
    const __mmask16 over =
        _mm512_mask_cmp_ps_mask(m, a, half_over_, _CMP_GT_OQ) & static_cast<__mmask16>(~infinite);
    nonfinite_ += __builtin_popcount(static_cast<unsigned>(nan | infinite));
    saturated_ += __builtin_popcount(static_cast<unsigned>(over));
    __m512 r = _mm512_maskz_roundscale_ps(static_cast<__mmask16>(~nan), q,
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, r, _mm512_sub_ps(_mm512_setzero_ps(), limit_)),
                            limit_);
    return _mm512_maskz_cvtsepi32_epi8(kAll, _mm512_maskz_cvtps_epi32(kAll, r));
  }

  int64_t saturated() const { return saturated_; }
  int64_t nonfinite() const { return nonfinite_; }

 private:
  static constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);
  __m512 inv_, limit_, half_over_, inf_;
  __m512i code_max_, code_min_;
  int64_t saturated_ = 0, nonfinite_ = 0;
};

}  // namespace
