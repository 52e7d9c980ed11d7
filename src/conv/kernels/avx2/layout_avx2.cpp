// Layout changes for AVX2: 8x8 register transposes (unpack, shuffle, 128-bit lane permutes) between NCHW
// rows and 16-channel blocks, twice per 16 channels. FP32 moves data only (edges of fewer than 8 columns
// through plain loops); typed tensors (bf16, fp16, int8; F16C for fp16) are widened as they are loaded
// and narrowed after the transpose by the AVX2 conversions (convert_vectors_avx2.hpp), the edges through
// the same vector code on zero-padded copies: the same bits and counts as the AVX2 ConvertTable's
// widen and narrow_rows around the FP32 moves.
#include <immintrin.h>

#include "../kernel_table.hpp"
#include "convert_vectors_avx2.hpp"
#include "lanes_below_avx2.hpp"

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

// The first n (< 8) floats of v to p, as 4, 2 and 1: vmaskmovps stores made 14x14 outputs 10-15 %
// slower than one float at a time.
inline void store_first(float* p, __m256 v, std::ptrdiff_t n) {
  __m128 part = _mm256_castps256_ps128(v);
  if (n & 4) {
    _mm_storeu_ps(p, part);
    part = _mm256_extractf128_ps(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
    part = _mm_movehl_ps(part, part);
    p += 2;
  }
  if (n & 1) _mm_store_ss(p, part);
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
    if (x0 < width) {  // fewer than 8 columns: the same transpose, stores of 4, 2 and 1 floats
      const std::ptrdiff_t xs = width - x0;
      for (int h = 0; h < 2 && 8 * h < lanes; ++h) {
        __m256 r[8];
        for (int x = 0; x < 8; ++x)
          r[x] = x < xs ? _mm256_loadu_ps(b + (x0 + x) * 16 + 8 * h) : _mm256_setzero_ps();
        transpose8(r);
        for (int l = 0; l < 8 && 8 * h + l < lanes; ++l) store_first(o + (8 * h + l) * plane + x0, r[l], xs);
      }
    }
  }
}

// dst[x*16 + l] = value of src[l*channel_stride + x] for x < count, l < lanes (elements of T, widened);
// lanes >= `lanes` are 0. 8 columns of 16 rows widened as loaded, then transposed; a tail of fewer than 8
// columns widened row by row (widen_run, the same vector code) into a buffer, then moved.
template <DataType T>
void pack_rows16(const void* src_v, float scale, std::ptrdiff_t channel_stride, int lanes,
                 std::ptrdiff_t count, float* dst) {
  constexpr std::ptrdiff_t kBytes = kElementBytes<T>;
  const auto* src = static_cast<const unsigned char*>(src_v);
  const __m256 sc = _mm256_set1_ps(scale);
  std::ptrdiff_t x0 = 0;
  for (; x0 + 8 <= count; x0 += 8)
    for (int h = 0; h < 2; ++h) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l)
        r[l] = 8 * h + l < lanes ? widen8<T>(src + ((8 * h + l) * channel_stride + x0) * kBytes, sc)
                                 : _mm256_setzero_ps();
      transpose8(r);
      for (int x = 0; x < 8; ++x) _mm256_storeu_ps(dst + (x0 + x) * 16 + 8 * h, r[x]);
    }
  // Fewer than 8 columns left: vmaskmovps loads and the same transpose. 7x7 and 14x14 images had all or 6
  // of 14 columns moved one float at a time (the pack of 1x512x7x7 took 4 times as long; docs/engine-log.md,
  // "Session 17").
  if (T == DataType::kFp32 && x0 < count) {
    const std::ptrdiff_t xs = count - x0;
    const __m256i mask = lanes_below(xs);
    const auto* f = static_cast<const float*>(src_v);
    for (int h = 0; h < 2; ++h) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l)
        r[l] = 8 * h + l < lanes ? _mm256_maskload_ps(f + (8 * h + l) * channel_stride + x0, mask)
                                 : _mm256_setzero_ps();
      transpose8(r);
      for (std::ptrdiff_t x = 0; x < xs; ++x) _mm256_storeu_ps(dst + (x0 + x) * 16 + 8 * h, r[x]);
    }
  } else if (x0 < count) {
    const std::ptrdiff_t xs = count - x0;
    float buf[16][8] = {};
    for (int l = 0; l < lanes; ++l) widen_run<T>(src + (l * channel_stride + x0) * kBytes, buf[l], xs, scale);
    for (std::ptrdiff_t x = 0; x < xs; ++x)
      for (int l = 0; l < 16; ++l) dst[(x0 + x) * 16 + l] = buf[l][x];
  }
}

