// nova bench conv: time the convolution engine on one layer (median of repeated executes), and
// optionally measure its error against the float64 reference.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/conv/conv.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/numerics/machine.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::cli {
namespace {

// Each timed execute keeps its time (for the median): a bound keeps a mistyped count from growing
// memory for hours.
constexpr int kMaxRepeat = 1000000;

struct BenchOptions {
  std::string shape;
  int64_t kernel = 3;
  int64_t pad = -1;  // -1 unless --pad is given: kernel/2
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t groups = 1;
  std::string tile;
  std::string transform_file;
  std::string algorithm = "auto";
  std::string layout = "nchw";
  std::string dtype = "fp32";
  std::string io;  // both tensor types
  std::string input_type, output_type;
  float input_scale = 0.0f, output_scale = 0.0f;  // 0 unless given: chosen from the data
  float data_range = 1.0f;  // input and bias uniform in [-range, range]
  std::string isa;
  std::string lowp_kernel = "auto";
  std::string fp16_arith = "auto";
  std::string bf16_arith = "auto";
  bool filters_from_memory = false;
  int threads = 0;
  int repeat = 0;
  int tile_block = 0;
  int k_parts = 0;
  bool relu = false;
  bool check = false;
  bool generic = false;
  bool calibrate = false;
  bool profile = false;
  // Which of the options whose default is a sentinel (pad, scales, repeat) the user gave.
  bool pad_given = false, repeat_given = false, input_scale_given = false, output_scale_given = false;
  std::string format = "text";
  std::string output;
};

ConvShape parse_shape(const BenchOptions& o) {
  const auto v = parse_nchwk(o.shape, "--shape");
  ConvShape s;
  s.N = v[0];
  s.C = v[1];
  s.H = v[2];
  s.W = v[3];
  s.K = v[4];
  s.R = s.S = o.kernel;
  s.pad_h = s.pad_w = o.pad >= 0 ? o.pad : o.kernel / 2;
  s.stride = o.stride;
  s.dilation = o.dilation;
  s.groups = o.groups;
  s.validate();
  return s;
}

// The options CLI11 cannot check with a readable message (its range check prints 310-digit bounds).
void check_options(const BenchOptions& o) {
  if (o.pad_given && o.pad < 0) throw Error(fmt::format("--pad must be 0 or more, got {}", o.pad));
  if (o.repeat_given && (o.repeat < 1 || o.repeat > kMaxRepeat))
    throw Error(fmt::format("--repeat must be 1 to {}, got {}", kMaxRepeat, o.repeat));
  if (o.k_parts < 0) throw Error(fmt::format("--k-parts must be 0 (automatic) or more, got {}", o.k_parts));
  for (const auto& [given, value, name] :
       {std::tuple{o.input_scale_given, o.input_scale, "--input-scale"},
        std::tuple{o.output_scale_given, o.output_scale, "--output-scale"}})
    if (given && !(std::isfinite(value) && value > 0.0f))
      throw Error(fmt::format("{} must be finite and > 0, got {}", name, value));
}

void run_bench(const BenchOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  check_options(o);
  const ConvShape s = parse_shape(o);
  conv::PlanOptions po;
  po.layout = conv::parse_layout(o.layout);
  po.relu = o.relu;
  po.threads = o.threads;
  po.allow_generated = !o.generic;
  po.tile_block = o.tile_block;
  po.k_parts = o.k_parts;
  if (!o.isa.empty()) po.isa = conv::parse_isa(o.isa);
  po.precision = conv::parse_precision(o.dtype);
  po.lowp_kernel = conv::parse_lowp_kernel(o.lowp_kernel);
  po.fp16_arithmetic = conv::parse_fp16_arithmetic(o.fp16_arith);
  po.bf16_arithmetic = conv::parse_bf16_arithmetic(o.bf16_arith);
  po.filters_from_memory = o.filters_from_memory;
  if (o.algorithm == "winograd") {
    po.algorithm = conv::AlgorithmChoice::kWinograd;
  } else if (o.algorithm == "direct") {
    po.algorithm = conv::AlgorithmChoice::kDirect;
  } else if (o.algorithm != "auto") {
    throw Error("--algorithm wants auto, winograd or direct, got '" + o.algorithm + "'");
  }
  // Options the plan would take and not use, silently: Winograd's with --algorithm direct, a GEMM
  // precision's settings with another precision.
  if (o.algorithm == "direct") {
    for (const auto& [given, name] :
         {std::pair{!o.tile.empty(), "--tile"}, std::pair{!o.transform_file.empty(), "--transform"},
          std::pair{o.tile_block != 0, "--tile-block"}, std::pair{o.k_parts != 0, "--k-parts"},
          std::pair{o.generic, "--generic"}})
      if (given) throw Error(std::string(name) + " is a Winograd option; --algorithm direct does not use it");
  }
  if (o.fp16_arith != "auto" && po.precision != conv::Precision::kFp16)
    throw Error("--fp16-arith is for --dtype fp16 GEMMs; the precision is " + o.dtype);
  if (o.bf16_arith != "auto" && po.precision != conv::Precision::kBf16)
    throw Error("--bf16-arith is for --dtype bf16 GEMMs; the precision is " + o.dtype);
  if (o.lowp_kernel != "auto" && po.precision == conv::Precision::kFp32 &&
      po.lowp_kernel != conv::LowpKernel::kAmx)
    throw Error("--lowp-kernel is for low-precision GEMMs; the precision is fp32");
  if (!o.tile.empty()) po.tile = parse_tile(o.tile);
  if (!o.transform_file.empty()) po.transform = load_verified_transform(o.transform_file);
  // The plan takes the file's transform and would ignore the tile.
  if (po.tile && po.transform && !(*po.tile == po.transform->tile()))
    throw Error("--tile " + o.tile + " disagrees with the tile of --transform '" + o.transform_file + "' (" +
                po.transform->tile().to_string() + ")");
  const std::string in_type = !o.input_type.empty() ? o.input_type : !o.io.empty() ? o.io : "fp32";
  const std::string out_type = !o.output_type.empty() ? o.output_type : !o.io.empty() ? o.io : "fp32";
  if (!(std::isfinite(o.data_range) && o.data_range > 0.0f))
    throw Error("--data-range must be finite and > 0, got " + std::to_string(o.data_range));
  po.input = {conv::parse_data_type(in_type), o.input_scale > 0.0f ? o.input_scale : o.data_range / 127.0f};
  po.output = {conv::parse_data_type(out_type), 1.0f};
  if (po.input.type != conv::DataType::kInt8) po.input.scale = 1.0f;
  // A scale is for an int8 tensor: given with another type it would be ignored, silently.
  if (o.input_scale_given && po.input.type != conv::DataType::kInt8)
    throw Error("--input-scale is for int8 input tensors; the input is " + in_type);
  if (o.output_scale_given && po.output.type != conv::DataType::kInt8)
    throw Error("--output-scale is for int8 output tensors; the output is " + out_type);

  BenchLayerData data = bench_layer_data(s, o.data_range);
  std::vector<float>& x = data.input;  // widened below to the values of the input's type
  const std::vector<float>& w = data.weights;
  const std::vector<float>& b = data.bias;
  std::vector<float> y(static_cast<std::size_t>(s.output_size()));

  if (po.output.type == conv::DataType::kInt8) {
    if (o.output_scale > 0.0f) {
      po.output.scale = o.output_scale;
    } else {  // max |y| / 127 of this input, from an FP32 plan
      conv::PlanOptions f32 = po;
      f32.input = f32.output = {};
      f32.layout = conv::Layout::kNCHW;  // x and y are NCHW
      const conv::Plan probe = conv::Plan::create(s, w.data(), b.data(), f32);
      probe.execute(x.data(), y.data());
      float amax = 0.0f;
      for (float v : y) amax = std::max(amax, std::fabs(v));
      po.output.scale = amax > 0.0f ? amax / 127.0f : 1.0f;
    }
  }
  // The input as the plan takes it (the benchmark's values rounded to the input type), and its values.
  // NCHW16c: the same values in the blocked layout (zero padding lanes), timed as oneDNN and ncnn are,
  // in their own blocked layouts.
  const conv::TensorFormat in_fmt = po.input, out_fmt = po.output;
  const bool blocked = po.layout == conv::Layout::kNCHW16c;
  const int64_t in_count = conv::input_elements(s, po.layout), out_count = conv::output_elements(s, po.layout);
  std::vector<unsigned char> xt(static_cast<std::size_t>(in_count) * conv::element_size(in_fmt.type));
  std::vector<unsigned char> yt(static_cast<std::size_t>(out_count) * conv::element_size(out_fmt.type));
  conv::convert_from_fp32(x.data(), static_cast<int64_t>(x.size()), in_fmt, xt.data());
  conv::convert_to_fp32(xt.data(), static_cast<int64_t>(x.size()), in_fmt, x.data());
  // The same values in the plan's layout: the timed input and the calibration sample.
  const std::vector<float> x_layout = blocked ? nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W)
                                      : po.layout == conv::Layout::kNHWC
                                          ? nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W)
                                          : x;
  conv::convert_from_fp32(x_layout.data(), in_count, in_fmt, xt.data());
  const void* xp = xt.data();
  void* yp = yt.data();

  const auto t0 = std::chrono::steady_clock::now();
  conv::Plan plan = conv::Plan::create(s, w.data(), b.data(), po);
  if (o.calibrate) {
    const float* samples[] = {x_layout.data()};
    plan.calibrate(samples);
  }
  const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // A plan never refuses a valid convolution: a Winograd request for a shape Winograd cannot do (stride 2,
  // groups, dilation) times the direct path. Said on stderr too, beside the plan line, so that a script
  // reading only the figures is not misled about what was timed. The reason reads "direct: <why>; the
  // requested transform is not used".
  if ((po.tile || po.transform) && plan.algorithm() != conv::Algorithm::kWinograd)
    std::cerr << "nova: note: " << plan.reason() << "\n";
  // The plan's cautions (an ill-conditioned transform, int8 with a large tile), for scripts that read
  // only the figures (--format json) too.
  if (const auto at = plan.reason().find("caution: "); at != std::string::npos)
    std::cerr << "nova: " << plan.reason().substr(at) << "\n";

  // Warm up, then enough repetitions for about half a second (at least 5) unless --repeat says.
  plan.execute(xp, yp);
  const auto w0 = std::chrono::steady_clock::now();
  plan.execute(xp, yp);
  const double once = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count();
  const int reps = o.repeat > 0 ? o.repeat : std::clamp(static_cast<int>(500.0 / std::max(once, 1e-3)), 5, 200);
  // Wall time per execute (median), and process CPU time per execute (all threads, spinning workers
  // included: the total over the timed executes divided by their number). Not a median of per-execute
  // readings: Linux adds the run time of a thread running on another core to the process clock only at a
  // scheduler tick or when that thread blocks, so one execute's reading leaves out whatever the pool's
  // spinning workers did since the last tick (measured here: 2 threads busy 1 ms per execute read 1.0 ms
  // per execute as a median, 2.0 as the total over the executes; bench/results/2026-11-27-session29-avx2).
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  };
  std::vector<double> times;
  const double cpu_start = cpu_ms();
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    plan.execute(xp, yp);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  const double cpu_per_execute = (cpu_ms() - cpu_start) / reps;
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double gflops = s.direct_flops() / (median * 1e6);

  // --profile: as many executes again with the stage clocks on (after the timed ones, which they would
  // slow a little): where the time goes, per execute.
  std::vector<std::pair<std::string, double>> stages;  // thread ms per execute; idle last
  double profile_wall = 0.0;
  if (o.profile) {
    plan.set_profiling(true);
    for (int i = 0; i < reps; ++i) plan.execute(xp, yp);
    const conv::StageProfile sp = plan.stage_profile();
    plan.set_profiling(false);
    const double n = static_cast<double>(std::max<int64_t>(sp.executes, 1));
    profile_wall = sp.wall_ms / n;
    for (const auto& [name, ms] : sp.stages())
      if (ms != 0.0) stages.emplace_back(name, ms / n);
    stages.emplace_back("idle", sp.idle_ms() / n);
  }

  std::optional<ReferenceError> err;
  if (o.check) {
    // Relative L2 error of the engine's output as stored (in its type) against the float64 reference
    // on the input's values.
    if (blocked) {
      std::vector<float> yb(static_cast<std::size_t>(out_count));
      plan.execute(xp, yp);
      conv::convert_to_fp32(yt.data(), out_count, out_fmt, yb.data());
      y = nchw16c_to_nchw(std::span<const float>(yb), s.N, s.K, s.out_h(), s.out_w());
    } else if (po.layout == conv::Layout::kNHWC) {
      plan.execute(xp, yp);
      conv::convert_to_fp32(yt.data(), static_cast<int64_t>(y.size()), out_fmt, y.data());
      const auto yn = nhwc_to_nchw(std::span<const float>(y), s.N, s.K, s.out_h(), s.out_w());
      y = yn;
    } else {
      plan.execute(xp, yp);
      conv::convert_to_fp32(yt.data(), static_cast<int64_t>(y.size()), out_fmt, y.data());
    }
    err = error_vs_reference(s, data, y, o.relu);
  }

  const std::string tile = plan.tile() ? plan.tile()->to_string() : "";
  const conv::LowpStats counts = plan.stats();  // of the last execute (all of them run on the same input)
  if (format == OutputFormat::kJson) {
    nlohmann::json j{{"shape", s.to_string()},
                     {"N", s.N}, {"C", s.C}, {"H", s.H}, {"W", s.W}, {"K", s.K}, {"kernel", s.R},
                     {"algorithm", conv::to_string(plan.algorithm())},
                     {"tile", tile},
                     {"transform", plan.transform_name()},
                     {"generated", plan.generated_transform()},
                     {"isa", conv::to_string(plan.isa())},
                     {"threads", plan.threads()},
                     {"layout", o.layout},
                     {"dtype", conv::to_string(plan.precision())},
                     {"input_type", conv::to_string(in_fmt.type)},
                     {"output_type", conv::to_string(out_fmt.type)},
                     {"gemm_path", plan.gemm_path()},
                     {"calibrated", plan.calibrated()},
                     {"reason", plan.reason()},
                     {"plan_ms", plan_ms},
                     {"repeats", reps},
                     {"median_ms", median},
                     {"min_ms", times.front()},
                     {"cpu_ms_per_execute", cpu_per_execute},
                     {"gflops", gflops}};
    j["machine"] = machine_description();
    j["data_range"] = o.data_range;  // input and bias uniform in [-range, range], weights in [-0.1, 0.1]
    if (err) err->write_to(j);
    j["stats"] = {{"saturated", counts.saturated},
                  {"nonfinite_tiles", counts.nonfinite_tiles},
                  {"output_saturated", counts.output_saturated},
                  {"output_nonfinite", counts.output_nonfinite},
                  {"v_shift", counts.v_shift}};
    if (o.profile) {
      nlohmann::json st = nlohmann::json::object();
      for (const auto& [name, ms] : stages) st[name] = ms;
      j["profile"] = {{"executes", reps}, {"wall_ms", profile_wall}, {"thread_ms", st}};
    }
    emit(o.output, json_text(j, 2) + "\n");
  } else {
    std::string text =
        fmt::format("{}\n  on {}; input and bias uniform in [-{:g}, {:g}], weights in [-0.1, 0.1]\n",
                    plan.describe(), machine_description(), o.data_range, o.data_range);
    text += fmt::format(
        "  median {:.4f} ms (min {:.4f}, {} runs), {:.1f} GFLOP/s direct-equivalent; process CPU {:.4f} ms "
        "per execute (all threads)\n",
        median, times.front(), reps, gflops, cpu_per_execute);
    if (err) text += err->text();
    if (counts.v_shift > 0)
      text += fmt::format("  fp16: V scaled by 2^-{} (the input's largest value would take V past its limit: 65504, 2^12 "
          "with fp16 arithmetic)\n",
                          counts.v_shift);
    else if (counts.v_shift < 0)
      text +=
          fmt::format("  fp16: V scaled by 2^{} (the input is small enough to put V in fp16's subnormals)\n",
                      -counts.v_shift);
    if (counts.saturated + counts.nonfinite_tiles + counts.output_saturated + counts.output_nonfinite > 0)
      text += fmt::format(
          "  counts of the last execute: {} V values saturated, {} tiles with NaN/Inf, {} outputs saturated, "
          "{} outputs NaN/Inf\n",
          counts.saturated, counts.nonfinite_tiles, counts.output_saturated, counts.output_nonfinite);
    if (o.profile) {
      const double budget = profile_wall * plan.threads();
      text += fmt::format("  profile ({} executes, {:.4f} ms wall each), thread ms per execute:", reps,
                          profile_wall);
      for (const auto& [name, ms] : stages)
        text += fmt::format(" {} {:.4f} ({:.0f}%)", name, ms, budget > 0 ? 100.0 * ms / budget : 0.0);
      text += "\n";
    }
    emit(o.output, text);
  }
}

