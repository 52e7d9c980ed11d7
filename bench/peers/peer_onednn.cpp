// oneDNN peer for the engine benchmark (bench/peer_bench.py): times one FP32 convolution layer with
// oneDNN's direct algorithm or its Winograd (where it creates one) through the C++ API, and prints one
// JSON line. Memory formats are `any` (oneDNN's preferred blocked layouts) and the data is reordered
// into them once, outside the timing: oneDNN's best case. Threads: oneDNN's OpenMP runtime, set with
// OMP_NUM_THREADS by the caller. --dtype bf16: bf16 source and weights, f32 bias and destination
// (AMX or AVX512-BF16 where the CPU has them); --dtype int8: u8 source, s8 weights, f32 bias and
// destination with an output scale (VNNI / AMX; oneDNN 2.6 also has an int8 Winograd on
// avx512_core).
//
// The data is `nova bench conv`'s, value for value (the same generator and draws: input uniform in
// [-1, 1], weights in [-0.1, 0.1], bias in [-1, 1]). --check also prints "rel_l2_error": the relative L2
// error of oneDNN's output against a float64 direct convolution of the values oneDNN was given as its
// input (f32: the data; bf16: the data rounded to bf16, read back from oneDNN's own source tensor; int8:
// the codes times their scale) with the FP32 weights and bias, as nova's --check measures its own. The
// check runs its own primitive: int8 with an s8 source (codes RNE(127 x), scale 1/127, as nova's int8
// input tensor), weights quantized per output channel (scale max|w_k| / 127; oneDNN's Winograd takes one
// scale for all, max|w| / 127, and the JSON says which), f32 output. The timed int8 primitive keeps
// oneDNN's fast u8 source (codes of the data shifted into [0, 255]): the same kernels, whose speed does
// not depend on the values.
//
//   nova_peer_onednn --shape N,C,H,W,K [--kernel 3] [--algorithm direct|winograd] [--dtype f32|bf16|int8]
//                    [--repeat R] [--check]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dnnl.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

struct Args {
  long N = 1, C = 64, H = 56, W = 56, K = 64, R = 3;
  std::string algorithm = "direct";
  std::string dtype = "f32";
  int repeat = 0;
  bool check = false;
};