// store_band_nchw into elements of T: 8 pixels of 16 channels transposed, each channel's 8 values
// narrowed by narrow8 (__m256 -> 8 elements in the low part of a __m128i) and stored; an edge of fewer
// than 8 pixels is padded with zeros (which add to no count) and stored element by element.
template <std::size_t kBytes, class Narrow8>
void store_band_nchw_narrowed(Narrow8& narrow8, const float* band, std::ptrdiff_t width_stride, int rows,
                              std::ptrdiff_t width, int lanes, void* out_v, std::ptrdiff_t plane,
                              std::ptrdiff_t row) {
  auto* out = static_cast<unsigned char*>(out_v);
  for (int i = 0; i < rows; ++i) {
    const float* b = band + i * width_stride * 16;
    for (std::ptrdiff_t x0 = 0; x0 < width; x0 += 8) {
      const std::ptrdiff_t xs = width - x0 < 8 ? width - x0 : 8;
      for (int h = 0; h < 2 && 8 * h < lanes; ++h) {
        __m256 r[8];
        for (int x = 0; x < 8; ++x)
          r[x] = x < xs ? _mm256_loadu_ps(b + (x0 + x) * 16 + 8 * h) : _mm256_setzero_ps();
        transpose8(r);
        for (int l = 0; l < 8 && 8 * h + l < lanes; ++l)
          store_narrowed<kBytes>(
              out + static_cast<std::ptrdiff_t>(kBytes) * ((8 * h + l) * plane + i * row + x0), narrow8(r[l]),
              xs);
      }
    }
  }
}

template <DataType T>
void store_band_nchw_typed(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                           int lanes, void* out, std::ptrdiff_t plane, std::ptrdiff_t row, float inv_scale,
                           NarrowCounts* counts) {
  if constexpr (T == DataType::kInt8) {
    Int8NarrowAvx2 narrow(inv_scale);
    store_band_nchw_narrowed<1>(narrow, band, width_stride, rows, width, lanes, out, plane, row);
    counts->saturated += narrow.saturated();
    counts->nonfinite += narrow.nonfinite();
  } else {
    auto narrow = [](__m256 x) { return T == DataType::kBf16 ? bf16_bits8(x) : fp16_bits8(x); };
    store_band_nchw_narrowed<2>(narrow, band, width_stride, rows, width, lanes, out, plane, row);
  }
}

}  // namespace

void add_layout_fp32_avx2(LayoutTable& table) {
  table.pack_rows16[static_cast<int>(DataType::kFp32)] = &pack_rows16<DataType::kFp32>;
  table.store_band_nchw = &store_band_nchw;
}

void add_layout_typed_avx2_f16c(LayoutTable& table) {
  table.pack_rows16[static_cast<int>(DataType::kBf16)] = &pack_rows16<DataType::kBf16>;
  table.pack_rows16[static_cast<int>(DataType::kFp16)] = &pack_rows16<DataType::kFp16>;
  table.pack_rows16[static_cast<int>(DataType::kInt8)] = &pack_rows16<DataType::kInt8>;
  table.store_band_nchw_typed[static_cast<int>(DataType::kBf16)] = &store_band_nchw_typed<DataType::kBf16>;
  table.store_band_nchw_typed[static_cast<int>(DataType::kFp16)] = &store_band_nchw_typed<DataType::kFp16>;
  table.store_band_nchw_typed[static_cast<int>(DataType::kInt8)] = &store_band_nchw_typed<DataType::kInt8>;
}

}  // namespace nova::conv