// The GEMM kernel each precision runs on this CPU and why no faster one does, from a small plan of each
// with 64 channels. The choice depends on the layer only in that F(8,3) and larger tiles keep fp16 in
// FP32 arithmetic, and that AMX takes bf16 channel counts in whole tiles of 32 (int8: blocks of 64
// channels; the rest on the AVX-512 kernel).
void run_paths(const std::string& format_text, const std::string& output, const std::string& isa) {
  const OutputFormat format = parse_format(format_text, false);
  ConvShape s;
  s.N = 1;
  s.C = s.K = 64;
  s.H = s.W = 8;
  s.R = s.S = 3;
  s.pad_h = s.pad_w = 1;
  s.validate();
  const std::vector<float> weights(static_cast<std::size_t>(s.weight_size()), 0.125f);
  const conv::Isa path = isa.empty() ? conv::best_isa() : conv::parse_isa(isa);
  if (!conv::isa_supported(path)) throw Error("this CPU cannot run the " + isa + " path");
  nlohmann::json j{{"best_isa", conv::to_string(conv::best_isa())},
                   {"isa", conv::to_string(path)},
                   {"conversions", conv::tensor_conversion_kernels(path)},
                   {"paths", nlohmann::json::array()}};
  std::string text = fmt::format("kernel paths on this CPU, {} path (best: {}), for a 64-channel layer\n",
                                 conv::to_string(path), conv::to_string(conv::best_isa()));
  for (const conv::Precision p : {conv::Precision::kFp32, conv::Precision::kBf16, conv::Precision::kFp16,
                                  conv::Precision::kInt8, conv::Precision::kInt8Spatial}) {
    conv::PlanOptions po;
    po.precision = p;
    po.algorithm = conv::AlgorithmChoice::kWinograd;
    po.tile = TileSize{2, 3};
    po.threads = 1;
    po.isa = path;
    const conv::Plan plan = conv::Plan::create(s, weights.data(), nullptr, po);
    j["paths"].push_back({{"dtype", conv::to_string(p)}, {"gemm_path", plan.gemm_path()}, {"detail", plan.gemm_detail()}});
    text += fmt::format("  {:<13} {:<12} {}\n", conv::to_string(p), plan.gemm_path(), plan.gemm_detail());
  }
  text += fmt::format("  bf16, fp16 and int8 tensors are converted by: {}\n",
                      conv::tensor_conversion_kernels(path));
  emit(output, format == OutputFormat::kJson ? json_text(j, 2) + "\n" : text);
}

