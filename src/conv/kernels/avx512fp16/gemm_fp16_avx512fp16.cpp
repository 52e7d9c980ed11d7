// FP16-arithmetic GEMM on AVX512-FP16 (lowp_kernels.hpp, "fp16 FMA"): V and U both fp16 bits; for each
// chunk of kFp16FmaChunk channels the products and their sums run in fp16 with vfmadd231ph (32 lanes,
// one rounding per FMA, subnormals kept: AVX512-FP16 has no DAZ/FTZ), starting from zero; each chunk
// sum is then widened (vcvtph2ps, exact) and added into FP32 accumulators that live in C itself.
//
// Why C holds the FP32 sums: 12 rows x 64 columns take 24 zmm of fp16 partial sums, and their FP32
// sums would take 48 more. C (12 x 256 bytes) stays in L1 and costs, once per chunk, a load, an add and
// a store per 16 columns. (FP32 sums in registers allow only 4 rows: up to ~10 % slower.) 12 rows
// rather than 6: fewer B loads per FMA, up to ~5 % faster on the 128-512-channel layers.
// The A values enter the FMAs as {1to32} broadcast memory operands and the widening reads the spilled
// partial sums with vcvtph2ps' memory form: neither needs a port-5 shuffle (vpbroadcastw and
// vextracti64x4 do), though on this machine the difference was within noise.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

constexpr int kRows = 12;
// The masked forms compute the same as the plain intrinsics; GCC 12's plain forms use undefined
// registers and trip a false -Wmaybe-uninitialized (GCC bug 105593).
constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

// One {1to32} broadcast FMA: acc += broadcast(*a) * b. GCC 12 builds _mm512_set1_ph from memory with
// vpbroadcastw instead of folding it into the FMA, hence the asm.
inline __m512h fma_bcast(const uint16_t* a, __m512h b, __m512h acc) {
  __asm__("vfmadd231ph %[a]%{1to32%}, %[b], %[acc]" : [acc] "+v"(acc) : [b] "v"(b), [a] "m"(*a));
  return acc;
}

// 16 fp16 values from memory widened to fp32 (exact). asm: GCC 12 turns a store and reload into
// vextracti64x4 + the register form.
inline __m512 widen16(const uint16_t* p) {
  __m512 r;
  __asm__("vcvtph2ps %[p], %[r]" : [r] "=v"(r) : [p] "m"(*reinterpret_cast<const __m256i*>(p)));
  return r;
}

template <int MR, int NV>
void ukernel(std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b, const float* col_scale,
             float* c, std::size_t ldc) {
  constexpr int NZ = (NV + 1) / 2;  // zmm of 32 fp16 columns; with an odd NV the last holds 16 (+ 16 zeros)
  constexpr std::size_t w = 16 * NV;
  alignas(64) uint16_t spill[MR][NZ][32];
  for (std::size_t k0 = 0; k0 < kc; k0 += kFp16FmaChunk) {
    const std::size_t k1 = std::min<std::size_t>(kc, k0 + kFp16FmaChunk);
    __m512h acc[MR][NZ];
    for (int i = 0; i < MR; ++i)
      for (int z = 0; z < NZ; ++z) acc[i][z] = _mm512_setzero_ph();
    for (std::size_t k = k0; k < k1; ++k) {
      __m512h bv[NZ];
      for (int z = 0; z < NZ; ++z) {
        const uint16_t* bz = b + k * w + static_cast<std::size_t>(32 * z);
        bv[z] = (NV % 2 == 1 && z == NZ - 1) ? _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(0xFFFFu, bz))
                                             : _mm512_castsi512_ph(_mm512_loadu_si512(bz));
      }
      for (int i = 0; i < MR; ++i)
        for (int z = 0; z < NZ; ++z)
          acc[i][z] = fma_bcast(a + static_cast<std::size_t>(i) * lda + k, bv[z], acc[i][z]);
    }
    // Widen each chunk sum (exact) and add it to the FP32 sum; the first chunk adds to +0, as the
    // portable kernel and the emulation do (a -0 chunk sum gives +0). The last chunk's total is
    // multiplied by the column scale, where there is one.
    for (int i = 0; i < MR; ++i)
      for (int z = 0; z < NZ; ++z) _mm512_store_si512(spill[i][z], _mm512_castph_si512(acc[i][z]));
    const bool last = k1 == kc && col_scale != nullptr;
    for (int i = 0; i < MR; ++i) {
      float* ci = c + static_cast<std::size_t>(i) * ldc;
      for (int h = 0; h < NV; ++h) {
        const __m512 part = widen16(&spill[i][h / 2][16 * (h % 2)]);
        const __m512 prev = k0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(ci + 16 * h);
        const __m512 total = _mm512_add_ps(prev, part);
        _mm512_storeu_ps(ci + 16 * h,
                         last ? _mm512_mul_ps(total, _mm512_loadu_ps(col_scale + 16 * h)) : total);
      }
    }
  }
}

using UkernelFn = void (*)(std::size_t, const uint16_t*, std::size_t, const uint16_t*, const float*, float*,
                           std::size_t);

template <int NV, std::size_t... I>
constexpr std::array<UkernelFn, sizeof...(I)> ukernels(std::index_sequence<I...>) {
  return {&ukernel<static_cast<int>(I) + 1, NV>...};
}

template <int NV>
void rows_nv(int64_t rows, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
             const float* col_scale, float* c, std::size_t ldc) {
  static constexpr auto fns = ukernels<NV>(std::make_index_sequence<kRows>());
  // Rows in ceil(rows / kRows) groups of nearly equal size (as the FP32 GEMM): a micro-kernel of few
  // rows is load-bound. Which micro-kernel computes a row does not change its result.
  const int64_t groups = (rows + kRows - 1) / kRows;
  if (groups == 0) return;
  const int64_t base = rows / groups, extra = rows % groups;
  int64_t i0 = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t count = base + (g < extra ? 1 : 0);
    fns[static_cast<std::size_t>(count - 1)](kc, a + i0 * static_cast<int64_t>(lda), lda, b, col_scale,
                                             c + i0 * static_cast<int64_t>(ldc), ldc);
    i0 += count;
  }
}

void gemm(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
          const float* col_scale, float* c, std::size_t ldc) {
  switch (nv) {
    case 1:
      rows_nv<1>(rows, kc, a, lda, b, col_scale, c, ldc);
      break;
    case 2:
      rows_nv<2>(rows, kc, a, lda, b, col_scale, c, ldc);
      break;
    case 3:
      rows_nv<3>(rows, kc, a, lda, b, col_scale, c, ldc);
      break;
    default:
      rows_nv<4>(rows, kc, a, lda, b, col_scale, c, ldc);
      break;
  }
}

// float -> fp16 bits (vcvtps2ph: nearest even, subnormals kept, overflow to inf, NaN quieted).
void convert(const float* src, uint16_t* dst, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst + i),
        _mm512_maskz_cvtps_ph(kAll, _mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  if (i < count) {
    const auto m = static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m256i h = _mm512_maskz_cvtps_ph(kAll, _mm512_maskz_loadu_ps(m, src + i),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(dst + i, m, h);
  }
}

}  // namespace

Fp16FmaGemmFn fp16_fma_gemm_avx512fp16() {
  return &gemm;
}
Fp16ConvertFn fp16_convert_avx512fp16() {
  return &convert;
}

}  // namespace nova::conv
