// INT8 GEMM with AVX512-VNNI: vpdpbusd multiplies one broadcast quad of channels of a V row (u8: code
// + 128) with 16 columns x 4 channels of the U panel (s8) and adds the four products into 16 int32
// accumulators (exact). The +128 shift is removed with comp[j] = 128 * sum_c U(c, j) and the result
// dequantized in the same order as the portable kernel. Up to 6 rows x 64 columns per micro-kernel.
#include <immintrin.h>

#include "../assume_kc.hpp"
#include "../avx512/int8_dequantize_avx512.hpp"
#include "../lowp_blocks.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

// The masked forms compute the same as the plain intrinsics, whose GCC 12 forms trip a false
// -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

// acc + a (u8) . b (s8), as _mm512_dpbusd_epi32. Written as an asm statement with the accumulator as a
// read-write register operand: with the intrinsic, GCC 12 copies every accumulator to a temporary
// register, runs vpdpbusd there, and stores the result to the stack as well as moving it back (two
// extra moves and a store per instruction, seen in objdump); the int8 convolution took 1.5x as long.
inline __m512i dpbusd(__m512i acc, __m512i a, __m512i b) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

template <int MR, int NV>
void ukernel(std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b, const int32_t* comp,
             const float* scale, float* c, std::size_t ldc) {
  kernels_impl::assume_reduction_at_least<16>(kc);
  __m512i acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_si512();
  for (std::size_t q = 0; q < kc / 4; ++q) {
    __m512i bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(b + q * (64 * NV) + 64 * j);
    for (int i = 0; i < MR; ++i) {
      int32_t quad;
      __builtin_memcpy(&quad, a + static_cast<std::size_t>(i) * lda + 4 * q, 4);
      const __m512i ai = _mm512_set1_epi32(quad);
      for (int j = 0; j < NV; ++j) acc[i][j] = dpbusd(acc[i][j], ai, bv[j]);
    }
  }
  for (int j = 0; j < NV; ++j) {
    const __m512i cj = _mm512_loadu_si512(comp + 16 * j);
    const __m512 sj = _mm512_loadu_ps(scale + 16 * j);
    for (int i = 0; i < MR; ++i)
      _mm512_storeu_ps(c + static_cast<std::size_t>(i) * ldc + 16 * j, int8_dequantize(acc[i][j], cj, sj));
  }
}

void gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
          const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  lowp_blocks::for_each_block(rows, nv, [&]<int MR, int NV>(int64_t i) {
    ukernel<MR, NV>(kc, a + i * lda, lda, b, comp, scale, c + i * ldc, ldc);
  });
}

// The portable int8 quantization (lowp_kernels.hpp), 16 values at a time with the same operations.
int64_t quantize(const float* src, uint8_t* dst, int64_t count, float inv, int* bad) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  const __m512 vinv = _mm512_set1_ps(inv), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512 magic = _mm512_set1_ps(12582912.0f), limit = _mm512_set1_ps(127.5f);
  const __m512i offset = _mm512_set1_epi32(128);
  int64_t saturated = 0;
  __mmask16 nonfinite = 0;
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512i b = _mm512_maskz_loadu_epi32(m, src + i);
    const __m512i a = _mm512_and_si512(b, abs_mask);
    const __mmask16 finite = _mm512_cmplt_epu32_mask(a, inf);
    nonfinite = static_cast<__mmask16>(nonfinite | (m & ~finite));
    __m512 y = _mm512_maskz_mul_ps(finite, _mm512_castsi512_ps(b), vinv);
    const __m512 ay = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(y), abs_mask));
    saturated += __builtin_popcount(static_cast<unsigned>(_mm512_mask_cmp_ps_mask(m, ay, limit, _CMP_GT_OQ)));
    y = _mm512_mask_min_ps(y, kAll, _mm512_mask_max_ps(y, kAll, y, lo), hi);
    y = _mm512_sub_ps(_mm512_add_ps(y, magic), magic);
    const __m512i code = _mm512_add_epi32(_mm512_maskz_cvttps_epi32(kAll, y), offset);
    _mm512_mask_cvtepi32_storeu_epi8(dst + i, m, code);
  }
  *bad |= nonfinite != 0 ? 1 : 0;
  return saturated;
}

float amax(const float* v, int64_t count) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  __m512i m = _mm512_setzero_si512();
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 k = count - i >= 16 ? kAll : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(k, v + i), abs_mask);
    m = _mm512_mask_max_epu32(m, _mm512_cmplt_epu32_mask(a, inf), m, a);
  }
  alignas(64) uint32_t lanes[16];
  _mm512_store_si512(lanes, m);
  uint32_t r = 0;
  for (uint32_t x : lanes) r = x > r ? x : r;
  return f32_from_bits(r);
}

}  // namespace

Int8QuantizeFn int8_quantize_avx512vnni() {
  return &quantize;
}
AmaxFn amax_avx512vnni() {
  return &amax;
}

Int8GemmFn int8_gemm_avx512vnni() {
  return &gemm;
}

}  // namespace nova::conv
