// BF16 GEMM with AVX512-BF16: vdpbf16ps multiplies one broadcast channel pair of a V row with 16
// columns x 2 channels of the U panel and adds both products into 16 FP32 accumulators. Up to 6 rows
// x 64 columns per micro-kernel (24 zmm accumulators).
#include <immintrin.h>

#include <algorithm>

#include "../assume_kc.hpp"
#include "../avx512/bf16_round_avx512.hpp"
#include "../lowp_blocks.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

// Masked forms with all lanes: GCC 12's plain forms trip a false -Wmaybe-uninitialized (bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

template <int MR, int NV>
void ukernel(std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b, float* c,
             std::size_t ldc) {
  kernels_impl::assume_reduction_at_least<16>(kc);
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::size_t p = 0; p < kc / 2; ++p) {
    __m512i bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(b + p * (32 * NV) + 32 * j);
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      __builtin_memcpy(&pair, a + static_cast<std::size_t>(i) * lda + 2 * p, 4);
      const __m512i ai = _mm512_set1_epi32(pair);
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (__m512bh)ai, (__m512bh)bv[j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(c + static_cast<std::size_t>(i) * ldc + 16 * j, acc[i][j]);
}

void gemm(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
          float* c, std::size_t ldc) {
  lowp_blocks::for_each_block(rows, nv, [&]<int MR, int NV>(int64_t i) {
    ukernel<MR, NV>(kc, a + i * lda, lda, b, c + i * ldc, ldc);
  });
}

// bf16_bits_rne on 16 floats at a time (bf16_round_rne, kernels/avx512/bf16_round_avx512.hpp).
void convert(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512i r = bf16_round_rne(_mm512_maskz_loadu_epi32(m, src + i));
    _mm512_mask_cvtepi32_storeu_epi16(dst + i, m, _mm512_maskz_srli_epi32(kAll, r, 16));
  }
}

}  // namespace

Bf16ConvertFn bf16_convert_avx512bf16() {
  return &convert;
}

Bf16GemmFn bf16_gemm_avx512bf16() {
  return &gemm;
}

}  // namespace nova::conv
