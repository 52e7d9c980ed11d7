// Low-precision GEMM kernels of the Winograd paths (docs/engine.md, "Low-precision paths"). Each
// computes C[i][j] for i < rows, j < 16*nv from a block of V rows (A, row stride lda elements) and a
// packed panel of U (B, 16*nv columns), every C element in one fixed order whatever the blocking, so
// the portable and the AVX-512 kernel of a type give bit-identical results (the bf16 AMX kernel sums in
// the tile unit's order: its own fixed order, not theirs).
//
// Panel layouts (kc channels, a multiple of 16; w = 16*nv columns):
//   bf16: channel pairs interleaved: B[(c/2)*(2w) + 2j + (c&1)] (vdpbf16ps operand), A bf16 bits
//   fp16: B[c*w + j] (fp16 bits, widened by vcvtph2ps); A: fp32 values already rounded to fp16
//   fp16 FMA: B as fp16; A fp16 bits. Channels in chunks of kFp16FmaChunk: in each, from zero,
//         s = fp16(s + a*b) per channel in order (an fp16 FMA: exact product, one rounding, subnormals
//         kept); then C = float(C + s) (C from +0), chunk after chunk (the fp16-fma preset)
//   int8: channel quads interleaved: B[(c/4)*(4w) + 4j + (c&3)] (vpdpbusd operand, s8); A = V code + 128
//         (u8); C = float(sum - comp[j]) * scale[j], comp[j] = 128 * sum_c B(c, j)
//   bf16 FMA: B as for bf16 (pair-interleaved bits); A: fp32 values already rounded to bf16; per
//         channel in order, C = fma(a, b, C) from +0 (exact products, one rounding per channel,
//         subnormals kept): the bf16-storage preset's arithmetic
// BF16 (dot) follows vdpbf16ps exactly: per channel pair, acc = FTZ(RNE(acc + a[odd]*b[odd])), then the even
// element, with bf16 subnormal operands read as zero (DAZ), the products exact, each sum rounded once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nova::conv {

using Bf16GemmFn = void (*)(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda,
                            const uint16_t* b, float* c, std::size_t ldc);
// FP32 FMAs on a 16-bit U widened as it is loaded, A fp32 values already rounded to the U format: the
// fp16 (F16C) and bf16 FMA kernels. col_scale (16 * nv floats, or null for none) multiplies each column
// of C as it is stored: the powers of two that undo the fp16 U's exponent normalization (lowp.cpp),
// exact in FP32.
using WidenedGemmFn = void (*)(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda,
                               const uint16_t* b, const float* col_scale, float* c, std::size_t ldc);
// col_scale as WidenedGemmFn's, applied to the FP32 total.
using Fp16FmaGemmFn = void (*)(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda,
                               const uint16_t* b, const float* col_scale, float* c, std::size_t ldc);
using Int8GemmFn = void (*)(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda,
                            const int8_t* b, const int32_t* comp, const float* scale, float* c,
                            std::size_t ldc);
// Int8GemmFn over the consecutive panels of columns [0, width) of one position, for a kernel that converts
// V's rows before its products (AVX2: u8 codes to int16) and would convert them again for every panel.
// Panel p (columns [p * panel, ...)) starts at b + p * panel * kc; column j's scale is v_scale * u_scale[j],
// formed as the callers of Int8GemmFn form theirs.
using Int8PanelsGemmFn = void (*)(int64_t rows, int64_t width, int64_t panel, std::size_t kc,
                                  const uint8_t* a, std::size_t lda, const int8_t* b, const int32_t* comp,
                                  float v_scale, const float* u_scale, float* c, std::size_t ldc);

// Conversions of V to the GEMM operand (count values; the same bits on every path):
//   bf16: dst = bf16_bits_rne(src)
//   fp16: v = round_fp16(v), in place
//   bf16 (FMA GEMM): v = round_bf16(v), in place
//   fp16 bits (fp16 FMA): dst = fp16_bits_rne(src)
//   int8: dst = RNE(clamp(src * inv, -127, 127)) + 128; NaN/Inf give code 128 and set *bad; returns the
//         number of values with |src * inv| > 127.5 (saturated)
using Bf16ConvertFn = void (*)(const float* src, uint16_t* dst, int64_t count);
using RoundFn = void (*)(float* v, int64_t count);  // in place, to fp16 or bf16 values
using Fp16ConvertFn = void (*)(const float* src, uint16_t* dst, int64_t count);
using Int8QuantizeFn = int64_t (*)(const float* src, uint8_t* dst, int64_t count, float inv, int* bad);
// max |x| over the finite values (0 when none): exact, so every path gives the same value.
using AmaxFn = float (*)(const float* v, int64_t count);

