// The depthwise convolution's micro-kernel (GemmTable::depthwise), written once over a 16-lane vector
// type V and instantiated by each ISA's GEMM table (include only from kernels/<isa>/ files, through
// gemm_template.hpp).
//
// out[k] = sum over t of x[t][k] * w[t][k], k in [0, channels): one output pixel of a depthwise
// convolution (one input channel per output channel), x[t] the input pixel under tap t and w[t] that
// tap's weights of every channel. Taps in the order given, one fused multiply-add each (V::fma), so a
// channel's sum does not depend on how many channels the call holds. 16 channels per vector, the
// accumulator in registers across the taps; a last partial vector through masked loads (V::load_partial).
#pragma once

#include <cstddef>

namespace nova::conv::kernels_impl {

template <class V>
void depthwise_pixel(const float* const* x, const float* const* w, std::size_t taps, std::size_t channels,
                     float* out) {
  std::size_t k = 0;
  for (; k + 16 <= channels; k += 16) {
    V acc = V::zero();
    for (std::size_t t = 0; t < taps; ++t) acc = V::fma(V::load(x[t] + k), V::load(w[t] + k), acc);
    V::store(out + k, acc);
  }
  if (k == channels) return;
  const std::size_t rest = channels - k;  // masked loads: zeros past the channels, nothing read there
  V acc = V::zero();
  for (std::size_t t = 0; t < taps; ++t)
    acc = V::fma(V::load_partial(x[t] + k, rest), V::load_partial(w[t] + k, rest), acc);
  alignas(64) float ob[16];
  V::store(ob, acc);
  for (std::size_t i = 0; i < rest; ++i) out[k + i] = ob[i];
}

// out[i] = sum over t of x[t][i] * w[t], i in [0, count): one output row of one channel, 16 pixels per
// vector, each tap's weight broadcast; the same fused multiply-adds in the same order as depthwise_pixel
// for every pixel (a tap the caller points at zeros adds an exact zero: the sum starts at +0 and the
// weights are finite).
template <class V>
void depthwise_row(const float* const* x, const float* w, std::size_t taps, std::size_t count, float* out) {
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    V acc = V::zero();
    for (std::size_t t = 0; t < taps; ++t) acc = V::fma(V::load(x[t] + i), V::broadcast(w[t]), acc);
    V::store(out + i, acc);
  }
  if (i == count) return;
  const std::size_t rest = count - i;
  V acc = V::zero();
  for (std::size_t t = 0; t < taps; ++t)
    acc = V::fma(V::load_partial(x[t] + i, rest), V::broadcast(w[t]), acc);
  alignas(64) float ob[16];
  V::store(ob, acc);
  for (std::size_t k = 0; k < rest; ++k) out[i + k] = ob[k];
}

}  // namespace nova::conv::kernels_impl
