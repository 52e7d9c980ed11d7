// Low-precision GEMMs for CPUs with AVX2, FMA and F16C but no AVX-512 (AMD Zen 1-3, Intel client cores
// before Ice Lake): the portable kernels' bits (lowp_kernels.hpp), 8 floats or int32 per register.
// Without these the bf16, fp16 and int8 plans of such a CPU ran the portable kernels: 17x (int8) to
// 200x (bf16) the time of its FP32 plan (docs/engine-log.md, "Session 13").
//
//   bf16 (FMA) and fp16 (F16C): U widened to FP32 as it is loaded, every channel added in order with one
//     vfmadd231ps from +0, then multiplied by col_scale: portable's std::fma order, hence its bits.
//     Rows of 6 x 16 columns (12 ymm accumulators), a panel one 16-column strip at a time.
//   int8: vpmaddubsw would add u8 x s8 pairs into saturating int16 (255 x 127 x 2 > 32767), so both
//     operands are widened to int16 (V once per call, into a per-thread copy; U as it is loaded) and
//     vpmaddwd adds pairs into int32, exactly. A quad of channels of a V row is broadcast as four int16;
//     eight columns' quads of the U panel fill two registers of four columns each. The int32 sums are exact,
//     so their order does not matter: the bits are the portable kernel's. Rows of 6 x 8 columns.
//   int8-spatial (int16 x int16): vpmaddwd on channel pairs, exact int32 sums per run of `chunk` channels
//     converted and added in the portable kernel's order (int16_kernels.hpp).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "../assume_kc.hpp"
#include "../int16_kernels.hpp"
#include "../int8_code_scalar.hpp"
#include "../kernel_table.hpp"
#include "../lowp_blocks.hpp"
#include "../lowp_kernels.hpp"
#include "bf16_round_avx2.hpp"
#include "lanes_below_avx2.hpp"
#include "vec_avx2.hpp"

namespace nova::conv {

namespace {

// Every kernel here runs lowp_blocks' row groups (6 rows and every tail) whole. The integer kernels used
// to run them in passes of 3 or 4 rows, where GCC spilled or moved their sums; with the sums named in a
// function of their own they stay in registers at 6 rows (12 sums, 2 of U, 1 broadcast): the int16
// kernel ran 116-137 GOP/s at one thread against 95-117 at 4 (nova_bench_gemm), whole plans in
// 0.90-0.95 of the time (docs/engine-log.md, "Session 17"). The widened bf16/fp16 kernels ran 0.78-1.04x as
// fast at 4 rows as at 6 (1 thread, 7 alternated rounds), re-widening each channel of U for fewer rows.

// A widening: kGroup channels per group row of B, and channel C of a group as 8 floats for the columns
// 8h..8h+7 of the strip starting at `group` (h = 0, 1).
struct Fp16Widen {
  static constexpr int kGroup = 1;
  // B[c*w + j]: the strip's 16 columns of one channel are 16 consecutive fp16 values.
  template <int C>
  static __m256 load(const uint16_t* group, int h) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(group + 8 * h)));
  }
  static std::size_t group_stride(int w) { return static_cast<std::size_t>(w); }
  static std::size_t strip_offset(int s) { return static_cast<std::size_t>(16 * s); }
};
struct Bf16Widen {
  static constexpr int kGroup = 2;
  // B[(c/2)*(2w) + 2j + (c&1)]: the pair's two bf16 values per column in one dword; the even channel is
  // the dword shifted left by 16, the odd one the dword with its low half cleared.
  template <int C>
  static __m256 load(const uint16_t* group, int h) {
    const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + 16 * h));
    if constexpr (C == 0) return _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
    // Two shifts, not an AND with a mask: the mask took a 16th register, and GCC spilled sums for it.
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(pairs, 16), 16));
  }
  static std::size_t group_stride(int w) { return static_cast<std::size_t>(2 * w); }
  static std::size_t strip_offset(int s) { return static_cast<std::size_t>(32 * s); }
};

// The FP32 sums of MR rows x 16 columns (one strip) over all kc channels, each row's channels added in
// order. Named sums in a function of their own, as the integer kernels' below, and the odd bf16 channel
// widened without a mask register: GCC had kept four of the bf16 kernel's 12 sums on the stack at 6
// rows (a store and an FMA from memory per step). bf16: 80-86 GOP/s at one thread against 59-63
// (nova_bench_gemm), plans in 0.72-0.82 of the time; fp16, which did not spill, 1.00-1.03 (the sums'
// trip through memory per strip; docs/engine-log.md, "Session 17").
// The named sums' way out of their function: the rows of lowp_blocks' row groups, two registers each
// (two structs, not a template: a template argument would drop the vector types' alignment).
constexpr int kRows = lowp_blocks::kLowpRows;
struct WidenedSums {
  __m256 v[kRows][2];
};

