// ConvertTable's conversions of one vector of 8 values on AVX2 (+ F16C for fp16), shared by the element
// conversions (convert_avx2.cpp) and the layout changes that widen or narrow as they move data
// (layout_avx2.cpp), so that they all give the portable path's bits and counts
// (kernels/portable/convert_portable.cpp):
//   widen8<T>: bf16 bits shifted up, fp16 by vcvtph2ps (exact; it makes a signalling NaN quiet, where
//              the portable loop keeps its bits, as the AVX-512 path does), int8 code * scale;
//   bf16_bits8: bf16_round_rne8 (RNE on the bits, NaN made quiet), the 8 words in order;
//   fp16_bits8: vcvtps2ph with round to nearest even;
//   Int8NarrowAvx2: RNE of x * inv_scale clamped to +-127, NaN to 0, Inf to +-127; clamped and NaN/Inf
//              values counted.
// Include only from kernels/avx2/ files compiled with -mavx2 -mfma -mf16c; internal linkage.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../kernel_table.hpp"
#include "bf16_round_avx2.hpp"

namespace {

using nova::conv::DataType;

// Bytes of one element of T (nova::conv::element_size, at compile time).
template <DataType T>
inline constexpr std::ptrdiff_t kElementBytes = T == DataType::kFp32   ? 4
                                                : T == DataType::kInt8 ? 1
                                                                       : 2;

// 8 elements of type T from p, as floats (int8: code * scale).
template <DataType T>
[[gnu::always_inline]] inline __m256 widen8(const void* p, __m256 scale) {
  if constexpr (T == DataType::kFp32) {
    return _mm256_loadu_ps(static_cast<const float*>(p));
  } else if constexpr (T == DataType::kBf16) {
    const __m128i h = _mm_loadu_si128(static_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else if constexpr (T == DataType::kFp16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p)));
  } else {
    const __m128i b = _mm_loadl_epi64(static_cast<const __m128i*>(p));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), scale);
  }
}

// A run of `count` elements widened 8 at a time; a tail of fewer than 8 through widen8 on a zero-padded
// copy, so that every element gets the same bits wherever it sits (ConvertTable::widen).
template <DataType T>
void widen_run(const void* src, float* dst, int64_t count, float scale) {
  constexpr auto kBytes = static_cast<std::size_t>(kElementBytes<T>);
  const auto* s = static_cast<const unsigned char*>(src);
  const __m256 sc = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(dst + i, widen8<T>(s + i * kBytes, sc));
  if (i < count) {
    const auto left = static_cast<std::size_t>(count - i);
    alignas(32) unsigned char in[8 * kBytes] = {};
    alignas(32) float out[8];
    std::memcpy(in, s + i * kBytes, left * kBytes);
    _mm256_store_ps(out, widen8<T>(in, sc));
    std::memcpy(dst + i, out, left * sizeof(float));
  }
}

// Stores the first `count` (1..8) of 8 narrowed elements of kBytes (the low 8 * kBytes bytes of v): a
// whole vector store for 8, through a buffer for fewer, so nothing past them is written.
template <std::size_t kBytes>
[[gnu::always_inline]] inline void store_narrowed(void* dst, __m128i v, int64_t count) {
  static_assert(kBytes == 1 || kBytes == 2, "int8 or 16-bit elements");
  if (count >= 8) {
    if constexpr (kBytes == 2)
      _mm_storeu_si128(static_cast<__m128i*>(dst), v);
    else
      _mm_storel_epi64(static_cast<__m128i*>(dst), v);
    return;
  }
  alignas(16) unsigned char tmp[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(tmp), v);
  std::memcpy(dst, tmp, static_cast<std::size_t>(count) * kBytes);
}

// The bf16 bits of 8 floats, in order.
[[gnu::always_inline]] inline __m128i bf16_bits8(__m256 x) {
  const __m256i w = _mm256_srli_epi32(bf16_round_rne8(_mm256_castps_si256(x)), 16);  // 0..0xFFFF
  return _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

[[gnu::always_inline]] inline __m128i fp16_bits8(__m256 x) {
  return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// The portable narrow_int8's operations, 8 lanes per instruction: codes in the low 8 bytes of the result.
class Int8NarrowAvx2 {
 public:
  explicit Int8NarrowAvx2(float inv_scale) : inv_(_mm256_set1_ps(inv_scale)) {}

  [[gnu::always_inline]] inline __m128i operator()(__m256 x) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256 q = _mm256_mul_ps(x, inv_);
    // Finite is of x, not q: a finite x whose quotient overflows saturates (counted so), as in the portable
    // form.
    const __m256 finite = _mm256_cmp_ps(_mm256_and_ps(x, abs_mask), _mm256_set1_ps(__builtin_inff()),
                                        _CMP_LT_OQ);  // false: NaN, Inf
    const __m256 a = _mm256_and_ps(q, abs_mask);
    const __m256 over = _mm256_and_ps(_mm256_cmp_ps(a, _mm256_set1_ps(127.5f), _CMP_GT_OQ), finite);
    const int finite_bits = _mm256_movemask_ps(finite), over_bits = _mm256_movemask_ps(over);
    if (finite_bits != 0xFF) nonfinite_ += __builtin_popcount(static_cast<unsigned>(~finite_bits) & 0xFFu);
    if (over_bits != 0) saturated_ += __builtin_popcount(static_cast<unsigned>(over_bits));
    // NaN -> 0 before the clamp (max/min would pass a NaN operand's partner through, not 0); Inf clamps
    // to +-127. Clamping before rounding gives what rounding then clamping gives: |q| in (127, 127.5]
    // rounds to 127 or 128, clamped to 127 either way.
    const __m256 y = _mm256_and_ps(q, _mm256_cmp_ps(q, q, _CMP_ORD_Q));
    const __m256 c = _mm256_min_ps(_mm256_max_ps(y, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    const __m256i i = _mm256_cvtps_epi32(c);  // round to nearest even (the default mode)
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    return _mm_packs_epi16(w, w);
  }

  int64_t saturated() const { return saturated_; }
  int64_t nonfinite() const { return nonfinite_; }

 private:
  __m256 inv_;
  int64_t saturated_ = 0, nonfinite_ = 0;
};

}  // namespace
