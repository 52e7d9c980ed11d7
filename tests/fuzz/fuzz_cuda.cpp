// Fuzz target of the CUDA multi-pass path's host half and emulation (nova::cuda::emulate: the checks, the
// filter transform and scales, the kernels' per-thread code): the bytes choose a layer (valid or not),
// a tile or transform request, ReLU, the input's scale (1e-30 to 1e30) and the data (random, or with a
// NaN or Inf planted in the weights, bias or input). What must hold:
//   - refusals are nova::Error only, and never of a valid layer the path takes (stride 1, dilation 1,
//     groups 1, square 3x3 or 5x5 kernel, its default tile or a tile with a default transform);
//   - NaN or Inf in the weights or bias is refused;
//   - finite inputs give finite outputs within the tile's fp16-storage tolerance of a float64 direct
//     convolution (relative L2), at every input scale (V's power-of-two shift);
//   - a NaN or Inf in the input is counted: output_nonfinite equals the non-finite outputs, at least one;
//   - fp16 and bf16 tensors round only at the boundary: the output is, bit for bit, the FP32 plan's on the
//     input rounded to the input type (fp16 makes Inf of inputs past 65504, 0 of those below 2^-25),
//     rounded to the output type; the FP32 plan's output is then held to the checks above.
// Any other outcome aborts, which libFuzzer and the replay driver report as a failure.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "conv/conv_test_util.hpp"
#include "fuzz_checks.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace {

using nova::ConvShape;
using nova::TileSize;

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

[[noreturn]] void fail(const std::string& what) {
  nova::fuzz::fail("fuzz_cuda", what);
}

using nova::fuzz::Poison;