inline void fma_row_step(const float* a, __m256 b0, __m256 b1, __m256& s0, __m256& s1) {
  const __m256 ai = _mm256_broadcast_ss(a);
  s0 = _mm256_fmadd_ps(ai, b0, s0);
  s1 = _mm256_fmadd_ps(ai, b1, s1);
}

template <class Widen, int MR>
__attribute__((noinline)) void widened_sums(std::size_t kc, const float* a, std::size_t lda,
                                            const uint16_t* b, std::size_t b_stride, WidenedSums& out) {
  static_assert(MR >= 1 && MR <= kRows);
  constexpr int G = Widen::kGroup;
  kernels_impl::assume_reduction_at_least<16>(kc);
  const __m256 zero = _mm256_setzero_ps();
  __m256 s00 = zero, s01 = zero, s10 = zero, s11 = zero, s20 = zero, s21 = zero, s30 = zero, s31 = zero;
  __m256 s40 = zero, s41 = zero, s50 = zero, s51 = zero;
  for (std::size_t g = 0; g < kc / G; ++g) {
    const uint16_t* group = b + g * b_stride;
    [&]<int... Cs>(std::integer_sequence<int, Cs...>) {
      (
          [&] {  // channel g*G + Cs, all rows
            const __m256 b0 = Widen::template load<Cs>(group, 0), b1 = Widen::template load<Cs>(group, 1);
            const float* ac = a + g * G + Cs;
            fma_row_step(ac, b0, b1, s00, s01);
            if constexpr (MR > 1) fma_row_step(ac + lda, b0, b1, s10, s11);
            if constexpr (MR > 2) fma_row_step(ac + 2 * lda, b0, b1, s20, s21);
            if constexpr (MR > 3) fma_row_step(ac + 3 * lda, b0, b1, s30, s31);
            if constexpr (MR > 4) fma_row_step(ac + 4 * lda, b0, b1, s40, s41);
            if constexpr (MR > 5) fma_row_step(ac + 5 * lda, b0, b1, s50, s51);
          }(),
          ...);
    }
    (std::make_integer_sequence<int, G>{});
  }
  out = WidenedSums{{{s00, s01}, {s10, s11}, {s20, s21}, {s30, s31}, {s40, s41}, {s50, s51}}};
}

// MR rows x 16 columns (one strip of the panel).
template <class Widen, int MR>
void widened_strip(std::size_t kc, const float* a, std::size_t lda, const uint16_t* b, std::size_t b_stride,
                   const float* scale16, float* c, std::size_t ldc) {
  WidenedSums sums;
  widened_sums<Widen, MR>(kc, a, lda, b, b_stride, sums);
  for (int i = 0; i < MR; ++i) {
    float* ci = c + static_cast<std::size_t>(i) * ldc;
    const __m256* acc = sums.v[i];
    if (scale16 != nullptr) {
      _mm256_storeu_ps(ci, _mm256_mul_ps(acc[0], _mm256_loadu_ps(scale16)));
      _mm256_storeu_ps(ci + 8, _mm256_mul_ps(acc[1], _mm256_loadu_ps(scale16 + 8)));
    } else {
      _mm256_storeu_ps(ci, acc[0]);
      _mm256_storeu_ps(ci + 8, acc[1]);
    }
  }
}

template <class Widen>
void widened_gemm(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda, const uint16_t* b,
                  const float* col_scale, float* c, std::size_t ldc) {
  const std::size_t stride = Widen::group_stride(16 * nv);
  lowp_blocks::for_each_block<true>(rows, nv, [&]<int MR, int NV>(int64_t i) {
    for (int s = 0; s < NV; ++s)
      widened_strip<Widen, MR>(kc, a + i * lda, lda, b + Widen::strip_offset(s), stride,
                               col_scale != nullptr ? col_scale + 16 * s : nullptr, c + i * ldc + 16 * s,
                               ldc);
  });
}

