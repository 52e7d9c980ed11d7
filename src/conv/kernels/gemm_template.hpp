// The GEMM micro-kernel, written once over a 16-lane vector type V and instantiated by each ISA file
// with its own V (include only from kernels/<isa>/ files, where V lives in an anonymous namespace, so
// every instantiation has internal linkage and no ISA's code can leak into another's).
//
// C[mr x 16*NV] = A[mr x kc] * B[kc x 16*NV]: the accumulators stay in registers for the whole
// reduction; each step loads NV vectors of B and broadcasts one A value per row. The reduction runs
// in one fixed order (k = 0..kc-1, one fused multiply-add per step), so every element of C is computed
// the same way whatever mr, NV or the thread that runs it: results do not depend on the blocking or
// the thread count.
#pragma once

#include <cstddef>

#include "assume_kc.hpp"
#include "depthwise_template.hpp"
#include "grouped_lanes_template.hpp"
#include "kernel_table.hpp"

namespace nova::conv::kernels_impl {

// Steps k = 0..len-1 of the reduction into the accumulators: NV vectors of B (row k at b_row(k)), one A
// value per row (arow[i][k]), one fused multiply-add each.
template <class V, int MR, int NV, bool PF, class BRow>
[[gnu::always_inline]] inline void accumulate_rows(V (&acc)[MR][NV], std::size_t len,
                                                   const float* const (&arow)[MR], BRow&& b_row,
                                                   const float* pf) {
  for (std::size_t k = 0; k < len; ++k) {
    if constexpr (PF) __builtin_prefetch(pf + k * 16, 0, 2);
    const float* bk = b_row(k);
    V bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = V::load(bk + static_cast<std::size_t>(16 * j));
    for (int i = 0; i < MR; ++i) {
      const V ai = V::broadcast(arow[i][k]);
      for (int j = 0; j < NV; ++j) acc[i][j] = V::fma(ai, bv[j], acc[i][j]);
    }
  }
}

// The steps over a packed B (row k at b + k*ldb).
template <class V, int MR, int NV, bool PF>
[[gnu::always_inline]] inline void accumulate_steps(V (&acc)[MR][NV], std::size_t len,
                                                    const float* const (&arow)[MR], const float* b,
                                                    std::size_t ldb, const float* pf) {
  accumulate_rows<V, MR, NV, PF>(
      acc, len, arow, [b, ldb](std::size_t k) { return b + k * ldb; }, pf);
}

template <class V, int MR, int NV>
[[gnu::always_inline]] inline void zero_accumulators(V (&acc)[MR][NV]) {
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = V::zero();
}

template <class V, int MR, int NV>
[[gnu::always_inline]] inline void store_accumulators(const V (&acc)[MR][NV], float* c, std::size_t ldc) {
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      V::store(c + static_cast<std::size_t>(i) * ldc + static_cast<std::size_t>(16 * j), acc[i][j]);
}

// The body, with or without prefetches: with PF, step k also asks for line k of `pf` (64 bytes, 16 floats
// apart) to be brought into L2 (prefetcht1), so that a caller streaming packed panels from L3 has the next
// panel's lines arrive while this call computes (WinogradPlan::prefetch_u). The arithmetic is the same.
template <class V, int MR, int NV, bool PF>
[[gnu::always_inline]] inline void gemm_body(std::size_t kc, const float* a, std::size_t lda, const float* b,
                                             std::size_t ldb, float* c, std::size_t ldc, const float* pf) {
  assume_reduction_at_least<1>(kc);
  V acc[MR][NV];
  zero_accumulators(acc);
  const float* arow[MR];
  for (int i = 0; i < MR; ++i) arow[i] = a + static_cast<std::size_t>(i) * lda;
  accumulate_steps<V, MR, NV, PF>(acc, kc, arow, b, ldb, pf);
  store_accumulators(acc, c, ldc);
}

template <class V, int MR, int NV>
void gemm_ukernel(std::size_t kc, const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                  std::size_t ldc) {
  gemm_body<V, MR, NV, false>(kc, a, lda, b, ldb, c, ldc, nullptr);
}

template <class V, int MR, int NV>
void gemm_ukernel_prefetch(std::size_t kc, const float* a, std::size_t lda, const float* b, std::size_t ldb,
                           float* c, std::size_t ldc, const float* pf) {
  gemm_body<V, MR, NV, true>(kc, a, lda, b, ldb, c, ldc, pf);
}

// The same FMA chain with A's rows in segments (GemmSegmentsFn): the direct path's NHWC rows read where
// the input holds them, one segment per kernel row (R runs of S*C floats a pixel stride apart), instead of
// an im2col copy of them. The accumulators stay in registers across the segments, so each element is the
// one chain k = 0..R*S*C-1 from zero that gemm_ukernel computes on the copy: the same bits. Where the GEMM
// writes the NHWC output itself, the epilogue's bias and ReLU follow the chain in registers (sum + bias,
// then max(v, 0) keeping NaN and -0): a pass of its own over the output block was a fifth of a first
// layer's time (1x3x224x224->64).
template <class V, int MR, int NV>
void gemm_ukernel_segments(std::size_t nseg, std::size_t seg_len, const float* const* seg, std::size_t lda,
                           const float* b, std::size_t ldb, const float* col_bias, bool relu, float* c,
                           std::size_t ldc) {
  assume_reduction_at_least<1>(seg_len);
  V acc[MR][NV];
  zero_accumulators(acc);
  for (std::size_t s = 0; s < nseg; ++s) {
    const float* arow[MR];
    for (int i = 0; i < MR; ++i) arow[i] = seg[s] + static_cast<std::size_t>(i) * lda;
    accumulate_steps<V, MR, NV, false>(acc, seg_len, arow, b + s * seg_len * ldb, ldb, nullptr);
  }
  if (col_bias != nullptr) {
    for (int j = 0; j < NV; ++j) {
      const V bias = V::load(col_bias + static_cast<std::size_t>(16 * j));
      for (int i = 0; i < MR; ++i) {
        acc[i][j] = V::add(acc[i][j], bias);
        if (relu) acc[i][j] = V::relu(acc[i][j]);
      }
    }
  }
  store_accumulators(acc, c, ldc);
}

// The same FMA chain with B's rows given by address (GemmBRowsFn): row k at b_rows[k] + b_offset, where the
// NCHW direct path reads an output row's pixels for tap (u, v) of channel c from a column phase of the
// input plane (direct_execute.cpp), instead of from a panel packed from it. Then row i's bias and ReLU,
// the direct path's epilogue (sum + bias, then max(v, 0) keeping NaN and -0): the packed form's bits.
template <class V, int MR, int NV>
void gemm_ukernel_b_rows(std::size_t kc, const float* a, std::size_t lda, const float* const* b_rows,
                         std::ptrdiff_t b_offset, const float* row_bias, bool relu, float* c,
                         std::size_t ldc) {
  assume_reduction_at_least<1>(kc);
  V acc[MR][NV];
  zero_accumulators(acc);
  const float* arow[MR];
  for (int i = 0; i < MR; ++i) arow[i] = a + static_cast<std::size_t>(i) * lda;
  accumulate_rows<V, MR, NV, false>(
      acc, kc, arow, [b_rows, b_offset](std::size_t k) { return b_rows[k] + b_offset; }, nullptr);
  for (int i = 0; i < MR; ++i) {
    const V bias = V::broadcast(row_bias[i]);
    for (int j = 0; j < NV; ++j) {
      acc[i][j] = V::add(acc[i][j], bias);
      if (relu) acc[i][j] = V::relu(acc[i][j]);
    }
  }
  store_accumulators(acc, c, ldc);
}

template <class V, int MR, int NV>
void fill_row(GemmTable& t) {
  t.fn[MR - 1][NV - 1] = &gemm_ukernel<V, MR, NV>;
  t.prefetching[MR - 1][NV - 1] = &gemm_ukernel_prefetch<V, MR, NV>;
  t.segments[MR - 1][NV - 1] = &gemm_ukernel_segments<V, MR, NV>;
  t.b_rows[MR - 1][NV - 1] = &gemm_ukernel_b_rows<V, MR, NV>;
  if constexpr (NV > 1) fill_row<V, MR, NV - 1>(t);
}

template <class V, int MR, int NV>
void fill_gemm_table(GemmTable& t) {
  fill_row<V, MR, NV>(t);
  if constexpr (MR > 1) fill_gemm_table<V, MR - 1, NV>(t);
}

template <class V, int MR, int NV>
GemmTable make_gemm_table() {
  GemmTable t;
  t.mr = MR;
  t.nv = NV;
  fill_gemm_table<V, MR, NV>(t);
  t.depthwise = &depthwise_pixel<V>;
  t.depthwise_row = &depthwise_row<V>;
  t.depthwise_pixels = &depthwise_pixels<V>;
  t.grouped_lanes[0] = &grouped_lanes<V, 2>;
  t.grouped_lanes[1] = &grouped_lanes<V, 4>;
  t.grouped_lanes[2] = &grouped_lanes<V, 8>;
  return t;
}

}  // namespace nova::conv::kernels_impl
