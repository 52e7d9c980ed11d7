// The direct half of Plan::create: packs the weights of every group as GEMM panels over the
// reduction index (u, v, c) (the order of an NHWC im2col row), and sizes the pixel blocks.
#include <algorithm>

#include "plan_impl.hpp"

namespace nova::conv {

namespace {

// Depthwise (one input channel per group, Kg output channels each): the weights tap-major and, within a
// tap, by j (the output channel's place in its group) then group, [u][v][j][g], so that the weights
// that multiply a tap's input pixel for one j are one contiguous run over the input channels (the
// depthwise kernel's operand in execute_direct).
void build_depthwise(Plan::Impl& p, DirectPlan& d, const float* weights, const float* bias) {
  const ConvShape& s = p.shape;
  const int64_t K = s.K, G = s.groups, taps = s.R * s.S;
  d.pixel_block = 64;
  d.W.resize(static_cast<std::size_t>(taps * K));
  for (int64_t g = 0; g < G; ++g)
    for (int64_t j = 0; j < d.Kg; ++j)
      for (int64_t t = 0; t < taps; ++t)
        d.W.data()[(t * d.Kg + j) * G + g] = weights[(g * d.Kg + j) * taps + t];
  d.bias.resize(static_cast<std::size_t>(K));
  for (int64_t k = 0; k < K; ++k) d.bias.data()[k] = bias != nullptr ? bias[k] : 0.0f;
  p.direct = std::move(d);
  if (p.layout != Layout::kNHWC) p.packed_input.resize(static_cast<std::size_t>(s.input_size()));
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  for (auto& b : p.thread_scratch) b.resize(static_cast<std::size_t>(2 * K));  // the sums, by j and in order
}

}  // namespace

void build_direct(Plan::Impl& p, const float* weights, const float* bias) {
  const ConvShape& s = p.shape;
  DirectPlan d;
  d.Cg = s.C / s.groups;
  d.Kg = s.K / s.groups;
  d.Kgpad = round_up(d.Kg, kLanes);
  d.crs = d.Cg * s.R * s.S;
  d.panel = 16 * static_cast<int64_t>(p.kernels->gemm.nv);
  const int64_t mr = p.kernels->gemm.mr;
  d.pixel_block = std::clamp<int64_t>(131072 / d.crs / mr * mr, mr, 144);
  d.depthwise = d.Cg == 1;
  if (d.depthwise) {
    build_depthwise(p, d, weights, bias);
    return;
  }
  d.W.resize(static_cast<std::size_t>(s.groups * d.crs * d.Kgpad));
  std::fill(d.W.data(), d.W.data() + d.W.size(), 0.0f);
  for (int64_t g = 0; g < s.groups; ++g) {
    float* wg = d.W.data() + g * d.crs * d.Kgpad;
    for (int64_t k = 0; k < d.Kg; ++k) {
      const int64_t k0 = k / d.panel * d.panel;
      const int64_t width = std::min(d.panel, d.Kgpad - k0);
      for (int64_t c = 0; c < d.Cg; ++c)
        for (int64_t u = 0; u < s.R; ++u)
          for (int64_t v = 0; v < s.S; ++v) {
            const int64_t idx = (u * s.S + v) * d.Cg + c;
            wg[k0 * d.crs + idx * width + (k - k0)] =
                weights[(((g * d.Kg + k) * d.Cg + c) * s.R + u) * s.S + v];
          }
    }
  }
  d.bias.resize(static_cast<std::size_t>(s.groups * d.Kgpad));
  for (int64_t g = 0; g < s.groups; ++g)
    for (int64_t k = 0; k < d.Kgpad; ++k)
      d.bias.data()[g * d.Kgpad + k] = (bias != nullptr && k < d.Kg) ? bias[g * d.Kg + k] : 0.0f;
  p.direct = std::move(d);
  const DirectPlan& dp = *p.direct;
  if (p.layout != Layout::kNHWC) p.packed_input.resize(static_cast<std::size_t>(s.input_size()));
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  for (auto& b : p.thread_scratch) b.resize(static_cast<std::size_t>(dp.pixel_block * (dp.crs + dp.Kgpad)));
}

}  // namespace nova::conv
