// Helpers of the engine's tests: random problems, the float64 reference (nova::reference_conv2d) in
// either layout, and the relative L2 error.
#pragma once

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "nova/conv/conv.hpp"
#include "nova/conv_shape.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::conv::testing {

struct Problem {
  ConvShape shape;
  std::vector<float> input;    // NCHW
  std::vector<float> weights;  // KCRS
  std::vector<float> bias;     // K (empty: none)
};

inline Problem random_problem(const ConvShape& s, unsigned seed, bool with_bias = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Problem p;
  p.shape = s;
  p.input.resize(static_cast<std::size_t>(s.input_size()));
  p.weights.resize(static_cast<std::size_t>(s.weight_size()));
  for (auto& v : p.input) v = u(rng);
  for (auto& v : p.weights) v = u(rng);
  if (with_bias) {
    p.bias.resize(static_cast<std::size_t>(s.K));
    for (auto& v : p.bias) v = u(rng);
  }
  return p;
}

// The problem with its input and bias times 2^k (exact in FP32 while they stay normal), the weights kept:
// the output times 2^k.
inline Problem scaled(const Problem& p, int k) {
  Problem q = p;
  for (auto& v : q.input) v = std::ldexp(v, k);
  for (auto& v : q.bias) v = std::ldexp(v, k);
  return q;
}

inline std::vector<double> to_double(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// The float64 reference output in `layout`, with ReLU applied when asked.
inline std::vector<double> reference(const Problem& p, Layout layout, bool relu) {
  const std::vector<double> x = to_double(p.input), w = to_double(p.weights), b = to_double(p.bias);
  std::vector<double> out = reference_conv2d(p.shape, x, w, b);
  if (relu)
    for (auto& v : out) v = v < 0.0 ? 0.0 : v;
  if (layout == Layout::kNHWC)
    out = nchw_to_nhwc(std::span<const double>(out), p.shape.N, p.shape.K, p.shape.out_h(), p.shape.out_w());
  return out;
}

// Runs the engine on the problem (input converted to `options.layout`), output in that layout; NCHW16c's
// output converted back to NCHW (as reference() gives it for that layout).
inline std::vector<float> run(const Problem& p, const PlanOptions& options,
                              std::optional<Plan>* keep = nullptr) {
  const ConvShape& s = p.shape;
  std::vector<float> x = p.input;
  if (options.layout == Layout::kNHWC) x = nchw_to_nhwc(std::span<const float>(p.input), s.N, s.C, s.H, s.W);
  if (options.layout == Layout::kNCHW16c)
    x = nchw_to_nchw16c(std::span<const float>(p.input), s.N, s.C, s.H, s.W);
  Plan plan = Plan::create(s, p.weights.data(), p.bias.empty() ? nullptr : p.bias.data(), options);
  std::vector<float> out(static_cast<std::size_t>(output_elements(s, options.layout)), -12345.0f);
  plan.execute(x.data(), out.data());
  if (keep != nullptr) keep->emplace(std::move(plan));
  if (options.layout == Layout::kNCHW16c)
    out = nchw16c_to_nchw(std::span<const float>(out), s.N, s.K, s.out_h(), s.out_w());
  return out;
}

inline double rel_l2(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den == 0.0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Bit-for-bit equality of two outputs (NaN payloads and signed zeros included).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The plans the determinism tests compare across threads: a kernel path, Winograd at F(4,3) or the
// direct path, a layout, ReLU fused, one thread.
inline PlanOptions determinism_options(Isa isa, AlgorithmChoice algorithm, Layout layout) {
  PlanOptions o;
  o.isa = isa;
  o.algorithm = algorithm;
  o.layout = layout;
  o.relu = true;
  o.tile = algorithm == AlgorithmChoice::kWinograd ? std::optional<TileSize>(TileSize{4, 3}) : std::nullopt;
  o.threads = 1;
  return o;
}

// Every kernel path this CPU can run (all of them are tested).
inline std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512})
    if (isa_supported(i)) out.push_back(i);
  return out;
}

}  // namespace nova::conv::testing