// The integer kernels' exact int32 sums: MR rows of V (int16) times two registers of U (int16) per step
// q, where a step is a pair of channels (kChannels = 2: int8-spatial, 16 columns per strip) or a quad
// (4: int8, 8 columns as 4 x (channels 0+1, channels 2+3)). The row's channels are broadcast from memory
// (a load, no shuffle) and vpmaddwd adds the products of each pair into int32, exactly. A function of
// its own, not inlined, with named sums: with an array, inside the callers' loops, GCC 12 kept each
// step's sums in fresh registers and moved them back, eight vmovdqa per eight vpmaddwd (docs/engine-log.md,
// "Session 16"). At 6 rows the 12 sums, 2 registers of U and the broadcast fit the 16 ymm registers.
struct IntSums {
  __m256i v[kRows][2];
};

template <int kChannels>
inline void madd_row_step(const int16_t* row, std::size_t q, __m256i b0, __m256i b1, __m256i& s0,
                          __m256i& s1) {
  __m256i ai;
  if constexpr (kChannels == 2) {
    int32_t pair;
    __builtin_memcpy(&pair, row + 2 * q, 4);
    ai = _mm256_set1_epi32(pair);
  } else {
    static_assert(kChannels == 4);
    int64_t quad;
    __builtin_memcpy(&quad, row + 4 * q, 8);
    ai = _mm256_set1_epi64x(quad);
  }
  s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(ai, b0));
  s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(ai, b1));
}

// Steps [q0, q1); U's step q at b + q * step_stride: two registers of 16 int16, loaded as they are
// (B = int16_t) or sign-extended from 32 int8 (B = int8_t).
template <int kChannels, int MR, class B>
__attribute__((noinline)) void madd_sums(std::size_t q0, std::size_t q1, const int16_t* a, std::size_t lda,
                                         const B* b, std::size_t step_stride, IntSums& out) {
  static_assert(MR >= 1 && MR <= kRows);
  const __m256i zero = _mm256_setzero_si256();
  __m256i s00 = zero, s01 = zero, s10 = zero, s11 = zero, s20 = zero, s21 = zero, s30 = zero, s31 = zero;
  __m256i s40 = zero, s41 = zero, s50 = zero, s51 = zero;
  for (std::size_t q = q0; q < q1; ++q) {
    const B* bq = b + q * step_stride;
    __m256i b0, b1;
    if constexpr (sizeof(B) == 1) {
      b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bq)));
      b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bq + 16)));
    } else {
      b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bq));
      b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bq + 16));
    }
    madd_row_step<kChannels>(a, q, b0, b1, s00, s01);
    if constexpr (MR > 1) madd_row_step<kChannels>(a + lda, q, b0, b1, s10, s11);
    if constexpr (MR > 2) madd_row_step<kChannels>(a + 2 * lda, q, b0, b1, s20, s21);
    if constexpr (MR > 3) madd_row_step<kChannels>(a + 3 * lda, q, b0, b1, s30, s31);
    if constexpr (MR > 4) madd_row_step<kChannels>(a + 4 * lda, q, b0, b1, s40, s41);
    if constexpr (MR > 5) madd_row_step<kChannels>(a + 5 * lda, q, b0, b1, s50, s51);
  }
  out = IntSums{{{s00, s01}, {s10, s11}, {s20, s21}, {s30, s31}, {s40, s41}, {s50, s51}}};
}

// The int8 GEMM: V's u8 codes zero-extended to int16 once per call (per thread, in runs of rows that all
// column groups read), U's s8 panel sign-extended as it is loaded; then MR rows x 8 columns per group:
// a V row's quad of channels is broadcast as four int16 (vpbroadcastq from memory, a load), and
// vpmaddwd multiplies it with 4 columns x 4 channels of U per register. Before, the kernel also widened
// each V quad in its inner loop (a vpshufb per row and quad) and ran at half of vpmaddwd's two per
// cycle: 85-97 GOP/s at one thread against 104-123 now (nova_bench_gemm; docs/engine-log.md, "Session 17").
template <int MR>
void int8_group(std::size_t kc, const int16_t* a, std::size_t lda, const int8_t* b, std::size_t quad_stride,
                const int32_t* comp8, const float* scale8, float* c, std::size_t ldc) {
  IntSums sums;  // exact for any kc this library makes: 255 * 127 * 2 per pair
  madd_sums<4, MR>(0, kc / 4, a, lda, b, quad_stride, sums);
  const __m256i cj = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(comp8));
  const __m256 sj = _mm256_loadu_ps(scale8);
  for (int i = 0; i < MR; ++i) {
    // hadd: per 128-bit lane (columns 0,1 | 4,5) then (2,3 | 6,7); the permute puts them in order.
    const __m256i row = _mm256_permute4x64_epi64(_mm256_hadd_epi32(sums.v[i][0], sums.v[i][1]), 0xD8);
    _mm256_storeu_ps(c + static_cast<std::size_t>(i) * ldc,
                     _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(row, cj)), sj));
  }
}

