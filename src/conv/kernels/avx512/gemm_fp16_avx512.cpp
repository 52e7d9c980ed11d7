// FP16 GEMM on AVX-512F: the U panel is stored in fp16 and widened with vcvtph2ps (the F16C
// conversion, 16 values per instruction); V rows hold fp32 values already rounded to fp16; products
// (exact: fp16 x fp16 fits in fp32) and the accumulation over channels run in FP32 with one fused
// multiply-add per step. Up to 6 rows x 64 columns per micro-kernel.
#include <immintrin.h>

#include "../lowp_blocks.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

// The masked forms compute the same as the plain intrinsics; GCC 12's plain forms use
// _mm512_undefined_ps and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

template <int MR, int NV>
void ukernel(std::size_t kc, const float* a, std::size_t lda, const uint16_t* b, float* c, std::size_t ldc) {
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::size_t k = 0; k < kc; ++k) {
    __m512 bv[NV];
    for (int j = 0; j < NV; ++j)
      bv[j] = _mm512_maskz_cvtph_ps(
          kAll, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k * (16 * NV) + 16 * j)));
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[static_cast<std::size_t>(i) * lda + k]);
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(ai, bv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(c + static_cast<std::size_t>(i) * ldc + 16 * j, acc[i][j]);
}

void gemm(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda, const uint16_t* b, float* c,
          std::size_t ldc) {
  lowp_blocks::for_each_block(rows, nv, [&]<int MR, int NV>(int64_t i) {
    ukernel<MR, NV>(kc, a + i * lda, lda, b, c + i * ldc, ldc);
  });
}

// round_fp16 on 16 floats at a time: vcvtps2ph (round to nearest even, subnormals, overflow to inf,
// NaN quieted with the low 13 fraction bits dropped) and back.
void round16(float* v, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512 x = _mm512_maskz_loadu_ps(m, v + i);
    const __m256i h = _mm512_maskz_cvtps_ph(kAll, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_mask_storeu_ps(v + i, m, _mm512_maskz_cvtph_ps(kAll, h));
  }
}

}  // namespace

Fp16RoundFn fp16_round_avx512() {
  return &round16;
}

Fp16GemmFn fp16_gemm_avx512() {
  return &gemm;
}

}  // namespace nova::conv
