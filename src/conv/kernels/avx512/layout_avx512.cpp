// Layout changes for AVX-512: 16x16 register transposes (unpack, shuffle, 128-bit lane shuffles) with
// masked loads and stores for the edges (masked-out elements are never touched, so edges need no
// scalar tails). 16-bit tensors (bf16, fp16) are transposed as 16-bit words, before they are widened or
// after they are narrowed: 24 vpermt2w per 16x16 block on half the data, where the float transpose
// takes 64 shuffles.
#include <immintrin.h>

#include <array>

#include "../kernel_table.hpp"
#include "../unroll16.hpp"
#include "narrow_vectors_avx512.hpp"

namespace nova::conv {

namespace {

using kernels_impl::for_each_of_16;
using kernels_impl::for_each_run_of_16;

// The all-ones masked forms compute the same as the plain intrinsics; GCC 12's plain forms use
// _mm512_undefined_ps and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);
inline __m512 unpacklo(__m512 a, __m512 b) {
  return _mm512_mask_unpacklo_ps(a, kAll, a, b);
}
inline __m512 unpackhi(__m512 a, __m512 b) {
  return _mm512_mask_unpackhi_ps(a, kAll, a, b);
}
template <int Imm>
inline __m512 shuffle(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_ps(a, kAll, a, b, Imm);
}
template <int Imm>
inline __m512 shuffle128(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, kAll, a, b, Imm);
}

inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = unpacklo(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = unpackhi(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = shuffle<0x44>(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = shuffle<0xEE>(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = shuffle<0x44>(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = shuffle<0xEE>(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = shuffle128<0x88>(r[i], r[4 + i]);
    t[4 + i] = shuffle128<0xDD>(r[i], r[4 + i]);
    t[8 + i] = shuffle128<0x88>(r[8 + i], r[12 + i]);
    t[12 + i] = shuffle128<0xDD>(r[8 + i], r[12 + i]);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = shuffle128<0x88>(t[i], t[8 + i]);
    r[8 + i] = shuffle128<0xDD>(t[i], t[8 + i]);
  }
}

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

// 16 FP32 or int8 elements from src[i], widened as convert_avx512.cpp's widen (masked-out ones read as 0).
template <DataType T>
inline __m512 load_widen16(const void* src, std::ptrdiff_t i, __mmask16 mask, __m512 scale) {
  static_assert(T == DataType::kFp32 || T == DataType::kInt8, "16-bit elements go through pack_rows16_words");
  if constexpr (T == DataType::kFp32) {
    return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(src) + i);
  } else {
    const __m128i b = _mm_maskz_loadu_epi8(mask, static_cast<const int8_t*>(src) + i);
    return _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_cvtepi8_epi32(kAll, b)),
                               scale);
  }
}

// 16-bit elements: the rows transposed as words, each pixel's 16 channels then widened.
template <DataType T>
void pack_rows16_words(const void* src, float, std::ptrdiff_t channel_stride, int lanes, std::ptrdiff_t count,
                       float* dst) {
  const auto* s = static_cast<const uint16_t*>(src);
  for_each_run_of_16(count, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
    __m256i rows[16];
    for_each_of_16(16, [&](int l) {  // channels beyond `lanes` read as zero (an empty mask loads nothing)
      rows[l] = _mm256_maskz_loadu_epi16(l < lanes ? mask : 0, s + l * channel_stride + x0);
    });
    __m512i z[8], c[8];
    for (int k = 0; k < 8; ++k) z[k] = two_rows(rows[2 * k], rows[2 * k + 1]);
    transpose16_words(z, c);
    for_each_of_16(xs, [&](int x) {
      const __m256i h = row_of(c, x);
      __m512 v;
      if constexpr (T == DataType::kBf16)
        v = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16));
      else
        v = _mm512_maskz_cvtph_ps(kAll, h);
      _mm512_storeu_ps(dst + (x0 + x) * 16, v);
    });
  });
}

// FP32 and int8 rows, widened as they are loaded into the float transpose.
template <DataType T>
void pack_rows16_of(const void* src, float scale, std::ptrdiff_t channel_stride, int lanes,
                    std::ptrdiff_t count, float* dst) {
  const __m512 sc = _mm512_set1_ps(scale);
  for_each_run_of_16(count, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
    __m512 r[16];
    for_each_of_16(
        16, [&](int l) { r[l] = load_widen16<T>(src, l * channel_stride + x0, l < lanes ? mask : 0, sc); });
    transpose16(r);
    for_each_of_16(xs, [&](int x) { _mm512_storeu_ps(dst + (x0 + x) * 16, r[x]); });
  });
}

// 16 columns at a time: load 16 positions of 16 channels, transpose, store 16 channel rows of 16 floats.
void store_band_nchw(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                     int lanes, float* out, std::ptrdiff_t plane, std::ptrdiff_t row) {
  for (int i = 0; i < rows; ++i) {
    for_each_run_of_16(width, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
      __m512 r[16];
      for_each_of_16(16, [&](int x) {
        r[x] = _mm512_maskz_loadu_ps(x < xs ? kAll : 0, band + (i * width_stride + x0 + x) * 16);
      });
      transpose16(r);
      float* o = out + i * row + x0;
      for_each_of_16(lanes, [&](int l) { _mm512_mask_storeu_ps(o + l * plane, mask, r[l]); });
    });
  }
}

// 16-bit outputs: each pixel narrowed as convert_avx512.cpp narrows it, two pixels per register, the
// words transposed, 16 channel rows of 16 words stored.
template <DataType T>
void store_band_nchw_words(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                           int lanes, void* out_any, std::ptrdiff_t plane, std::ptrdiff_t row, float,
                           NarrowCounts*) {
  auto* out = static_cast<uint16_t*>(out_any);
  for (int i = 0; i < rows; ++i) {
    for_each_run_of_16(width, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
      __m256i px[16];
      for_each_of_16(16, [&](int x) {  // pixels beyond xs are zeros (an empty mask loads nothing)
        const __m512 v = _mm512_maskz_loadu_ps(x < xs ? kAll : 0, band + (i * width_stride + x0 + x) * 16);
        px[x] = T == DataType::kBf16 ? bf16_bits(v) : fp16_bits(v);
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

LayoutTable layout_table_avx512() {
  LayoutTable t;
  t.pack_rows16[static_cast<int>(DataType::kFp32)] = &pack_rows16_of<DataType::kFp32>;
  t.pack_rows16[static_cast<int>(DataType::kBf16)] = &pack_rows16_words<DataType::kBf16>;
  t.pack_rows16[static_cast<int>(DataType::kFp16)] = &pack_rows16_words<DataType::kFp16>;
  t.pack_rows16[static_cast<int>(DataType::kInt8)] = &pack_rows16_of<DataType::kInt8>;
  t.store_band_nchw = &store_band_nchw;
  t.store_band_nchw_typed[static_cast<int>(DataType::kBf16)] = &store_band_nchw_words<DataType::kBf16>;
  t.store_band_nchw_typed[static_cast<int>(DataType::kFp16)] = &store_band_nchw_words<DataType::kFp16>;
  return t;
}

}  // namespace nova::conv