struct LowpConvertFns {
  Bf16ConvertFn bf16 = nullptr;
  RoundFn fp16 = nullptr;
  Fp16ConvertFn fp16_bits = nullptr;
  Int8QuantizeFn int8 = nullptr;
  AmaxFn amax = nullptr;
  RoundFn bf16_round = nullptr;
};
LowpConvertFns lowp_convert_portable();
Bf16ConvertFn bf16_convert_avx512bf16();
RoundFn bf16_round_avx512();
RoundFn fp16_round_avx512();
Fp16ConvertFn fp16_convert_avx512fp16();
Int8QuantizeFn int8_quantize_avx512vnni();
AmaxFn amax_avx512vnni();

// Portable kernels (any CPU) and the SIMD ones (call only when lowp_simd_supported says so).
Bf16GemmFn bf16_gemm_portable();
WidenedGemmFn fp16_gemm_portable();
Int8GemmFn int8_gemm_portable();
Bf16GemmFn bf16_gemm_avx512bf16();
WidenedGemmFn bf16_fma_gemm_portable();
WidenedGemmFn bf16_fma_gemm_avx512();
WidenedGemmFn fp16_gemm_avx512();
Fp16FmaGemmFn fp16_fma_gemm_portable();
Fp16FmaGemmFn fp16_fma_gemm_avx512fp16();
// AVX2 + FMA (+ F16C for fp16): the portable kernels' bits, for CPUs without AVX-512 (call only where
// the avx2 path runs, and F16C for the fp16 kernel; kernels/avx2/gemm_lowp_avx2.cpp).
WidenedGemmFn bf16_fma_gemm_avx2();
WidenedGemmFn fp16_gemm_avx2();
Int8GemmFn int8_gemm_avx2();
Int8PanelsGemmFn int8_panels_gemm_avx2();
RoundFn bf16_round_avx2();
RoundFn fp16_round_avx2();
Int8QuantizeFn int8_quantize_avx2();
AmaxFn amax_avx2();

// Channels per fp16 chunk sum of the fp16 FMA GEMM (the fp16-fma preset's accumulate_chunk; a test
// checks that they agree). Each chunk sum costs a widening and an FP32 add per 16 columns beside its
// FMAs: 32 is the shortest chunk at which the fp16 plan runs 1.3x the FP32 one on the 64-channel
// layers (16: 1.23x), for about 1.3x the error of 16 (docs/engine.md, "Low-precision paths").
inline constexpr int kFp16FmaChunk = 32;
Int8GemmFn int8_gemm_avx512vnni();
// AMX (TDPBUSD), the VNNI kernel's bits; call only when amx_int8_supported() (amx_support.cpp).
Int8GemmFn int8_gemm_amx();
// AMX (TDPBF16PS): FP32 sums in the tile unit's order, not vdpbf16ps's bits; call only when
// amx_bf16_supported(). Channel counts that are not a multiple of 32 go to the avx512-bf16 kernel.
Bf16GemmFn bf16_gemm_amx();
// The same kernels for a run of calls in one tile session: amx_session_begin() loads the tile
// configuration on the calling thread (LDTILECFG), amx_session_end() releases the tiles (TILERELEASE);
// every call of these in between skips both, which the kernels above pay per call (with 64 channels a
// call is a few tile products, and the pair costs about as much as they do).
Int8GemmFn int8_gemm_amx_in_session();
Bf16GemmFn bf16_gemm_amx_in_session();
void amx_session_begin();
void amx_session_end();
// The same kernels over a scalar model of the tile instructions, for the tests (need avx512-vnni, and
// avx512-bf16 for the bf16 one). The bf16 model sums in channel order (the SDM's pseudocode): each C
// element is the sequence of bf16_dp_step over channels 0, 1, ..., kc-1.
Int8GemmFn int8_gemm_amx_model();
Bf16GemmFn bf16_gemm_amx_model();
// The model's tile session, per thread like the hardware's (amx_support.hpp, use_amx_model_for_tests).
Int8GemmFn int8_gemm_amx_model_in_session();
Bf16GemmFn bf16_gemm_amx_model_in_session();
void amx_model_session_begin();
void amx_model_session_end();

