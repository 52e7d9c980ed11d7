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

// A run of `count` output pixels of one depthwise convolution (one input channel per output channel,
// NHWC or one channel block of NCHW16c), bias and ReLU fused: for p in [0, count) and k in [0, channels),
//   out[p * out_step + k] = relu?(sum over t of x[t][p * x_step + k] * w[t][k] + bias[k]),
// the sum from +0 in the order of the taps, one fused multiply-add each, then the bias added and the ReLU
// taken as V::relu: per lane the operations of depthwise_pixel and the scalar epilogue, so the same bits.
// Four pixels per pass over the taps, so each weight vector is loaded once for four pixels and the four
// accumulators hide the FMA latency (depthwise_pixel, one pixel per call, loaded both operands per
// FMA and left the epilogue to a scalar loop). A partial last vector reads through masked loads; with
// `pad_lanes` (NCHW16c's last block) all 16 lanes are stored, those past the channels as +0 (ReLU of
// 0 + 0), else only the channels.
inline constexpr std::size_t kDepthwisePieceChannels = 128;

// The lanes-in-channels epilogue (depthwise_pixels, grouped_lanes): acc + b, then V::relu where asked,
// stored as `rest` channels at o, or all 16 lanes with pad_lanes (NCHW16c's last block).
template <class V>
[[gnu::always_inline]] inline void store_biased_lanes(V acc, V b, bool relu, bool pad_lanes, float* o,
                                                      std::size_t rest) {
  acc = V::add(acc, b);
  if (relu) acc = V::relu(acc);
  if (rest == 16 || pad_lanes) {
    V::store(o, acc);
  } else {
    alignas(64) float ob[16];
    V::store(ob, acc);
    for (std::size_t i = 0; i < rest; ++i) o[i] = ob[i];
  }
}

template <class V>
void depthwise_pixels(const float* const* x, const float* const* w, std::size_t taps, std::ptrdiff_t x_step,
                      std::size_t count, std::size_t channels, const float* bias, bool relu, bool pad_lanes,
                      float* out, std::ptrdiff_t out_step) {
  const auto finish = [&](V acc, V b, float* o, std::size_t rest) {
    store_biased_lanes(acc, b, relu, pad_lanes, o, rest);
  };
  // Pixels outer, channels inner, over pieces of kDepthwisePieceChannels: each pass reads its pixels'
  // channels as contiguous runs (NHWC), and a piece's windows stay in the L1 cache for the next pixels,
  // which share them. Channels outermost strode across the row's pixels once per vector, all channels
  // inner re-read the windows from L2 where channels are many (1x1024x7x7 NHWC: 1.7x NCHW16c's time).
  const auto ld = [](const float* q, std::size_t rest) {
    return rest == 16 ? V::load(q) : V::load_partial(q, rest);
  };
  for (std::size_t k0 = 0; k0 < channels; k0 += kDepthwisePieceChannels) {
    const std::size_t k1 = channels - k0 < kDepthwisePieceChannels ? channels : k0 + kDepthwisePieceChannels;
    const auto rest_at = [k1](std::size_t k) { return k1 - k < 16 ? k1 - k : std::size_t{16}; };
    std::size_t p = 0;
    for (; p + 4 <= count; p += 4) {
      const std::ptrdiff_t o0 = static_cast<std::ptrdiff_t>(p) * x_step;
      for (std::size_t k = k0; k < k1; k += 16) {
        const std::size_t rest = rest_at(k);
        V a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
        for (std::size_t t = 0; t < taps; ++t) {
          const V wv = ld(w[t] + k, rest);
          const float* xt = x[t] + o0 + static_cast<std::ptrdiff_t>(k);
          a0 = V::fma(ld(xt, rest), wv, a0);
          a1 = V::fma(ld(xt + x_step, rest), wv, a1);
          a2 = V::fma(ld(xt + 2 * x_step, rest), wv, a2);
          a3 = V::fma(ld(xt + 3 * x_step, rest), wv, a3);
        }
        const V b = ld(bias + k, rest);
        float* o = out + static_cast<std::ptrdiff_t>(p) * out_step + static_cast<std::ptrdiff_t>(k);
        finish(a0, b, o, rest);
        finish(a1, b, o + out_step, rest);
        finish(a2, b, o + 2 * out_step, rest);
        finish(a3, b, o + 3 * out_step, rest);
      }
    }
    for (; p < count; ++p) {
      const std::ptrdiff_t o0 = static_cast<std::ptrdiff_t>(p) * x_step;
      for (std::size_t k = k0; k < k1; k += 16) {
        const std::size_t rest = rest_at(k);
        V a = V::zero();
        for (std::size_t t = 0; t < taps; ++t)
          a = V::fma(ld(x[t] + o0 + static_cast<std::ptrdiff_t>(k), rest), ld(w[t] + k, rest), a);
        finish(a, ld(bias + k, rest),
               out + static_cast<std::ptrdiff_t>(p) * out_step + static_cast<std::ptrdiff_t>(k), rest);
      }
    }
  }
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