// A whole number of at least 1 (atol/atoi read 'abc' as 0 and '-3' as an automatic choice).
long positive(const std::string& option, const std::string& v) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1) {
    std::fprintf(stderr, "peer_onednn: %s wants a whole number of 1 or more, got '%s'\n", option.c_str(),
                 v.c_str());
    std::exit(2);
  }
  return n;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--check") {
      a.check = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "peer_onednn: %s wants a value\n", k.c_str());
      std::exit(2);
    }
    const std::string v = argv[i + 1];
    if (k == "--shape") {
      if (std::sscanf(v.c_str(), "%ld,%ld,%ld,%ld,%ld", &a.N, &a.C, &a.H, &a.W, &a.K) != 5) {
        std::fprintf(stderr, "peer_onednn: --shape wants N,C,H,W,K\n");
        std::exit(2);
      }
      // 0 ran an empty convolution at 0 GFLOP/s, a negative size reported 'created: false' (no oneDNN
      // implementation), exit 0 both.
      if (std::min({a.N, a.C, a.H, a.W, a.K}) < 1) {
        std::fprintf(stderr, "peer_onednn: --shape sizes must be 1 or more, got %s\n", v.c_str());
        std::exit(2);
      }
    } else if (k == "--kernel") {
      a.R = positive(k, v);
    } else if (k == "--algorithm") {
      a.algorithm = v;
      if (a.algorithm != "direct" &&
          a.algorithm != "winograd") {  // anything else ran direct, labelled as given
        std::fprintf(stderr, "peer_onednn: --algorithm wants direct or winograd, got '%s'\n", v.c_str());
        std::exit(2);
      }
    } else if (k == "--dtype") {
      a.dtype = v;
      if (a.dtype != "f32" && a.dtype != "bf16" && a.dtype != "int8") {
        std::fprintf(stderr, "peer_onednn: --dtype wants f32, bf16 or int8\n");
        std::exit(2);
      }
    } else if (k == "--repeat") {
      a.repeat = static_cast<int>(std::min(positive(k, v), 1000000L));
    } else {
      std::fprintf(stderr, "peer_onednn: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

// nova bench conv's data (cli/cmd_bench.cpp): one mt19937 seeded 1, input, then weights, then bias.
struct Data {
  std::vector<float> x, w, b;
};
Data nova_data(const Args& a) {
  Data d;
  d.x.resize(static_cast<std::size_t>(a.N * a.C * a.H * a.W));
  d.w.resize(static_cast<std::size_t>(a.K * a.C * a.R * a.R));
  d.b.resize(static_cast<std::size_t>(a.K));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : d.x) v = u(rng);
  for (auto& v : d.w) v = u(rng) * 0.1f;
  for (auto& v : d.b) v = u(rng);
  return d;
}

// float64 direct convolution (stride 1, padding R/2), NCHW -> NKHW.
std::vector<double> reference(const Args& a, const std::vector<double>& x, const std::vector<float>& w,
                              const std::vector<float>& b) {
  const long pad = a.R / 2, OH = a.H + 2 * pad - a.R + 1, OW = a.W + 2 * pad - a.R + 1;
  std::vector<double> y(static_cast<std::size_t>(a.N * a.K * OH * OW));
  for (long n = 0; n < a.N; ++n)
    for (long k = 0; k < a.K; ++k) {
      double* yk = y.data() + (n * a.K + k) * OH * OW;
      for (long i = 0; i < OH * OW; ++i) yk[i] = b[static_cast<std::size_t>(k)];
      for (long c = 0; c < a.C; ++c) {
        const double* xc = x.data() + (n * a.C + c) * a.H * a.W;
        for (long r = 0; r < a.R; ++r)
          for (long q = 0; q < a.R; ++q) {
            const double wv = w[static_cast<std::size_t>(((k * a.C + c) * a.R + r) * a.R + q)];
            for (long oy = 0; oy < OH; ++oy) {
              const long iy = oy + r - pad;
              if (iy < 0 || iy >= a.H) continue;
              const long x0 = std::max(0L, pad - q), x1 = std::min(OW, a.W + pad - q);
              const double* xr = xc + iy * a.W + q - pad;
              double* yr = yk + oy * OW;
              for (long ox = x0; ox < x1; ++ox) yr[ox] += wv * xr[ox];
            }
          }
      }
    }
  return y;
}

double rel_l2(const std::vector<float>& y, const std::vector<double>& ref) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(y[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
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
  const bool q = a.dtype == "int8";
  const dt wei_t = a.dtype == "bf16" ? dt::bf16 : q ? dt::s8 : dt::f32;
  auto any = [](const memory::dims& d, dt t) { return memory::desc(d, t, tag::any); };
  const algorithm alg =
      a.algorithm == "winograd" ? algorithm::convolution_winograd : algorithm::convolution_direct;
  // A primitive of this algorithm with source type src_t; int8 output scales (one, or one per output
  // channel); none where oneDNN has no implementation.
  auto make_pd =
      [&](dt src_t,
          const std::vector<float>& out_scales) -> std::optional<convolution_forward::primitive_desc> {
    try {
      auto desc = convolution_forward::desc(prop_kind::forward_inference, alg, any(src_d, src_t),
                                            any(wei_d, wei_t), memory::desc(bias_d, dt::f32, tag::x),
                                            any(dst_d, dt::f32), strides, padding, padding);
      primitive_attr attr;
      if (q) attr.set_output_scales(out_scales.size() > 1 ? 2 : 0, out_scales);
      return convolution_forward::primitive_desc(desc, attr, eng);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  };
  const dt src_t = a.dtype == "bf16" ? dt::bf16 : q ? dt::u8 : dt::f32;
  const auto pd_opt = make_pd(src_t, {1.0f / 4096.0f});
  if (!pd_opt) {
    std::printf("{\"peer\": \"onednn\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"created\": false}\n",
                a.algorithm.c_str(), a.dtype.c_str());
    return 0;
  }
  const convolution_forward::primitive_desc& pd = *pd_opt;
  const Data d = nova_data(a);
  const std::vector<float>& x = d.x;
  std::vector<float> w = d.w, b = d.b;
  // Timed int8 data: u8 codes of the input shifted into [0, 255], s8 weights at one scale.
  std::vector<uint8_t> xq(x.size());
  std::vector<int8_t> wq(w.size());
  for (std::size_t i = 0; i < x.size(); ++i) xq[i] = static_cast<uint8_t>(std::lrint((x[i] + 1.0f) * 127.5f));
  for (std::size_t i = 0; i < w.size(); ++i) wq[i] = static_cast<int8_t>(std::lrint(w[i] * 1270.0f));
  memory x_plain({src_d, q ? dt::u8 : dt::f32, tag::nchw}, eng,
                 q ? static_cast<void*>(xq.data()) : const_cast<float*>(x.data())),
      w_plain({wei_d, q ? dt::s8 : dt::f32, tag::oihw}, eng, q ? static_cast<void*>(wq.data()) : w.data());
  memory xm(pd.src_desc(), eng), wm(pd.weights_desc(), eng), bm({bias_d, dt::f32, tag::x}, eng, b.data()),
      ym(pd.dst_desc(), eng);
  // int8 Winograd weights come only from f32 weights, quantized by the reorder (scales: one, or one per
  // output channel).
  auto reorder_weights = [&](const convolution_forward::primitive_desc& p, memory& wdst, memory& wsrc,
                             const std::vector<float>& wino_scales) {
    if (q && p.weights_desc().data.format_kind == dnnl_format_kind_wino) {
      memory w_f32({wei_d, dt::f32, tag::oihw}, eng, w.data());
      primitive_attr ra;
      ra.set_output_scales(wino_scales.size() > 1 ? 1 : 0, wino_scales);
      reorder(reorder::primitive_desc(w_f32, wdst, ra)).execute(s, w_f32, wdst);
    } else {
      reorder(wsrc, wdst).execute(s, wsrc, wdst);
    }
  };
  try {
    reorder(x_plain, xm).execute(s, x_plain, xm);
    reorder_weights(pd, wm, w_plain, {1270.0f});
    s.wait();
  } catch (const dnnl::error& e) {
    std::printf(
        "{\"peer\": \"onednn\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"created\": false, "
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
  const double once =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const int reps =
      a.repeat > 0 ? a.repeat : std::clamp(static_cast<int>(500.0 / std::max(once, 1e-3)), 5, 200);
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  };
  // Process CPU time per execute: the total over the timed executes divided by their number (all threads;
  // a median of per-execute readings leaves out what OpenMP's spinning threads did since the last
  // scheduler tick: Linux adds their time to the process clock only then or when they block).
  std::vector<double> t;
  const double cpu_start = cpu_ms();
  for (int i = 0; i < reps; ++i) {
    const auto c = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c).count());
  }
  const double cpu_per_execute = (cpu_ms() - cpu_start) / reps;
  std::sort(t.begin(), t.end());
  const double med = t[t.size() / 2];

  // --check: the error against float64 (see the top of the file).
  auto to_plain = [&](memory& m, const memory::dims& dims, tag layout) {
    std::vector<float> out(static_cast<std::size_t>(dims[0] * dims[1] * dims[2] * dims[3]));
    memory plain({dims, dt::f32, layout}, eng, out.data());
    reorder(m, plain).execute(s, m, plain);
    s.wait();
    return out;
  };
  auto check = [&]() -> std::string {
    char buf[256];
    if (!q) {  // the timed primitive itself; its input values read back from its source tensor
      const std::vector<float> xv = to_plain(xm, src_d, tag::nchw);
      const std::vector<double> ref = reference(a, std::vector<double>(xv.begin(), xv.end()), d.w, d.b);
      std::snprintf(buf, sizeof buf, ", \"rel_l2_error\": %.6e", rel_l2(to_plain(ym, dst_d, tag::nchw), ref));
      return buf;
    }
    // int8: codes of the input in the source type (s8: nova's int8 input, RNE(127 x); u8: RNE(255 (x + 1) /
    // 2), the same data moved into [0, 1], for oneDNN's int8 Winograd, which takes no s8 source), weights per
    // output channel where oneDNN can. Returns the JSON fields, "" when oneDNN has no such primitive.
    auto int8_check = [&](dt source, const char* name) -> std::string {
      const bool s8 = source == dt::s8;
      const double step = s8 ? 1.0 / 127.0 : 1.0 / 255.0;
      std::vector<uint8_t> codes(x.size());
      std::vector<double> xv(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (s8) {
          const auto c = static_cast<int8_t>(std::clamp(std::lrint(x[i] * 127.0f), -127L, 127L));
          std::memcpy(&codes[i], &c, 1);
          xv[i] = c * step;
        } else {
          codes[i] = static_cast<uint8_t>(std::clamp(std::lrint((x[i] + 1.0f) * 127.5f), 0L, 255L));
          xv[i] = codes[i] * step;
        }
      }
      const std::size_t per_k = static_cast<std::size_t>(a.C * a.R * a.R);
      std::vector<float> scale_k(static_cast<std::size_t>(a.K)), out_k(scale_k.size()), inv_k(scale_k.size());
      float all = 0.0f;
      for (std::size_t k = 0; k < scale_k.size(); ++k) {
        float m = 0.0f;
        for (std::size_t i = 0; i < per_k; ++i) m = std::max(m, std::fabs(w[k * per_k + i]));
        scale_k[k] = m > 0.0f ? m / 127.0f : 1.0f;
        all = std::max(all, m);
      }
      const float scale_all = all > 0.0f ? all / 127.0f : 1.0f;
      for (int per_channel = 1; per_channel >= 0; --per_channel) {
        for (std::size_t k = 0; k < scale_k.size(); ++k) {
          const float sk = per_channel ? scale_k[k] : scale_all;
          out_k[k] = sk * static_cast<float>(step);
          inv_k[k] = 1.0f / sk;
        }
        auto cpd = make_pd(source, per_channel ? out_k : std::vector<float>{out_k[0]});
        if (!cpd) continue;
        // oneDNN's int8 kernels without VNNI or AMX (vpmaddubsw) add u8 x s8 products in pairs into int16,
        // which saturates for u8 codes near 255 with 8-bit weights. oneDNN's int8 guide asks for 7-bit
        // weights there, so on such kernels the u8 check quantizes weights to +-63 and says so.
        const std::string impl = cpd->impl_info_str();
        const bool seven_bit = !s8 && impl.find("vnni") == std::string::npos &&
                               impl.find("amx") == std::string::npos;
        const float levels = seven_bit ? 63.0f : 127.0f;
        if (seven_bit) {
          for (std::size_t k = 0; k < scale_k.size(); ++k) {
            const float sk = (per_channel ? scale_k[k] : scale_all) * 127.0f / levels;
            out_k[k] = sk * static_cast<float>(step);
            inv_k[k] = 1.0f / sk;
          }
          cpd = make_pd(source, per_channel ? out_k : std::vector<float>{out_k[0]});
          if (!cpd) continue;
        }
        std::vector<int8_t> wk(w.size());
        for (std::size_t i = 0; i < w.size(); ++i)
          wk[i] = static_cast<int8_t>(std::clamp(std::lrint(w[i] * inv_k[i / per_k]), -127L, 127L));
        // oneDNN 2.x applies the output scale after the bias (dst = scale * (sum + bias)): the bias is
        // given in the sum's units.
        std::vector<float> bk(d.b.size());
        for (std::size_t k = 0; k < bk.size(); ++k) bk[k] = d.b[k] / out_k[per_channel ? k : 0];
        memory xs_plain({src_d, source, tag::nchw}, eng, codes.data()),
            wk_plain({wei_d, dt::s8, tag::oihw}, eng, wk.data()),
            cb({bias_d, dt::f32, tag::x}, eng, bk.data());
        memory cx(cpd->src_desc(), eng), cw(cpd->weights_desc(), eng), cy(cpd->dst_desc(), eng);
        try {
          reorder(xs_plain, cx).execute(s, xs_plain, cx);
          reorder_weights(*cpd, cw, wk_plain, per_channel ? inv_k : std::vector<float>{inv_k[0]});
          convolution_forward(*cpd).execute(
              s, {{DNNL_ARG_SRC, cx}, {DNNL_ARG_WEIGHTS, cw}, {DNNL_ARG_BIAS, cb}, {DNNL_ARG_DST, cy}});
          s.wait();
        } catch (const dnnl::error&) {
          continue;  // e.g. a Winograd weight reorder that takes one scale only
        }
        const std::vector<double> ref = reference(a, xv, d.w, d.b);
        char fields[352];
        std::snprintf(fields, sizeof fields,
                      ", \"%s\": {\"rel_l2_error\": %.6e, \"impl\": \"%s\", \"source\": \"%s\", "
                      "\"weight_scales\": \"%s\", \"weight_bits\": %d}",
                      name, rel_l2(to_plain(cy, dst_d, tag::nchw), ref), cpd->impl_info_str(),
                      s8 ? "s8 codes of x, scale 1/127" : "u8 codes of (x + 1) / 2, scale 1/255",
                      per_channel ? "per output channel" : "one for all", seven_bit ? 7 : 8);
        return fields;
      }
      return "";
    };
    // The error on nova's data (s8) where oneDNN takes it, and on the same data moved into [0, 1] (u8),
    // which both its int8 algorithms take, so that their errors compare on one input.
    std::string out = int8_check(dt::s8, "check_s8") + int8_check(dt::u8, "check_u8");
    return out.empty() ? ", \"check_why\": \"no int8 primitive for the check\"" : out;
  };
  std::string check_json;
  if (a.check) {
    try {
      check_json = check();
    } catch (const dnnl::error& e) {
      check_json = std::string(", \"check_why\": \"") + e.what() + "\"";
    }
  }
  std::printf(
      "{\"peer\": \"onednn\", \"algorithm\": \"%s\", \"dtype\": \"%s\", \"created\": true, \"impl\": \"%s\", "
      "\"median_ms\": %.6f, \"min_ms\": %.6f, \"cpu_ms_per_execute\": %.6f, \"gflops\": %.3f%s}\n",
      a.algorithm.c_str(), a.dtype.c_str(), pd.impl_info_str(), med, t.front(), cpu_per_execute,
      flops / (med * 1e6), check_json.c_str());
  return 0;
}