// Relative L2 tolerances of fp16 storage with FP32 sums, about 5x the errors measured on unit-scale
// uniform data (docs/cuda.md; F(8,3) and F(7,3) lose the most).
double tolerance(const TileSize& t) {
  if (t.r == 5) return t.m <= 2 ? 1e-2 : 5e-2;
  if (t.m <= 2) return 5e-3;
  if (t.m <= 4) return 1e-2;
  if (t.m <= 6) return 5e-2;
  return 0.25;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  nova::fuzz::ByteReader in(data, size);
  ConvShape s;
  s.N = in.range(1, 2);
  s.C = in.range(1, 12);
  s.K = in.range(1, 12);
  s.R = in.pick<int64_t>({3, 3, 3, 5, 1, 7});
  s.S = in.range(0, 7) < 7 ? s.R : in.range(1, 5);
  s.H = in.range(1, 16) + s.R - 1;
  s.W = in.flag() ? s.H : in.range(1, 16) + s.S - 1;
  s.pad_h = in.range(0, 2);
  s.pad_w = in.flag() ? s.pad_h : in.range(0, 2);
  s.stride = in.range(0, 7) < 7 ? 1 : 2;
  s.dilation = in.range(0, 7) < 7 ? 1 : 2;
  s.groups = in.range(0, 7) < 7 ? 1 : s.C;
  if (in.range(0, 15) == 15) s.N = 0;  // an impossible field now and then

  nova::cuda::CudaPlanOptions o;
  o.relu = in.flag();
  bool asks_for_the_impossible = false;
  switch (in.range(0, 5)) {
    case 0:
    case 1:
    case 2:
      break;  // the default tile
    case 3:
      o.tile = in.pick<TileSize>({{2, 3}, {4, 3}, {6, 3}, {7, 3}, {8, 3}, {2, 5}, {4, 5}});
      asks_for_the_impossible = o.tile->r != s.R;
      break;
    case 4:
      o.tile = TileSize{static_cast<int>(in.range(-1, 10)), static_cast<int>(in.range(0, 6))};
      asks_for_the_impossible = true;  // a tile without a default transform, or of another kernel
      break;
    default:
      o.transform = nova::Transform::construct({3, 3}, nova::parse_points("0, 1, -1, 2, inf"));
      asks_for_the_impossible = s.R != 3;
      break;
  }
  const bool valid_layer =
      s.N >= 1 && s.stride == 1 && s.dilation == 1 && s.groups == 1 && s.R == s.S && (s.R == 3 || s.R == 5);
  const Poison poison = in.range(0, 7) < 5
                            ? Poison::kNone
                            : in.pick({Poison::kWeightNaN, Poison::kWeightInf, Poison::kBiasNaN,
                                       Poison::kInputNaN, Poison::kInputInf});
  const double scale = std::pow(10.0, static_cast<double>(in.range(-30, 30)) * (in.flag() ? 1.0 : 0.0));
  const bool with_bias = in.flag();
  const uint32_t seed = static_cast<uint32_t>(in.range(0, 1 << 20));
  using nova::cuda::TensorType;  // drawn last: the corpus's earlier inputs keep their meaning (FP32 tensors)
  o.input = in.pick({TensorType::kFp32, TensorType::kFp32, TensorType::kFp16, TensorType::kBf16});
  o.output = in.pick({TensorType::kFp32, TensorType::kFp32, TensorType::kFp16, TensorType::kBf16});

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto sized = [](int64_t n) {
    return std::vector<float>(static_cast<std::size_t>(std::max<int64_t>(n, 0)));
  };
  std::vector<float> x = sized(s.input_size()), w = sized(s.weight_size()), b = sized(with_bias ? s.K : 0);
  for (float& v : x) v = static_cast<float>(u(rng) * scale);
  for (float& v : w) v = u(rng);
  for (float& v : b) v = static_cast<float>(u(rng) * scale);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto plant = [&](std::vector<float>& v, float value) {
    if (!v.empty()) v[static_cast<std::size_t>(seed) % v.size()] = value;
  };
  if (poison == Poison::kWeightNaN) plant(w, nan);
  if (poison == Poison::kWeightInf) plant(w, -inf);
  if (poison == Poison::kBiasNaN) plant(b, nan);
  if (poison == Poison::kInputNaN) plant(x, nan);
  if (poison == Poison::kInputInf) plant(x, inf);
  const bool poisoned_parameters = (poison == Poison::kWeightNaN || poison == Poison::kWeightInf) ||
                                   (poison == Poison::kBiasNaN && !b.empty());

  std::vector<float> y;
  nova::cuda::CudaRunStats stats;
  nova::cuda::MultipassDescription d;
  try {
    y = nova::cuda::emulate(s, w, b, x, o, &stats, &d);
  } catch (const nova::Error& e) {
    if (valid_layer && !asks_for_the_impossible && !poisoned_parameters)
      fail("refused a valid layer " + s.to_string() + ": " + e.what());
    return 0;
  } catch (const std::exception& e) {
    fail(std::string("not a nova::Error: ") + e.what());
  }
  if (poisoned_parameters) fail("NaN/Inf weights or bias were taken: " + s.to_string());
  if (!valid_layer) fail("took an unsupported layer " + s.to_string());

  int64_t nonfinite = 0;
  for (float v : y) nonfinite += std::isfinite(v) ? 0 : 1;
  if (nonfinite != stats.output_nonfinite)
    fail("output_nonfinite " + std::to_string(stats.output_nonfinite) + " but " + std::to_string(nonfinite) +
         " outputs are NaN/Inf");
  // The input as its tensor type holds it: NaN/Inf planted, or an fp16 Inf of a value past 65504.
  bool input_nonfinite = false;
  for (float& v : x) {
    v = nova::cuda::round_to_type(o.input, v);
    input_nonfinite = input_nonfinite || !std::isfinite(v);
  }
  if (input_nonfinite) {
    if (nonfinite == 0) fail("a NaN/Inf input reached no output: " + s.to_string());
    return 0;
  }
  if (o.input != TensorType::kFp32 || o.output != TensorType::kFp32) {
    nova::cuda::CudaPlanOptions fp32 = o;
    fp32.input = fp32.output = TensorType::kFp32;
    std::vector<float> plain = nova::cuda::emulate(s, w, b, x, fp32, &stats);
    for (std::size_t i = 0; i < y.size(); ++i)
      if (const float want = nova::cuda::round_to_type(o.output, plain[i]);
          std::memcmp(&y[i], &want, sizeof want) != 0)
        fail(std::string("a ") + nova::cuda::to_string(o.input) + " -> " + nova::cuda::to_string(o.output) +
             " output is not the FP32 plan's rounded to its type: " + s.to_string() + " at " +
             std::to_string(i));
    y = std::move(plain);
    nonfinite = stats.output_nonfinite;
  }
  if (nonfinite > 0)
    fail(std::to_string(nonfinite) + " NaN/Inf outputs from finite data at scale " + number(scale) + ", " +
         s.to_string() + " " + d.tile.to_string());
  nova::conv::testing::Problem p{s, x, w, b};
  const std::vector<double> ref = nova::conv::testing::reference(p, nova::conv::Layout::kNCHW, o.relu);
  const double err = nova::conv::testing::rel_l2(y, ref);
  if (err <= tolerance(d.tile)) return 0;
  // Outputs that cancel: the error against the terms' magnitudes (fuzz_checks.hpp).
  const double scaled = nova::fuzz::error_against_magnitudes(s, {x.begin(), x.end()}, {w.begin(), w.end()},
                                                             {b.begin(), b.end()}, y, ref);
  if (!(scaled <= tolerance(d.tile)))
    fail("error " + number(err) + " (" + number(scaled) + " against the terms' magnitudes) above " +
         std::to_string(tolerance(d.tile)) + " for " + s.to_string() + " " + d.tile.to_string() +
         " at scale " + number(scale) + ", v_shift " + std::to_string(stats.v_shift));
  return 0;
}
