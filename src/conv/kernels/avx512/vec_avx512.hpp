// 16 floats in one AVX-512 register. Include only from kernels/avx512/ files (compiled with -mavx512f).
#pragma once

#include <immintrin.h>

#include <bit>
#include <cstddef>
#include <cstdint>

#include "bf16_round_avx512.hpp"
#include "narrow_vectors_avx512.hpp"

namespace {

struct VecAvx512 {
  __m512 v;
  static VecAvx512 zero() { return {_mm512_setzero_ps()}; }
  static VecAvx512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  // The first n (0..16) floats at p, zeros past them; nothing past them is read (a masked load).
  static VecAvx512 load_partial(const float* p, std::size_t n) {
    return {_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p)};
  }
  static void store(float* p, VecAvx512 x) { _mm512_storeu_ps(p, x.v); }
  // 16 int8 codes times s: widen_int8's operations (convert_avx512.cpp), so the same bits.
  static VecAvx512 load_int8_scaled(const int8_t* p, VecAvx512 s) {
    const __mmask16 all = static_cast<__mmask16>(0xFFFF);
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return {_mm512_maskz_mul_ps(all, _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, b)), s.v)};
  }
  // 16 bf16 or fp16 values: widen_bf16's and widen_fp16's operations (convert_avx512.cpp), so the same
  // bits (vcvtph2ps returns signalling NaNs quiet, as the widening does).
  static VecAvx512 load_bf16(const uint16_t* p) {
    const __mmask16 all = static_cast<__mmask16>(0xFFFF);
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm512_castsi512_ps(_mm512_maskz_slli_epi32(all, _mm512_maskz_cvtepu16_epi32(all, h), 16))};
  }
  static VecAvx512 load_fp16(const uint16_t* p) {
    return {_mm512_maskz_cvtph_ps(static_cast<__mmask16>(0xFFFF),
                                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  }
  // As fp16 bits, round to nearest even (vcvtps2ph; masked form: see relu).
  static void store_fp16(uint16_t* p, VecAvx512 x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_maskz_cvtps_ph(static_cast<__mmask16>(0xFFFF), x.v,
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // As bf16 bits (bf16_bits_rne: the bf16 conversion pass's bits), and as the bf16 values themselves
  // kept in floats (round_bf16: the in-place rounding pass's bits).
  static void store_bf16(uint16_t* p, VecAvx512 x) {
    const __m512i r = bf16_round_rne(_mm512_castps_si512(x.v));
    _mm512_mask_cvtepi32_storeu_epi16(p, static_cast<__mmask16>(0xFFFF),
                                      _mm512_maskz_srli_epi32(static_cast<__mmask16>(0xFFFF), r, 16));
  }
#if defined(__AVX512BF16__)
  // As bf16 bits by vcvtneps2bf16 (files compiled with AVX512-BF16 only): RNE and quiet NaNs as
  // store_bf16, but an FP32 subnormal stores a zero of its sign. Only for the bf16 dot-product and AMX
  // GEMMs, which read bf16 subnormals as zero anyway: one instruction where store_bf16 takes nine.
  static void store_bf16_hw(uint16_t* p, VecAvx512 x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x.v)));
  }
#endif
  static void store_bf16_rounded(float* p, VecAvx512 x) {
    const __m512i r = bf16_round_rne(_mm512_castps_si512(x.v));
    _mm512_storeu_si512(p, _mm512_and_si512(r, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  // The int8-spatial GEMM's V' operand written by the input transform (InputTileInt16Fn): the exact
  // integer-valued V' as int16, as Int16ConvertFn converts it (a NaN, an Inf or |v| > 32767 stores 0);
  // returns the lanes that were not representable.
  static __mmask16 store_int16(int16_t* p, VecAvx512 x) {
    const __mmask16 all = static_cast<__mmask16>(0xFFFF);
    const __m512 ax =
        _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x.v), _mm512_set1_epi32(0x7FFFFFFF)));
    const __mmask16 ok = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(32767.0f), _CMP_LE_OQ);  // false for NaN
    _mm512_mask_cvtsepi32_storeu_epi16(p, all, _mm512_maskz_cvtps_epi32(ok, x.v));
    return static_cast<__mmask16>(~ok);
  }
  // The int8 GEMM's V operand written by the input transform (kernel_table.hpp, InputTileInt8Fn): the
  // operations of the portable int8_code, 16 lanes at a time (RNE by the conversion's embedded rounding,
  // as the portable magic-number addition rounds for |y| <= 127). Saturated values are counted per lane
  // and non-finite ones in a mask, so that a store costs no mask-to-integer moves.
  struct Int8Tally {
    __m512i saturated = _mm512_setzero_si512();
    __mmask16 finite = static_cast<__mmask16>(0xFFFF);
  };
  static void store_int8(uint8_t* p, VecAvx512 x, float inv, Int8Tally& t) {
    const __mmask16 all = static_cast<__mmask16>(0xFFFF);
    const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
    const __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x.v), abs_mask));
    const __mmask16 finite = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(__builtin_inff()), _CMP_LT_OQ);
    t.finite = static_cast<__mmask16>(t.finite & finite);
    __m512 y = _mm512_maskz_mul_ps(finite, x.v, _mm512_set1_ps(inv));
    const __m512 ay = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(y), abs_mask));
    const __mmask16 over = _mm512_cmp_ps_mask(ay, _mm512_set1_ps(127.5f), _CMP_GT_OQ);
    t.saturated = _mm512_mask_sub_epi32(t.saturated, over, t.saturated, _mm512_set1_epi32(-1));
    y = _mm512_mask_min_ps(y, all, _mm512_mask_max_ps(y, all, y, _mm512_set1_ps(-127.0f)),
                           _mm512_set1_ps(127.0f));
    const __m512i code = _mm512_add_epi32(
        _mm512_maskz_cvt_roundps_epi32(all, y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
        _mm512_set1_epi32(128));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_maskz_cvtepi32_epi8(all, code));
  }
  // The fast form, valid for a tile whose every RNE(v * inv) lies in [-127, 127], where the clamp never
  // acts, nothing saturates (|v * inv| < 127.5) and nothing is NaN/Inf: code = RNE(v * inv) + 128 with
  // the largest |RNE(v * inv)| of the tile tracked (NaN/Inf and out-of-range products convert to
  // INT_MIN, whose |.| is 2^31 as unsigned). When the tile fails int8_in_range, the caller runs the
  // exact store_int8 over the tile again. 8 instructions per 16 values against store_int8's 15.
  struct Int8Range {
    __m512i max_abs = _mm512_setzero_si512();
  };
  static void store_int8_unchecked(uint8_t* p, VecAvx512 x, float inv, Int8Range& r) {
    const __mmask16 all = static_cast<__mmask16>(0xFFFF);
    const __m512i c = _mm512_maskz_cvt_roundps_epi32(all, _mm512_mul_ps(x.v, _mm512_set1_ps(inv)),
                                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r.max_abs = _mm512_maskz_max_epu32(all, r.max_abs, _mm512_maskz_abs_epi32(all, c));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm512_maskz_cvtepi32_epi8(all, _mm512_add_epi32(c, _mm512_set1_epi32(128))));
  }
  static bool int8_in_range(const Int8Range& r) {
    return _mm512_cmpgt_epu32_mask(r.max_abs, _mm512_set1_epi32(127)) == 0;
  }
  static int64_t int8_result(const Int8Tally& t, int* bad) {
    *bad |= t.finite != static_cast<__mmask16>(0xFFFF) ? 1 : 0;
    alignas(64) int32_t lanes[16];  // not _mm512_reduce_add_epi32: GCC 12 bug 105593 (see relu)
    _mm512_store_si512(lanes, t.saturated);
    int64_t sum = 0;
    for (int32_t c : lanes) sum += c;
    return sum;
  }
  // Output results narrowed to bf16 bits: ConvertTable's bf16 narrowing (narrow_vectors_avx512.hpp; with
  // vcvtneps2bf16 in files compiled with AVX512-BF16, the same bits).
  [[gnu::always_inline]] static void store_bf16_out(uint16_t* p, VecAvx512 x) {
#if defined(__AVX512BF16__)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bf16_bits_hw(x.v));
#else
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bf16_bits(x.v));
#endif
  }
  // Output results narrowed to int8 codes: ConvertTable's int8 narrowing on this ISA
  // (narrow_vectors_avx512.hpp), so the same codes and counts.
  using Int8OutNarrow = Int8NarrowAvx512;
  [[gnu::always_inline]] static void store_int8_out(int8_t* p, VecAvx512 x, Int8OutNarrow& narrow) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), narrow(x.v, static_cast<__mmask16>(0xFFFF)));
  }
  // The largest |x| bits stored by an output tile (NaN above Inf as unsigned), and whether they reach
  // `limit`: count_beyond's first tier (convert_avx512.cpp), in registers.
  struct AbsBitsMax {
    __m512i bits = _mm512_setzero_si512();
  };
  static void abs_bits_max(AbsBitsMax& t, VecAvx512 x) {
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(x.v), _mm512_set1_epi32(0x7FFFFFFF));
    t.bits = _mm512_maskz_max_epu32(static_cast<__mmask16>(0xFFFF), t.bits, a);
  }
  static bool abs_bits_reach(const AbsBitsMax& t, float limit) {
    return _mm512_cmpge_epu32_mask(t.bits,
                                   _mm512_set1_epi32(static_cast<int>(std::bit_cast<uint32_t>(limit)))) != 0;
  }
  // m = max(m, |x|) per lane over the finite x, magnitudes compared as bit patterns (as the amax pass).
  static void amax_into(float* m, VecAvx512 x) {
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(x.v), _mm512_set1_epi32(0x7FFFFFFF));
    const __mmask16 finite = _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x7F800000));
    const __m512i cur = _mm512_loadu_si512(m);
    _mm512_storeu_si512(m, _mm512_mask_max_epu32(cur, finite, cur, a));
  }
  static VecAvx512 broadcast(float s) {
    return {_mm512_set1_ps(s)};
  }
  static VecAvx512 add(VecAvx512 a, VecAvx512 b) {
    return {_mm512_add_ps(a.v, b.v)};
  }
  static VecAvx512 sub(VecAvx512 a, VecAvx512 b) {
    return {_mm512_sub_ps(a.v, b.v)};
  }
  static VecAvx512 neg(VecAvx512 a) {
    return {_mm512_sub_ps(_mm512_setzero_ps(), a.v)};
  }
  static VecAvx512 mulc(VecAvx512 a, float c) {
    return {_mm512_mul_ps(a.v, _mm512_set1_ps(c))};
  }
  // a*c + b
  static VecAvx512 fmac(VecAvx512 a, float c, VecAvx512 b) {
    return {_mm512_fmadd_ps(a.v, _mm512_set1_ps(c), b.v)};
  }
  static VecAvx512 fma(VecAvx512 a, VecAvx512 b, VecAvx512 c) {
    return {_mm512_fmadd_ps(a.v, b.v, c.v)};
  }
  // max(0, a) with a second: a NaN propagates (as in the other paths). The masked form avoids GCC 12's
  // false maybe-uninitialized warning on _mm512_max_ps.
  static VecAvx512 relu(VecAvx512 a) {
    const __m512 z = _mm512_setzero_ps();
    return {_mm512_mask_max_ps(z, static_cast<__mmask16>(0xFFFF), z, a.v)};
  }
  // Lane i = lane (i / CG) * CG + C of x (CG 2, 4 or 8): each group of CG lanes holds its C-th value.
  // In-lane shuffles by an immediate where a group lies within 128 bits, else one permute.
  template <int CG, int C>
  static VecAvx512 group_broadcast(VecAvx512 x) {
    if constexpr (CG == 8) {
      return {_mm512_mask_permutexvar_ps(
          x.v, static_cast<__mmask16>(0xFFFF),
          _mm512_setr_epi32(C, C, C, C, C, C, C, C, 8 + C, 8 + C, 8 + C, 8 + C, 8 + C, 8 + C, 8 + C, 8 + C),
          x.v)};
    } else {
      constexpr int imm = CG == 4 ? C * 0x55 : C | C << 2 | (2 + C) << 4 | (2 + C) << 6;
      return {_mm512_mask_permute_ps(x.v, static_cast<__mmask16>(0xFFFF), x.v, imm)};  // masked: see relu
    }
  }
};

}  // namespace
