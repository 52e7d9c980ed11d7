// Fuzz target of the convolution engine: the bytes choose a layer (any shape, valid or not: kernel,
// padding, stride, dilation, groups), every plan option (layout, algorithm, tile, kernel path, blocking,
// precision, low-precision kernel and arithmetic, tensor element types, threads, calibration) and the
// data (random, or with a NaN or Inf planted in the weights, bias or input). What must hold:
//   - a plan is refused only with nova::Error, and never for a valid layer whose options ask for
//     nothing this CPU lacks (no forced tile, Winograd, kernel path or SIMD kernel);
//   - NaN or Inf in the weights or bias is refused;
//   - the output is within its precision's tolerance of a float64 direct convolution of the values the
//     engine was given (typed inputs widened), ReLU applied;
//   - a NaN or Inf in the input makes every output it reaches non-finite (counted for int8 outputs);
//   - a second execute, a plan of another thread count, and (low precision) the portable kernel give
//     the same bits.
// Any other outcome aborts, which libFuzzer and the replay driver (replay_main.cpp) report as a failure.
// NOVA_FUZZ_TRACE=1 prints every refusal, plan and error: what a run exercised.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "conv/conv_test_util.hpp"
#include "fuzz_checks.hpp"
#include "nova/conv/conv.hpp"
#include "nova/error.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace {

using nova::ConvShape;
using nova::TileSize;
using nova::conv::testing::rel_l2;
using namespace nova::conv;

// NOVA_FUZZ_TRACE, read once.
bool trace() {
  static const bool on = std::getenv("NOVA_FUZZ_TRACE") != nullptr;
  return on;
}

[[noreturn]] void fail(const std::string& what) {
  nova::fuzz::fail("fuzz_conv", what);
}

using nova::fuzz::Poison;

struct Case {
  ConvShape shape;
  PlanOptions options;
  bool with_bias = false;
  Poison poison = Poison::kNone;
  uint32_t seed = 0;
  bool calibrate = false;        // int8 plans: calibrate on the input before executing
  bool compare_kernels = false;  // low precision: the portable kernel's bits too
  float input_range = 1.0f;
};

// The parts of the options that ask for something this CPU or this layer may not have.
bool asks_only_for_what_any_layer_gets(const PlanOptions& o) {
  const bool isa_ok = !o.isa || isa_supported(*o.isa);
  const bool kernel_ok = o.lowp_kernel == LowpKernel::kAuto || o.lowp_kernel == LowpKernel::kPortable;
  return isa_ok && kernel_ok && !o.tile && !o.transform && o.algorithm != AlgorithmChoice::kWinograd &&
         o.threads >= 0 && o.threads <= 1024;
}

TensorFormat read_format(nova::fuzz::ByteReader& in) {
  TensorFormat f;
  f.type = in.pick({DataType::kFp32, DataType::kFp32, DataType::kBf16, DataType::kFp16, DataType::kInt8});
  return f;  // an int8 scale is chosen from the data below
}

