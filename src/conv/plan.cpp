// Plan::create (validation, algorithm and kernel-path choice) and Plan::execute (buffer checks).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "algorithm_choice.hpp"
#include "cpu_supports.hpp"
#include "nova/conv/conv.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/error.hpp"
#include "nova/exact/verify.hpp"
#include "plan_checks.hpp"
#include "plan_impl.hpp"

namespace nova::conv {

namespace {

constexpr int kMaxThreads = 1024;

// An enum field holding a value that is none of its enumerators (an uninitialized or cast integer) was
// taken for one of them, or indexed a kernel table out of bounds (segfault, or a hang on an input type
// of -1).
void check_enum(const char* field, int value, std::initializer_list<const char*> names) {
  if (value >= 0 && value < static_cast<int>(names.size())) return;
  std::string expected;
  int i = 0;
  for (const char* name : names) {
    expected += (i == 0 ? "" : ", ") + std::to_string(i) + " " + name;
    ++i;
  }
  throw Error("PlanOptions::" + std::string(field) + " holds " + std::to_string(value) +
              ", which is none of its values (" + expected + ")");
}

void check_option_values(const PlanOptions& o) {
  check_enum("layout", static_cast<int>(o.layout), {"nchw", "nhwc", "nchw16c"});
  check_enum("algorithm", static_cast<int>(o.algorithm), {"auto", "winograd", "direct"});
  if (o.isa) check_enum("isa", static_cast<int>(*o.isa), {"portable", "avx2", "avx512"});
  check_enum("precision", static_cast<int>(o.precision), {"fp32", "bf16", "int8", "fp16", "int8-spatial"});
  check_enum("lowp_kernel", static_cast<int>(o.lowp_kernel), {"auto", "portable", "simd", "avx512", "amx"});
  check_enum("input.type", static_cast<int>(o.input.type), {"fp32", "bf16", "fp16", "int8"});
  check_enum("output.type", static_cast<int>(o.output.type), {"fp32", "bf16", "fp16", "int8"});
  check_enum("fp16_arithmetic", static_cast<int>(o.fp16_arithmetic), {"auto", "fp32", "fp16"});
  check_enum("bf16_arithmetic", static_cast<int>(o.bf16_arithmetic), {"auto", "fma", "dot"});
}

int resolve_threads(int requested) {
  if (requested < 0 || requested > kMaxThreads)
    throw Error("thread count " + std::to_string(requested) +
                " is impossible (expected 0 for all cores, or 1.." + std::to_string(kMaxThreads) + ")");
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// A plan that was moved from holds no Impl: its methods dereferenced null (segfault).
Plan::Impl& live(const std::unique_ptr<Plan::Impl>& impl) {
  if (!impl) throw Error("this plan was moved from: it holds nothing (use the plan it was moved to)");
  return *impl;
}

// The options that only Winograd plans read, where a plan that runs direct was given them: named in its
// reason, so that a tuning that had no effect is not mistaken for one that did ("" when none).
std::string unused_winograd_options(const PlanOptions& o) {
  std::vector<std::string> unused;
  if (o.tile_block != 0) unused.push_back("tile_block " + std::to_string(o.tile_block));
  if (o.k_parts != 0) unused.push_back("k_parts " + std::to_string(o.k_parts));
  if (!o.allow_generated) unused.push_back("generic tile transforms");
  if (o.lowp_kernel != LowpKernel::kAuto) unused.push_back("the low-precision kernel choice");
  if (o.fp16_arithmetic != Fp16Arithmetic::kAuto) unused.push_back("the fp16 arithmetic choice");
  if (o.bf16_arithmetic != Bf16Arithmetic::kAuto) unused.push_back("the bf16 arithmetic choice");
  if (unused.empty()) return "";
  std::string text = "; Winograd options not used: ";
  for (std::size_t i = 0; i < unused.size(); ++i) text += (i ? ", " : "") + unused[i];
  return text;
}

}  // namespace

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;
Plan::~Plan() = default;

// A function-try-block: memory the plan cannot get (a valid shape whose scratch or transformed filters
// exceed what the system gives: 1x1x524288x524288 -> 1) is a nova::Error, not std::bad_alloc.
Plan Plan::create(const ConvShape& shape, const float* weights, const float* bias,
                  const PlanOptions& options) try {
  shape.validate();
  if (weights == nullptr) throw Error("weights pointer is null");
  // Read as floats (undefined behaviour at a misaligned address), as execute's input and output are.
  if (reinterpret_cast<std::uintptr_t>(weights) % alignof(float) != 0 ||
      reinterpret_cast<std::uintptr_t>(bias) % alignof(float) != 0)
    throw Error("weights and bias must be aligned to 4 bytes");
  check_finite(weights, shape.weight_size(), "weights", shape);
  if (bias != nullptr) check_finite(bias, shape.K, "bias", shape);
  check_option_values(options);
  if (options.k_parts < 0)
    throw Error("k_parts must be 0 (automatic) or a number of parts, got " + std::to_string(options.k_parts));

  auto impl = std::make_unique<Impl>();
  Impl& p = *impl;
  p.shape = shape;
  p.layout = options.layout;
  p.relu = options.relu;
  p.threads = resolve_threads(options.threads);
  p.isa = options.isa.value_or(best_isa());
  p.kernels = &kernels(p.isa);  // throws if the CPU cannot run a forced path
  p.memory_rules = memory_rules(p.isa, cpu_is_amd());
  p.precision = options.precision;
  p.lowp_kernel = options.lowp_kernel;
  if (p.lowp_kernel == LowpKernel::kAmx && p.precision != Precision::kInt8 && p.precision != Precision::kBf16)
    throw Error("no AMX kernel for " + to_string(p.precision) + " GEMMs (AMX kernels: int8, bf16)");
  p.fp16_arithmetic = options.fp16_arithmetic;
  p.bf16_arithmetic = options.bf16_arithmetic;
  if (p.lowp_kernel == LowpKernel::kAmx && p.precision == Precision::kBf16 &&
      p.bf16_arithmetic == Bf16Arithmetic::kFma)
    throw Error("AMX runs bf16 as tile dot products: bf16 arithmetic 'fma' cannot run on it");
  p.gemm_path = to_string(p.isa);
  p.gemm_path_detail = "fp32 GEMM: " + to_string(p.isa);
  check_int8_scale(options.input, "the input");
  check_int8_scale(options.output, "the output");
  p.input_format = options.input;
  p.output_format = options.output;

  // Which algorithm, and which transform.
  const std::string why_not = winograd_ineligible(shape);
  std::optional<Transform> transform;
  if (options.algorithm == AlgorithmChoice::kDirect) {
    // Contradictory, not a shape Winograd cannot do: the tile or transform was dropped without a word.
    if (options.tile || options.transform)
      throw Error(std::string("a ") + (options.transform ? "transform" : "tile") +
                  " is a Winograd option; algorithm 'direct' does not use it");
    p.algorithm = Algorithm::kDirect;
    p.reason = "direct: requested";
  } else if (options.transform || options.tile) {
    if (!why_not.empty()) {
      if (options.algorithm == AlgorithmChoice::kWinograd) throw Error("cannot run Winograd: " + why_not);
      p.algorithm = Algorithm::kDirect;
      p.reason = "direct: " + why_not + "; the requested transform is not used";
    } else {
      if (options.transform) {
        transform = *options.transform;
        if (options.tile && *options.tile != transform->tile())  // the tile was ignored, silently
          throw Error("a tile (" + options.tile->to_string() + ") and a transform of another tile (" +
                      transform->tile().to_string() + ") were both given");
        const Verification v = verify(*transform);
        if (!v) throw Error("the transform fails exact verification: " + v.reason);
        check_fp32_range(*transform);
        p.reason = "winograd: transform given" + transform_error_caution(*transform, p.precision);
      } else {
        transform = default_transform(*options.tile);
        p.reason = "winograd: tile requested";
      }
      if (transform->r() != shape.R)
        throw Error("transform " + transform->tile().to_string() + " is for " +
                    std::to_string(transform->r()) + "x" + std::to_string(transform->r()) +
                    " kernels but the kernel is " + std::to_string(shape.R) + "x" + std::to_string(shape.S));
      p.algorithm = Algorithm::kWinograd;
      p.reason += tile_precision_caution(transform->tile(), p.precision);
    }
  } else if (options.algorithm == AlgorithmChoice::kWinograd) {
    if (!why_not.empty()) throw Error("cannot run Winograd: " + why_not);
    std::vector<AlgorithmEstimate> estimates;
    for (const TileSize& t : default_tiles()) {
      if (t.r != shape.R || !auto_tile_allowed(t, p.precision)) continue;  // as the automatic choice
      estimates.push_back(estimate_winograd(shape, p.layout, p.threads, p.isa, t,
                                            lowp_gemm_speedup(p, shape.C), p.precision,
                                            options.filters_from_memory, p.memory_rules));
    }
    const AlgorithmEstimate best = fastest_tile_estimate(estimates);
    if (!best.tile) {
      const auto tiles = default_tiles();
      const bool some_for_r =
          std::any_of(tiles.begin(), tiles.end(), [&](TileSize t) { return t.r == shape.R; });
      const std::string kernel = std::to_string(shape.R) + "x" + std::to_string(shape.S);
      if (some_for_r && p.precision == Precision::kInt8Spatial)
        throw Error("int8-spatial has no Winograd tile for " + kernel +
                    " kernels (its integer transforms fit int16 for F(2,3) and F(4,3) only)");
      throw Error("no default Winograd tile for " + kernel + " kernels" +
                  (some_for_r ? " in " + to_string(p.precision) : std::string()) + "; pass a transform");
    }
    transform = default_transform(*best.tile);
    p.algorithm = Algorithm::kWinograd;
    p.reason = "winograd: requested; fastest default tile " + best.tile->to_string();
  } else {
    const AlgorithmEstimate best =
        choose_algorithm(shape, p.layout, p.threads, p.isa, p.precision, &p.reason,
                         lowp_gemm_speedup(p, shape.C), options.filters_from_memory, p.memory_rules);
    p.algorithm = best.algorithm;
    if (best.tile) transform = default_transform(*best.tile);
  }

  // int8-spatial needs transforms that scale to small integers: points 0, +-1, +-2 unless one is given.
  if (p.precision == Precision::kInt8Spatial && transform && !options.transform)
    transform = int8_spatial_transform(transform->tile());
  // fp16 has 5 exponent bits, and V is stored unscaled (U's columns are normalized, lowp.cpp): the default
  // transforms' B^T rows, whose L1 norms span 1/12 to 33, put positions of V 7 binades below the input
  // (subnormal at activations of 1e-3: F(6,3) lost 0.07 of the output, 0.67 at 1e-4) or 10 above it
  // (F(6,3) and F(8,3) overflowed at inputs of 1000). Balanced by powers of two (exact; the same bits
  // wherever V was in range), every position of V is within 16 max|d| and none far below d
  // (docs/engine.md, "fp16: V's exponent range").
  if (p.precision == Precision::kFp16 && transform && !options.transform)
    transform = balance_input_rows(*transform);
  p.pool = ThreadPool::shared(p.threads);
  if (p.algorithm == Algorithm::kWinograd) {
    build_winograd(p, weights, bias, *transform, options.allow_generated, options.tile_block,
                   options.k_parts);
  } else {
    if (p.precision != Precision::kFp32) {
      p.reason += "; " + to_string(p.precision) + " requested but the direct path runs in fp32";
      p.precision = Precision::kFp32;
    }
    p.reason += unused_winograd_options(options);
    build_direct(p, weights, bias);
  }
  // NaN/Inf results counted (LowpStats::output_nonfinite) by plans with low-precision GEMMs, and by every
  // plan whose output is bf16 or fp16 (int8 outputs: by their narrowing).
  const DataType out_type = p.output_format.type;
  const bool lowp_winograd = p.algorithm == Algorithm::kWinograd && p.precision != Precision::kFp32;
  if (out_type != DataType::kInt8 && (lowp_winograd || out_type != DataType::kFp32))
    p.output_count_limit = overflow_limit(out_type);
  allocate_io_scratch(p);
  return Plan(std::move(impl));
} catch (const std::bad_alloc&) {
  throw Error("not enough memory for a plan of " + shape.to_string() +
              " (its scratch and transformed filters could not be allocated)");
}

void Plan::execute(const float* input, float* output) const {
  const Impl& p = live(impl_);
  if (p.typed_io())
    throw Error("this plan takes " + to_string(p.input_format.type) + " input and " +
                to_string(p.output_format.type) + " output; call execute(const void*, void*)");
  execute(static_cast<const void*>(input), static_cast<void*>(output));
}

void Plan::execute(const void* input, void* output) const {
  Impl& p = live(impl_);
  if (input == nullptr) throw Error("input pointer is null");
  if (output == nullptr) throw Error("output pointer is null");
  const std::size_t in_size = element_size(p.input_format.type),
                    out_size = element_size(p.output_format.type);
  const auto in0 = reinterpret_cast<std::uintptr_t>(input), out0 = reinterpret_cast<std::uintptr_t>(output);
  if (in0 % in_size != 0 || out0 % out_size != 0) {
    if (!p.typed_io()) throw Error("input and output must be aligned to 4 bytes");
    throw Error("input (" + to_string(p.input_format.type) + ") and output (" +
                to_string(p.output_format.type) + ") must be aligned to their element sizes (" +
                std::to_string(in_size) + " and " + std::to_string(out_size) + " bytes)");
  }
  const ConvShape& s = p.shape;
  const auto in1 = in0 + static_cast<std::uintptr_t>(input_elements(s, p.layout)) * in_size;
  const auto out1 = out0 + static_cast<std::uintptr_t>(output_elements(s, p.layout)) * out_size;
  if (in0 < out1 && out0 < in1) throw Error("input and output buffers overlap");
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  const ThreadPool::Burst burst(*p.pool);  // the pool's threads wait for this execute's jobs spinning
  const bool profiling = !p.thread_stage_ns.empty();
  const auto start = profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  p.stats = LowpStats{};
  std::fill(p.thread_io_counts.begin(), p.thread_io_counts.end(), NarrowCounts{});
  if (p.algorithm == Algorithm::kWinograd) {
    execute_winograd(p, input, output);  // converts on the fly
  } else {
    // The direct path works on FP32 tensors: typed ones are converted whole, before and after.
    const bool typed_in = p.input_format.type != DataType::kFp32,
               typed_out = p.output_format.type != DataType::kFp32;
    const float* in = static_cast<const float*>(input);
    if (typed_in) {
      widen_tensor(p, input, p.io_input.data(), input_elements(s, p.layout));
      in = p.io_input.data();
    }
    float* out = typed_out ? p.io_output.data() : static_cast<float*>(output);
    execute_direct(p, in, out);
    if (typed_out) narrow_tensor(p, out, output, output_elements(s, p.layout));
  }
  for (const NarrowCounts& c : p.thread_io_counts) {
    p.stats.output_saturated += c.saturated;
    p.stats.output_nonfinite += c.nonfinite;
  }
  if (profiling) {
    p.profiled_wall_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
            .count();
    ++p.profiled_executes;
  }
}

void Plan::calibrate(std::span<const float* const> inputs) {
  Impl& p = live(impl_);
  if ((p.precision != Precision::kInt8 && p.precision != Precision::kInt8Spatial) || !p.wino)
    throw Error("calibration is for int8 Winograd plans (this plan: " + to_string(p.precision) + " " +
                to_string(p.algorithm) + ")");
  if (inputs.empty()) throw Error("calibration needs at least one sample input");
  const int64_t size = input_elements(p.shape, p.layout);
  const InputPaddingLanes lanes(p.shape, p.layout);  // not data (NaN there was refused)
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) throw Error("calibration sample " + std::to_string(i) + " is null");
    if (reinterpret_cast<std::uintptr_t>(inputs[i]) % alignof(float) != 0)
      throw Error("calibration sample " + std::to_string(i) + " must be aligned to 4 bytes");
    for (int64_t j = 0; j < size; ++j)
      if (!std::isfinite(inputs[i][j]) && !lanes.padding(j))
        throw Error("calibration sample " + std::to_string(i) + " contains " +
                    (std::isnan(inputs[i][j]) ? "NaN" : "Inf") + " at index " + std::to_string(j));
  }
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  std::vector<StageNs> profile;
  profile.swap(p.thread_stage_ns);  // a calibration is not an execute: its passes are not profiled
  calibrate_winograd(p, inputs);
  profile.swap(p.thread_stage_ns);
}

