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
#include "word_transpose_avx512.hpp"

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
  store_band_nchw_words_with([](__m512 v) { return T == DataType::kBf16 ? bf16_bits(v) : fp16_bits(v); },
                             band, width_stride, rows, width, lanes, static_cast<uint16_t*>(out_any), plane,
                             row);
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
