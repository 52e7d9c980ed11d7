// int8 NCHW tensors in and out of the 16-channel blocks with 16x16 byte transposes (AVX512-VBMI
// vpermt2b): 8 byte permutes move 256 int8 values where the FP32 path's 16x16 float transpose takes 64
// shuffles, and the transposed data is a quarter of the size.
//   pack_rows16_int8:     16 channel rows of 16 codes -> byte transpose -> 16 pixels, each widened to 16
//                         floats (code * scale) as pack_rows16 does.
//   store_band_nchw_int8: 16 pixels of 16 floats -> int8 narrow (Int8NarrowAvx512, the conversions'
//                         own) -> byte transpose -> 16 channel rows of 16 codes; the same bits and counts
//                         as store_band_nchw followed by the int8 narrow_rows.
#include <immintrin.h>

#include <array>

#include "../avx512/narrow_vectors_avx512.hpp"
#include "../kernel_table.hpp"
#include "../unroll16.hpp"

namespace nova::conv {

namespace {

using kernels_impl::for_each_of_16;
using kernels_impl::for_each_run_of_16;

constexpr __mmask16 kAll16 = static_cast<__mmask16>(0xFFFF);
constexpr __mmask64 kAll64 = ~static_cast<__mmask64>(0);

// vpermt2b indices of the two stages of the transpose. Input: four registers z[k], each holding rows
// 4k..4k+3 of the 16x16 byte matrix, one 16-byte row per 128-bit lane (byte 16j + c: row 4k+j, column c).
// Stage 1 combines z[0],z[1] (and z[2],z[3]): rows 0-7, columns 0-7 as byte 8c + r (kStage1[0]) and
// columns 8-15 (kStage1[1]). Stage 2 combines the rows 0-7 and rows 8-15 halves of one column group:
// columns 4g..4g+3 (g even: kStage2[0]; odd: kStage2[1]) as byte 16c' + r, one column per lane.
using Index = std::array<unsigned char, 64>;
constexpr Index stage1(int column0) {
  Index idx{};
  for (int c = 0; c < 8; ++c)
    for (int r = 0; r < 8; ++r)
      idx[8 * c + r] = static_cast<unsigned char>((r < 4 ? 0 : 64) + 16 * (r % 4) + column0 + c);
  return idx;
}
constexpr Index stage2(int column0) {
  Index idx{};
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 16; ++r)
      idx[16 * c + r] = static_cast<unsigned char>((r < 8 ? 0 : 64) + 8 * (column0 + c) + r % 8);
  return idx;
}
alignas(64) constexpr Index kStage1[2] = {stage1(0), stage1(8)};
alignas(64) constexpr Index kStage2[2] = {stage2(0), stage2(4)};

inline __m512i load_index(const Index& idx) {
  return _mm512_load_si512(idx.data());
}
inline __m512i permute2(__m512i a, __m512i idx, __m512i b) {
  return _mm512_maskz_permutex2var_epi8(kAll64, a, idx, b);
}

// z[k]: rows 4k..4k+3 (one per lane) -> t[g]: columns 4g..4g+3 (one per lane, byte r of a lane = row r).
inline void transpose_bytes(const __m512i z[4], __m512i t[4]) {
  const __m512i lo = load_index(kStage1[0]), hi = load_index(kStage1[1]);
  const __m512i a_lo = permute2(z[0], lo, z[1]), a_hi = permute2(z[0], hi, z[1]);  // rows 0-7
  const __m512i b_lo = permute2(z[2], lo, z[3]), b_hi = permute2(z[2], hi, z[3]);  // rows 8-15
  const __m512i even = load_index(kStage2[0]), odd = load_index(kStage2[1]);
  t[0] = permute2(a_lo, even, b_lo);
  t[1] = permute2(a_lo, odd, b_lo);
  t[2] = permute2(a_hi, even, b_hi);
  t[3] = permute2(a_hi, odd, b_hi);
}

inline __m512i four_rows(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
  __m512i z = _mm512_zextsi128_si512(r0);
  z = _mm512_mask_inserti32x4(z, kAll16, z, r1, 1);
  z = _mm512_mask_inserti32x4(z, kAll16, z, r2, 2);
  return _mm512_mask_inserti32x4(z, kAll16, z, r3, 3);
}

// The masked forms compute the same as the plain intrinsics; GCC 12's plain forms use _mm*_undefined_*
// and trip a false -Wmaybe-uninitialized (GCC bug 105593).
template <int Lane>
inline __m128i lane_of(__m512i t) {
  return _mm512_maskz_extracti32x4_epi32(static_cast<__mmask8>(0xF), t, Lane);
}
inline __m128i lane(__m512i t, int j) {
  switch (j) {
    case 0:
      return lane_of<0>(t);
    case 1:
      return lane_of<1>(t);
    case 2:
      return lane_of<2>(t);
    default:
      return lane_of<3>(t);
  }
}

void pack_rows16_int8(const void* src_any, float scale, std::ptrdiff_t channel_stride, int lanes,
                      std::ptrdiff_t count, float* dst) {
  const auto* src = static_cast<const int8_t*>(src_any);
  const __m512 sc = _mm512_set1_ps(scale);
  for_each_run_of_16(count, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
    __m128i rows[16];
    for_each_of_16(16, [&](int l) {  // channels beyond `lanes` read as zero (an empty mask loads nothing)
      rows[l] = _mm_maskz_loadu_epi8(l < lanes ? mask : 0, src + l * channel_stride + x0);
    });
    const __m512i z[4] = {
        four_rows(rows[0], rows[1], rows[2], rows[3]), four_rows(rows[4], rows[5], rows[6], rows[7]),
        four_rows(rows[8], rows[9], rows[10], rows[11]), four_rows(rows[12], rows[13], rows[14], rows[15])};
    __m512i t[4];
    transpose_bytes(z, t);
    for_each_of_16(xs, [&](int x) {
      const __m512i codes = _mm512_maskz_cvtepi8_epi32(kAll16, lane(t[x / 4], x % 4));
      _mm512_storeu_ps(dst + (x0 + x) * 16,
                       _mm512_maskz_mul_ps(kAll16, _mm512_maskz_cvtepi32_ps(kAll16, codes), sc));
    });
  });
}