void Plan::clear_calibration() {
  Impl& p = live(impl_);
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  if (p.wino) p.wino->cal_scale.clear();
}

// The readers below take the execute lock too: an execute or calibrate on another thread writes what
// they read (one execute at a time per plan, conv.hpp), so they wait for it and see its whole result.
bool Plan::calibrated() const {
  Impl& p = live(impl_);
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  return p.wino && !p.wino->cal_scale.empty();
}

std::vector<float> Plan::calibration_scales() const {
  Impl& p = live(impl_);
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  if (!p.wino) return {};
  return p.wino->cal_scale;
}

LowpStats Plan::stats() const {
  Impl& p = live(impl_);
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  return p.stats;
}

void Plan::set_profiling(bool on) {
  Impl& p = live(impl_);
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  p.thread_stage_ns.assign(on ? static_cast<std::size_t>(p.threads) : 0, StageNs{});
  p.profiled_executes = 0;
  p.profiled_wall_ns = 0;
}

StageProfile Plan::stage_profile() const {
  Impl& p = live(impl_);
  std::lock_guard<std::mutex> lock(p.exec_mutex);
  StageProfile r;
  r.executes = p.profiled_executes;
  r.threads = p.threads;
  r.wall_ms = static_cast<double>(p.profiled_wall_ns) * 1e-6;
  auto total = [&](Stage stage) {
    int64_t ns = 0;
    for (const StageNs& t : p.thread_stage_ns) ns += t.ns[static_cast<std::size_t>(stage)];
    return static_cast<double>(ns) * 1e-6;
  };
  r.pack_ms = total(Stage::kPack);
  r.scales_ms = total(Stage::kScales);
  r.input_ms = total(Stage::kInput);
  r.convert_ms = total(Stage::kConvert);
  r.gemm_ms = total(Stage::kGemm);
  r.output_ms = total(Stage::kOutput);
  r.direct_ms = total(Stage::kDirect);
  return r;
}