Case read_case(nova::fuzz::ByteReader& in) {
  Case c;
  ConvShape& s = c.shape;
  s.N = in.range(1, 3);
  s.groups = in.range(0, 7) < 6 ? 1 : in.pick<int64_t>({2, 3, 4});
  s.C = in.range(1, 40);
  s.K = in.range(1, 40);
  const bool wide = in.range(0, 7) == 7;  // now and then many channels (several channel chunks and
  if (wide) {                             // panels) on a small image
    s.C = in.range(41, 400);
    s.K = in.range(1, 100);
  }
  if (in.flag()) {  // mostly a multiple of groups (a wrong one must be refused, not crash)
    s.C = std::max<int64_t>(1, s.C / s.groups) * s.groups;
    s.K = std::max<int64_t>(1, s.K / s.groups) * s.groups;
  }
  s.R = in.pick<int64_t>({3, 3, 3, 5, 1, 2, 7});
  s.S = in.range(0, 7) < 6 ? s.R : in.range(1, 7);
  const int64_t side = wide ? 8 : 30;
  s.H = in.range(1, side) + (s.R - 1);  // with padding 0 too, mostly an image no smaller than the kernel
  s.W = in.flag() ? s.H : in.range(1, side) + (s.S - 1);
  s.pad_h = in.range(0, 3);
  s.pad_w = in.flag() ? s.pad_h : in.range(0, 3);
  s.stride = in.range(0, 7) < 6 ? 1 : in.pick<int64_t>({2, 3});
  s.dilation = in.range(0, 7) < 6 ? 1 : 2;
  if (in.range(0, 15) == 15) {  // an impossible field now and then (never when the bytes run out)
    switch (in.range(0, 4)) {
      case 0:
        s.N = 0;
        break;
      case 1:
        s.C = -static_cast<int64_t>(in.range(0, 3));
        break;
      case 2:
        s.pad_h = -1;
        break;
      case 3:
        s.stride = 0;
        break;
      default:
        s.R = s.H + 2 * s.pad_h + 1;
        break;
    }
  }

  PlanOptions& o = c.options;
  o.layout = in.pick({Layout::kNCHW, Layout::kNHWC, Layout::kNCHW16c});
  o.relu = in.flag();
  o.threads = static_cast<int>(in.range(0, 31) < 30 ? in.pick<int64_t>({1, 2, 2, 3, 0})
                                                    : in.pick<int64_t>({-1, 5000}));
  o.algorithm = in.pick({AlgorithmChoice::kWinograd, AlgorithmChoice::kWinograd, AlgorithmChoice::kAuto,
                         AlgorithmChoice::kWinograd, AlgorithmChoice::kAuto, AlgorithmChoice::kDirect});
  switch (in.range(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
      break;  // the plan's choice
    case 8:
      o.tile = in.pick<TileSize>({{3, 3}, {5, 3}, {7, 3}, {3, 5}, {2, 1}, {2, 7}});
      break;
    case 9:
      o.tile = TileSize{static_cast<int>(in.range(-1, 10)), static_cast<int>(in.range(0, 8))};
      break;
    default:
      o.tile = in.pick<TileSize>({{2, 3}, {4, 3}, {6, 3}, {8, 3}, {7, 3}, {2, 5}, {4, 5}});
      break;
  }
  // Mostly the best kernel path, or one this CPU runs; now and then one it may not.
  if (const int64_t isa = in.range(0, 9); isa >= 4) {
    const Isa wanted = isa == 9 ? Isa::kAvx512 : in.pick({Isa::kPortable, Isa::kAvx2, Isa::kAvx512});
    o.isa = isa == 9 || isa_supported(wanted) ? wanted : Isa::kPortable;
  }
  o.allow_generated = !in.flag() || !in.flag();
  switch (in.range(0, 3)) {
    case 0:
      o.tile_block = 0;
      break;
    case 1:
      o.tile_block = static_cast<int>(in.range(1, 70));
      break;
    case 2:
      o.tile_block = -1;
      break;
    default:
      o.tile_block = static_cast<int>(in.range(1, 4));
      break;
  }
  o.k_parts = static_cast<int>(in.pick<int64_t>({0, 0, 1, 2, 3, 7}));
  o.precision = in.pick({Precision::kFp32, Precision::kFp32, Precision::kBf16, Precision::kInt8,
                         Precision::kFp16, Precision::kInt8Spatial});
  o.lowp_kernel = in.pick({LowpKernel::kAuto, LowpKernel::kAuto, LowpKernel::kAuto, LowpKernel::kPortable,
                           LowpKernel::kPortable, LowpKernel::kSimd, LowpKernel::kAvx512, LowpKernel::kAmx});
  o.fp16_arithmetic = in.pick({Fp16Arithmetic::kAuto, Fp16Arithmetic::kFp32, Fp16Arithmetic::kFp16});
  o.bf16_arithmetic = in.pick({Bf16Arithmetic::kAuto, Bf16Arithmetic::kFma, Bf16Arithmetic::kDot});
  o.filters_from_memory = in.flag();
  if (in.range(0, 3) == 0) {
    o.input = read_format(in);
    o.output = read_format(in);
  }
  c.with_bias = in.flag();
  if (in.range(0, 7) == 7)
    c.poison = in.pick(
        {Poison::kWeightNaN, Poison::kWeightInf, Poison::kBiasNaN, Poison::kInputNaN, Poison::kInputInf});
  c.calibrate = in.flag();
  c.compare_kernels = in.flag();
  c.input_range = in.pick({1.0f, 1.0f, 1e-3f, 100.0f});
  c.seed = static_cast<uint32_t>(in.range(0, 1 << 20));
  // Now and then activations far past unit scale: fp16 plans' V leaves fp16's range from about 4000 on
  // and must be shifted down (set_fp16_v_shift). Not into fp16 output tensors, whose own range they pass.
  if (c.options.output.type != DataType::kFp16 && in.range(0, 7) == 7) c.input_range = 30000.0f;
  // And far below it: there fp16 plans' V would lie in fp16's subnormals and is shifted up. Not with fp16
  // tensors, whose own normals end at 6.1e-5.
  else if (c.options.output.type != DataType::kFp16 && c.options.input.type != DataType::kFp16 &&
           in.range(0, 7) == 7)
    c.input_range = 1e-6f;
  return c;
}

// Bounds on the relative L2 error: several times what the precision and tile give on this data (the
// worst of 30,000 random cases, by tile size n: FP32 2e-7 at n = 4, 3e-6 at 8, 1.2e-5 at 10; bf16 0.004,
// 0.05, 0.2; int8 0.04 at 6, 0.17 at 8, 0.78 at 10), so that what they catch is garbage: a wrong edge
// tile, a lost channel or group, a bad scale, which are of the order of the output itself. Large tiles
// in int8 are that bad by nature (docs/engine.md), so there only non-finite results and the bit
// comparisons below catch anything.
double tolerance(Precision gemm, int n, const PlanOptions& o) {
  const int size = n <= 6 ? 0 : n <= 8 ? 1 : 2;  // the direct path (n = 0) with the small tiles
  double tol = 0;
  switch (gemm) {
    case Precision::kFp32:
      tol = std::array{1e-5, 1e-4, 1e-3}[size];
      break;
    case Precision::kFp16:
      tol = std::array{0.02, 0.05, 0.15}[size];
      break;
    case Precision::kBf16:
      tol = std::array{0.1, 0.25, 0.6}[size];
      break;
    case Precision::kInt8:
      tol = std::array{0.3, 0.6, 2.0}[size];
      break;
    case Precision::kInt8Spatial:
      tol = 0.1;
      break;
  }
  // Rounding the output: bf16 and fp16 relative to each value, int8 against a scale of max |y| / 100.
  if (o.output.type == DataType::kBf16) tol += 0.01;
  if (o.output.type == DataType::kFp16) tol += 0.002;
  if (o.output.type == DataType::kInt8) tol += 0.05;
  return tol;
}

std::vector<float> to_layout(const std::vector<float>& nchw, Layout layout, int64_t N, int64_t C, int64_t H,
                             int64_t W) {
  const std::span<const float> x(nchw);
  if (layout == Layout::kNHWC) return nova::nchw_to_nhwc(x, N, C, H, W);
  if (layout == Layout::kNCHW16c) return nova::nchw_to_nchw16c(x, N, C, H, W);
  return nchw;
}

std::vector<float> from_layout(const std::vector<float>& t, Layout layout, int64_t N, int64_t C, int64_t H,
                               int64_t W) {
  const std::span<const float> x(t);
  if (layout == Layout::kNHWC) return nova::nhwc_to_nchw(x, N, C, H, W);
  if (layout == Layout::kNCHW16c) return nova::nchw16c_to_nchw(x, N, C, H, W);
  return t;
}

// Typed tensors as bytes.
std::vector<unsigned char> encode(const std::vector<float>& x, TensorFormat f) {
  std::vector<unsigned char> out(x.size() * element_size(f.type) + 1);
  convert_from_fp32(x.data(), static_cast<int64_t>(x.size()), f, out.data());
  return out;
}
std::vector<float> decode(const std::vector<unsigned char>& bytes, int64_t count, TensorFormat f) {
  std::vector<float> out(static_cast<std::size_t>(count));
  convert_to_fp32(bytes.data(), count, f, out.data());
  return out;
}

struct Run {
  std::vector<unsigned char> output;
  LowpStats stats;
};

Run execute(const Plan& plan, const std::vector<unsigned char>& input, int64_t out_count,
            TensorFormat out_f) {
  Run r;
  r.output.assign(static_cast<std::size_t>(out_count) * element_size(out_f.type) + 1, 0xA5);
  plan.execute(static_cast<const void*>(input.data()), static_cast<void*>(r.output.data()));
  r.stats = plan.stats();
  return r;
}

std::string describe(const Case& c) {
  return c.shape.to_string() + " layout " + to_string(c.options.layout) + " precision " +
         to_string(c.options.precision) + " in " + to_string(c.options.input.type) + " out " +
         to_string(c.options.output.type) + " data range " + std::to_string(c.input_range) +
         (c.with_bias ? " bias" : "") + (c.options.relu ? " relu" : "");
}

void run_case(const Case& c) {
  const ConvShape& s = c.shape;
  bool valid_shape = true;
  try {
    s.validate();
  } catch (const nova::Error&) {
    valid_shape = false;
  }
  // Bounded work per input (the float64 reference is the slow part).
  if (valid_shape) {
    const double macs = s.direct_flops() / 2;
    if (macs > 1.2e7 || s.input_size() > 200000 || s.output_size() > 200000) return;
  }

  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<float> u(-c.input_range, c.input_range), uw(-1.0f, 1.0f);
  const int64_t wsize = valid_shape ? s.weight_size() : 1;
  std::vector<float> weights(static_cast<std::size_t>(std::max<int64_t>(wsize, 1)));
  for (auto& v : weights) v = uw(rng);
  std::vector<float> bias;
  if (c.with_bias || c.poison == Poison::kBiasNaN) {
    bias.resize(static_cast<std::size_t>(std::max<int64_t>(s.K, 1)));
    for (auto& v : bias) v = uw(rng);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  if (c.poison == Poison::kWeightNaN) weights[c.seed % weights.size()] = nan;
  if (c.poison == Poison::kWeightInf) weights[c.seed % weights.size()] = -inf;
  if (c.poison == Poison::kBiasNaN) bias[c.seed % bias.size()] = nan;
  const bool bad_parameters =
      c.poison == Poison::kWeightNaN || c.poison == Poison::kWeightInf || c.poison == Poison::kBiasNaN;

  // The input, as the engine will see it: typed, then widened back for the reference.
  PlanOptions options = c.options;
  const float nan_or_inf = c.poison == Poison::kInputNaN ? nan : inf;
  const bool poisoned_input = c.poison == Poison::kInputNaN || c.poison == Poison::kInputInf;
  if (options.input.type == DataType::kInt8) options.input.scale = c.input_range / 127.0f;
  std::vector<float> x_nchw(valid_shape ? static_cast<std::size_t>(s.input_size()) : 0);
  for (auto& v : x_nchw) v = u(rng);
  if (poisoned_input && !x_nchw.empty()) x_nchw[c.seed % x_nchw.size()] = nan_or_inf;

  std::optional<Plan> plan;
  try {
    plan.emplace(Plan::create(s, weights.data(), bias.empty() ? nullptr : bias.data(), options));
  } catch (const nova::Error& e) {
    if (trace()) std::fprintf(stderr, "refused: %s\n", e.what());
    if (valid_shape && !bad_parameters && asks_only_for_what_any_layer_gets(options))
      fail("a valid layer was refused: " + describe(c) + ": " + e.what());
    return;
  }
  if (!valid_shape) fail("an invalid layer was accepted: " + s.to_string());
  if (bad_parameters) fail("NaN/Inf in the weights or bias was accepted: " + describe(c));
  if (c.options.threads < 0 || c.options.threads > 1024) fail("an impossible thread count was accepted");

  const int64_t in_count = input_elements(s, options.layout), out_count = output_elements(s, options.layout);
  const std::vector<float> x_layout = to_layout(x_nchw, options.layout, s.N, s.C, s.H, s.W);
  if (static_cast<int64_t>(x_layout.size()) != in_count) fail("input_elements disagrees with the layout");
  const TensorFormat in_f = options.input;
  const auto typed_input = encode(x_layout, in_f);
  const std::vector<float> seen_layout = decode(typed_input, in_count, in_f);
  const std::vector<float> seen = from_layout(seen_layout, options.layout, s.N, s.C, s.H, s.W);
  const std::vector<double> xd(seen.begin(), seen.end()), wd(weights.begin(), weights.end()),
      bd(bias.begin(), bias.end());
  std::vector<double> ref = nova::reference_conv2d(s, xd, wd, bd);
  if (options.relu)
    for (auto& v : ref) v = v < 0.0 ? 0.0 : v;
  double ref_max = 0.0;
  for (double v : ref)
    if (std::isfinite(v)) ref_max = std::max(ref_max, std::abs(v));
  if (options.output.type == DataType::kInt8) {  // the output scale comes from the data: a plan with it
    options.output.scale = ref_max > 0 ? static_cast<float>(ref_max / 100.0) : 1.0f;
    plan.reset();
    plan.emplace(Plan::create(s, weights.data(), bias.empty() ? nullptr : bias.data(), options));
  }
  const TensorFormat out_f = options.output;
  // All-zero samples are refused by calibrate() (no range): a tiny int8 input can round to all zero codes.
  const bool calibrated =
      c.calibrate && !poisoned_input &&
      (plan->precision() == Precision::kInt8 || plan->precision() == Precision::kInt8Spatial) &&
      std::any_of(seen_layout.begin(), seen_layout.end(), [](float v) { return v != 0.0f; });
  // Calibration samples are FP32 in the plan's layout, whatever the input's type.
  const float* samples[] = {seen_layout.data()};
  if (calibrated) plan->calibrate(samples);

  if (trace()) std::fprintf(stderr, "ran %s\n", plan->describe().c_str());
  const Run first = execute(*plan, typed_input, out_count, out_f);
  const std::vector<float> got =
      from_layout(decode(first.output, out_count, out_f), options.layout, s.N, s.K, s.out_h(), s.out_w());
  const std::string where = describe(c) + " | " + plan->describe();

  if (options.layout == Layout::kNCHW16c) {  // padding lanes of the last channel block are zero
    const int64_t blocks = (s.K + 15) / 16, hw = s.out_h() * s.out_w();
    std::vector<float> raw = decode(first.output, out_count, out_f);
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t p = 0; p < hw; ++p)
        for (int64_t lane = s.K - (blocks - 1) * 16; lane < 16; ++lane)
          if (raw[static_cast<std::size_t>(((n * blocks + blocks - 1) * hw + p) * 16 + lane)] != 0.0f)
            fail("a padding lane of the output is not zero: " + where);
  }

  // Low-precision Winograd plans and bf16/fp16 outputs count the NaN/Inf values the output holds (int8
  // outputs: checked below); FP32 plans with FP32 output count none.
  if (out_f.type != DataType::kInt8) {
    int64_t held = 0;
    for (float v : got) held += std::isfinite(v) ? 0 : 1;
    const bool counts =
        (plan->algorithm() == Algorithm::kWinograd && plan->precision() != Precision::kFp32) ||
        out_f.type != DataType::kFp32;
    if (first.stats.output_nonfinite != (counts ? held : 0))
      fail("output_nonfinite " + std::to_string(first.stats.output_nonfinite) + " but the output holds " +
           std::to_string(held) + " NaN/Inf values: " + where);
  }

  if (poisoned_input) {
    int64_t reached = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (std::isfinite(ref[i])) continue;
      ++reached;
      if (out_f.type != DataType::kInt8 && std::isfinite(got[i]))
        fail("a non-finite input did not reach output " + std::to_string(i) + " (" + std::to_string(got[i]) +
             "): " + where);
    }
    if (out_f.type == DataType::kInt8 && first.stats.output_nonfinite < reached)
      fail("int8 output counted " + std::to_string(first.stats.output_nonfinite) + " non-finite results of " +
           std::to_string(reached) + ": " + where);
  } else {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!std::isfinite(got[i]) && !(out_f.type == DataType::kFp16 && std::isinf(got[i]) && ref_max > 6e4))
        fail("non-finite output " + std::to_string(i) + " from finite data: " + where);
    const double err = rel_l2(got, ref),
                 tol = tolerance(plan->precision(), plan->tile() ? plan->tile()->n() : 0, options);
    if (trace())
      std::fprintf(stderr, "error %s %s n=%d %.3g\n", to_string(plan->precision()).c_str(),
                   to_string(options.output.type).c_str(), plan->tile() ? plan->tile()->n() : 0, err);
    if (!(err <= tol)) {
      // Outputs that cancel: the error against the terms' magnitudes (fuzz_checks.hpp).
      const double scaled = nova::fuzz::error_against_magnitudes(s, xd, wd, bd, got, ref);
      if (!(scaled <= tol))
        fail("relative L2 error " + std::to_string(err) + " (" + std::to_string(scaled) +
             " against the terms' magnitudes) above " + std::to_string(tol) + ": " + where);
    }
  }

  // The same bits again, at another thread count, and from the portable low-precision kernel.
  if (execute(*plan, typed_input, out_count, out_f).output != first.output)
    fail("a second execute differs: " + where);
  std::vector<PlanOptions> others;
  // The automatic choice of algorithm and tile weighs the thread count; the bits are the same for the
  // same algorithm and tile.
  PlanOptions other_threads = options;
  other_threads.threads = plan->threads() == 1 ? 2 : 1;
  other_threads.algorithm =
      plan->algorithm() == Algorithm::kWinograd ? AlgorithmChoice::kWinograd : AlgorithmChoice::kDirect;
  other_threads.tile = plan->tile();
  others.push_back(other_threads);
  const std::string gemm = plan->gemm_path();
  if (c.compare_kernels && plan->algorithm() == Algorithm::kWinograd &&
      plan->precision() != Precision::kFp32 && gemm.find("amx") == std::string::npos &&
      gemm != "avx512-bf16") {
    PlanOptions portable = options;
    portable.lowp_kernel = LowpKernel::kPortable;
    others.push_back(portable);
  }
  for (const PlanOptions& o : others) {
    Plan again = Plan::create(s, weights.data(), bias.empty() ? nullptr : bias.data(), o);
    if (calibrated) again.calibrate(samples);
    if (execute(again, typed_input, out_count, out_f).output != first.output)
      fail("another plan of the same layer differs in its bits (" + again.describe() + "): " + where);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  nova::fuzz::ByteReader in(data, size);
  const Case c = read_case(in);
  try {
    run_case(c);
  } catch (const nova::Error& e) {
    fail(std::string("nova::Error after the plan was made: ") + e.what() + ": " + describe(c));
  } catch (const std::exception& e) {
    fail(std::string("an exception other than nova::Error: ") + e.what() + ": " + describe(c));
  }
  return 0;
}