// `count` u8 codes (a multiple of 16) zero-extended to int16.
void widen_codes(const uint8_t* src, int16_t* dst, std::size_t count) {
  for (std::size_t i = 0; i < count; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
}

// One panel's groups of MR rows x 8 columns over V rows already widened (kc int16 per row).
void int8_panel(int64_t rows, int nv, std::size_t kc, const int16_t* a16, const int8_t* b,
                const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  const auto quad_stride = static_cast<std::size_t>(64 * nv);  // 4 channels x 16*nv columns
  lowp_blocks::for_each_block(rows, nv, [&]<int R, int>(int64_t i) {
    for (int h = 0; h < 2 * nv; ++h)
      int8_group<R>(kc, a16 + static_cast<std::size_t>(i) * kc, kc, b + 32 * h, quad_stride, comp + 8 * h,
                    scale + 8 * h, c + i * ldc + 8 * h, ldc);
  });
}

// V's rows widened per thread in runs of kRun, each run then read by every column group of the panels
// that body(r0, run, a16) multiplies. U's panels are sign-extended as they are loaded (two vpmovsxbw per
// quad and 6-row pass). Widening the panel into a copy per call instead cost 10-17 % of the GEMM (a call
// per position and block, 64 KB of int16 at 512 channels). Widening each 6-row pass's V rows just before
// its groups read them ran 3-4 % slower than runs; widening all of a phased call's rows at once kept up
// to rows x kc x 2 bytes per thread.
template <class Body>
void for_each_widened_run(int64_t rows, std::size_t kc, const uint8_t* a, std::size_t lda, Body&& body) {
  kernels_impl::assume_reduction_at_least<16>(kc);
  constexpr int64_t kRun = 10 * kRows;
  thread_local std::vector<int16_t> a16;
  if (a16.size() < kRun * kc) a16.resize(kRun * kc);
  for (int64_t r0 = 0; r0 < rows; r0 += kRun) {
    const int64_t run = std::min(kRun, rows - r0);
    for (int64_t r = 0; r < run; ++r)
      widen_codes(a + static_cast<std::size_t>(r0 + r) * lda, a16.data() + static_cast<std::size_t>(r) * kc,
                  kc);
    body(r0, run, a16.data());
  }
}

void int8_gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
               const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  for_each_widened_run(rows, kc, a, lda, [&](int64_t r0, int64_t run, const int16_t* a16) {
    int8_panel(run, nv, kc, a16, b, comp, scale, c + r0 * ldc, ldc);
  });
}

// Int8PanelsGemmFn: a run of V rows is widened once for all the panels, not once per panel: with the
// 16-column panels of the AVX2 path the widening had cost about a tenth of an int8 execute (perf: the
// widening loop's stores 10 % of 1x128x28x28's samples, against 53 % in the products).
void int8_panels_gemm(int64_t rows, int64_t width, int64_t panel, std::size_t kc, const uint8_t* a,
                      std::size_t lda, const int8_t* b, const int32_t* comp, float v_scale,
                      const float* u_scale, float* c, std::size_t ldc) {
  for_each_widened_run(rows, kc, a, lda, [&](int64_t r0, int64_t run, const int16_t* a16) {
    for (int64_t k0 = 0; k0 < width; k0 += panel) {
      const int64_t cols = std::min(panel, width - k0);
      float scale[kMaxNV * kLanes];
      for (int64_t j = 0; j < cols; ++j) scale[j] = v_scale * u_scale[k0 + j];  // as lowp_gemm_stage forms it
      int8_panel(run, static_cast<int>(cols / kLanes), kc, a16, b + static_cast<std::size_t>(k0) * kc,
                 comp + k0, scale, c + r0 * ldc + k0, ldc);
    }
  });
}

// round_fp16 on 8 floats at a time: vcvtps2ph (round to nearest even, subnormals, overflow to inf, NaN
// quieted with the low 13 fraction bits dropped) and back; the tail through the scalar definition.
void round_fp16_8(float* v, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(v + i, _mm256_cvtph_ps(h));
  }
  for (; i < count; ++i) v[i] = round_fp16(v[i]);
}