std::array<std::pair<const char*, double>, 7> StageProfile::stages() const {
  return {{{"pack", pack_ms},
           {"scales", scales_ms},
           {"input", input_ms},
           {"convert", convert_ms},
           {"gemm", gemm_ms},
           {"output", output_ms},
           {"direct", direct_ms}}};
}

double StageProfile::idle_ms() const {
  double busy = 0.0;
  for (const auto& [name, ms] : stages()) busy += ms;
  return wall_ms * threads - busy;
}
Precision Plan::precision() const {
  return live(impl_).precision;
}
std::string Plan::gemm_path() const {
  return live(impl_).gemm_path;
}

std::string Plan::gemm_detail() const {
  return live(impl_).gemm_path_detail;
}
TensorFormat Plan::input_format() const {
  return live(impl_).input_format;
}
TensorFormat Plan::output_format() const {
  return live(impl_).output_format;
}

const ConvShape& Plan::shape() const {
  return live(impl_).shape;
}
Layout Plan::layout() const {
  return live(impl_).layout;
}
Algorithm Plan::algorithm() const {
  return live(impl_).algorithm;
}
std::optional<TileSize> Plan::tile() const {
  const Impl& p = live(impl_);
  if (!p.wino) return std::nullopt;
  return p.wino->transform.tile();
}
std::string Plan::reason() const {
  return live(impl_).reason;
}
Isa Plan::isa() const {
  return live(impl_).isa;
}
int Plan::threads() const {
  return live(impl_).threads;
}
bool Plan::generated_transform() const {
  const Impl& p = live(impl_);
  return p.wino && p.wino->generated;
}
std::string Plan::transform_name() const {
  const Impl& p = live(impl_);
  if (!p.wino) return "";
  return p.wino->transform.points().empty() ? "(points unknown)" : to_string(p.wino->transform.points());
}

