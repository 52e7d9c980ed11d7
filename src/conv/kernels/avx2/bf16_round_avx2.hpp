// bf16_bits_rne (lowp_kernels.hpp) on 8 floats: the integer round to nearest even that keeps subnormals,
// NaN made quiet; the bf16 bits in the upper halves of the result. One definition for the AVX2 input
// transforms' bf16 stores (vec_avx2.hpp) and the in-place rounding pass (gemm_lowp_avx2.cpp), which must
// round alike. Include only from files compiled with AVX2.
#pragma once

#include <immintrin.h>

namespace {

[[gnu::always_inline]] inline __m256i bf16_round_rne8(__m256i x) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);  // both non-negative
  const __m256i r = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7FFF)),
                                     _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1)));
  return _mm256_blendv_epi8(r, _mm256_or_si256(x, _mm256_set1_epi32(0x00400000)), nan);
}

}  // namespace
