// Element conversions of typed input and output tensors on AVX-512F, 16 values per step with masked
// tails; bit-identical to kernels/portable/convert_portable.cpp (vcvtps2ph / vcvtph2ps are the exact
// IEEE fp16 conversions with round to nearest even; bf16 rounding is the same integer arithmetic).
#include <immintrin.h>

#include <bit>
#include <cstdint>
#include <cstring>

#include "../convert_table_template.hpp"
#include "../kernel_table.hpp"
#include "narrow_vectors_avx512.hpp"

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

// A copy, in vectors: the NHWC and NCHW16c stores call it per pixel or tile row (16-64 floats), where
// a call of memcpy cost more than the copy (14 % of an FP32 NHWC 1x64x56x56 profile).
[[gnu::always_inline]] inline void narrow_fp32(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<float*>(dst);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, src + i));
  }
}
[[gnu::always_inline]] inline void narrow_bf16(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    _mm256_mask_storeu_epi16(d + i, m, bf16_bits(_mm512_maskz_loadu_ps(m, src + i)));
  }
}
[[gnu::always_inline]] inline void narrow_fp16(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    _mm256_mask_storeu_epi16(d + i, m, fp16_bits(_mm512_maskz_loadu_ps(m, src + i)));
  }
}
// Int8NarrowAvx512 (narrow_vectors_avx512.hpp) over the run, 16 values at a time.
[[gnu::always_inline]] inline void narrow_int8(const float* src, void* dst, int64_t count, float inv_scale,
                                               NarrowCounts* counts) {
  auto* d = static_cast<int8_t*>(dst);
  Int8NarrowAvx512 narrow(inv_scale);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    _mm_mask_storeu_epi8(d + i, m, narrow(_mm512_maskz_loadu_ps(m, src + i), m));
  }
  counts->saturated += narrow.saturated();
  counts->nonfinite += narrow.nonfinite();
}

// As on AVX2 (convert_avx2.cpp): the largest |x| bits of the counted lanes first (unsigned: NaN above
// inf), and only where they reach the limit a compare per pixel into a mask, its lanes popcounted.
int64_t count_beyond(const float* src, std::ptrdiff_t row_stride, int64_t rows, int64_t pixels, int lanes,
                     float limit) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  const __mmask16 in = tail_mask(lanes);
  const auto pixel = [&](int64_t r, int64_t x) {  // |x| of the counted lanes, 0 in the others
    return _mm512_maskz_and_epi32(in, _mm512_loadu_si512(src + r * row_stride + x * 16), abs_mask);
  };
  __m512i largest = _mm512_setzero_si512();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < pixels; ++x) largest = _mm512_maskz_max_epu32(kAll, largest, pixel(r, x));
  const __m512i limit_bits = _mm512_set1_epi32(static_cast<int>(std::bit_cast<uint32_t>(limit)));
  if (_mm512_cmpge_epu32_mask(largest, limit_bits) == 0) return 0;
  const __m512 lim = _mm512_set1_ps(limit);
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < pixels; ++x)
      count += __builtin_popcount(
          static_cast<unsigned>(_mm512_cmp_ps_mask(_mm512_castsi512_ps(pixel(r, x)), lim, _CMP_NLT_UQ)));
  return count;
}

}  // namespace

ConvertTable convert_table_avx512() {
  ConvertTable t = kernels_impl::make_convert_table<&widen_fp32, &widen_bf16, &widen_fp16, &widen_int8,
                                                    &narrow_fp32, &narrow_bf16, &narrow_fp16, &narrow_int8>();
  t.count_beyond = &count_beyond;
  return t;
}

}  // namespace nova::conv
