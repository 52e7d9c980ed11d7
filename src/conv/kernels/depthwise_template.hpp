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

}  // namespace nova::conv::kernels_impl
