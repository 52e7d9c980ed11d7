// The grouped-lanes micro-kernel (GemmTable::grouped_lanes), written once over a 16-lane vector type V and
// instantiated by each ISA's GEMM table (include only from kernels/<isa>/ files, through
// gemm_template.hpp).
//
// A run of `count` output pixels of a grouped convolution with CG input and CG output channels per group
// (CG 2, 4 or 8), output channels in lanes (NHWC, or one NCHW16c block), bias and ReLU fused:
//   out[p * out_step + k] = relu?(sum over (u, v, c) of x(u, p * stride + v * dilation)[k / CG * CG + c]
//                                  * w[((u * S + v) * CG + c) * ldw + k] + bias[k])
// with x(u, j) = rows[u] + j * pix, the input pixels of kernel row u, zero padding included (the caller
// stages the rows). Each loaded
// input vector gives its groups' channel c in every lane of the group by an in-register shuffle
// (V::group_broadcast), so no lane pads a group's few output channels. The sums run from +0 in (u, v, c)
// order, one fused multiply-add each, then + bias, then V::relu: the chain of the direct path's other forms,
// so the same bits.
//
// Four output pixels per pass for 3-wide kernels at strides 1 and 2 (dilation 1; ResNeXt's layers), whole
// vectors of channels: an input vector loaded once serves every pixel of the four whose window holds it
// (at stride 1, up to 3 of them), and its CG shuffles with it; per pixel the order of the sums is
// unchanged (u, then v ascending, then c). Other kernels, strides and dilations, the last pixels of a run
// and a last partial vector of channels, one pixel at a time.
#pragma once

#include <cstddef>