// round_bf16 on 8 floats at a time: the integer round to nearest even of bf16_bits_rne (subnormals
// kept, NaN made quiet), then the low half cleared; the tail through the scalar definition.
void round_bf16_8(float* v, int64_t count) {
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i r = bf16_round_rne8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + i), _mm256_and_si256(r, high));
  }
  for (; i < count; ++i) v[i] = round_bf16(v[i]);
}

// The int8-spatial GEMM (int16_kernels.hpp): vpmaddwd multiplies a broadcast pair of channels of a V' row
// with 8 columns x 2 channels of the U' panel and adds the two products into int32, exactly; after every
// run of `chunk` channels the sums are converted (round to nearest even) and added to the FP32 partial
// results kept in C, in the portable kernel's order. Rows of 6 x 16 columns (one strip).

template <int MR>
void int16_strip(std::size_t kc, std::size_t chunk, const int16_t* a, std::size_t lda, const int16_t* b,
                 std::size_t pair_stride, const float* scale16, float* c, std::size_t ldc) {
  kernels_impl::assume_reduction_at_least<16>(kc);
  for (std::size_t c0 = 0; c0 < kc; c0 += chunk) {
    const std::size_t c1 = std::min(kc, c0 + chunk);
    IntSums sums;
    madd_sums<2, MR>(c0 / 2, c1 / 2, a, lda, b, pair_stride, sums);
    const auto& acc = sums.v;
    const bool last = c1 == kc;
    for (int i = 0; i < MR; ++i)
      for (int h = 0; h < 2; ++h) {
        float* out = c + static_cast<std::size_t>(i) * ldc + 8 * h;
        __m256 v = _mm256_cvtepi32_ps(acc[i][h]);
        if (c0 != 0) v = _mm256_add_ps(_mm256_loadu_ps(out), v);
        if (last) v = _mm256_mul_ps(v, _mm256_loadu_ps(scale16 + 8 * h));
        _mm256_storeu_ps(out, v);
      }
  }
}

void int16_gemm(int64_t rows, int nv, std::size_t kc, std::size_t chunk, const int16_t* a, std::size_t lda,
                const int16_t* b, const float* scale, float* c, std::size_t ldc) {
  const auto pair_stride = static_cast<std::size_t>(32 * nv);  // 2 channels x 16*nv columns
  lowp_blocks::for_each_block(rows, nv, [&]<int R, int>(int64_t i) {
    for (int s = 0; s < nv; ++s)
      int16_strip<R>(kc, chunk, a + i * lda, lda, b + 32 * s, pair_stride, scale + 16 * s,
                     c + i * ldc + 16 * s, ldc);
  });
}

// Int8CodesFn (int16_kernels.hpp), 8 values at a time; a tail through masked loads and stores. The
// portable loop's libm fmin/fmax calls took 15 % of an int8-spatial execute and the loop another 22 %.
// Whole steps load and store plainly: vmaskmovps to memory is microcoded on AMD cores, and with every
// step masked this took 11 % of a per-call int8-spatial execute on NCHW input here (Zen 4; perf).
[[gnu::always_inline]] inline int64_t codes_step(float* p, __m256i mask, bool whole, float inv) {
  const __m256 vinv = _mm256_set1_ps(inv), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const __m256 limit = _mm256_set1_ps(127.5f), inf = _mm256_set1_ps(__builtin_inff());
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 v = whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
  const __m256 finite = _mm256_cmp_ps(_mm256_and_ps(v, abs_mask), inf, _CMP_LT_OQ);  // false: NaN, Inf
  const __m256 q = _mm256_mul_ps(v, vinv);
  const __m256 over = _mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(q, abs_mask), limit, _CMP_GT_OQ), finite);
  __m256 r = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);        // a finite v's q is never NaN (Inf clamps)
  const __m256 out = _mm256_blendv_ps(v, r, finite);  // NaN and Inf left as they are
  if (whole)
    _mm256_storeu_ps(p, out);
  else
    _mm256_maskstore_ps(p, mask, out);
  return __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(over)));  // masked-out lanes: 0
}

int64_t codes_8(float* x, int64_t count, float inv) {
  int64_t saturated = 0, i = 0;
  const __m256i all = _mm256_set1_epi32(-1);
  for (; i + 8 <= count; i += 8) saturated += codes_step(x + i, all, true, inv);
  if (i < count) saturated += codes_step(x + i, lanes_below(count - i), false, inv);
  return saturated;
}

