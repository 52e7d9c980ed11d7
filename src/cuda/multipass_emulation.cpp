// The CUDA multi-pass plan's passes on the host, from the kernels' own per-thread code.
#include <algorithm>
#include <cmath>
#include <vector>

#include "multipass_prepare.hpp"
#include "nova/error.hpp"
#include "nova/numerics/format.hpp"
#include "tensor_convert.hpp"

namespace nova::cuda::detail {

std::vector<float> run_multipass_on_host(const MultipassPlanData& plan, std::span<const float> input,
                                         CudaRunStats& stats) {
  const ConvShape& s = plan.shape;
  check_size(input.size(), s.input_size(), "input", s);
  const TileGeometry& g = plan.input_pass.g;
  const int nn = g.n * g.n;
  const TensorType in_type = plan.description.input, out_type = plan.description.output;

  // The input as a tensor of the plan's input type holds it, widened again (the kernels' loads).
  std::vector<float> x(input.begin(), input.end());
  round_to_type(in_type, x);

  // Pass 0: the largest |value| (NaN where the input holds one, as the kernel's unsigned max of the bits).
  float amax = 0.0f;
  for (float v : x) {
    if (std::isnan(v)) {
      amax = v;
      break;
    }
    amax = std::max(amax, std::abs(v));
  }
  const int shift = plan.v_shift.shift(amax);

  // Pass 1: V as fp16 bits.
  std::vector<uint16_t> V(static_cast<std::size_t>(nn * g.C * g.tiles()));
  const auto load = [&x](int64_t j) { return x[static_cast<std::size_t>(j)]; };
  float v[kMaxTilePoints * kMaxTilePoints];
  for (int64_t i = 0; i < g.threads(g.C); ++i) {
    const TileIndex t = input_pass_tile<0>(plan.input_pass, load, i, shift, v);
    for (int a = 0; a < nn; ++a)
      V[static_cast<std::size_t>(g.v_index(a, t.channel, t.tile))] =
          static_cast<uint16_t>(encode_bits(Format::kFp16, v[a]));
  }

  // Pass 2: the GEMMs.
  std::vector<float> M(static_cast<std::size_t>(nn * g.K * g.tiles()));
  gemm_fp16_fp32_host(plan.gemm, V.data(), plan.u_fp16.data(), M.data());

  // Pass 3: the output transform.
  std::vector<float> out(static_cast<std::size_t>(s.output_size()));
  int64_t nonfinite = 0;
  const float* bias = plan.bias.empty() ? nullptr : plan.bias.data();
  // The output tensor's stores: rounded to its type, returned widened (as the kernel's store), kept widened.
  const auto store = [&out, out_type](int64_t j, float y) {
    return out[static_cast<std::size_t>(j)] = round_to_type(out_type, y);
  };
  for (int64_t i = 0; i < g.threads(g.K); ++i)
    nonfinite +=
        output_pass_tile<0, 0>(plan.output_pass, M.data(), plan.u_pow2.data(), bias, i, shift, store);
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