namespace nova::conv::kernels_impl {

// acc += group_broadcast<CG, c>(x) * w[c * ldw] for c = C .. CG-1, in that order.
template <class V, int CG, int C = 0, class Ld>
[[gnu::always_inline]] inline void fma_group_channels(V x, const float* w, std::size_t ldw, V& acc, Ld&& ld) {
  acc = V::fma(V::template group_broadcast<CG, C>(x), ld(w + static_cast<std::size_t>(C) * ldw), acc);
  if constexpr (C + 1 < CG) fma_group_channels<V, CG, C + 1>(x, w, ldw, acc, ld);
}

// Four output pixels' sums over whole 16-lane vectors, the kernel width S and the stride compile-time
// constants (dilation 1), so that the input columns and the pixels each serves unroll into straight code
// with the accumulators in registers: column J serves pixel O at tap v = J - O * STRIDE where 0 <= v < S.
template <class V>
struct WholeLoad {
  V operator()(const float* q) const { return V::load(q); }
};

template <class V, int CG, int STRIDE, int S, int J, int O>
[[gnu::always_inline]] inline void column_to_pixels(V x, const float* wu, std::size_t ldw, V (&acc)[4]) {
  if constexpr (J >= O * STRIDE && J - O * STRIDE < S)
    fma_group_channels<V, CG>(x, wu + static_cast<std::size_t>((J - O * STRIDE) * CG) * ldw, ldw, acc[O],
                              WholeLoad<V>{});
  if constexpr (O + 1 < 4) column_to_pixels<V, CG, STRIDE, S, J, O + 1>(x, wu, ldw, acc);
}

template <class V, int CG, int STRIDE, int S, int J = 0>
[[gnu::always_inline]] inline void columns_to_pixels(const float* xr, std::ptrdiff_t pix, const float* wu,
                                                     std::size_t ldw, V (&acc)[4]) {
  column_to_pixels<V, CG, STRIDE, S, J, 0>(V::load(xr + J * pix), wu, ldw, acc);
  if constexpr (J + 1 < 3 * STRIDE + S) columns_to_pixels<V, CG, STRIDE, S, J + 1>(xr, pix, wu, ldw, acc);
}

template <class V, int CG, int STRIDE, int S>
[[gnu::always_inline]] inline void four_pixels(const float* const* rows, std::size_t R, std::ptrdiff_t offset,
                                               std::ptrdiff_t pix, const float* w, std::size_t ldw,
                                               V (&acc)[4]) {
  for (std::size_t u = 0; u < R; ++u)
    columns_to_pixels<V, CG, STRIDE, S>(rows[u] + offset, pix, w + u * S * CG * ldw, ldw, acc);
}

// STRIDE and S 0: any stride, dilation and kernel width, one pixel at a time.
template <class V, int CG, int STRIDE, int S>
void grouped_lanes_run(const float* const* rows, std::size_t R, std::size_t S_any, std::size_t stride,
                       std::size_t dilation, std::ptrdiff_t pix, const float* w, std::size_t ldw,
                       std::size_t count, std::size_t channels, const float* bias, bool relu, bool pad_lanes,
                       float* out, std::ptrdiff_t out_step) {
  const auto finish = [&](V acc, V b, float* o, std::size_t rest) {
    acc = V::add(acc, b);
    if (relu) acc = V::relu(acc);
    if (rest == 16 || pad_lanes) {
      V::store(o, acc);
    } else {
      alignas(64) float ob[16];
      V::store(ob, acc);
      for (std::size_t i = 0; i < rest; ++i) o[i] = ob[i];
    }
  };
  const std::size_t tap_w = CG * ldw;  // floats between the weights of neighbouring taps
  const std::size_t whole = channels / 16 * 16;
  // Pixel p's channels [k, k + rest) one pixel at a time.
  const auto one_pixel = [&](std::size_t p, std::size_t k, std::size_t rest) {
    const auto ld = [rest](const float* q) { return rest == 16 ? V::load(q) : V::load_partial(q, rest); };
    V acc = V::zero();
    for (std::size_t u = 0; u < R; ++u)
      for (std::size_t v = 0; v < S_any; ++v)
        fma_group_channels<V, CG>(ld(rows[u] + static_cast<std::ptrdiff_t>(p * stride + v * dilation) * pix +
                                     static_cast<std::ptrdiff_t>(k)),
                                  w + (u * S_any + v) * tap_w + k, ldw, acc, ld);
    finish(acc, ld(bias + k),
           out + static_cast<std::ptrdiff_t>(p) * out_step + static_cast<std::ptrdiff_t>(k), rest);
  };
  // Pixels outer, channels inner: four pixels' input columns (all their channels) stay in L1 while each
  // vector of channels passes over them; channels outer swept the whole rows once per vector.
  std::size_t p = 0;
  if constexpr (STRIDE > 0) {
    for (; p + 4 <= count; p += 4) {
      for (std::size_t k = 0; k < whole; k += 16) {
        V acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
        four_pixels<V, CG, STRIDE, S>(
            rows, R, static_cast<std::ptrdiff_t>(p * STRIDE) * pix + static_cast<std::ptrdiff_t>(k), pix,
            w + k, ldw, acc);
        const V b = V::load(bias + k);
        float* o = out + static_cast<std::ptrdiff_t>(p) * out_step + static_cast<std::ptrdiff_t>(k);
        for (int i = 0; i < 4; ++i) finish(acc[i], b, o + i * out_step, 16);
      }
      if (whole < channels)
        for (std::size_t i = 0; i < 4; ++i) one_pixel(p + i, whole, channels - whole);
    }
  }
  for (; p < count; ++p)
    for (std::size_t k = 0; k < channels; k += 16) one_pixel(p, k, channels - k < 16 ? channels - k : 16);
}

template <class V, int CG>
void grouped_lanes(const float* const* rows, std::size_t R, std::size_t S, std::size_t stride,
                   std::size_t dilation, std::ptrdiff_t pix, const float* w, std::size_t ldw,
                   std::size_t count, std::size_t channels, const float* bias, bool relu, bool pad_lanes,
                   float* out, std::ptrdiff_t out_step) {
  const auto run = [&](auto fn) {
    fn(rows, R, S, stride, dilation, pix, w, ldw, count, channels, bias, relu, pad_lanes, out, out_step);
  };
  if (dilation == 1 && S == 3 && stride == 1)
    run(grouped_lanes_run<V, CG, 1, 3>);
  else if (dilation == 1 && S == 3 && stride == 2)
    run(grouped_lanes_run<V, CG, 2, 3>);
  else
    run(grouped_lanes_run<V, CG, 0, 0>);
}

}  // namespace nova::conv::kernels_impl
