// The int8-spatial kernels on AVX512-VNNI. The GEMM multiplies one broadcast pair of channels of a V'
// row (two int16) with 16 columns x 2 channels of the U' panel and adds both products into 16 int32
// accumulators with vpdpwssd (exact); after every run of `chunk` channels the int32 sums are converted
// to FP32 (vcvtdq2ps, round to nearest even as the portable kernel's conversion) and added to the
// FP32 partial results kept in C, in the portable kernel's order. Up to 6 rows x 64 columns per
// micro-kernel (24 int32 accumulators).
#include <immintrin.h>

#include <algorithm>

#include "../assume_kc.hpp"
#include "../int16_kernels.hpp"
#include "../lowp_blocks.hpp"
#include "../unit_scale.hpp"

namespace nova::conv {

namespace {

// The masked forms compute the same as the plain intrinsics; GCC 12's plain forms use
// _mm512_undefined_* and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

// acc + a . b (int16 pairs), as _mm512_dpwssd_epi32, written as an asm statement for the reason given
// at dpbusd in gemm_int8_avx512vnni.cpp (GCC 12 copies and spills the accumulator of the intrinsic).
inline __m512i dpwssd(__m512i acc, __m512i a, __m512i b) {
  __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

template <int MR, int NV>
void ukernel(std::size_t kc, std::size_t chunk, const int16_t* a, std::size_t lda, const int16_t* b,
             const float* scale, float* c, std::size_t ldc) {
  kernels_impl::assume_reduction_at_least<16>(kc);
  for (std::size_t c0 = 0; c0 < kc; c0 += chunk) {
    const std::size_t c1 = std::min(kc, c0 + chunk);
    if (c1 / 2 <= c0 / 2) __builtin_unreachable();  // runs are whole channel pairs (chunk even, >= 2)
    __m512i acc[MR][NV];
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_si512();
    for (std::size_t q = c0 / 2; q < c1 / 2; ++q) {
      __m512i bv[NV];
      for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(b + q * (32 * NV) + 32 * j);
      for (int i = 0; i < MR; ++i) {
        int32_t pair;
        __builtin_memcpy(&pair, a + static_cast<std::size_t>(i) * lda + 2 * q, 4);
        const __m512i ai = _mm512_set1_epi32(pair);
        for (int j = 0; j < NV; ++j) acc[i][j] = dpwssd(acc[i][j], ai, bv[j]);
      }
    }
    // Branch-free: the first run adds to a masked-off (zero) load (the int32 sums convert to +0, never
    // -0, so 0 + v is v), runs before the last multiply by ones (exact).
    const __mmask16 prev = c0 == 0 ? static_cast<__mmask16>(0) : kAll;
    const float* s = c1 == kc ? scale : kernels_impl::kUnitScale;
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NV; ++j) {
        float* out = c + static_cast<std::size_t>(i) * ldc + 16 * j;
        const __m512 v =
            _mm512_add_ps(_mm512_maskz_loadu_ps(prev, out), _mm512_maskz_cvtepi32_ps(kAll, acc[i][j]));
        _mm512_storeu_ps(out, _mm512_mul_ps(v, _mm512_loadu_ps(s + 16 * j)));
      }
  }
}

void gemm(int64_t rows, int nv, std::size_t kc, std::size_t chunk, const int16_t* a, std::size_t lda,
          const int16_t* b, const float* scale, float* c, std::size_t ldc) {
  lowp_blocks::for_each_block(rows, nv, [&]<int MR, int NV>(int64_t i) {
    ukernel<MR, NV>(kc, chunk, a + i * lda, lda, b, scale, c + i * ldc, ldc);
  });
}

void convert(const float* src, int16_t* dst, int64_t count, int* bad) {
  const __m512 limit = _mm512_set1_ps(32767.0f);
  __mmask16 any = 0;
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(m, src + i);
    // |v| <= 32767 is false for NaN (ordered compare), so NaN lanes are not ok either.
    const __mmask16 ok = _mm512_mask_cmp_ps_mask(m, _mm512_abs_ps(v), limit, _CMP_LE_OQ);
    any = static_cast<__mmask16>(any | (m & ~ok));
    const __m512i iv = _mm512_maskz_cvtps_epi32(ok, v);
    _mm512_mask_cvtsepi32_storeu_epi16(dst + i, m, iv);
  }
  if (any != 0) *bad = 1;
}

int64_t codes(float* x, int64_t count, float inv) {
  const __m512 vinv = _mm512_set1_ps(inv), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512 limit = _mm512_set1_ps(127.5f), inf = _mm512_set1_ps(__builtin_inff());
  int64_t saturated = 0;
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __mmask16 finite = _mm512_mask_cmp_ps_mask(m, _mm512_abs_ps(v), inf, _CMP_LT_OQ);
    const __m512 q = _mm512_mul_ps(v, vinv);
    saturated += __builtin_popcount(
        static_cast<unsigned>(_mm512_mask_cmp_ps_mask(finite, _mm512_abs_ps(q), limit, _CMP_GT_OQ)));
    __m512 r = _mm512_maskz_roundscale_ps(kAll, q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, r, lo), hi);
    _mm512_mask_storeu_ps(x + i, finite, r);
  }
  return saturated;
}

}  // namespace

Int16Fns int16_fns_avx512vnni() {
  return {&gemm, &convert, &codes};
}

}  // namespace nova::conv
