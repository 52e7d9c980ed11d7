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

void pack_rows16(const float* src, std::ptrdiff_t channel_stride, int lanes, std::ptrdiff_t count, float* dst) {
  for (std::ptrdiff_t x0 = 0; x0 < count; x0 += 16) {
    const int xs = count - x0 < 16 ? static_cast<int>(count - x0) : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << xs) - 1u);
    __m512 r[16];
    for (int l = 0; l < 16; ++l)
      r[l] = l < lanes ? _mm512_maskz_loadu_ps(mask, src + l * channel_stride + x0) : _mm512_setzero_ps();
    transpose16(r);
    for (int x = 0; x < xs; ++x) _mm512_storeu_ps(dst + (x0 + x) * 16, r[x]);
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
