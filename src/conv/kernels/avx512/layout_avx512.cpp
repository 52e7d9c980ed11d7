// Layout changes for AVX-512: 16x16 register transposes (unpack, shuffle, 128-bit lane shuffles) with
// masked loads and stores for the edges (masked-out elements are never touched, so edges need no
// scalar tails).
#include <immintrin.h>

#include "../kernel_table.hpp"

namespace nova::conv {

namespace {

// The all-ones masked forms compute the same as the plain intrinsics; GCC 12's plain forms use
// _mm512_undefined_ps and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);
inline __m512 unpacklo(__m512 a, __m512 b) { return _mm512_mask_unpacklo_ps(a, kAll, a, b); }
inline __m512 unpackhi(__m512 a, __m512 b) { return _mm512_mask_unpackhi_ps(a, kAll, a, b); }
template <int Imm>
inline __m512 shuffle(__m512 a, __m512 b) { return _mm512_mask_shuffle_ps(a, kAll, a, b, Imm); }
template <int Imm>
inline __m512 shuffle128(__m512 a, __m512 b) { return _mm512_mask_shuffle_f32x4(a, kAll, a, b, Imm); }

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

// 16 elements of `type` from src[i], widened as convert_avx512.cpp's widen (masked-out ones read as 0).
template <DataType T>
inline __m512 load_widen16(const void* src, std::ptrdiff_t i, __mmask16 mask, __m512 scale) {
  if constexpr (T == DataType::kFp32) {
    return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(src) + i);
  } else if constexpr (T == DataType::kBf16) {
    const __m256i h = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(src) + i);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_maskz_cvtepu16_epi32(kAll, h), 16));
  } else if constexpr (T == DataType::kFp16) {
    return _mm512_maskz_cvtph_ps(kAll, _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(src) + i));
  } else {
    const __m128i b = _mm_maskz_loadu_epi8(mask, static_cast<const int8_t*>(src) + i);
    return _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_cvtepi8_epi32(kAll, b)), scale);
  }
}

// The rows widened as they are loaded into the transpose: no FP32 copy of a typed input's rows.
template <DataType T>
void pack_rows16_of(const void* src, float scale, std::ptrdiff_t channel_stride, int lanes, std::ptrdiff_t count,
                    float* dst) {
  const __m512 sc = _mm512_set1_ps(scale);
  for (std::ptrdiff_t x0 = 0; x0 < count; x0 += 16) {
    const int xs = count - x0 < 16 ? static_cast<int>(count - x0) : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << xs) - 1u);
    __m512 r[16];
    for (int l = 0; l < 16; ++l)
      r[l] = l < lanes ? load_widen16<T>(src, l * channel_stride + x0, mask, sc) : _mm512_setzero_ps();
    transpose16(r);
    for (int x = 0; x < xs; ++x) _mm512_storeu_ps(dst + (x0 + x) * 16, r[x]);
  }
}

void pack_rows16(const void* src, DataType type, float scale, std::ptrdiff_t channel_stride, int lanes,
                 std::ptrdiff_t count, float* dst) {
  switch (type) {
    case DataType::kFp32:
      return pack_rows16_of<DataType::kFp32>(src, scale, channel_stride, lanes, count, dst);
    case DataType::kBf16:
      return pack_rows16_of<DataType::kBf16>(src, scale, channel_stride, lanes, count, dst);
    case DataType::kFp16:
      return pack_rows16_of<DataType::kFp16>(src, scale, channel_stride, lanes, count, dst);
    case DataType::kInt8:
      return pack_rows16_of<DataType::kInt8>(src, scale, channel_stride, lanes, count, dst);
  }
}

// 16 columns at a time: load 16 positions of 16 channels, transpose, store 16 channel rows of 16 floats.
void store_band_nchw(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width, int lanes,
                     float* out, std::ptrdiff_t plane, std::ptrdiff_t row) {
  for (int i = 0; i < rows; ++i) {
    for (std::ptrdiff_t x0 = 0; x0 < width; x0 += 16) {
      const int xs = width - x0 < 16 ? static_cast<int>(width - x0) : 16;
      const __mmask16 mask = static_cast<__mmask16>((1u << xs) - 1u);
      __m512 r[16];
      for (int x = 0; x < 16; ++x)
        r[x] = x < xs ? _mm512_loadu_ps(band + (i * width_stride + x0 + x) * 16) : _mm512_setzero_ps();
      transpose16(r);
      float* o = out + i * row + x0;
      for (int l = 0; l < lanes; ++l) _mm512_mask_storeu_ps(o + l * plane, mask, r[l]);
    }
  }
}

}  // namespace

LayoutTable layout_table_avx512() { return LayoutTable{&pack_rows16, &store_band_nchw}; }

}  // namespace nova::conv
