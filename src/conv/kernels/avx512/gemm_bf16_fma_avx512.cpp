// BF16 GEMM on FP32 FMAs (AVX-512F): the U panel stays in bf16, channel pairs interleaved as for
// vdpbf16ps (lowp_kernels.hpp), and is widened as it is loaded: the even channel of a pair is the
// dword shifted left by 16, the odd one the dword with its low half cleared, one integer operation per
// 16 columns each. V rows hold fp32 values already rounded to bf16. Products are exact (bf16 x bf16
// fits in fp32), and every channel is added in order with one fused multiply-add. On the development
// CPU this runs at about 1.7x the vdpbf16ps kernel, whose instruction costs four FMAs there (docs/engine.md).
// Up to 6 rows x 64 columns per micro-kernel.
#include <immintrin.h>

#include "../lowp_blocks.hpp"
#include "bf16_round_avx512.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

// Masked forms with all lanes: GCC 12's plain forms trip a false -Wmaybe-uninitialized (bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

template <int MR, int NV>
void ukernel(std::size_t kc, const float* a, std::size_t lda, const uint16_t* b, float* c, std::size_t ldc) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::size_t p = 0; p < kc / 2; ++p) {
    const uint16_t* bp = b + p * (32 * NV);
    __m512 bv[NV];
    for (int j = 0; j < NV; ++j)  // channel 2p: the low halves
      bv[j] = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll, _mm512_loadu_si512(bp + 32 * j), 16));
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[static_cast<std::size_t>(i) * lda + 2 * p]);
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(ai, bv[j], acc[i][j]);
    }
    for (int j = 0; j < NV; ++j)  // channel 2p + 1: the high halves
      bv[j] = _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(bp + 32 * j), high));
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[static_cast<std::size_t>(i) * lda + 2 * p + 1]);
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

// round_bf16 on 16 floats at a time, in place: bf16_round_rne (bf16_round_avx512.hpp, the rounding of
// the bf16 conversion), then the low half cleared.
void round16(float* v, int64_t count) {
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512i r = bf16_round_rne(_mm512_maskz_loadu_epi32(m, v + i));
    _mm512_mask_storeu_epi32(v + i, m, _mm512_and_si512(r, high));
  }
}

}  // namespace

Bf16RoundFn bf16_round_avx512() {
  return &round16;
}

Bf16FmaGemmFn bf16_fma_gemm_avx512() {
  return &gemm;
}

}  // namespace nova::conv
