// Element conversions of typed input and output tensors on AVX-512F, 16 values per step with masked
// tails; bit-identical to kernels/portable/convert_portable.cpp (vcvtps2ph / vcvtph2ps are the exact
// IEEE fp16 conversions with round to nearest even; bf16 rounding is the same integer arithmetic).
#include <immintrin.h>

#include <cstring>

#include "../kernel_table.hpp"
#include "../convert_table_template.hpp"

namespace nova::conv {

namespace {

// The narrow conversions are always inlined into their strided form (convert_table_template.hpp), where
// their constants are set up once for all the rows; the table's one-run entries are their own copies.
// The masked forms compute the same as the plain intrinsics; GCC 12's plain forms use
// _mm512_undefined_* and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? kAll : static_cast<__mmask16>((1u << left) - 1u);
}

void widen_fp32(const void* src, float* dst, int64_t count, float) {
  std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}
void widen_bf16(const void* src, float* dst, int64_t count, float) {
  const auto* s = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    const __m256i h = _mm256_maskz_loadu_epi16(m, s + i);
    const __m512i w = _mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_castsi512_ps(w));
  }
}
void widen_fp16(const void* src, float* dst, int64_t count, float) {
  const auto* s = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    const __m256i h = _mm256_maskz_loadu_epi16(m, s + i);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_cvtph_ps(kAll, h));
  }
}
void widen_int8(const void* src, float* dst, int64_t count, float scale) {
  const auto* s = static_cast<const int8_t*>(src);
  const __m512 sc = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    const __m128i b = _mm_maskz_loadu_epi8(m, s + i);
    const __m512 f = _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_cvtepi8_epi32(kAll, b));
    _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_mul_ps(kAll, f, sc));
  }
}

void narrow_fp32(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}
[[gnu::always_inline]] inline void narrow_bf16(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m512i bias = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    const __m512i b = _mm512_castps_si512(_mm512_maskz_loadu_ps(m, src + i));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(b, abs_mask), inf);
    const __m512i lsb = _mm512_and_si512(_mm512_maskz_srli_epi32(kAll, b, 16), one);
    __m512i r = _mm512_maskz_srli_epi32(kAll, _mm512_add_epi32(_mm512_add_epi32(b, bias), lsb), 16);
    r = _mm512_mask_or_epi32(r, nan, _mm512_maskz_srli_epi32(kAll, b, 16), quiet);
    _mm256_mask_storeu_epi16(d + i, m, _mm512_maskz_cvtepi32_epi16(kAll, r));
  }
}
[[gnu::always_inline]] inline void narrow_fp16(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    const __m512 x = _mm512_maskz_loadu_ps(m, src + i);
    const __m256i h = _mm512_maskz_cvtps_ph(kAll, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(d + i, m, h);
  }
}
// Two tiers, like the input transform's in-register quantization: a vector whose |x * inv| are all at
// most 127.5 (the common case) is rounded and clamped in five instructions; one holding a larger value,
// an Inf or a NaN takes the full path, which counts them.
[[gnu::always_inline]] inline void narrow_int8(const float* src, void* dst, int64_t count, float inv_scale, NarrowCounts* counts) {
  auto* d = static_cast<int8_t*>(dst);
  const __m512 inv = _mm512_set1_ps(inv_scale), limit = _mm512_set1_ps(127.0f),
               half_over = _mm512_set1_ps(127.5f);
  const __m512 inf = _mm512_set1_ps(__builtin_inff());
  const __m512i code_max = _mm512_set1_epi32(127), code_min = _mm512_set1_epi32(-127);
  int64_t saturated = 0, nonfinite = 0;
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    const __m512 q = _mm512_maskz_mul_ps(kAll, _mm512_maskz_loadu_ps(m, src + i), inv);
    const __m512 a = _mm512_abs_ps(q);
    if (_mm512_mask_cmp_ps_mask(m, a, half_over, _CMP_NLE_UQ) == 0) {  // no lane > 127.5, Inf or NaN
      // RNE gives at most +-128 here (from +-127.5), clamped to +-127 as the full path does.
      __m512i r = _mm512_maskz_cvt_roundps_epi32(kAll, q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      r = _mm512_maskz_min_epi32(kAll, _mm512_maskz_max_epi32(kAll, r, code_min), code_max);
      _mm_mask_storeu_epi8(d + i, m, _mm512_maskz_cvtepi32_epi8(kAll, r));
      continue;
    }
    const __mmask16 nan = _mm512_mask_cmp_ps_mask(m, q, q, _CMP_UNORD_Q);
    const __mmask16 infinite = _mm512_mask_cmp_ps_mask(m, a, inf, _CMP_EQ_OQ);
    const __mmask16 over =
        _mm512_mask_cmp_ps_mask(m, a, half_over, _CMP_GT_OQ) & static_cast<__mmask16>(~infinite);
    nonfinite += __builtin_popcount(static_cast<unsigned>(nan | infinite));
    saturated += __builtin_popcount(static_cast<unsigned>(over));
    __m512 r = _mm512_maskz_roundscale_ps(static_cast<__mmask16>(~nan), q,
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, r, _mm512_sub_ps(_mm512_setzero_ps(), limit)),
                            limit);
    _mm_mask_storeu_epi8(d + i, m, _mm512_maskz_cvtsepi32_epi8(kAll, _mm512_maskz_cvtps_epi32(kAll, r)));
  }
  counts->saturated += saturated;
  counts->nonfinite += nonfinite;
}

}  // namespace

ConvertTable convert_table_avx512() {
  return kernels_impl::make_convert_table<&widen_fp32, &widen_bf16, &widen_fp16, &widen_int8, &narrow_fp32,
                                          &narrow_bf16, &narrow_fp16, &narrow_int8>();
}

}  // namespace nova::conv
