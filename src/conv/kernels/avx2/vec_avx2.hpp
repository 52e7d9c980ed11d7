// 16 floats in two AVX2 registers. Include only from kernels/avx2/ files (compiled with -mavx2 -mfma).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "bf16_round_avx2.hpp"

namespace {

// Two registers of 8 int32 narrowed to 16 int16 in lane order: vpackssdw / vpackusdw interleave their
// operands per 128-bit lane (lo0-3 hi0-3 | lo4-7 hi4-7), and the 64-bit permute puts them back in order.
// The one narrowing of the bf16, int16 and int8 stores below.
template <bool kUnsigned>
inline __m256i narrow_words_in_order(__m256i lo, __m256i hi) {
  const __m256i packed = kUnsigned ? _mm256_packus_epi32(lo, hi) : _mm256_packs_epi32(lo, hi);
  return _mm256_permute4x64_epi64(packed, 0xD8);
}

struct VecAvx2 {
  __m256 lo, hi;
  // As bf16 bits (bf16_bits_rne: the bf16 conversion pass's bits), and as the bf16 values themselves kept
  // in floats (round_bf16: the in-place rounding pass's bits), so that the transform writes the bf16
  // GEMMs' operand without a pass over V.
  static void store_bf16(uint16_t* p, VecAvx2 x) {
    const __m256i lo = _mm256_srli_epi32(bf16_round_rne8(_mm256_castps_si256(x.lo)), 16),
                  hi = _mm256_srli_epi32(bf16_round_rne8(_mm256_castps_si256(x.hi)), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow_words_in_order<true>(lo, hi));  // 0..0xFFFF
  }
#if defined(__F16C__)
  // As fp16 values kept in floats: round_fp16's bits (vcvtps2ph, round to nearest even, and back), the
  // fp16 GEMM's operand on the avx2-f16c path, written without the rounding pass over V. Only in files
  // compiled with F16C (transforms_avx2.cpp); plans call it only where lowp.cpp chose that path.
  static void store_fp16_rounded(float* p, VecAvx2 x) {
    constexpr int kRne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    _mm256_storeu_ps(p, _mm256_cvtph_ps(_mm256_cvtps_ph(x.lo, kRne)));
    _mm256_storeu_ps(p + 8, _mm256_cvtph_ps(_mm256_cvtps_ph(x.hi, kRne)));
  }
#endif
  static void store_bf16_rounded(float* p, VecAvx2 x) {
    const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm256_and_si256(bf16_round_rne8(_mm256_castps_si256(x.lo)), high));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + 8),
                        _mm256_and_si256(bf16_round_rne8(_mm256_castps_si256(x.hi)), high));
  }
  // The int8-spatial GEMM's V' operand written by the input transform (InputTileInt16Fn): the exact
  // integer-valued V' as int16, as Int16ConvertFn converts it (a NaN, an Inf or |v| > 32767 stores 0);
  // returns the lanes that were not representable, one bit each.
  static unsigned store_int16(int16_t* p, VecAvx2 x) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)),
                 limit = _mm256_set1_ps(32767.0f);
    const __m256 ok_lo = _mm256_cmp_ps(_mm256_and_ps(x.lo, abs_mask), limit, _CMP_LE_OQ);  // false for NaN
    const __m256 ok_hi = _mm256_cmp_ps(_mm256_and_ps(x.hi, abs_mask), limit, _CMP_LE_OQ);
    const __m256i lo = _mm256_cvtps_epi32(_mm256_and_ps(x.lo, ok_lo)),
                  hi = _mm256_cvtps_epi32(_mm256_and_ps(x.hi, ok_hi));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow_words_in_order<false>(lo, hi));
    return static_cast<unsigned>(~(_mm256_movemask_ps(ok_lo) | (_mm256_movemask_ps(ok_hi) << 8))) & 0xFFFFu;
  }
  // The int8 GEMM's V operand written by the input transform (kernel_table.hpp, InputTileInt8Fn): the
  // operations of the portable int8_code, 8 lanes per instruction (RNE by vcvtps2dq under the default
  // rounding mode, as the portable magic-number addition rounds for |y| <= 127). Saturated values are
  // counted per lane (a compare's all-ones lanes subtracted) and the finite lanes kept as a mask.
  struct Int8Tally {
    __m256i saturated = _mm256_setzero_si256();
    __m256 finite = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  };
  [[gnu::always_inline]] static __m256i int8_codes8(__m256 x, __m256 inv, Int8Tally& t) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256 finite =
        _mm256_cmp_ps(_mm256_and_ps(x, abs_mask), _mm256_set1_ps(__builtin_inff()), _CMP_LT_OQ);
    t.finite = _mm256_and_ps(t.finite, finite);
    __m256 y = _mm256_and_ps(_mm256_mul_ps(x, inv), finite);  // NaN/Inf: 0, code 128
    const __m256 over = _mm256_cmp_ps(_mm256_and_ps(y, abs_mask), _mm256_set1_ps(127.5f), _CMP_GT_OQ);
    t.saturated = _mm256_sub_epi32(t.saturated, _mm256_castps_si256(over));
    y = _mm256_min_ps(_mm256_max_ps(y, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    return _mm256_add_epi32(_mm256_cvtps_epi32(y), _mm256_set1_epi32(128));
  }
  [[gnu::always_inline]] static void store_int8(uint8_t* p, VecAvx2 x, float inv, Int8Tally& t) {
    const __m256 k = _mm256_set1_ps(inv);
    store_codes16(p, int8_codes8(x.lo, k, t), int8_codes8(x.hi, k, t));
  }
  // 16 biased codes (int32, 0..255 where valid) in lane order as 16 bytes: the store of both int8 tiers.
  [[gnu::always_inline]] static void store_codes16(uint8_t* p, __m256i lo, __m256i hi) {
    const __m256i words = narrow_words_in_order<false>(lo, hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1)));
  }
  // The fast tier of the int8 store, as on AVX-512 (transform_template.hpp, input_tiles_int8): codes
  // by vcvtps2dq (RNE) without the clamp, NaN/Inf check or counts, and max |code| per lane kept (a NaN,
  // an Inf or a value beyond int32 converts to INT_MIN, whose |.| is 2^31 as unsigned). Where every
  // |code| <= 127 these are the exact store's codes; otherwise the caller runs store_int8 over the tile
  // again. About 15 instructions per 16 values against store_int8's 30.
  struct Int8Range {
    __m256i max_abs = _mm256_setzero_si256();
  };
  [[gnu::always_inline]] static void store_int8_unchecked(uint8_t* p, VecAvx2 x, float inv, Int8Range& r) {
    const __m256 k = _mm256_set1_ps(inv);
    const __m256i lo = _mm256_cvtps_epi32(_mm256_mul_ps(x.lo, k)),
                  hi = _mm256_cvtps_epi32(_mm256_mul_ps(x.hi, k));
    r.max_abs = _mm256_max_epu32(r.max_abs, _mm256_max_epu32(_mm256_abs_epi32(lo), _mm256_abs_epi32(hi)));
    const __m256i bias = _mm256_set1_epi32(128);
    store_codes16(p, _mm256_add_epi32(lo, bias), _mm256_add_epi32(hi, bias));
  }
  static bool int8_in_range(const Int8Range& r) {  // every lane <= 127 as unsigned (no unsigned compare)
    const __m256i limit = _mm256_set1_epi32(127);
    return _mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(r.max_abs, limit), limit)) == -1;
  }
  static int64_t int8_result(const Int8Tally& t, int* bad) {
    *bad |= _mm256_movemask_ps(t.finite) != 0xFF ? 1 : 0;
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), t.saturated);
    int64_t sum = 0;
    for (int32_t c : lanes) sum += c;
    return sum;
  }
  // m = max(m, |x|) per lane over the finite x, magnitudes compared as bit patterns (as the amax pass;
  // both are non-negative as int32, so the signed max is the unsigned one).
  static void amax_half(float* m, __m256 x) {
    const __m256i a = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i finite = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7F800000), a);
    const __m256i cur = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(m), _mm256_max_epi32(cur, _mm256_and_si256(a, finite)));
  }
  static void amax_into(float* m, VecAvx2 x) {
    amax_half(m, x.lo);
    amax_half(m + 8, x.hi);
  }
  static VecAvx2 zero() {
    return {_mm256_setzero_ps(), _mm256_setzero_ps()};
  }
  // The first n (0..16) floats at p, zeros past them; nothing past them is read (vmaskmovps loads).
  static VecAvx2 load_partial(const float* p, std::size_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int k = static_cast<int>(n);
    return {_mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(k), lane)),
            _mm256_maskload_ps(p + 8, _mm256_cmpgt_epi32(_mm256_set1_epi32(k - 8), lane))};
  }
  static VecAvx2 load(const float* p) {
    return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
  }
  static void store(float* p, VecAvx2 x) {
    _mm256_storeu_ps(p, x.lo);
    _mm256_storeu_ps(p + 8, x.hi);
  }
  static VecAvx2 broadcast(float s) {
    const __m256 b = _mm256_set1_ps(s);
    return {b, b};
  }
  static VecAvx2 add(VecAvx2 a, VecAvx2 b) {
    return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)};
  }
  static VecAvx2 sub(VecAvx2 a, VecAvx2 b) {
    return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)};
  }
  static VecAvx2 neg(VecAvx2 a) {
    return sub(zero(), a);
  }
  static VecAvx2 mulc(VecAvx2 a, float c) {
    const __m256 k = _mm256_set1_ps(c);
    return {_mm256_mul_ps(a.lo, k), _mm256_mul_ps(a.hi, k)};
  }
  static VecAvx2 fmac(VecAvx2 a, float c, VecAvx2 b) {
    const __m256 k = _mm256_set1_ps(c);
    return {_mm256_fmadd_ps(a.lo, k, b.lo), _mm256_fmadd_ps(a.hi, k, b.hi)};
  }
  static VecAvx2 fma(VecAvx2 a, VecAvx2 b, VecAvx2 c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  static VecAvx2 relu(VecAvx2 a) {
    return {_mm256_max_ps(_mm256_setzero_ps(), a.lo),
            _mm256_max_ps(_mm256_setzero_ps(), a.hi)};  // NaN propagates
  }
  // Lane i = lane (i / CG) * CG + C of x (CG 2, 4 or 8): each group of CG lanes holds its C-th value.
  // In-lane shuffles by an immediate where a group lies within 128 bits, else one permute per half.
  template <int CG, int C>
  static VecAvx2 group_broadcast(VecAvx2 x) {
    if constexpr (CG == 8) {
      const __m256i idx = _mm256_set1_epi32(C);
      return {_mm256_permutevar8x32_ps(x.lo, idx), _mm256_permutevar8x32_ps(x.hi, idx)};
    } else {
      constexpr int imm = CG == 4 ? C * 0x55 : C | C << 2 | (2 + C) << 4 | (2 + C) << 6;
      return {_mm256_permute_ps(x.lo, imm), _mm256_permute_ps(x.hi, imm)};
    }
  }
};

