// GEMMs on FP32 FMAs over a 16-bit U widened as it is loaded (AVX-512F), one micro-kernel for two
// formats; V rows hold fp32 values already rounded to the format, products are exact (16-bit x 16-bit
// fits in fp32), and every channel is added in order with one fused multiply-add. Up to 6 rows x 64
// columns per micro-kernel.
//   fp16: B[c*w + j], 16 values widened per vcvtph2ps (F16C)
//   bf16: channel pairs interleaved as for vdpbf16ps, B[(c/2)*(2w) + 2j + (c&1)]: the even channel of
//         a pair is the dword shifted left by 16, the odd one the dword with its low half cleared. On
//         the development CPU this runs at about 1.7x the vdpbf16ps kernel, whose instruction costs
//         four FMAs there (docs/engine.md, "bf16 arithmetic").
#include <immintrin.h>

#include <utility>

#include "../assume_kc.hpp"
#include "../lowp_blocks.hpp"
#include "../lowp_kernels.hpp"
#include "../unit_scale.hpp"
#include "bf16_round_avx512.hpp"

namespace nova::conv {

namespace {

// The masked forms compute the same as the plain intrinsics; GCC 12's plain forms use
// _mm512_undefined_ps and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

// A widening: kGroup channels per group row of B (16 * NV * kGroup elements), and channel c of a group
// as 16 floats for the columns 16j..16j+15.
struct Fp16Widen {
  static constexpr int kGroup = 1;
  template <int C>
  static __m512 load(const uint16_t* group, int j) {
    return _mm512_maskz_cvtph_ps(kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + 16 * j)));
  }
};
struct Bf16Widen {
  static constexpr int kGroup = 2;
  // The odd channel is its own load with the even words masked to zero (a masked load is one load and
  // one ALU operation, as the and it replaces): had it reused the even channel's load, GCC would keep
  // the NV pair vectors live across the even channel's FMAs and spill 3 of the 24 accumulators.
  template <int C>
  static __m512 load(const uint16_t* group, int j) {
    if constexpr (C == 0)
      return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_loadu_si512(group + 32 * j), 16));
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(static_cast<__mmask32>(0xAAAAAAAAu), group + 32 * j));
  }
};

template <class Widen, int MR, int NV>
void ukernel(std::size_t kc, const float* a, std::size_t lda, const uint16_t* b, const float* col_scale,
             float* c, std::size_t ldc) {
  constexpr int G = Widen::kGroup;
  kernels_impl::assume_reduction_at_least<16>(kc);
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::size_t g = 0; g < kc / G; ++g) {
    const uint16_t* group = b + g * (16 * NV * G);
    [&]<int... Cs>(std::integer_sequence<int, Cs...>) {
      (
          [&] {  // channel g*G + Cs, all rows, before the next channel's loads
            __m512 bv[NV];
            for (int j = 0; j < NV; ++j) bv[j] = Widen::template load<Cs>(group, j);
            for (int i = 0; i < MR; ++i) {
              const __m512 ai = _mm512_set1_ps(a[static_cast<std::size_t>(i) * lda + g * G + Cs]);
              for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(ai, bv[j], acc[i][j]);
            }
          }(),
          ...);
    }
    (std::make_integer_sequence<int, G>{});
  }
  const float* s = col_scale != nullptr ? col_scale : kernels_impl::kUnitScale;
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      _mm512_storeu_ps(c + static_cast<std::size_t>(i) * ldc + 16 * j,
                       _mm512_mul_ps(acc[i][j], _mm512_loadu_ps(s + 16 * j)));
}

template <class Widen>
void gemm(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda, const uint16_t* b,
          const float* col_scale, float* c, std::size_t ldc) {
  lowp_blocks::for_each_block(rows, nv, [&]<int MR, int NV>(int64_t i) {
    ukernel<Widen, MR, NV>(kc, a + i * lda, lda, b, col_scale, c + i * ldc, ldc);
  });
}

// round_fp16 on 16 floats at a time: vcvtps2ph (round to nearest even, subnormals, overflow to inf,
// NaN quieted with the low 13 fraction bits dropped) and back.
void round_fp16_16(float* v, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512 x = _mm512_maskz_loadu_ps(m, v + i);
    const __m256i h = _mm512_maskz_cvtps_ph(kAll, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_mask_storeu_ps(v + i, m, _mm512_maskz_cvtph_ps(kAll, h));
  }
}

// round_bf16 on 16 floats at a time: bf16_round_rne (the rounding of the bf16 conversion), then the
// low half cleared.
void round_bf16_16(float* v, int64_t count) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512i r = bf16_round_rne(_mm512_maskz_loadu_epi32(m, v + i));
    _mm512_mask_storeu_epi32(v + i, m, _mm512_and_si512(r, high));
  }
}

}  // namespace

RoundFn fp16_round_avx512() {
  return &round_fp16_16;
}
RoundFn bf16_round_avx512() {
  return &round_bf16_16;
}

WidenedGemmFn fp16_gemm_avx512() {
  return &gemm<Fp16Widen>;
}
WidenedGemmFn bf16_fma_gemm_avx512() {
  return &gemm<Bf16Widen>;
}

}  // namespace nova::conv
