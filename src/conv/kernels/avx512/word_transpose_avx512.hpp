// 16x16 transposes of 16-bit words for AVX-512 (vpermt2w), shared by the 16-bit layout changes
// (kernels/avx512/layout_avx512.cpp) and their AVX512-BF16 variant (kernels/avx512bf16/). Include only
// from files compiled with AVX-512F/BW/VL; internal linkage, as every ISA's vector code.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "../unroll16.hpp"

namespace {

// A 16x16 matrix of 16-bit words in 8 registers, two rows each (z[k]: row 2k in words 0-15, row 2k+1 in
// words 16-31), transposed in three rounds of vpermt2w; each round combines two registers and keeps
// half of their 64 words. Round 1: rows 4q..4q+3, 8 columns, as word 4c + r. Round 2: rows 8p..8p+7,
// 4 columns, as word 8c + r. Round 3: all 16 rows, 2 columns, as word 16c + r. Result: c[k] holds
// columns 2k (words 0-15) and 2k+1 (words 16-31), the layout of the input.
using WordIndex = std::array<uint16_t, 32>;
constexpr WordIndex word_round1(int column0) {  // rows r < 2 from a, r >= 2 from b; columns column0..+7
  WordIndex idx{};
  for (int c = 0; c < 8; ++c)
    for (int r = 0; r < 4; ++r)
      idx[4 * c + r] = static_cast<uint16_t>((r < 2 ? 0 : 32) + 16 * (r % 2) + column0 + c);
  return idx;
}
// Rounds 2 and 3: the inputs hold `rows` rows of each column (word rows*c + r), a the first `rows` rows
// and b the next; the output holds 2*rows rows of 16/rows columns from column0 (word 2*rows*c + r).
constexpr WordIndex word_round_merge(int rows, int column0) {
  WordIndex idx{};
  for (int c = 0; c < 16 / rows; ++c)
    for (int r = 0; r < 2 * rows; ++r)
      idx[2 * rows * c + r] = static_cast<uint16_t>((r < rows ? 0 : 32) + rows * (column0 + c) + r % rows);
  return idx;
}
alignas(64) constexpr WordIndex kWordRound1[2] = {word_round1(0), word_round1(8)};
alignas(64) constexpr WordIndex kWordRound2[2] = {word_round_merge(4, 0), word_round_merge(4, 4)};
alignas(64) constexpr WordIndex kWordRound3[2] = {word_round_merge(8, 0), word_round_merge(8, 2)};

inline __m512i permute_words(__m512i a, const WordIndex& idx, __m512i b) {
  return _mm512_maskz_permutex2var_epi16(~static_cast<__mmask32>(0), a, _mm512_load_si512(idx.data()), b);
}

inline void transpose16_words(const __m512i z[8], __m512i c[8]) {
  __m512i a[8], b[8];
  for (int q = 0; q < 4; ++q)  // a[2q + h]: rows 4q..4q+3, columns 8h..8h+7
    for (int h = 0; h < 2; ++h) a[2 * q + h] = permute_words(z[2 * q], kWordRound1[h], z[2 * q + 1]);
  for (int p = 0; p < 2; ++p)  // b[4p + 2h + s]: rows 8p..8p+7, columns 8h+4s..+3
    for (int h = 0; h < 2; ++h)
      for (int s = 0; s < 2; ++s)
        b[4 * p + 2 * h + s] = permute_words(a[4 * p + h], kWordRound2[s], a[4 * p + 2 + h]);
  for (int g = 0; g < 4; ++g)  // c[2g + e]: columns 4g+2e, 4g+2e+1
    for (int e = 0; e < 2; ++e) c[2 * g + e] = permute_words(b[g], kWordRound3[e], b[4 + g]);
}

// Masked forms throughout: GCC 12's zext, cast-down and plain insert/extract use _mm512_undefined_* (see
// above).
inline __m512i two_rows(__m256i lo, __m256i hi) {
  const __m512i x = _mm512_castsi256_si512(lo);  // upper half replaced below
  return _mm512_mask_inserti64x4(x, static_cast<__mmask8>(0xFF), x, hi, 1);
}
inline __m256i row_of(const __m512i c[8], int column) {
  const __mmask8 all = static_cast<__mmask8>(0xF);
  return column % 2 == 0 ? _mm512_maskz_extracti64x4_epi64(all, c[column / 2], 0)
                         : _mm512_maskz_extracti64x4_epi64(all, c[column / 2], 1);
}

// LayoutTable::store_band_nchw_typed for 16-bit outputs: each pixel's 16 channels narrowed by
// `narrow` (__m512 -> __m256i of 16-bit words), two pixels per register, the words transposed, 16
// channel rows of 16 words stored.
template <class Narrow>
void store_band_nchw_words_with(Narrow narrow, const float* band, std::ptrdiff_t width_stride, int rows,
                                std::ptrdiff_t width, int lanes, uint16_t* out, std::ptrdiff_t plane,
                                std::ptrdiff_t row) {
  using nova::conv::kernels_impl::for_each_of_16;
  using nova::conv::kernels_impl::for_each_run_of_16;
  constexpr __mmask16 all = static_cast<__mmask16>(0xFFFF);
  for (int i = 0; i < rows; ++i) {
    for_each_run_of_16(width, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
      __m256i px[16];
      for_each_of_16(16, [&](int x) {  // pixels beyond xs are zeros (an empty mask loads nothing)
        px[x] = narrow(_mm512_maskz_loadu_ps(x < xs ? all : 0, band + (i * width_stride + x0 + x) * 16));
      });
      __m512i z[8], c[8];
      for (int k = 0; k < 8; ++k) z[k] = two_rows(px[2 * k], px[2 * k + 1]);
      transpose16_words(z, c);
      uint16_t* o = out + i * row + x0;
      for_each_of_16(lanes, [&](int l) { _mm256_mask_storeu_epi16(o + l * plane, mask, row_of(c, l)); });
    });
  }
}

}  // namespace