// Bit-level helpers shared by every path.
inline uint32_t f32_bits(float x) {
  uint32_t b;
  __builtin_memcpy(&b, &x, 4);
  return b;
}
inline float f32_from_bits(uint32_t b) {
  float x;
  __builtin_memcpy(&x, &b, 4);
  return x;
}
// float -> bf16 bits, round to nearest even, subnormals kept, NaN made quiet (as vcvtneps2bf16, which
// in addition flushes subnormal inputs; the GEMM reads bf16 subnormals as zero anyway).
inline uint16_t bf16_bits_rne(float x) {
  uint32_t b = f32_bits(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((b >> 16) | 0x40u);
  b += 0x7FFFu + ((b >> 16) & 1u);
  return static_cast<uint16_t>(b >> 16);
}
// double -> fp16 bits, rounded once to nearest even (subnormals kept, overflow to +-inf, NaN quiet with its
// sign): nova::encode_bits(Format::kFp16, x)'s bits, from the double's bits. With the generic encoder (and
// std::ldexp) an fp16 plan took 2.1-3.8x as long to make (1x512x7x7 at F(4,3): 0.5 s on one thread;
// BM_PlanCreate, session 29).
inline uint16_t fp16_bits_rne(double x) {
  uint64_t b;
  __builtin_memcpy(&b, &x, 8);
  const auto sign = static_cast<uint16_t>((b >> 48) & 0x8000u);
  const uint64_t magnitude = b & 0x7FFFFFFFFFFFFFFFull;
  if (magnitude >= 0x7FF0000000000000ull)  // inf, or NaN (quiet)
    return static_cast<uint16_t>(sign | (magnitude == 0x7FF0000000000000ull ? 0x7C00u : 0x7E00u));
  const int e = static_cast<int>(magnitude >> 52) - 1023;  // x = 1.f * 2^e (double subnormals: far below)
  if (e < -25) return sign;  // below half the smallest fp16 subnormal, 2^-25 (at it: a tie, to even 0)
  if (e > 15) return static_cast<uint16_t>(sign | 0x7C00u);
  const uint64_t m = (magnitude & 0xFFFFFFFFFFFFFull) | (1ull << 52);  // 53 significant bits
  const int shift = 42 + (e < -14 ? -14 - e : 0);  // to fp16's 10 fraction bits, or its subnormal quantum
  uint64_t q = m >> shift;
  const uint64_t rest = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (q & 1u))) ++q;
  // Subnormals: q counts 2^-24 (q = 1024, rounded up to the smallest normal, is its bit pattern too).
  // Normals: a carry out of the fraction (q = 2048) moves into the exponent field by the same sum, and
  // at e = 15 into infinity's pattern (x >= 65520 rounds to +-inf).
  const uint64_t bits = e < -14 ? q : (static_cast<uint64_t>(e + 15) << 10) + q - 1024;
  return static_cast<uint16_t>(sign | bits);
}
inline float bf16_to_float(uint16_t h) {
  return f32_from_bits(static_cast<uint32_t>(h) << 16);
}
// float rounded to the nearest bf16 value (bf16_bits_rne), as a float.
inline float round_bf16(float x) {
  return bf16_to_float(bf16_bits_rne(x));
}
inline float bf16_daz(uint16_t h) {
  return (h & 0x7F80u) == 0 ? f32_from_bits((static_cast<uint32_t>(h) & 0x8000u) << 16) : bf16_to_float(h);
}
// One bf16 product added to an FP32 sum, as vdpbf16ps and TDPBF16PS do per step: the product of two
// bf16 values is exact in double, the sum with a float rounded once to double is exact or rounds to
// the same float (the operands have at most 24 and 16 significant bits), then it is rounded to float
// and flushed when subnormal (FTZ). Operands already read with bf16_daz.
inline float bf16_dp_step(float acc, float a, float b) {
  const float s =
      static_cast<float>(static_cast<double>(acc) + static_cast<double>(a) * static_cast<double>(b));
  return (f32_bits(s) & 0x7F800000u) == 0 ? f32_from_bits(f32_bits(s) & 0x80000000u) : s;
}
// float rounded to the nearest fp16 value (ties to even, subnormals, overflow to inf), as a float.
inline float round_fp16(float x) {
  const uint32_t b = f32_bits(x);
  const uint32_t sign = b & 0x80000000u, a = b ^ sign;
  uint32_t r;
  if (a >= 0x7F800000u) {
    r = a > 0x7F800000u ? (a & 0xFFFFE000u) | 0x00400000u : a;  // inf, or NaN made quiet (as vcvtps2ph)
  } else if (a >= 0x477FF000u) {
    r = 0x7F800000u;  // rounds beyond 65504
  } else if (a >= 0x38800000u) {
    r = (a + 0xFFFu + ((a >> 13) & 1u)) & ~0x1FFFu;  // normal: keep 10 fraction bits
  } else {
    const float t = f32_from_bits(a) + 0.5f;  // subnormal: multiples of 2^-24, ties to even
    r = f32_bits(t - 0.5f);
  }
  return f32_from_bits(r | sign);
}
// float -> fp16 bits, round to nearest even (as vcvtps2ph).
inline uint16_t fp16_bits_rne(float x) {
  const uint32_t b = f32_bits(round_fp16(x));
  const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  const uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | ((a & 0x7FFFFFu) >> 13));  // inf, NaN
  if (a >= 0x38800000u)
    return static_cast<uint16_t>(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3FFu));
  // subnormal (or zero): an exact multiple of 2^-24 below 2^-14
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(f32_from_bits(a) * 16777216.0f));
}
// fp16 bits -> float (exact).
inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, f = h & 0x3FFu;
  if (e == 0x1F) return f32_from_bits(sign | 0x7F800000u | (f << 13));
  if (e == 0) return (sign ? -1.0f : 1.0f) * static_cast<float>(f) * 5.9604644775390625e-8f;  // f * 2^-24
  return f32_from_bits(sign | ((e + 112u) << 23) | (f << 13));
}

}  // namespace nova::conv