void store_band_nchw_int8(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                          int lanes, void* out_any, std::ptrdiff_t plane, std::ptrdiff_t row, float inv_scale,
                          NarrowCounts* counts) {
  auto* out = static_cast<int8_t*>(out_any);
  Int8NarrowAvx512 narrow(inv_scale);
  const auto lane_mask = static_cast<__mmask16>((1u << lanes) - 1u);
  for (int i = 0; i < rows; ++i) {
    for_each_run_of_16(width, [&](std::ptrdiff_t x0, int xs, __mmask16 mask) {
      __m128i px[16];
      for_each_of_16(16, [&](int x) {  // pixels beyond xs: no lanes, code 0, nothing counted
        px[x] = narrow(_mm512_maskz_loadu_ps(x < xs ? lane_mask : 0, band + (i * width_stride + x0 + x) * 16),
                       x < xs ? lane_mask : 0);
      });
      const __m512i z[4] = {four_rows(px[0], px[1], px[2], px[3]), four_rows(px[4], px[5], px[6], px[7]),
                            four_rows(px[8], px[9], px[10], px[11]),
                            four_rows(px[12], px[13], px[14], px[15])};
      __m512i t[4];
      transpose_bytes(z, t);
      int8_t* o = out + i * row + x0;
      for_each_of_16(lanes, [&](int l) { _mm_mask_storeu_epi8(o + l * plane, mask, lane(t[l / 4], l % 4)); });
    });
  }
  counts->saturated += narrow.saturated();
  counts->nonfinite += narrow.nonfinite();
}

}  // namespace

void add_layout_int8_avx512vbmi(LayoutTable& table) {
  table.pack_rows16[static_cast<int>(DataType::kInt8)] = &pack_rows16_int8;
  table.store_band_nchw_typed[static_cast<int>(DataType::kInt8)] = &store_band_nchw_int8;
}

}  // namespace nova::conv