// Int16ConvertFn, 8 values at a time: a value outside +-32767 (or NaN) stores 0 and sets *bad; the
// others are integers already and convert exactly. A tail of fewer than 8 through the scalar definition.
void convert_8(const float* src, int16_t* dst, int64_t count, int* bad) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)),
               limit = _mm256_set1_ps(32767.0f);
  int any = 0;
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    const __m256 ok = _mm256_cmp_ps(_mm256_and_ps(v, abs_mask), limit, _CMP_LE_OQ);  // false for NaN
    any |= _mm256_movemask_ps(ok) ^ 0xFF;
    const __m256i w = _mm256_cvttps_epi32(_mm256_and_ps(v, ok));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
  }
  for (; i < count; ++i) {
    const float v = src[i];
    const bool ok = std::fabs(v) <= 32767.0f;
    any |= ok ? 0 : 1;
    dst[i] = ok ? static_cast<int16_t>(v) : int16_t{0};
  }
  if (any != 0) *bad = 1;
}

// The conversion pass's int8 codes and the per-call scales' max |x| (LowpConvertFns), with the portable
// definitions' bits: the codes by VecAvx2::store_int8, the transforms' in-register form of int8_code (16
// values a step, a tail through int8_code itself), the max over magnitudes compared as bit patterns, NaN
// and Inf left out (32 values a step). The avx2 path had run the portable loops: with per-call scales in
// the phased order (8x256x14x14 int8, 2 threads) the conversion took 2.3-2.6 and the scan 0.9 of 11-12
// thread-ms per execute, and int8-spatial's per-call scan of an FP32 input 14 % of its execute.
int64_t int8_quantize_16(const float* src, uint8_t* dst, int64_t count, float inv, int* bad) {
  VecAvx2::Int8Tally tally;
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    VecAvx2::store_int8(dst + i, VecAvx2{_mm256_loadu_ps(src + i), _mm256_loadu_ps(src + i + 8)}, inv, tally);
  int64_t saturated = VecAvx2::int8_result(tally, bad);
  int nonfinite = 0;
  for (; i < count; ++i) dst[i] = int8_code(src[i], inv, saturated, nonfinite);
  *bad |= nonfinite;
  return saturated;
}

inline __m256i finite_magnitudes(const float* p) {
  const __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
                                     _mm256_set1_epi32(0x7FFFFFFF));
  return _mm256_and_si256(a, _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7F800000), a));  // NaN, Inf: 0
}

float amax_32(const float* v, int64_t count) {
  __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;  // non-negative: signed max is exact
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    m0 = _mm256_max_epi32(m0, finite_magnitudes(v + i));
    m1 = _mm256_max_epi32(m1, finite_magnitudes(v + i + 8));
    m2 = _mm256_max_epi32(m2, finite_magnitudes(v + i + 16));
    m3 = _mm256_max_epi32(m3, finite_magnitudes(v + i + 24));
  }
  for (; i + 8 <= count; i += 8) m0 = _mm256_max_epi32(m0, finite_magnitudes(v + i));
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_max_epi32(_mm256_max_epi32(m0, m1), _mm256_max_epi32(m2, m3)));
  uint32_t m = 0;
  for (uint32_t l : lanes) m = std::max(m, l);
  for (; i < count; ++i) m = max_finite_magnitude(m, v[i]);
  float out;
  std::memcpy(&out, &m, 4);
  return out;
}

}  // namespace

Int8QuantizeFn int8_quantize_avx2() {
  return &int8_quantize_16;
}
AmaxFn amax_avx2() {
  return &amax_32;
}
WidenedGemmFn bf16_fma_gemm_avx2() {
  return &widened_gemm<Bf16Widen>;
}
WidenedGemmFn fp16_gemm_avx2() {
  return &widened_gemm<Fp16Widen>;
}
Int8GemmFn int8_gemm_avx2() {
  return &int8_gemm;
}
Int8PanelsGemmFn int8_panels_gemm_avx2() {
  return &int8_panels_gemm;
}
RoundFn bf16_round_avx2() {
  return &round_bf16_8;
}
RoundFn fp16_round_avx2() {
  return &round_fp16_8;
}
Int16Fns int16_fns_avx2() {
  return {&int16_gemm, &convert_8, &codes_8};
}

}  // namespace nova::conv
