// The grouped-lanes micro-kernel (GemmTable::grouped_lanes), written once over a 16-lane vector type V and
// instantiated by each ISA's GEMM table (include only from kernels/<isa>/ files, through
// gemm_template.hpp).
//
// A run of `count` output pixels of a grouped convolution with CG input and CG output channels per group
// (CG 2, 4 or 8), output channels in lanes (NHWC, or one NCHW16c block), bias and ReLU fused. Channels come
// in vectors of 16 ("chunks"); for chunk q, lane l (output channel 16q + l, group g = l / CG):
//   out[p * out_step + 16q + l] = relu?(sum over (u, v, c) of x(q, u, p * stride + v * dilation)[g*CG + c]
//                                        * w[q][u][v][c][l] + bias[16q + l])
// with x(q, u, j) = rows[u] + q * row_chunk + 16 * j: the input rows as the caller staged them, chunk after
// chunk, 16 floats a pixel, zero padding included, lanes past the channels zero; w as [chunk][u][v][c][16],
// lanes past the channels zero. Every offset inside a chunk is then a compile-time constant where the
// kernel width is (with a run-time leading dimension the addresses took a third of the instructions). Each
// loaded input vector gives its groups' channel c in every lane of the group by an in-register shuffle
// (V::group_broadcast), so no lane pads a group's few output channels. The sums run from +0 in (u, v, c)
// order, one fused multiply-add each, then + bias, then V::relu: the chain of the direct path's other forms,
// so the same bits.
//
// Four output pixels per pass for 3-wide kernels at strides 1 and 2 (dilation 1; ResNeXt's layers), all
// chunks of each four (pixels outer, so that their input columns stay in L1): an input vector loaded once
// serves every pixel of the four whose window holds it (at stride 1, up to 3 of them), and its CG shuffles
// with it; per pixel the order of the sums is unchanged (u, then v ascending, then c). Other kernels,
// strides and dilations, and the last pixels of a run, one pixel at a time.
#pragma once

#include <cstddef>

#include "depthwise_template.hpp"

namespace nova::conv::kernels_impl {

// acc += group_broadcast<CG, c>(x) * w[16 * c] for c = C .. CG-1, in that order.
template <class V, int CG, int C = 0>
[[gnu::always_inline]] inline void fma_group_channels(V x, const float* w, V& acc) {
  acc = V::fma(V::template group_broadcast<CG, C>(x), V::load(w + 16 * C), acc);
  if constexpr (C + 1 < CG) fma_group_channels<V, CG, C + 1>(x, w, acc);
}

// Column J of four pixels' windows in one kernel row serves pixel O at tap v = J - O * STRIDE, 0 <= v < S.
template <class V, int CG, int STRIDE, int S, int J, int O>
[[gnu::always_inline]] inline void column_to_pixels(V x, const float* wu, V (&acc)[4]) {
  if constexpr (J >= O * STRIDE && J - O * STRIDE < S)
    fma_group_channels<V, CG>(x, wu + (J - O * STRIDE) * CG * 16, acc[O]);
  if constexpr (O + 1 < 4) column_to_pixels<V, CG, STRIDE, S, J, O + 1>(x, wu, acc);
}

template <class V, int CG, int STRIDE, int S, int J = 0>
[[gnu::always_inline]] inline void columns_to_pixels(const float* xr, const float* wu, V (&acc)[4]) {
  column_to_pixels<V, CG, STRIDE, S, J, 0>(V::load(xr + 16 * J), wu, acc);
  if constexpr (J + 1 < 3 * STRIDE + S) columns_to_pixels<V, CG, STRIDE, S, J + 1>(xr, wu, acc);
}

// STRIDE and S 0: any stride, dilation and kernel width, one pixel at a time.
template <class V, int CG, int STRIDE, int S>
void grouped_lanes_run(const float* const* rows, std::size_t R, std::size_t S_any, std::size_t stride,
                       std::size_t dilation, std::size_t row_chunk, const float* w, std::size_t count,
                       std::size_t channels, const float* bias, bool relu, bool pad_lanes, float* out,
                       std::ptrdiff_t out_step) {
  const std::size_t chunks = (channels + 15) / 16, w_chunk = R * S_any * CG * 16;
  const auto finish = [&](V acc, std::size_t q, float* o) {
    store_biased_lanes(acc, V::load(bias + 16 * q), relu, pad_lanes, o,
                       channels - 16 * q < 16 ? channels - 16 * q : 16);
  };
  const auto at = [&](std::size_t p, std::size_t q) {
    return out + static_cast<std::ptrdiff_t>(p) * out_step + static_cast<std::ptrdiff_t>(16 * q);
  };
  std::size_t p = 0;
  if constexpr (STRIDE > 0) {
    for (; p + 4 <= count; p += 4)
      for (std::size_t q = 0; q < chunks; ++q) {
        V acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
        const float* wq = w + q * w_chunk;
        for (std::size_t u = 0; u < R; ++u)
          columns_to_pixels<V, CG, STRIDE, S>(rows[u] + q * row_chunk + 16 * STRIDE * p, wq + u * S * CG * 16,
                                              acc);
        for (std::size_t i = 0; i < 4; ++i) finish(acc[i], q, at(p + i, q));
      }
  }
  for (; p < count; ++p)
    for (std::size_t q = 0; q < chunks; ++q) {
      V acc = V::zero();
      const float* wq = w + q * w_chunk;
      for (std::size_t u = 0; u < R; ++u)
        for (std::size_t v = 0; v < S_any; ++v)
          fma_group_channels<V, CG>(V::load(rows[u] + q * row_chunk + 16 * (p * stride + v * dilation)),
                                    wq + (u * S_any + v) * CG * 16, acc);
      finish(acc, q, at(p, q));
    }
}

template <class V, int CG>
void grouped_lanes(const float* const* rows, std::size_t R, std::size_t S, std::size_t stride,
                   std::size_t dilation, std::size_t row_chunk, const float* w, std::size_t count,
                   std::size_t channels, const float* bias, bool relu, bool pad_lanes, float* out,
                   std::ptrdiff_t out_step) {
  const auto run = [&](auto fn) {
    fn(rows, R, S, stride, dilation, row_chunk, w, count, channels, bias, relu, pad_lanes, out, out_step);
  };
  if (dilation == 1 && S == 3 && stride == 1)
    run(grouped_lanes_run<V, CG, 1, 3>);
  else if (dilation == 1 && S == 3 && stride == 2)
    run(grouped_lanes_run<V, CG, 2, 3>);
  else
    run(grouped_lanes_run<V, CG, 0, 0>);
}

}  // namespace nova::conv::kernels_impl