std::string Plan::describe() const {
  const Impl& p = live(impl_);
  std::string io;
  if (p.typed_io()) {
    auto name = [](const TensorFormat& f) {
      return to_string(f.type) +
             (f.type == DataType::kInt8 ? " (scale " + std::to_string(f.scale) + ")" : "");
    };
    io = ", " + name(p.input_format) + " in, " + name(p.output_format) + " out";
  }
  std::string d = shape().to_string() + ": " + to_string(algorithm());
  if (p.wino) {
    d +=
        " " + p.wino->transform.tile().to_string() + " {" + transform_name() + "} " +
        (p.wino->generated ? "generated" : "generic") +
        (p.wino->run_phased()
             ? std::string(" phased")
             : " fused (blocks of " + std::to_string(p.wino->block) + " tiles" +
                   (p.wino->k_parts > 1 ? ", output channels in " + std::to_string(p.wino->k_parts) + " parts"
                                        : "") +
                   ")") +
        (p.wino->prefetch_u ? ", U larger than L2 (next panel prefetched)" : "") +
        (p.wino->reads_input_directly
             ? std::string(", input read in place") + (p.input_format.type == DataType::kInt8 &&
                                                               p.wino->precision == Precision::kInt8 &&
                                                               p.wino->fns.input_int8_codes != nullptr
                                                           ? " (int8 codes widened in registers)"
                                                           : "")
         : p.wino->spatial_codes_directly
             ? ", int8 codes read in place at the plan's input scale (else quantized in a copy)"
             : "");
  }
  if (p.direct && p.direct->depthwise_planes)
    d += " (depthwise on NCHW planes: one input channel per group, taps summed a row of a plane at a time)";
  else if (p.direct && p.direct->depthwise_runs)
    d += std::string(" (depthwise: one input channel per group, taps summed over runs of a row's pixels, ") +
         (layout() == Layout::kNCHW ? "in bands of rows packed 16 channels at a time)" : "read in place)");
  else if (p.direct && p.direct->depthwise)
    d += " (depthwise: one input channel per group, taps summed per pixel, no GEMM)";
  if (p.direct && p.direct->grouped_lanes)
    d += " (grouped, output channels in lanes: each group's input channels shuffled out of the loaded "
         "vectors, tasks of " +
         std::to_string(p.direct->piece) + " channels, input rows staged, no GEMM)";
  if (p.direct && p.direct->phases)
    d += std::string(" (small filter ") + (layout() == Layout::kNCHW ? "on NCHW" : "over few channels") +
         ": output channels as GEMM rows over panels of pixels, read from the planes split into column "
         "phases" +
         (layout() == Layout::kNCHW ? ")" : ", output rows transposed)");
  else if (p.direct && p.direct->nchw_rows)
    d += " (small filter on NCHW: output channels as GEMM rows over panels of pixels, im2col from NCHW)";
  else if (p.direct && p.direct->rows_in_place)
    d += " (short kernel rows: inside pixels' rows read in place, im2col for the edges)";
  d += ", " + to_string(isa()) + ", " + p.gemm_path_detail + ", " + std::to_string(threads()) +
       " thread(s), " + to_string(p.layout) + io + "; " + reason();
  return d;
}

}  // namespace nova::conv
