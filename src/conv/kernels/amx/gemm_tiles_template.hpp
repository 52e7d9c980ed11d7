// The AMX GEMMs, int8 (TDPBUSD) and bf16 (TDPBF16PS), written once over a tile back end `Tiles`, so
// that the same blocking, addressing and epilogues run on AMX (kernels/amx/gemm_*_amx.cpp) and on a
// scalar model of the tile instructions (kernels/avx512vnni/amx_tiles_model_avx512vnni.cpp), which the
// tests run on machines without AMX. Include only from files compiled with AVX-512F/BW (the int8
// epilogue).
//
// Tiles (palette 1, every tile 16 rows x 64 bytes):
//   tmm0..3  C: 16 x 16 int32 or FP32 each, a 32 x 32 block (rows 16r.., columns 16c..: tmm(2r + c))
//   tmm4, 5  A: 16 rows x 64 bytes of V (64 int8 codes or 32 bf16 channels), rows 0-15 and 16-31
//   tmm6, 7  B: 16 dword rows of the U panel x 16 columns, columns 0-15 and 16-31
// A dword holds a group of channels: 4 int8 (a quad) or 2 bf16 (a pair). The panel layouts
// (lowp_kernels.hpp) are already what a B tile wants: group row g of columns 16t..16t+15 is 64
// contiguous bytes at g * 64nv + 64t, so a tile loads it with stride 64nv bytes.
//
// Tiles provides: zero<T>(), load<T>(const void* base, long stride), store<T>(void* base, long stride),
// dpbusd<C, A, B>() (C += A (u8) . B (s8), 4 bytes per product group), dpbf16ps<C, A, B>() (C += A . B,
// bf16 pairs, FP32 sums), begin() and end() around a call (tile configuration and release).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../avx512/int8_dequantize_avx512.hpp"
#include "../kernel_table.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv::amx_impl {

// int8: V codes (u8) times U (s8), exact int32 sums, dequantized as the VNNI kernel does.
struct Int8Op {
  using A = uint8_t;
  using B = int8_t;
  static constexpr std::size_t kGroup = 4;  // channels per dword
  const int32_t* comp;
  const float* scale;

  template <int C, int TA, int TB, class Tiles>
  static void dot(Tiles& t) {
    t.template dpbusd<C, TA, TB>();
  }
  // C = float(sum - comp[j]) * scale[j] by the VNNI kernel's own int8_dequantize: the same bits.
  template <bool TwoRows, bool TwoCols, class Tiles>
  void finish(Tiles& t, int j, float* c, std::size_t ldc) const {
    alignas(64) int32_t sums[32][32];
    t.template store<0>(&sums[0][0], 128);
    if constexpr (TwoCols) t.template store<1>(&sums[0][16], 128);
    if constexpr (TwoRows) t.template store<2>(&sums[16][0], 128);
    if constexpr (TwoRows && TwoCols) t.template store<3>(&sums[16][16], 128);
    for (int h = 0; h < (TwoCols ? 2 : 1); ++h) {
      const __m512i cj = _mm512_loadu_si512(comp + 16 * (j + h));
      const __m512 sj = _mm512_loadu_ps(scale + 16 * (j + h));
      for (int i = 0; i < (TwoRows ? 32 : 16); ++i)
        _mm512_storeu_ps(c + static_cast<std::size_t>(i) * ldc + 16 * h,
                         int8_dequantize(_mm512_load_si512(&sums[i][16 * h]), cj, sj));
    }
  }
};

// bf16: FP32 sums of bf16 products, stored as they are.
struct Bf16Op {
  using A = uint16_t;
  using B = uint16_t;
  static constexpr std::size_t kGroup = 2;

  template <int C, int TA, int TB, class Tiles>
  static void dot(Tiles& t) {
    t.template dpbf16ps<C, TA, TB>();
  }
  template <bool TwoRows, bool TwoCols, class Tiles>
  void finish(Tiles& t, int, float* c, std::size_t ldc) const {
    const auto s = static_cast<long>(ldc * sizeof(float));
    t.template store<0>(c, s);
    if constexpr (TwoCols) t.template store<1>(c + 16, s);
    if constexpr (TwoRows) t.template store<2>(c + 16 * ldc, s);
    if constexpr (TwoRows && TwoCols) t.template store<3>(c + 16 * ldc + 16, s);
  }
};

// C rows [0, 16*(1+TwoRows)), columns 16j .. 16j + 16*(1+TwoCols) of one block (c points at column
// 16j), from kc / (16 * kGroup) tile products.
template <class Op, bool TwoRows, bool TwoCols, class Tiles>
void block(Tiles& t, const Op& op, int nv, int j, std::size_t kc, const typename Op::A* a, std::size_t lda,
           const typename Op::B* b, float* c, std::size_t ldc) {
  t.template zero<0>();
  if constexpr (TwoCols) t.template zero<1>();
  if constexpr (TwoRows) t.template zero<2>();
  if constexpr (TwoRows && TwoCols) t.template zero<3>();
  const auto sa = static_cast<long>(lda * sizeof(typename Op::A));
  const long sb = 64L * nv;  // bytes per group row of the panel
  const auto* bj = reinterpret_cast<const unsigned char*>(b) + 64 * j;
  for (std::size_t k = 0; k < kc; k += 16 * Op::kGroup) {
    const unsigned char* bk = bj + static_cast<long>(k / Op::kGroup) * sb;
    t.template load<4>(a + k, sa);
    if constexpr (TwoRows) t.template load<5>(a + 16 * lda + k, sa);
    t.template load<6>(bk, sb);
    if constexpr (TwoCols) t.template load<7>(bk + 64, sb);
    Op::template dot<0, 4, 6>(t);
    if constexpr (TwoCols) Op::template dot<1, 4, 7>(t);
    if constexpr (TwoRows) Op::template dot<2, 5, 6>(t);
    if constexpr (TwoRows && TwoCols) Op::template dot<3, 5, 7>(t);
  }
  op.template finish<TwoRows, TwoCols>(t, j, c, ldc);
}