void setup(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmark the convolution engine");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  CLI::App* c = bench->add_subcommand("conv", "Time one convolution layer (median of repeated executes)");
  c->add_option("--shape", o->shape, "N,C,H,W,K")->required();
  c->add_option("--kernel", o->kernel, "Kernel size (square)")->default_val(3);
  c->add_option("--pad", o->pad, "Zero padding (default kernel/2)")->each([o](const std::string&) {
    o->pad_given = true;
  });
  c->add_option("--stride", o->stride, "Stride")->default_val(1);
  c->add_option("--dilation", o->dilation, "Dilation")->default_val(1);
  c->add_option("--groups", o->groups, "Groups")->default_val(1);
  c->add_option("--tile", o->tile, "Winograd tile m,r with its default transform, e.g. 6,3");
  c->add_option("--transform", o->transform_file, "Winograd transform JSON file (any verified transform)");
  c->add_option("--algorithm", o->algorithm, "auto | winograd | direct")->default_val("auto");
  c->add_option("--layout", o->layout, "nchw | nhwc | nchw16c (oneDNN's nChw16c, the peers' timed layout)")->default_val("nchw");
  c->add_option("--dtype", o->dtype, "Precision of the Winograd GEMMs: fp32 | bf16 | int8 | fp16 | int8-spatial (tensor types: --io)")
      ->default_val("fp32");
  c->add_option("--io", o->io, "Element type of the input and output tensors: fp32 | bf16 | fp16 | int8");
  c->add_option("--input-type", o->input_type, "Input tensor type (overrides --io)");
  c->add_option("--output-type", o->output_type, "Output tensor type (overrides --io)");
  c->add_option("--input-scale", o->input_scale,
                "int8 input: value = scale * code (default range/127; the data is in [-range, range])")
      ->each([o](const std::string&) { o->input_scale_given = true; });
  c->add_option("--data-range", o->data_range,
                "The input and bias are uniform in [-range, range] (weights in [-0.1, 0.1]): how a precision "
                "fares on activations far from unit scale (--check)")
      ->default_val(1.0f);
  c->add_option("--output-scale", o->output_scale,
                "int8 output: value = scale * code (default max|y|/127 of an FP32 run)")
      ->each([o](const std::string&) { o->output_scale_given = true; });
  c->add_option("--lowp-kernel", o->lowp_kernel, "Low-precision GEMM kernel: auto | portable | simd | avx512 (never AMX) | amx (int8, bf16)")->default_val("auto");
  c->add_option("--fp16-arith", o->fp16_arith,
                "fp16 GEMM arithmetic: auto (fp16 where AVX512-FP16 is present) | fp32 (F16C widening) | fp16 (fp16 FMAs "
                "over chunks of 32 channels, fp32 chunk sums)")
      ->default_val("auto");
  c->add_option("--bf16-arith", o->bf16_arith,
                "bf16 GEMM arithmetic: auto (AMX where admitted, dot on AMD CPUs with AVX512-BF16, else fma) "
                "| fma (fp32 FMA per channel, bf16 U "
                "widened) | dot (vdpbf16ps channel pairs)")
      ->default_val("auto");
  c->add_flag("--filters-from-memory", o->filters_from_memory,
              "Let the automatic choice price the transformed filters at memory's rate, as for a layer of a network "
              "(the PyTorch drop-in's plans); the timed executes still find them in cache when they fit");
  c->add_option("--isa", o->isa, "Force a kernel path: portable | avx2 | avx512");
  c->add_option("--threads", o->threads, "Threads (0: all cores)")->default_val(0);
  c->add_option(
       "--repeat", o->repeat,
       "Timed executes, 1 to " + std::to_string(kMaxRepeat) + " (default: about 0.5 s worth, 5 to 200)")
      ->each([o](const std::string&) { o->repeat_given = true; });
  c->add_flag("--profile", o->profile,
              "Then as many executes again with stage clocks on: thread time per stage (pack, scales, input, "
              "convert, gemm, output, direct, idle) per execute");
  c->add_option("--tile-block", o->tile_block, "Winograd order: 0 auto, >0 fused blocks of that many tiles, <0 phased");
  c->add_option(
      "--k-parts", o->k_parts,
      "Fused order: each block's output channels in this many parts, a task each (0 auto, 1 never)");
  c->add_flag("--relu", o->relu, "Fuse ReLU");
  c->add_flag("--calibrate", o->calibrate, "int8: calibrate the V scales on the benchmark input (fused order)");
  c->add_flag("--generic", o->generic, "Use the generic run-time tile transforms, not the generated code");
  c->add_flag("--check", o->check, "Also report the relative L2 error against the float64 reference");
  c->add_option("--format", o->format, "text | json")->default_val("text");
  c->add_option("-o,--output", o->output, "Write to this file instead of stdout")->check(writable_output());
  c->callback([o] { run_bench(*o); });

  auto paths_format = std::make_shared<std::string>("text");
  auto paths_output = std::make_shared<std::string>();
  auto paths_isa = std::make_shared<std::string>();
  CLI::App* paths = bench->add_subcommand("paths", "The GEMM kernel each precision runs on this CPU, and why");
  paths->add_option("--format", *paths_format, "text | json")->default_val("text");
  paths->add_option("-o,--output", *paths_output, "Write to this file instead of stdout")
      ->check(writable_output());
  paths->add_option("--isa", *paths_isa, "The kernel path to ask about: portable | avx2 | avx512 (default: the best)");
  paths->callback([paths_format, paths_output, paths_isa] { run_paths(*paths_format, *paths_output, *paths_isa); });
}

const CommandRegistration bench_registration("bench", 60, setup);

}  // namespace
}  // namespace nova::cli
