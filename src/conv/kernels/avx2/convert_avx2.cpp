// Element conversions of typed input and output tensors on AVX2 (+ F16C), 8 values per step; a tail of
// fewer than 8 goes through the same vector code on a zero-padded copy, so every element gets the same
// bits wherever it sits. Bit-identical to kernels/portable/convert_portable.cpp (tests/conv/
// test_conv_io.cpp), but for fp16 widens of signalling NaNs, which vcvtph2ps makes quiet.
#include <immintrin.h>

#include <bit>
#include <cstdint>
#include <cstring>

#include "../convert_table_template.hpp"
#include "../kernel_table.hpp"
#include "convert_vectors_avx2.hpp"
#include "lanes_below_avx2.hpp"

namespace nova::conv {

namespace {

// A run narrowed 8 floats at a time by narrow8 (__m256 -> 8 elements of kBytes in the low part of a
// __m128i).
template <std::size_t kBytes, class Narrow8>
[[gnu::always_inline]] inline void narrow_with(Narrow8&& narrow8, const float* src, void* dst,
                                               int64_t count) {
  auto* d = static_cast<unsigned char*>(dst);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) store_narrowed<kBytes>(d + i * kBytes, narrow8(_mm256_loadu_ps(src + i)), 8);
  if (i < count) {  // zero padding: finite and in range, so it adds to no count
    alignas(32) float in[8] = {};
    std::memcpy(in, src + i, static_cast<std::size_t>(count - i) * sizeof(float));
    store_narrowed<kBytes>(d + i * kBytes, narrow8(_mm256_load_ps(in)), count - i);
  }
}

// A copy by memcpy: against a loop of 8-float loads and stores, glibc's memcpy made FP32 NHWC plans
// (whose stores copy 16-float pixel rows) 4 % faster here (1 thread, alternated: 8x64x56x56 8.66
// against 9.08 ms), unlike on the AVX-512 path, where the call cost more than the copy.
void narrow_fp32(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}
[[gnu::always_inline]] inline void narrow_bf16(const float* src, void* dst, int64_t count, float,
                                               NarrowCounts*) {
  narrow_with<2>([](__m256 x) { return bf16_bits8(x); }, src, dst, count);
}
[[gnu::always_inline]] inline void narrow_fp16(const float* src, void* dst, int64_t count, float,
                                               NarrowCounts*) {
  narrow_with<2>([](__m256 x) { return fp16_bits8(x); }, src, dst, count);
}
[[gnu::always_inline]] inline void narrow_int8(const float* src, void* dst, int64_t count, float inv_scale,
                                               NarrowCounts* counts) {
  Int8NarrowAvx2 narrow(inv_scale);
  narrow_with<1>(narrow, src, dst, count);
  counts->saturated += narrow.saturated();
  counts->nonfinite += narrow.nonfinite();
}

// Nearly always nothing is counted, so a first pass only finds whether anything is: the largest
// |x| bits of the counted lanes (unsigned: NaN bits lie above inf's, and positive floats order as their
// bits), two instructions per 8 floats; only a region holding |x| >= limit or a NaN is counted value by
// value, with compares (a NaN compares "not less than": counted) whose all-ones lanes are subtracted.
int64_t count_beyond(const float* src, std::ptrdiff_t row_stride, int64_t rows, int64_t pixels, int lanes,
                     float limit) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
  // |x| of the counted lanes, 0 in the others.
  const __m256i in_lo = _mm256_and_si256(lanes_below(lanes), abs_mask),
                in_hi = _mm256_and_si256(lanes_below(lanes - 8), abs_mask);
  const auto pixel = [&](int64_t r, int64_t x, int half) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + r * row_stride + x * 16 + half * 8));
  };
  __m256i largest = _mm256_setzero_si256();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < pixels; ++x)
      largest = _mm256_max_epu32(largest, _mm256_max_epu32(_mm256_and_si256(pixel(r, x, 0), in_lo),
                                                           _mm256_and_si256(pixel(r, x, 1), in_hi)));
  const __m256i limit_bits = _mm256_set1_epi32(static_cast<int>(std::bit_cast<uint32_t>(limit)));
  // largest >= limit_bits (unsigned) where max(largest, limit_bits) == largest.
  if (_mm256_testz_si256(_mm256_cmpeq_epi32(_mm256_max_epu32(largest, limit_bits), largest),
                         _mm256_set1_epi32(-1)))
    return 0;
  const __m256 lim = _mm256_set1_ps(limit);
  __m256i count = _mm256_setzero_si256();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < pixels; ++x)
      for (int half = 0; half < 2; ++half) {
        const __m256i v = _mm256_and_si256(pixel(r, x, half), half ? in_hi : in_lo);
        count = _mm256_sub_epi32(
            count, _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(v), lim, _CMP_NLT_UQ)));
      }
  alignas(32) int32_t lane_counts[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_counts), count);
  int64_t total = 0;
  for (const int32_t c : lane_counts) total += c;
  return total;
}

}  // namespace

ConvertTable convert_table_avx2() {
  ConvertTable t = kernels_impl::make_convert_table<&widen_run<DataType::kFp32>, &widen_run<DataType::kBf16>,
                                                    &widen_run<DataType::kFp16>, &widen_run<DataType::kInt8>,
                                                    &narrow_fp32, &narrow_bf16, &narrow_fp16, &narrow_int8>();
  t.count_beyond = &count_beyond;
  return t;
}

}  // namespace nova::conv
