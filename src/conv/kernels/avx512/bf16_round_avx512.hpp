// bf16_bits_rne (lowp_kernels.hpp) on 16 floats: integer round to nearest even that keeps subnormals
// (vcvtneps2bf16 would flush them), NaN made quiet. Returns the rounded 32-bit patterns, the bf16 bits
// in their upper halves. One definition for the bf16 conversion (bits, kernels/avx512bf16) and the
// in-place rounding of the FMA path (kernels/avx512), which must round alike. Include only from files
// compiled with AVX-512F.
#pragma once

#include <immintrin.h>

namespace {

[[gnu::always_inline]] inline __m512i bf16_round_rne(__m512i x) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m512i bias = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1),
                quiet = _mm512_set1_epi32(0x00400000);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, abs_mask), inf);
  const __m512i r = _mm512_add_epi32(
      _mm512_add_epi32(x, bias),
      _mm512_and_si512(_mm512_maskz_srli_epi32(static_cast<__mmask16>(0xFFFF), x, 16), one));
  return _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(x, quiet));
}

}  // namespace
