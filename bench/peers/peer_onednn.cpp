// oneDNN peer for the engine benchmark (bench/peer_bench.py): times one FP32 convolution layer with
// oneDNN's direct algorithm or its Winograd (where it creates one) through the C++ API, and prints one
// JSON line. Memory formats are `any` (oneDNN's preferred blocked layouts) and the data is reordered
// into them once, outside the timing: oneDNN's best case. Threads: oneDNN's OpenMP runtime, set with
// OMP_NUM_THREADS by the caller. --dtype bf16: bf16 source and weights, f32 bias and destination
// (AMX or AVX512-BF16 where the CPU has them); --dtype int8: u8 source, s8 weights, f32 bias and
// destination with an output scale (VNNI / AMX; oneDNN 2.6 also has an int8 Winograd on
// avx512_core). The data is generated directly in the source type.
//
//   nova_peer_onednn --shape N,C,H,W,K [--kernel 3] [--algorithm direct|winograd] [--dtype f32|bf16|int8]
//                    [--repeat R]
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

struct Args {
  long N = 1, C = 64, H = 56, W = 56, K = 64, R = 3;
  std::string algorithm = "direct";
  std::string dtype = "f32";
  int repeat = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--shape") {
      if (std::sscanf(v.c_str(), "%ld,%ld,%ld,%ld,%ld", &a.N, &a.C, &a.H, &a.W, &a.K) != 5) {
        std::fprintf(stderr, "peer_onednn: --shape wants N,C,H,W,K\n");
        std::exit(2);
      }
    } else if (k == "--kernel") {
      a.R = std::atol(v.c_str());
    } else if (k == "--algorithm") {
      a.algorithm = v;
    } else if (k == "--dtype") {
      a.dtype = v;
      if (a.dtype != "f32" && a.dtype != "bf16" && a.dtype != "int8") {
        std::fprintf(stderr, "peer_onednn: --dtype wants f32, bf16 or int8\n");
        std::exit(2);
      }
    } else if (k == "--repeat") {
      a.repeat = std::atoi(v.c_str());
    } else {
      std::fprintf(stderr, "peer_onednn: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const long pad = a.R / 2;
  const long OH = a.H + 2 * pad - a.R + 1, OW = a.W + 2 * pad - a.R + 1;
  const double flops = 2.0 * a.N * a.K * a.C * a.R * a.R * OH * OW;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const memory::dims src_d = {a.N, a.C, a.H, a.W}, wei_d = {a.K, a.C, a.R, a.R}, bias_d = {a.K},
                     dst_d = {a.N, a.K, OH, OW}, strides = {1, 1}, padding = {pad, pad};
  const dt src_t = a.dtype == "bf16" ? dt::bf16 : a.dtype == "int8" ? dt::u8 : dt::f32;
  const dt wei_t = a.dtype == "bf16" ? dt::bf16 : a.dtype == "int8" ? dt::s8 : dt::f32;
  auto any = [](const memory::dims& d, dt t) { return memory::desc(d, t, tag::any); };
  const algorithm alg = a.algorithm == "winograd" ? algorithm::convolution_winograd : algorithm::convolution_direct;
  convolution_forward::primitive_desc pd;
  try {
    auto desc = convolution_forward::desc(prop_kind::forward_inference, alg, any(src_d, src_t), any(wei_d, wei_t),
                                          memory::desc(bias_d, dt::f32, tag::x), any(dst_d, dt::f32), strides, padding,
                                          padding);
    primitive_attr attr;
    if (a.dtype == "int8") attr.set_output_scales(0, {1.0f / 4096.0f});
    pd = convolution_forward::primitive_desc(desc, attr, eng);
  } catch (const dnnl::error&) {
    std::printf("{\"peer\": \"onednn\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"created\": false}\n",
                a.algorithm.c_str(), a.dtype.c_str());
    return 0;
  }
  // Plain NCHW data, reordered once into the primitive's formats.
  std::vector<float> x(static_cast<std::size_t>(a.N * a.C * a.H * a.W)), w(static_cast<std::size_t>(a.K * a.C * a.R * a.R)),
      b(static_cast<std::size_t>(a.K));
  unsigned seed = 1;
  auto rnd = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  };
  for (auto& v : x) v = rnd();
  for (auto& v : w) v = rnd() * 0.1f;
  for (auto& v : b) v = rnd();
  // Plain source and weights in the primitive's types (reorders convert f32 -> bf16; int8 codes are
  // generated directly).
  std::vector<uint8_t> xq(x.size());
  std::vector<int8_t> wq(w.size());
  for (std::size_t i = 0; i < x.size(); ++i) xq[i] = static_cast<uint8_t>((x[i] + 0.5f) * 255.0f);
  for (std::size_t i = 0; i < w.size(); ++i) wq[i] = static_cast<int8_t>(w[i] * 2540.0f);
  const bool q = a.dtype == "int8";
  memory x_plain({src_d, q ? dt::u8 : dt::f32, tag::nchw}, eng, q ? static_cast<void*>(xq.data()) : x.data()),
      w_plain({wei_d, q ? dt::s8 : dt::f32, tag::oihw}, eng, q ? static_cast<void*>(wq.data()) : w.data());
  memory xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng), bm({bias_d, dt::f32, tag::x}, eng, b.data()),
      ym(pd.dst_desc(), eng);
  try {
    reorder(x_plain, xm).execute(s, x_plain, xm);
    if (q && pd.weights_desc().data.format_kind == dnnl_format_kind_wino) {
      // oneDNN's int8 Winograd weights come only from f32 weights, quantized by the reorder.
      memory w_f32({wei_d, dt::f32, tag::oihw}, eng, w.data());
      primitive_attr ra;
      ra.set_output_scales(0, {1270.0f});
      reorder(reorder::primitive_desc(w_f32, wm, ra)).execute(s, w_f32, wm);
    } else {
      reorder(w_plain, wm).execute(s, w_plain, wm);
    }
    s.wait();
  } catch (const dnnl::error& e) {
    std::printf("{\"peer\": \"onednn\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"created\": false, "
                "\"why\": \"reorder: %s\"}\n",
                a.algorithm.c_str(), a.dtype.c_str(), e.what());
    return 0;
  }
  convolution_forward conv(pd);
  auto run = [&] {
    conv.execute(s, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}});
    s.wait();
  };
  run();
  const auto t0 = std::chrono::steady_clock::now();
  run();
  const double once = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const int reps = a.repeat > 0 ? a.repeat : std::clamp(static_cast<int>(500.0 / std::max(once, 1e-3)), 5, 200);
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  };
  std::vector<double> t, cpu;
  for (int i = 0; i < reps; ++i) {
    const double c0 = cpu_ms();
    const auto c = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c).count());
    cpu.push_back(cpu_ms() - c0);
  }
  std::sort(t.begin(), t.end());
  std::sort(cpu.begin(), cpu.end());
  const double med = t[t.size() / 2];
  std::printf("{\"peer\": \"onednn\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"created\": true, \"impl\": \"%s\", "
              "\"median_ms\": %.6f, \"min_ms\": %.6f, \"median_cpu_ms\": %.6f, \"gflops\": %.3f}\n",
              a.algorithm.c_str(), a.dtype.c_str(), pd.impl_info_str(), med, t.front(), cpu[cpu.size() / 2],
              flops / (med * 1e6));
  return 0;
}
