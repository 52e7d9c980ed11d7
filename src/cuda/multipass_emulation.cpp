// The CUDA multi-pass plan's passes on the host, from the kernels' own per-thread code.
#include <algorithm>
#include <cmath>
#include <vector>

#include "multipass_prepare.hpp"
#include "nova/error.hpp"
#include "nova/numerics/format.hpp"

namespace nova::cuda::detail {

std::vector<float> run_multipass_on_host(const MultipassPlanData& plan, std::span<const float> input,
                                         CudaRunStats& stats) {
  const ConvShape& s = plan.shape;
  check_size(input.size(), s.input_size(), "input", s);
  const TileGeometry& g = plan.input_pass.g;
  const int nn = g.n * g.n;

  // Pass 0: the largest |value| (NaN where the input holds one, as the kernel's unsigned max of the bits).
  float amax = 0.0f;
  for (float x : input) {
    if (std::isnan(x)) {
      amax = x;
      break;
    }
    amax = std::max(amax, std::abs(x));
  }
  const int shift = plan.v_shift.shift(amax);

  // Pass 1: V as fp16 bits.
  std::vector<uint16_t> V(static_cast<std::size_t>(nn * g.C * g.tiles()));
  float v[kMaxTilePoints * kMaxTilePoints];
  for (int64_t i = 0; i < g.threads(g.C); ++i) {
    const TileIndex x = input_pass_tile<0>(plan.input_pass, input.data(), i, shift, v);
    for (int a = 0; a < nn; ++a)
      V[static_cast<std::size_t>(g.v_index(a, x.channel, x.tile))] =
          static_cast<uint16_t>(encode_bits(Format::kFp16, v[a]));
  }

  // Pass 2: the GEMMs.
  std::vector<float> M(static_cast<std::size_t>(nn * g.K * g.tiles()));
  gemm_fp16_fp32_host(plan.gemm, V.data(), plan.u_fp16.data(), M.data());

  // Pass 3: the output transform.
  std::vector<float> out(static_cast<std::size_t>(s.output_size()));
  int64_t nonfinite = 0;
  const float* bias = plan.bias.empty() ? nullptr : plan.bias.data();
  for (int64_t i = 0; i < g.threads(g.K); ++i)
    nonfinite +=
        output_pass_tile<0, 0>(plan.output_pass, M.data(), plan.u_pow2.data(), bias, i, shift, out.data());
  stats.output_nonfinite = nonfinite;
  stats.input_amax = amax;
  stats.v_shift = shift;
  return out;
}

}  // namespace nova::cuda::detail

namespace nova::cuda {

std::vector<float> emulate(const ConvShape& shape, std::span<const float> weights,
                           std::span<const float> bias, std::span<const float> input,
                           const CudaPlanOptions& options, CudaRunStats* stats,
                           MultipassDescription* description) {
  const detail::MultipassPlanData plan = detail::prepare_multipass(shape, weights, bias, options);
  CudaRunStats run;
  std::vector<float> out = detail::run_multipass_on_host(plan, input, run);
  if (stats) *stats = run;
  if (description) *description = plan.description;
  return out;
}

}  // namespace nova::cuda
