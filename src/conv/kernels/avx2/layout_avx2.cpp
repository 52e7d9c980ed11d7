// Layout changes of FP32 tensors for AVX2: 8x8 register transposes (unpack, shuffle, 128-bit lane
// permutes) between NCHW rows and 16-channel blocks, twice per 16 channels; edges of fewer than 8
// columns go through the plain loops. Pure data movement: the portable path's values. Typed tensors
// (bf16, fp16, int8) keep the portable entries.
#include <immintrin.h>

#include "../kernel_table.hpp"

namespace nova::conv {

namespace {

inline void transpose8(__m256 r[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    s[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(s[i], s[4 + i], 0x20);
    r[4 + i] = _mm256_permute2f128_ps(s[i], s[4 + i], 0x31);
  }
}

// dst[x*16 + l] = src[l*channel_stride + x] for x < count, l < lanes; lanes >= `lanes` are 0.
void pack_rows16_fp32(const void* src_v, float /*scale*/, std::ptrdiff_t channel_stride, int lanes,
                      std::ptrdiff_t count, float* dst) {
  const auto* src = static_cast<const float*>(src_v);
  std::ptrdiff_t x0 = 0;
  for (; x0 + 8 <= count; x0 += 8)
    for (int h = 0; h < 2; ++h) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l)
        r[l] = 8 * h + l < lanes ? _mm256_loadu_ps(src + (8 * h + l) * channel_stride + x0)
                                 : _mm256_setzero_ps();
      transpose8(r);
      for (int x = 0; x < 8; ++x) _mm256_storeu_ps(dst + (x0 + x) * 16 + 8 * h, r[x]);
    }
  for (; x0 < count; ++x0)
    for (int l = 0; l < 16; ++l) dst[x0 * 16 + l] = l < lanes ? src[l * channel_stride + x0] : 0.0f;
}

// band[(i*width_stride + x)*16 + l] -> out[l*plane + i*row + x] for i < rows, x < width, l < lanes.
void store_band_nchw(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                     int lanes, float* out, std::ptrdiff_t plane, std::ptrdiff_t row) {
  for (int i = 0; i < rows; ++i) {
    const float* b = band + i * width_stride * 16;
    float* o = out + i * row;
    std::ptrdiff_t x0 = 0;
    for (; x0 + 8 <= width; x0 += 8)
      for (int h = 0; h < 2 && 8 * h < lanes; ++h) {
        __m256 r[8];
        for (int x = 0; x < 8; ++x) r[x] = _mm256_loadu_ps(b + (x0 + x) * 16 + 8 * h);
        transpose8(r);
        for (int l = 0; l < 8 && 8 * h + l < lanes; ++l) _mm256_storeu_ps(o + (8 * h + l) * plane + x0, r[l]);
      }
    for (; x0 < width; ++x0)
      for (int l = 0; l < lanes; ++l) o[l * plane + x0] = b[x0 * 16 + l];
  }
}

}  // namespace

void add_layout_fp32_avx2(LayoutTable& table) {
  table.pack_rows16[static_cast<int>(DataType::kFp32)] = &pack_rows16_fp32;
  table.store_band_nchw = &store_band_nchw;
}

}  // namespace nova::conv