template <class Op, bool TwoRows, class Tiles>
void row_block(Tiles& t, const Op& op, int nv, std::size_t kc, const typename Op::A* a, std::size_t lda,
               const typename Op::B* b, float* c, std::size_t ldc) {
  int j = 0;
  for (; j + 2 <= nv; j += 2) block<Op, TwoRows, true>(t, op, nv, j, kc, a, lda, b, c + 16 * j, ldc);
  if (j < nv) block<Op, TwoRows, false>(t, op, nv, j, kc, a, lda, b, c + 16 * j, ldc);
}

// Rows in blocks of 32, then 16, inside begin()/end(); returns the rows done (a multiple of 16).
template <class Op, class Tiles>
int64_t full_row_blocks(Tiles& t, const Op& op, int64_t rows, int nv, std::size_t kc, const typename Op::A* a,
                        std::size_t lda, const typename Op::B* b, float* c, std::size_t ldc) {
  const auto la = static_cast<int64_t>(lda), lc = static_cast<int64_t>(ldc);
  int64_t i = 0;
  for (; i + 32 <= rows; i += 32) row_block<Op, true>(t, op, nv, kc, a + i * la, lda, b, c + i * lc, ldc);
  if (i + 16 <= rows) {
    row_block<Op, false>(t, op, nv, kc, a + i * la, lda, b, c + i * lc, ldc);
    i += 16;
  }
  return i;
}

// Int8GemmFn over the back end, with the tile configuration already loaded (a tile session: begin()
// before, end() after, by the caller; `Session` false: this call loads and releases it). Int8 sums are
// exact, so the VNNI kernel (`rest`) takes what the tiles do not (blocks under 16 rows, channel counts
// that are not a multiple of 64) with the same bits.
template <bool Session, class Tiles>
void int8_gemm(Tiles& t, Int8GemmFn rest, int64_t rows, int nv, std::size_t kc, const uint8_t* a,
               std::size_t lda, const int8_t* b, const int32_t* comp, const float* scale, float* c,
               std::size_t ldc) {
  if (kc % 64 != 0 || rows < 16) {
    rest(rows, nv, kc, a, lda, b, comp, scale, c, ldc);
    return;
  }
  const Int8Op op{comp, scale};
  if constexpr (!Session) t.begin();
  const int64_t i = full_row_blocks(t, op, rows, nv, kc, a, lda, b, c, ldc);
  if constexpr (!Session) t.end();
  const auto la = static_cast<int64_t>(lda), lc = static_cast<int64_t>(ldc);
  if (i < rows) rest(rows - i, nv, kc, a + i * la, lda, b, comp, scale, c + i * lc, ldc);
}

// Bf16GemmFn over the back end. FP32 sums depend on their order, so every row goes through the tiles,
// a last block of fewer than 16 rows through a zero-padded copy: a row's result then depends on its
// own operands only, not on how the engine split the rows (results identical across thread counts).
// Channel counts that are not a multiple of 32 go to `rest` whole (the plans do not use AMX for them).
// `Session` as int8_gemm's.
template <bool Session, class Tiles>
void bf16_gemm(Tiles& t, Bf16GemmFn rest, int64_t rows, int nv, std::size_t kc, const uint16_t* a,
               std::size_t lda, const uint16_t* b, float* c, std::size_t ldc) {
  if (kc % 32 != 0) {
    rest(rows, nv, kc, a, lda, b, c, ldc);
    return;
  }
  const Bf16Op op;
  if constexpr (!Session) t.begin();
  const int64_t i = full_row_blocks(t, op, rows, nv, kc, a, lda, b, c, ldc);
  if (i < rows) {
    const auto left = static_cast<std::size_t>(rows - i);
    thread_local std::vector<uint16_t> padded;
    padded.assign(16 * kc, 0);
    for (std::size_t r = 0; r < left; ++r)
      std::memcpy(&padded[r * kc], a + (static_cast<std::size_t>(i) + r) * lda, kc * sizeof(uint16_t));
    alignas(64) float out[16][kMaxNV * 16];
    row_block<Bf16Op, false>(t, op, nv, kc, padded.data(), kc, b, &out[0][0], kMaxNV * 16);
    for (std::size_t r = 0; r < left; ++r)
      std::memcpy(c + (static_cast<std::size_t>(i) + r) * ldc, out[r], static_cast<std::size_t>(16 * nv) * 4);
  }
  if constexpr (!Session) t.end();
}

}  // namespace nova::conv::amx_impl