// 8 floats in one AVX2 register: the FP32 tile transforms run the 16 lanes of a channel block as two
// halves of this type, so that a column of 8 or 9 points takes 8 or 9 registers, not 16 or 18 of the
// 16 there are (VecAvx2 spilled them; transforms_avx2.cpp). Per lane the same operations, so the same bits.
struct VecAvx2Half {
  __m256 v;
  static VecAvx2Half zero() { return {_mm256_setzero_ps()}; }
  static VecAvx2Half load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static void store(float* p, VecAvx2Half x) { _mm256_storeu_ps(p, x.v); }
  static VecAvx2Half broadcast(float s) { return {_mm256_set1_ps(s)}; }
  static VecAvx2Half add(VecAvx2Half a, VecAvx2Half b) { return {_mm256_add_ps(a.v, b.v)}; }
  static VecAvx2Half sub(VecAvx2Half a, VecAvx2Half b) { return {_mm256_sub_ps(a.v, b.v)}; }
  static VecAvx2Half neg(VecAvx2Half a) { return sub(zero(), a); }
  static VecAvx2Half mulc(VecAvx2Half a, float c) { return {_mm256_mul_ps(a.v, _mm256_set1_ps(c))}; }
  static VecAvx2Half fmac(VecAvx2Half a, float c, VecAvx2Half b) {
    return {_mm256_fmadd_ps(a.v, _mm256_set1_ps(c), b.v)};
  }
  static VecAvx2Half fma(VecAvx2Half a, VecAvx2Half b, VecAvx2Half c) {
    return {_mm256_fmadd_ps(a.v, b.v, c.v)};
  }
  static VecAvx2Half relu(VecAvx2Half a) {
    return {_mm256_max_ps(_mm256_setzero_ps(), a.v)};
  }  // NaN propagates
};

}  // namespace
