// nova cuda: the CUDA multi-pass Winograd path. `info` says whether this build and machine can run it;
// `conv` times one layer on the GPU (CUDA events, median of repeated executes) and measures its error
// against the float64 reference, or with --emulate runs the same passes on the host (the error and counts
// the GPU would give, up to cuBLAS's summation order; no GPU time).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"
#include "nova/numerics/machine.hpp"

namespace nova::cli {
namespace {

struct CudaConvOptions {
  std::string shape;
  int64_t kernel = 3;
  int64_t pad = -1;  // kernel / 2 unless given
  std::string tile;
  std::string transform_file;
  bool relu = false;
  bool emulate = false;
  bool check = false;
  int repeat = 20;
  float data_range = 1.0f;
  int device = 0;
  std::string io = "fp32";
  std::string format = "text";
  std::string output;
};

void run_cuda_info(const std::string& format_text, const std::string& output) {
  const OutputFormat format = parse_format(format_text, false);
  std::string why;
  const bool available = cuda::device_available(&why);
  const std::string name = available ? cuda::device_name(0) : "";
  std::string blas_why;
  const bool blas = cuda::blas_loadable(&blas_why);
  if (format == OutputFormat::kJson) {
    nlohmann::json j{{"built_with_cuda", cuda::built_with_cuda()}, {"device_available", available}};
    if (available)
      j["device"] = name;
    else
      j["why"] = why;
    j["cublas_loadable"] = blas;
    if (!blas) j["cublas_why"] = blas_why;
    emit(output, json_text(j, 2) + "\n");
    return;
  }
  std::string text = fmt::format("CUDA kernels in this build: {}\n", cuda::built_with_cuda() ? "yes" : "no");
  text += available ? fmt::format("device 0: {}\n", name) : fmt::format("no device: {}\n", why);
  text += blas ? std::string("cuBLAS: loads\n") : fmt::format("cuBLAS: {}\n", blas_why);
  emit(output, text);
}

void run_cuda_conv(const CudaConvOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  const auto v = parse_nchwk(o.shape, "--shape");
  ConvShape s;
  s.N = v[0], s.C = v[1], s.H = v[2], s.W = v[3], s.K = v[4];
  s.R = s.S = o.kernel;
  s.pad_h = s.pad_w = o.pad >= 0 ? o.pad : o.kernel / 2;
  s.validate();
  if (o.repeat < 1 || o.repeat > 100000)
    throw Error(fmt::format("--repeat must be 1 to 100000, got {}", o.repeat));
  if (!(std::isfinite(o.data_range) && o.data_range > 0.0f))
    throw Error(fmt::format("--data-range must be finite and > 0, got {}", o.data_range));
  cuda::CudaPlanOptions po;
  po.relu = o.relu;
  po.device = o.device;
  if (!o.tile.empty()) po.tile = parse_tile(o.tile);
  if (!o.transform_file.empty()) po.transform = load_verified_transform(o.transform_file);
  po.input = po.output = cuda::parse_tensor_type(o.io);

  // The data of `nova bench conv`, the input rounded to the tensor type (the reference takes those values,
  // as there: the error is the path's, with the output's rounding).
  BenchLayerData data = bench_layer_data(s, o.data_range);
  cuda::round_to_type(po.input, data.input);
  const std::vector<float>&x = data.input, &w = data.weights, &b = data.bias;

  std::vector<float> y;
  std::vector<double> times;
  cuda::CudaRunStats stats;
  cuda::MultipassDescription d;
  std::string where;
  if (o.emulate) {
    const auto t0 = std::chrono::steady_clock::now();
    y = cuda::emulate(s, w, b, x, po, &stats, &d);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    where = "host emulation of the CUDA passes on " + machine_description() + " (no GPU time)";
  } else {
    std::string why;
    if (!cuda::device_available(&why)) throw Error(why + "; --emulate runs the same passes on the host");
    cuda::CudaConvPlan plan = cuda::CudaConvPlan::create(s, w, b, po);
    times = plan.time_executes(x, o.repeat);
    stats = plan.stats();
    d = plan.description();
    if (o.check) y = plan.execute(x);
    where = cuda::device_name(o.device);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double gflops = s.direct_flops() / (median * 1e6);
  std::optional<ReferenceError> err;
  if (o.check || o.emulate) err = error_vs_reference(s, data, y, o.relu);

  if (format == OutputFormat::kJson) {
    nlohmann::json j{{"shape", s.to_string()},
                     {"tile", d.tile.to_string()},
                     {"points", d.points},
                     {"reason", d.reason},
                     {"storage", "fp16 V and U, FP32 accumulation (cuBLAS)"},
                     {"input_type", cuda::to_string(d.input)},
                     {"output_type", cuda::to_string(d.output)},
                     {"emulated", o.emulate},
                     {"where", where},
                     {"repeats", times.size()},
                     {"median_ms", median},
                     {"min_ms", times.front()},
                     {"tiles", d.tiles},
                     {"v_bytes", d.v_bytes},
                     {"m_bytes", d.m_bytes},
                     {"u_bytes", d.u_bytes},
                     {"data_range", o.data_range}};
    if (!o.emulate) j["gflops"] = gflops;  // direct-equivalent
    if (err) err->write_to(j);
    j["stats"] = {{"output_nonfinite", stats.output_nonfinite},
                  {"input_amax", stats.input_amax},
                  {"v_shift", stats.v_shift}};
    emit(o.output, json_text(j, 2) + "\n");
    return;
  }
  std::string text = fmt::format("cuda multi-pass winograd {} on {} (points {}; {})\n", d.tile.to_string(),
                                 s.to_string(), d.points, d.reason);
  text += fmt::format("  {} input and output; fp16 V and U, FP32 accumulation; {} tiles\n",
                      cuda::to_string(d.input), d.tiles);
  text += fmt::format("  V {:.1f} MiB, M {:.1f} MiB, U {:.1f} MiB\n", d.v_bytes / 1048576.0,
                      d.m_bytes / 1048576.0, d.u_bytes / 1048576.0);
  text += fmt::format("  on {}; input and bias uniform in [-{:g}, {:g}], weights in [-0.1, 0.1]\n", where,
                      o.data_range, o.data_range);
  if (o.emulate)
    text += fmt::format("  host emulation took {:.1f} ms (not a GPU time)\n", median);
  else
    text += fmt::format(
        "  median {:.4f} ms (min {:.4f}, {} runs, CUDA events), {:.1f} GFLOP/s direct-equivalent\n", median,
        times.front(), times.size(), gflops);
  if (err) text += err->text();
  if (stats.v_shift != 0)
    text += fmt::format("  fp16: V scaled by 2^{} (the input's largest value {:g})\n", -stats.v_shift,
                        stats.input_amax);
  if (stats.output_nonfinite > 0) text += fmt::format("  {} outputs NaN/Inf\n", stats.output_nonfinite);
  emit(o.output, text);
}

void setup_cuda(CLI::App& app) {
  CLI::App* cuda_app =
      app.add_subcommand("cuda", "The CUDA multi-pass Winograd path (fp16 storage, FP32 sums)");
  cuda_app->require_subcommand(1);
  auto info_format = std::make_shared<std::string>("text");
  auto info_output = std::make_shared<std::string>();
  CLI::App* info = cuda_app->add_subcommand("info", "Whether this build and machine can run the CUDA path");
  info->add_option("--format", *info_format, "text | json")->default_val("text");
  info->add_option("-o,--output", *info_output, "Write to this file instead of stdout")
      ->check(writable_output());
  info->callback([info_format, info_output] { run_cuda_info(*info_format, *info_output); });

  auto o = std::make_shared<CudaConvOptions>();
  CLI::App* c =
      cuda_app->add_subcommand("conv", "Time one layer on the GPU, or --emulate its passes on the host");
  c->add_option("--shape", o->shape, "N,C,H,W,K")->required();
  c->add_option("--kernel", o->kernel, "Kernel size (square)")->default_val(3);
  c->add_option("--pad", o->pad, "Zero padding (default kernel/2)")->check(non_negative_integer());
  c->add_option("--tile", o->tile, "Winograd tile m,r with its default transform (default 6,3; 4,5 for 5x5)");
  c->add_option("--transform", o->transform_file, "Winograd transform JSON file (any verified transform)");
  c->add_flag("--relu", o->relu, "Fuse ReLU");
  c->add_option("--io", o->io, "Element type of the input and output tensors: fp32 | fp16 | bf16")
      ->default_val("fp32");
  c->add_flag("--emulate", o->emulate, "Run the passes on the host (no GPU needed; reports the error)");
  c->add_flag("--check", o->check, "Also report the relative L2 error against the float64 reference");
  c->add_option("--repeat", o->repeat, "Timed executes (GPU)")->default_val(20);
  c->add_option("--data-range", o->data_range, "Input and bias uniform in [-range, range]")
      ->default_val(1.0f);
  c->add_option("--device", o->device, "CUDA device index")->default_val(0)->check(CLI::NonNegativeNumber);
  c->add_option("--format", o->format, "text | json")->default_val("text");
  c->add_option("-o,--output", o->output, "Write to this file instead of stdout")->check(writable_output());
  c->callback([o] { run_cuda_conv(*o); });
}

const CommandRegistration cuda_registration("cuda", 65, setup_cuda);

}  // namespace
}  // namespace nova::cli
