// The AMX int8 GEMM written once over a tile back end `Tiles`, so that the same blocking, addressing
// and dequantization run on AMX (gemm_int8_amx.cpp, the intrinsics) and on a scalar model of the tile
// instructions (kernels/avx512vnni/int8_gemm_tiles_model_avx512vnni.cpp), which the tests run on
// machines without AMX. Include only from files compiled with AVX-512F/BW (the epilogue).
//
// Tiles (palette 1, every tile 16 rows x 64 bytes):
//   tmm0..3  C: 16 x 16 int32 each, a 32 x 32 block (rows 16r.., columns 16c..: tmm(2r + c))
//   tmm4, 5  A: 16 rows x 64 channels of V codes (u8), rows 0-15 and 16-31 of the block
//   tmm6, 7  B: 16 channel quads x 16 columns x 4 of the U panel (s8), columns 0-15 and 16-31
// The VNNI panel layout B[(c/4)*(4w) + 4j + (c&3)] is already what a B tile wants: quad row q of
// columns 16t..16t+15 is 64 contiguous bytes at q*4w + 64t, so a tile loads it with stride 4w.
// Rows in blocks of 32, then 16; fewer than 16 rows, and channel counts that are not a multiple of 64
// (one tile's depth), go to the VNNI kernel, whose sums are the same. C = float(sum - comp[j]) *
// scale[j] by the VNNI kernel's own int8_dequantize, so the two give the same bits.
//
// Tiles provides: zero<T>(), load<T>(const void* base, long stride), dpbusd<C, A, B>() (C += A (u8) .
// B (s8), 4 bytes per product group), store<T>(void* base, long stride), begin() and end() around a
// call (tile configuration and release).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "../avx512/int8_dequantize_avx512.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv::amx_impl {

// C rows [0, 16*(1+TwoRows)), columns [0, 16*(1+TwoCols)) of one block, from kc/64 tile products.
template <bool TwoRows, bool TwoCols, class Tiles>
void block(Tiles& t, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b, std::size_t ldb,
           const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  t.template zero<0>();
  if constexpr (TwoCols) t.template zero<1>();
  if constexpr (TwoRows) t.template zero<2>();
  if constexpr (TwoRows && TwoCols) t.template zero<3>();
  const auto sa = static_cast<long>(lda), sb = static_cast<long>(ldb);
  for (std::size_t k = 0; k < kc; k += 64) {
    const int8_t* bk = b + (k / 4) * ldb;  // quad row k/4
    t.template load<4>(a + k, sa);
    if constexpr (TwoRows) t.template load<5>(a + 16 * lda + k, sa);
    t.template load<6>(bk, sb);
    if constexpr (TwoCols) t.template load<7>(bk + 64, sb);
    t.template dpbusd<0, 4, 6>();
    if constexpr (TwoCols) t.template dpbusd<1, 4, 7>();
    if constexpr (TwoRows) t.template dpbusd<2, 5, 6>();
    if constexpr (TwoRows && TwoCols) t.template dpbusd<3, 5, 7>();
  }
  alignas(64) int32_t sums[32][32];
  t.template store<0>(&sums[0][0], 128);
  if constexpr (TwoCols) t.template store<1>(&sums[0][16], 128);
  if constexpr (TwoRows) t.template store<2>(&sums[16][0], 128);
  if constexpr (TwoRows && TwoCols) t.template store<3>(&sums[16][16], 128);
  for (int h = 0; h < (TwoCols ? 2 : 1); ++h) {
    const __m512i cj = _mm512_loadu_si512(comp + 16 * h);
    const __m512 sj = _mm512_loadu_ps(scale + 16 * h);
    for (int i = 0; i < (TwoRows ? 32 : 16); ++i)
      _mm512_storeu_ps(c + static_cast<std::size_t>(i) * ldc + 16 * h,
                       int8_dequantize(_mm512_load_si512(&sums[i][16 * h]), cj, sj));
  }
}

template <bool TwoRows, class Tiles>
void row_block(Tiles& t, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
               std::size_t ldb, const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  int j = 0;
  for (; j + 2 <= nv; j += 2)
    block<TwoRows, true>(t, kc, a, lda, b + 64 * j, ldb, comp + 16 * j, scale + 16 * j, c + 16 * j, ldc);
  if (j < nv)
    block<TwoRows, false>(t, kc, a, lda, b + 64 * j, ldb, comp + 16 * j, scale + 16 * j, c + 16 * j, ldc);
}

// Int8GemmFn over the back end; `rest` (the VNNI kernel) takes what the tiles do not.
template <class Tiles>
void gemm(Tiles& t, Int8GemmFn rest, int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda,
          const int8_t* b, const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  if (kc % 64 != 0 || rows < 16) {
    rest(rows, nv, kc, a, lda, b, comp, scale, c, ldc);
    return;
  }
  const std::size_t ldb = static_cast<std::size_t>(64 * nv);  // bytes per quad row of the panel (4w)
  const auto la = static_cast<int64_t>(lda), lc = static_cast<int64_t>(ldc);
  t.begin();
  int64_t i = 0;
  for (; i + 32 <= rows; i += 32)
    row_block<true>(t, nv, kc, a + i * la, lda, b, ldb, comp, scale, c + i * lc, ldc);
  if (i + 16 <= rows) {
    row_block<false>(t, nv, kc, a + i * la, lda, b, ldb, comp, scale, c + i * lc, ldc);
    i += 16;
  }
  t.end();
  if (i < rows) rest(rows - i, nv, kc, a + i * la, lda, b, comp, scale, c + i * lc, ldc);
}

}  // namespace nova::conv::amx_impl
