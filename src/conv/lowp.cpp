// The low-precision Winograd paths (docs/engine.md, "Low-precision paths"): U packed once at plan time
// in bf16, fp16 (both fp16 arithmetics share the panel layout) or int8 (per tap x output channel scales), V
// converted block by block after the FP32 input transform (unless the transform writes the operand
// itself: fp16 bits, int8-spatial int16, and int8 codes once the scales are known; winograd_execute.cpp), the
// GEMM kernels of kernels/lowp_kernels.hpp, NaN marking of int8 tiles whose input held NaN/Inf. The
// conversions here are shared by the portable and the SIMD kernels, so the two paths see the same operands
// and give the same bits.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "amx_support.hpp"
#include "cpu_supports.hpp"
#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/fp16_v_shift.hpp"
#include "plan_impl.hpp"

namespace nova::conv {

namespace {

std::size_t floats_for_bytes(std::size_t bytes) {
  return (bytes + 3) / 4;
}

// The largest tile (points) on which the automatic choice runs fp16 arithmetic. F(8,3)'s transforms
// spread V far, and fp16 sums of 32 products round the most there (they cannot overflow since V is
// shifted per call, set_fp16_v_shift, session 31). Before U's columns were
// normalized (build_lowp) fp16 arithmetic collapsed the validation networks at F(8,3) (VGG 43 %,
// ResNet 4 % top-1, NaN/Inf logits); since, they lose 0.21 / 0.05 points with it, against 0.02 / 0.11
// with FP32 arithmetic, whose logit error is half as large and which cannot overflow where FP32 does
// not. Up to F(6,3) / F(4,5) both lose under 0.05 point (docs/validation.md, "nova's engine in low
// precision").
constexpr int kFp16ArithmeticMaxPoints = 8;

// Whether a kFp16 plan runs the fp16-arithmetic GEMM (PlanOptions::fp16_arithmetic).
bool use_fp16_fma(const Plan::Impl& p, const WinogradPlan& w) {
  switch (p.fp16_arithmetic) {
    case Fp16Arithmetic::kFp32:
      return false;
    case Fp16Arithmetic::kFp16:
      return true;
    case Fp16Arithmetic::kAuto:
      break;
  }
  return fp16_arithmetic_supported() && p.isa == Isa::kAvx512 && w.n <= kFp16ArithmeticMaxPoints;
}

// Whether the plan runs the AMX kernel `path` ("amx-int8", "amx-bf16"): asked for (not kAvx512),
// admitted in this process (`admitted`, amx_support.cpp), and `unfit` empty (otherwise why this plan's
// shape keeps it off). `why` says why not; kAmx without it is an error.
bool choose_amx(LowpKernel asked, const std::string& path, bool (*admitted)(std::string*),
                const std::string& unfit, std::string& why) {
  bool amx = false;
  if (asked == LowpKernel::kAvx512)
    why = "avx512 requested";
  else if (admitted(&why))
    amx = unfit.empty();
  if (!amx && why.empty()) why = unfit;
  if (asked == LowpKernel::kAmx && !amx) throw Error("this process cannot run the " + path + " GEMM: " + why);
  return amx;
}

// The AMX GEMMs' speed over the FP32 AVX-512 kernels' as the engine calls them (64-column panels,
// blocks of 32-512 rows, one tile session), for the cost model. Measured with nova_bench_gemm
// (BM_LowpGemm against BM_GemmKernel, one thread) on a 16-core Xeon with AMX (docs/engine.md, "AMX"):
// FP32 100-120 GFLOP/s; bf16 460-540 GOP/s at 64 channels, 560-940 at 128-512; int8 370-430 at 64
// channels, 420-950 at 128-512. With these two values the automatic choice took the fastest tile
// measured there (or one within noise of it) on all 18 layers and precisions of the layer set.
constexpr double kAmxBf16GemmSpeedup = 5.0;
constexpr double kAmxInt8GemmSpeedup = 4.0;

}  // namespace

double lowp_gemm_speedup(const Plan::Impl& p, int64_t channels) {
  const bool asked = p.lowp_kernel == LowpKernel::kAuto || p.lowp_kernel == LowpKernel::kAmx;
  if (!asked || p.isa != Isa::kAvx512) return 1.0;
  if (p.precision == Precision::kBf16 && p.bf16_arithmetic != Bf16Arithmetic::kFma &&
      ceil_div(channels, kLanes) % 2 == 0 && amx_backend().bf16_admitted(nullptr))
    return kAmxBf16GemmSpeedup;
  // int8: the AMX kernel leaves channel counts that are not whole 64-byte tile rows to VNNI.
  if (p.precision == Precision::kInt8 && ceil_div(channels, kLanes) % 4 == 0 &&
      amx_backend().int8_admitted(nullptr))
    return kAmxInt8GemmSpeedup;
  return 1.0;
}

namespace {

// The AVX2 kernels of a plan on the avx2 path (kernels/avx2/gemm_lowp_avx2.cpp: the portable kernels'
// bits), or "" where that path has none for this arithmetic: bf16 on FMAs, fp16 with FP32 arithmetic
// (F16C), int8 and int8-spatial. The dot-product bf16 and the fp16-arithmetic GEMMs emulate AVX-512
// instructions and stay portable.
std::string avx2_kernel_name(const Plan::Impl& p, const WinogradPlan& w, bool bf16_fma) {
#if defined(__x86_64__) || defined(__i386__)
  if (p.isa != Isa::kAvx2 || !isa_supported(Isa::kAvx2)) return "";
  switch (w.precision) {
    case Precision::kBf16:
      return bf16_fma ? "avx2-fma" : "";
    case Precision::kFp16:
      return !w.fp16_fma && cpu_supports(CpuFeature::kF16c) ? "avx2-f16c" : "";
    case Precision::kInt8:
    case Precision::kInt8Spatial:
      return "avx2";
    default:
      return "";
  }
#else
  (void)p, (void)w, (void)bf16_fma;
  return "";
#endif
}

// Whether a bf16 plan's automatic arithmetic (Bf16Arithmetic::kAuto) is vdpbf16ps rather than FP32 FMAs.
bool bf16_auto_dot(const Plan::Impl& p) {
  // On the Xeon vdpbf16ps runs at half the FMA's rate per multiply-add, so the automatic choice is the FMA
  // kernel there (docs/engine.md, "bf16 arithmetic"); on AMD's Zen 4 it runs at the FMA's rate per
  // instruction, twice the work: dot plans took 0.49-0.61 of the FMA plans' time on the layer set's 9
  // layers (session 47). Both compute exact bf16 products with FP32 sums (bf16-storage); the validation
  // networks' top-1 differed by at most 0.04 point between them.
  // The portable kernel takes the same arithmetic (vdpbf16ps emulated), so that it gives the SIMD kernel's
  // bits, as for every other automatic choice.
  return p.precision == Precision::kBf16 && p.bf16_arithmetic == Bf16Arithmetic::kAuto &&
         p.isa == Isa::kAvx512 && cpu_is_amd() && lowp_simd_supported(Precision::kBf16);
}

void pick_kernels(Plan::Impl& p, WinogradPlan& w) {
  const Precision prec = w.precision;
  w.fp16_fma = prec == Precision::kFp16 && use_fp16_fma(p, w);
  // bf16 on FP32 FMAs unless dot products are asked for (kDot), or AMX runs them (kAuto, below), or the
  // automatic choice takes vdpbf16ps where it runs at the FMA's rate (bf16_auto_dot).
  const bool bf16_fma =
      prec == Precision::kBf16 && p.bf16_arithmetic != Bf16Arithmetic::kDot && !bf16_auto_dot(p);
  const std::string avx2 = avx2_kernel_name(p, w, bf16_fma);
  if (!avx2.empty() && (p.lowp_kernel == LowpKernel::kAuto || p.lowp_kernel == LowpKernel::kSimd)) {
    w.convert = lowp_convert_portable();
    w.convert.int8 = int8_quantize_avx2();  // the portable bits, 16 and 32 values a step
    w.convert.amax = amax_avx2();
    p.gemm_path = avx2;
    switch (prec) {
      case Precision::kBf16:
        w.widened_gemm = bf16_fma_gemm_avx2();
        w.round_v = bf16_round_avx2();
        w.rounding_input = w.fns.input_bf16_round;
        p.gemm_path_detail = "bf16 GEMM: avx2-fma (bf16 U widened, vfmadd231ps per channel)";
        break;
      case Precision::kFp16:
        w.widened_gemm = fp16_gemm_avx2();
        w.round_v = fp16_round_avx2();
        w.rounding_input = w.fns.input_fp16_round;
        p.gemm_path_detail = "fp16 GEMM: avx2-f16c (vcvtph2ps + fp32 fma)";
        if (p.fp16_arithmetic == Fp16Arithmetic::kAuto)  // measured in docs/engine-log.md, "Session 20"
          p.gemm_path_detail +=
              " (fp32 arithmetic: avx512-fp16 not available on the avx2 path; for speed, the fp32 precision "
              "reads and writes fp16 tensors too)";
        break;
      case Precision::kInt8Spatial:
        w.int16 = int16_fns_avx2();
        p.gemm_path_detail = "int8-spatial GEMM: avx2 (vpmaddwd, exact int32 sums)";
        break;
      default:
        w.int8_gemm = int8_gemm_avx2();
        w.int8_panels_gemm = int8_panels_gemm_avx2();
        p.gemm_path_detail = "int8 GEMM: avx2 (vpmaddwd on int16-widened operands, exact int32 sums)";
        break;
    }
    return;
  }
  const std::string simd = w.fp16_fma ? "avx512-fp16" : bf16_fma ? "avx512-fma" : lowp_simd_name(prec);
  const bool cpu_has = w.fp16_fma ? fp16_arithmetic_supported()
                       : bf16_fma ? isa_supported(Isa::kAvx512)
                                  : lowp_simd_supported(prec);
  const bool isa_ok = p.isa == Isa::kAvx512;
  bool use_simd = false;
  std::string why;
  const LowpKernel asked = p.lowp_kernel;
  if (asked == LowpKernel::kSimd || asked == LowpKernel::kAvx512 || asked == LowpKernel::kAmx) {
    if (!cpu_has && asked == LowpKernel::kAmx)  // AMX plans run beside the avx512 kernels (their V, tails)
      throw Error("this process cannot run the amx-" + to_string(prec) + " GEMM: it needs the " + simd +
                  " kernels, which this CPU lacks");
    if (!cpu_has) throw Error("this CPU cannot run the " + simd + " " + to_string(prec) + " GEMM kernels");
    if (!isa_ok)
      throw Error("the " + simd + " " + to_string(prec) + " GEMM kernels need the avx512 path, not " +
                  to_string(p.isa));
    use_simd = true;
  } else if (p.lowp_kernel == LowpKernel::kAuto) {
    use_simd = cpu_has && isa_ok;
    if (!cpu_has)
      why = " (" + simd + " not available on this CPU)";
    else if (!isa_ok)
      why = " (" + to_string(p.isa) + " path requested)";
  } else {
    why = " (requested)";
  }
  p.gemm_path = use_simd ? simd : "portable";
  w.convert = lowp_convert_portable();
  switch (prec) {
    case Precision::kBf16: {
      // AMX tiles (dot products) where this process may use them, the kernel passed its check
      // (amx_support.cpp), and every GEMM's channel count is whole tiles; not for kFma.
      std::string amx_why;
      bool amx = false;
      if (use_simd && p.bf16_arithmetic != Bf16Arithmetic::kFma) {
        const std::string unfit =
            w.Cpad % 32 == 0 ? "" : std::to_string(w.Cpad) + " channels (padded) are not whole tiles of 32";
        amx = choose_amx(asked, "amx-bf16", amx_backend().bf16_admitted, unfit, amx_why);
      }
      if (amx) {
        const AmxBackend& backend = amx_backend();
        w.bf16_gemm = backend.bf16_in_session;
        w.gemm_session_begin = backend.session_begin;
        w.gemm_session_end = backend.session_end;
        w.convert.bf16 = bf16_convert_avx512bf16();
        p.gemm_path = "amx-bf16";
        p.gemm_path_detail = "bf16 GEMM: amx-bf16 (tdpbf16ps; FP32 sums in the tile unit's order)";
        break;
      }
      if (bf16_fma) {
        w.widened_gemm = use_simd ? bf16_fma_gemm_avx512() : bf16_fma_gemm_portable();
        w.round_v = use_simd ? bf16_round_avx512() : w.convert.bf16_round;
        w.rounding_input = w.fns.input_bf16_round;
        p.gemm_path_detail = use_simd ? "bf16 GEMM: avx512-fma (bf16 U widened, vfmadd231ps per channel"
                                      : "bf16 GEMM: portable (fp32 fma per channel";
      } else {
        w.bf16_gemm = use_simd ? bf16_gemm_avx512bf16() : bf16_gemm_portable();
        if (use_simd) w.convert.bf16 = bf16_convert_avx512bf16();
        p.gemm_path_detail =
            use_simd ? "bf16 GEMM: avx512-bf16 (vdpbf16ps" : "bf16 GEMM: portable (vdpbf16ps emulated";
      }
      p.gemm_path_detail += (amx_why.empty() ? std::string() : "; amx: " + amx_why) + ")";
      break;
    }
    case Precision::kFp16:
      // The per-call scan of the input (set_fp16_v_shift): the AVX2 one, the portable bits, 32 at a time.
      if (use_simd && isa_supported(Isa::kAvx2)) w.convert.amax = amax_avx2();
      if (w.fp16_fma) {
        w.fp16_fma_gemm = use_simd ? fp16_fma_gemm_avx512fp16() : fp16_fma_gemm_portable();
        if (use_simd) w.convert.fp16_bits = fp16_convert_avx512fp16();
        p.gemm_path_detail = use_simd
                                 ? "fp16 GEMM: avx512-fp16 (vfmadd231ph over chunks of " +
                                       std::to_string(kFp16FmaChunk) + " channels, fp32 sums of the chunks)"
                                 : "fp16 GEMM: portable (fp16 fma emulated, chunks of " +
                                       std::to_string(kFp16FmaChunk) + " channels, fp32 sums of the chunks)";
        break;
      }
      w.widened_gemm = use_simd ? fp16_gemm_avx512() : fp16_gemm_portable();
      w.round_v = use_simd ? fp16_round_avx512() : w.convert.fp16;
      p.gemm_path_detail =
          use_simd ? "fp16 GEMM: avx512-f16c (vcvtph2ps + fp32 fma)" : "fp16 GEMM: portable (fp32)";
      break;
    case Precision::kInt8: {
      w.int8_gemm = use_simd ? int8_gemm_avx512vnni() : int8_gemm_portable();
      p.gemm_path_detail = use_simd ? "int8 GEMM: avx512-vnni (vpdpbusd" : "int8 GEMM: portable (int32)";
      if (use_simd) {
        w.convert.int8 = int8_quantize_avx512vnni();
        w.convert.amax = amax_avx512vnni();
        // AMX tiles where this process may use them and the kernel passed its check (amx_support.cpp).
        std::string amx_why;
        if (choose_amx(asked, "amx-int8", amx_backend().int8_admitted, "", amx_why)) {
          const AmxBackend& backend = amx_backend();
          w.int8_gemm = backend.int8_in_session;
          w.gemm_session_begin = backend.session_begin;
          w.gemm_session_end = backend.session_end;
          p.gemm_path = "amx-int8";
          p.gemm_path_detail =
              "int8 GEMM: amx-int8 (tdpbusd; blocks under 16 rows and channel counts that are not a multiple "
              "of 64 on avx512-vnni)";
        } else {
          p.gemm_path_detail += "; amx: " + amx_why + ")";
        }
      }
      break;
    }
    case Precision::kInt8Spatial:
      w.int16 = use_simd ? int16_fns_avx512vnni() : int16_fns_portable();
      if (use_simd) w.convert.amax = amax_avx512vnni();
      p.gemm_path_detail =
          use_simd ? "int8-spatial GEMM: avx512-vnni (vpdpwssd)" : "int8-spatial GEMM: portable (int32)";
      break;
    case Precision::kFp32:
      break;
  }
  p.gemm_path_detail += why;
  if (prec == Precision::kFp16 && !w.fp16_fma && p.fp16_arithmetic == Fp16Arithmetic::kAuto) {
    if (!fp16_arithmetic_supported())
      p.gemm_path_detail += " (fp32 arithmetic: avx512-fp16 not available on this CPU)";
    else if (w.n > kFp16ArithmeticMaxPoints)
      p.gemm_path_detail += " (fp32 arithmetic: fp16 sums lose the most accuracy on tiles above " +
                            std::to_string(kFp16ArithmeticMaxPoints) + " points)";
  }
  if (prec == Precision::kFp16 && w.fp16_fma && w.n > kFp16ArithmeticMaxPoints)
    p.reason += "; caution: fp16 arithmetic with " + w.transform.tile().to_string() +
                " has twice the logit error of FP32 arithmetic on the validation networks (fp16 sums of 32 "
                "products), docs/engine.md";
}

// The integer V conversions, one tile row (Cpad values) of one tap at a time, so that a row holding
// NaN/Inf marks its tile: convert(tap, offset in V, offset in the copy, &bad) returns its saturated count.
// Returns their sum.
template <class Convert>
int64_t convert_rows_marking_tiles(int64_t nn, int64_t rows, int64_t Cpad, std::size_t pos_v,
                                   std::size_t pos_vl, uint8_t* flags, Convert&& convert) {
  std::fill(flags, flags + rows, uint8_t{0});
  int64_t saturated = 0;
  for (int64_t a = 0; a < nn; ++a)
    for (int64_t i = 0; i < rows; ++i) {
      int bad = 0;
      const auto row = static_cast<std::size_t>(i * Cpad);
      saturated += convert(a, static_cast<std::size_t>(a) * pos_v + row,
                           static_cast<std::size_t>(a) * pos_vl + row, &bad);
      flags[i] = static_cast<uint8_t>(flags[i] | bad);
    }
  return saturated;
}

}  // namespace

void build_lowp(Plan::Impl& p, WinogradPlan& w, const float* weights) {
  w.precision = p.precision;
  pick_kernels(p, w);
  if (w.precision == Precision::kInt8Spatial) {
    build_int8_spatial(p, w, weights);
    return;
  }
  const int64_t nn = static_cast<int64_t>(w.n) * w.n, Cpad = w.Cpad, Kpad = w.Kpad, panel = w.panel;
  const std::size_t count = static_cast<std::size_t>(nn * Cpad * Kpad);
  const float* U = w.U.data();
  if (w.precision == Precision::kInt8) {
    w.U_lowp.resize(floats_for_bytes(count));
    w.u_scale.assign(static_cast<std::size_t>(nn * Kpad), 1.0f);
    w.u_comp.assign(static_cast<std::size_t>(nn * Kpad), 0);
  } else {
    w.U_lowp.resize(floats_for_bytes(count * 2));
  }
  w.u_pow2.clear();
  if (w.precision == Precision::kFp16) {
    w.u_pow2.assign(static_cast<std::size_t>(nn * Kpad), 1.0f);
    w.fp16_v_gain = v_gain_bound(w.transform.to_f64());  // the harness's and the CUDA path's bound
  }
  std::fill(w.U_lowp.data(), w.U_lowp.data() + w.U_lowp.size(), 0.0f);
  auto* u16 = reinterpret_cast<uint16_t*>(w.U_lowp.data());
  auto* u8 = reinterpret_cast<int8_t*>(w.U_lowp.data());
  const Precision prec = w.precision;
  // A task is one tap of one panel of output channels: Cpad rows of `width` floats, read row by row. With a
  // task per output channel, reading one float per row, rows `width` floats apart, planning had taken
  // 1.2-1.9x as long in bf16 and 1.15-1.2x in int8 (BM_PlanCreate, F(4,3), session 29). Each column's (tap,
  // output channel's) largest |U| is the fp16 normalization's and the int8 scale's reference.
  const int64_t panels = ceil_div(Kpad, panel);
  p.pool->run(static_cast<std::size_t>(panels * nn), [&](std::size_t task, int) {
    const int64_t a = static_cast<int64_t>(task) % nn, k0 = static_cast<int64_t>(task) / nn * panel;
    const int64_t width = std::min(panel, Kpad - k0);
    const int64_t base = a * Cpad * Kpad + k0 * Cpad;
    const float* src = U + base;  // element (c, j) at src[c * width + j]
    if (prec == Precision::kBf16) {
      for (int64_t c = 0; c < Cpad; ++c)
        for (int64_t j = 0; j < width; ++j)
          u16[base + (c / 2) * (2 * width) + 2 * j + (c & 1)] = bf16_bits_rne(src[c * width + j]);
      return;
    }
    std::vector<double> amax(static_cast<std::size_t>(width), 0.0);
    for (int64_t c = 0; c < Cpad; ++c)
      for (int64_t j = 0; j < width; ++j)
        amax[static_cast<std::size_t>(j)] =
            std::max(amax[static_cast<std::size_t>(j)], std::fabs(static_cast<double>(src[c * width + j])));
    if (prec == Precision::kFp16) {
      // Each column (tap, output channel) is brought by a power of two 2^e to a largest |U| in
      // [2^-3, 2^-2), and the GEMM's FP32 result multiplied back by 2^-e (exact). fp16 rounds
      // x * 2^e as it rounds x wherever both are normal, so columns in fp16's normal range give the
      // same bits as without it; what it keeps are the columns that would fall below that range: a
      // transform whose G rows are scaled down (F(8,3)'s fp32 catalogue entry scales one by 8e-4 and
      // lost whole taps to fp16 zeros at weights of 0.1), or small weights (F(6,3) at weights of 1e-4
      // had 4x the error). And the result no longer depends on the weights' scale: weights times a
      // power of two give the output times it, bit for bit. The target keeps the fp16 arithmetic's
      // products below those of weights of unit scale (its overflow margins).
      // x * 2^e is a multiplication (std::ldexp took a third of an fp16 plan's making), in FP32, exact
      // wherever the product is an FP32 normal, and the rows go through the path's fp16 narrowing (F16C's
      // vcvtps2ph where the plan has it; round to nearest even, as fp16_bits_rne): the same bits as
      // fp16_bits_rne of the double product, whose scalar conversion of every element had taken about a
      // third of the making again (1x512x7x7 F(4,3): 182 ms against 64 ms for bf16). Columns whose largest
      // |U| is below FP32's normals (2^-126, where 2^e may not even be a float) keep the double path.
      std::vector<double> pow2(static_cast<std::size_t>(width));
      std::vector<float> pow2f(static_cast<std::size_t>(width));
      bool all_normal = true;
      for (int64_t j = 0; j < width; ++j) {
        int e = 0;
        const double amax_j = amax[static_cast<std::size_t>(j)];
        if (amax_j > 0.0) {
          (void)std::frexp(amax_j, &e);  // amax in [2^(e-1), 2^e)
          e = -2 - e;                    // amax * 2^e in [2^-3, 2^-2)
        }
        all_normal = all_normal && (amax_j == 0.0 || amax_j >= static_cast<double>(FLT_MIN));
        w.u_pow2[static_cast<std::size_t>(a * Kpad + k0 + j)] = std::ldexp(1.0f, -e);
        pow2[static_cast<std::size_t>(j)] = std::ldexp(1.0, e);
        pow2f[static_cast<std::size_t>(j)] = static_cast<float>(pow2[static_cast<std::size_t>(j)]);
      }
      if (!all_normal) {
        for (int64_t c = 0; c < Cpad; ++c)
          for (int64_t j = 0; j < width; ++j)
            u16[base + c * width + j] =
                fp16_bits_rne(static_cast<double>(src[c * width + j]) * pow2[static_cast<std::size_t>(j)]);
        return;
      }
      const NarrowFn narrow = p.kernels->convert.narrow[static_cast<int>(DataType::kFp16)];
      std::vector<float> row(static_cast<std::size_t>(width));
      NarrowCounts unused;
      for (int64_t c = 0; c < Cpad; ++c) {
        for (int64_t j = 0; j < width; ++j)
          row[static_cast<std::size_t>(j)] = src[c * width + j] * pow2f[static_cast<std::size_t>(j)];
        narrow(row.data(), u16 + base + c * width, width, 1.0f, &unused);
      }
      return;
    }
    // Symmetric int8 per (tap, output channel), as nova::quantize: s = amax / 127, code = RNE(u / s).
    std::vector<double> scale(static_cast<std::size_t>(width));
    std::vector<int32_t> sum(static_cast<std::size_t>(width), 0);
    for (int64_t j = 0; j < width; ++j)
      scale[static_cast<std::size_t>(j)] =
          amax[static_cast<std::size_t>(j)] > 0.0 ? amax[static_cast<std::size_t>(j)] / 127.0 : 1.0;
    // RNE by the sum with 1.5 * 2^52, whose last place is 1 (|u / s| <= 127 * (1 + 2^-52)), under the
    // default rounding mode: std::nearbyint's result without its library call, which with the division
    // made int8 plans take longer to make than bf16 ones.
    constexpr double kRoundMagic = 6755399441055744.0;
    for (int64_t c = 0; c < Cpad; ++c)
      for (int64_t j = 0; j < width; ++j) {
        const double u = static_cast<double>(src[c * width + j]) / scale[static_cast<std::size_t>(j)];
        const double q = std::clamp((u + kRoundMagic) - kRoundMagic, -127.0, 127.0);
        const auto code = static_cast<int8_t>(q);
        u8[base + (c / 4) * (4 * width) + 4 * j + (c & 3)] = code;
        sum[static_cast<std::size_t>(j)] += code;
      }
    for (int64_t j = 0; j < width; ++j) {
      w.u_scale[static_cast<std::size_t>(a * Kpad + k0 + j)] =
          static_cast<float>(scale[static_cast<std::size_t>(j)]);
      w.u_comp[static_cast<std::size_t>(a * Kpad + k0 + j)] = 128 * sum[static_cast<std::size_t>(j)];
    }
  });
  w.U.resize(0);  // the FP32 filters are not used by the low-precision GEMMs
}

void allocate_lowp_scratch(Plan::Impl& p) {
  const WinogradPlan& w = *p.wino;
  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  const auto threads = static_cast<std::size_t>(p.threads);
  p.thread_saturated.assign(threads, 0);
  p.thread_nonfinite.assign(threads, 0);
  p.thread_m_nonfinite.assign(threads, 0);
  p.v_scale.assign(static_cast<std::size_t>(nn), 1.0f);
  const bool own_v = !w.v_in_place();
  // Floats that hold the low-precision copy of V for one pass (pos_vl elements a position).
  const std::size_t lowp_floats =
      (static_cast<std::size_t>(nn) * w.pos_vl * w.v_operand_size() + sizeof(float) - 1) / sizeof(float) + 16;
  if (!w.phased) {
    p.thread_lowp.resize(threads);
    p.thread_flags.resize(threads);
    for (std::size_t t = 0; t < threads; ++t) {
      if (own_v) p.thread_lowp[t].resize(lowp_floats);
      p.thread_flags[t].assign(static_cast<std::size_t>(w.block), 0);
    }
  }
  if (w.phased) {
    if (own_v) p.shared_lowp.resize(lowp_floats);
    p.shared_flags.assign(static_cast<std::size_t>(w.tiles), 0);
  }
  p.thread_amax.assign(threads, std::vector<float>(static_cast<std::size_t>(nn * kLanes), 0.0f));
}

void lowp_tap_amax(Plan::Impl& p, const float* v, std::size_t pos_v, int64_t rows, float* amax) {
  const WinogradPlan& w = *p.wino;
  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  const auto tap_max = [&](std::size_t a, int) {
    amax[a] = std::max(amax[a], w.convert.amax(v + a * pos_v, rows * w.Cpad));
  };
  p.pool->run(static_cast<std::size_t>(nn), p.charged(Stage::kScales, tap_max));
}

void lowp_set_scales(Plan::Impl& p, const float* amax) {
  for (std::size_t a = 0; a < p.v_scale.size(); ++a) p.v_scale[a] = symmetric_int8_scale(amax[a]);
}

int64_t lowp_convert(const Plan::Impl& p, float* v, std::size_t pos_v, int64_t rows, float* vl,
                     std::size_t pos_vl, uint8_t* flags) {
  const WinogradPlan& w = *p.wino;
  const int64_t nn = static_cast<int64_t>(w.n) * w.n, Cpad = w.Cpad;
  int64_t saturated = 0;
  if (w.v_in_place()) {  // the widened paths: V rounded in place (vl is v)
    for (int64_t a = 0; a < nn; ++a) w.round_v(v + static_cast<std::size_t>(a) * pos_v, rows * Cpad);
    return 0;
  }
  switch (w.precision) {
    case Precision::kBf16: {
      auto* out = reinterpret_cast<uint16_t*>(vl);
      for (int64_t a = 0; a < nn; ++a)
        w.convert.bf16(v + static_cast<std::size_t>(a) * pos_v, out + static_cast<std::size_t>(a) * pos_vl,
                       rows * Cpad);
      break;
    }
    case Precision::kFp16: {  // fp16 arithmetic (the FP32 one is widened, above)
      auto* out = reinterpret_cast<uint16_t*>(vl);
      for (int64_t a = 0; a < nn; ++a)
        w.convert.fp16_bits(v + static_cast<std::size_t>(a) * pos_v,
                            out + static_cast<std::size_t>(a) * pos_vl, rows * Cpad);
      break;
    }
    case Precision::kInt8Spatial: {
      auto* out = reinterpret_cast<int16_t*>(vl);
      convert_rows_marking_tiles(nn, rows, Cpad, pos_v, pos_vl, flags,
                                 [&](int64_t, std::size_t off, std::size_t off_l, int* bad) {
                                   w.int16.convert(v + off, out + off_l, Cpad, bad);
                                   return int64_t{0};
                                 });
      break;
    }
    case Precision::kInt8: {
      auto* out = reinterpret_cast<uint8_t*>(vl);
      saturated = convert_rows_marking_tiles(
          nn, rows, Cpad, pos_v, pos_vl, flags, [&](int64_t a, std::size_t off, std::size_t off_l, int* bad) {
            return w.convert.int8(v + off, out + off_l, Cpad, 1.0f / p.v_scale[static_cast<std::size_t>(a)],
                                  bad);
          });
      break;
    }
    case Precision::kFp32:
      break;
  }
  return saturated;
}

namespace {

// The fp16 U's column scales of position a from column k0 on (build_lowp; times 2^v_shift where this
// call's V is scaled); null for bf16, whose U keeps FP32's exponent range.
const float* column_scales(const Plan::Impl& p, const WinogradPlan& w, int64_t a, int64_t k0) {
  if (w.u_pow2.empty()) return nullptr;
  return (p.v_shift != 0 ? p.call_pow2.data() : w.u_pow2.data()) + a * w.Kpad + k0;
}

}  // namespace

void lowp_gemm_stage(const Plan::Impl& p, int64_t rows, int64_t a0, int64_t a1, int64_t q0, int64_t q1,
                     const float* vl, std::size_t pos_vl, float* mo, std::size_t pos_m) {
  const WinogradPlan& w = *p.wino;
  const int64_t Cpad = w.Cpad, Kpad = w.Kpad;
  const auto kc = static_cast<std::size_t>(Cpad);
  if (w.gemm_session_begin) w.gemm_session_begin();
  for (int64_t a = a0; a < a1; ++a) {
    float* ma = mo + static_cast<std::size_t>(a) * pos_m;
    const std::size_t ub = static_cast<std::size_t>(a * Cpad * Kpad);
    if (w.precision == Precision::kInt8 && w.int8_panels_gemm != nullptr) {
      const int64_t k0 = q0 * w.panel, k1 = std::min(q1 * w.panel, Kpad);
      w.int8_panels_gemm(
          rows, k1 - k0, w.panel, kc, reinterpret_cast<const uint8_t*>(vl) + a * pos_vl, kc,
          reinterpret_cast<const int8_t*>(w.U_lowp.data()) + ub + static_cast<std::size_t>(k0 * Cpad),
          w.u_comp.data() + a * Kpad + k0, p.v_scale[static_cast<std::size_t>(a)],
          w.u_scale.data() + a * Kpad + k0, ma + k0, static_cast<std::size_t>(Kpad));
      continue;
    }
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t k0 = q * w.panel;
      const int64_t width = std::min(w.panel, Kpad - k0);
      const int nv = static_cast<int>(width / kLanes);
      const std::size_t boff = ub + static_cast<std::size_t>(k0 * Cpad);
      if (w.v_in_place()) {  // the widened paths: fp32 V, 16-bit U
        w.widened_gemm(rows, nv, kc, vl + a * pos_vl, kc,
                       reinterpret_cast<const uint16_t*>(w.U_lowp.data()) + boff, column_scales(p, w, a, k0),
                       ma + k0, static_cast<std::size_t>(Kpad));
        continue;
      }
      switch (w.precision) {
        case Precision::kBf16:
          w.bf16_gemm(rows, nv, kc, reinterpret_cast<const uint16_t*>(vl) + a * pos_vl, kc,
                      reinterpret_cast<const uint16_t*>(w.U_lowp.data()) + boff, ma + k0,
                      static_cast<std::size_t>(Kpad));
          break;
        case Precision::kFp16:  // fp16 arithmetic
          w.fp16_fma_gemm(rows, nv, kc, reinterpret_cast<const uint16_t*>(vl) + a * pos_vl, kc,
                          reinterpret_cast<const uint16_t*>(w.U_lowp.data()) + boff,
                          column_scales(p, w, a, k0), ma + k0, static_cast<std::size_t>(Kpad));
          break;
        case Precision::kInt8Spatial: {
          float scale[kMaxNV * kLanes];
          for (int64_t j = 0; j < width; ++j)
            scale[j] = p.d_scale * w.u_scale[static_cast<std::size_t>(a * Kpad + k0 + j)];
          w.int16.gemm(rows, nv, kc, static_cast<std::size_t>(w.int16_chunk),
                       reinterpret_cast<const int16_t*>(vl) + a * pos_vl, kc,
                       reinterpret_cast<const int16_t*>(w.U_lowp.data()) + boff, scale, ma + k0,
                       static_cast<std::size_t>(Kpad));
          break;
        }
        case Precision::kInt8: {
          float scale[kMaxNV * kLanes];
          const float sv = p.v_scale[static_cast<std::size_t>(a)];
          for (int64_t j = 0; j < width; ++j)
            scale[j] = sv * w.u_scale[static_cast<std::size_t>(a * Kpad + k0 + j)];
          w.int8_gemm(rows, nv, kc, reinterpret_cast<const uint8_t*>(vl) + a * pos_vl, kc,
                      reinterpret_cast<const int8_t*>(w.U_lowp.data()) + boff,
                      w.u_comp.data() + a * Kpad + k0, scale, ma + k0, static_cast<std::size_t>(Kpad));
          break;
        }
        case Precision::kFp32:
          break;
      }
    }
  }
  if (w.gemm_session_end) w.gemm_session_end();
}

int64_t lowp_poison(const Plan::Impl& p, int64_t rows, const uint8_t* flags, float* mo, std::size_t pos_m,
                    int64_t k0, int64_t k1) {
  const WinogradPlan& w = *p.wino;
  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  int64_t count = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (flags[i] == 0) continue;
    ++count;
    for (int64_t a = 0; a < nn; ++a)
      std::fill_n(mo + static_cast<std::size_t>(a) * pos_m + i * w.Kpad + k0, k1 - k0,
                  std::numeric_limits<float>::quiet_NaN());
  }
  return count;
}

namespace {

constexpr int64_t kScanChunk = 16384;

// max |d| over elements [i0, i0 + len) of an input tensor of type f (NaN and Inf left out: AmaxFn).
float range_amax(const Plan::Impl& p, const void* input, TensorFormat f, int64_t i0, int64_t len) {
  const AmaxFn amax = p.wino->convert.amax;
  if (f.type == DataType::kFp32) return amax(static_cast<const float*>(input) + i0, len);
  if (f.type == DataType::kInt8) {
    // The largest |code| times the scale: fl(|c| * scale) grows with |c| (scale > 0), so it is the
    // largest widened |value|, without widening (an int8 tensor's scan took 18 % of a per-call
    // int8-spatial execute on 1x64x56x56, widening chunks into a heap buffer).
    const auto* codes = static_cast<const int8_t*>(input) + i0;
    int largest = 0;
    for (int64_t i = 0; i < len; ++i) largest = std::max(largest, std::abs(static_cast<int>(codes[i])));
    return static_cast<float>(largest) * f.scale;
  }
  // bf16, fp16: widened (exactly) a piece at a time
  const WidenFn widen = p.kernels->convert.widen[static_cast<int>(f.type)];
  constexpr int64_t kPiece = 1024;
  alignas(64) float buf[kPiece];
  float m = 0.0f;
  for (int64_t j = 0; j < len; j += kPiece) {
    const int64_t n = std::min(kPiece, len - j);
    widen(element_at(input, f.type, i0 + j), buf, n, f.scale);
    m = std::max(m, amax(buf, n));
  }
  return m;
}

bool is_prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

}  // namespace

// Pieces of 16 elements (a pixel's channel block in NCHW16c, 16 channels of a pixel in NHWC; one cache
// line of FP32), one in every `stride`: a prime, so that the pieces taken move across channel blocks and
// pixels instead of landing on the same channels of every pixel; 61 (1.6 % of the input), or more where
// that would pass 128 pieces. Its cost is the lines it reads, scattered, each from another core's cache
// or from memory (0.1-0.2 us a line on this project's VMs, ten times what a second read of them takes):
// 512 lines took 0.06 ms a call on 1x64x224x224; 128, 0.03 ms, 0.08-0.26 % of the thread time of fp16
// plans on the layer set (docs/engine.md, "Small inputs: V shifted up").
float input_tensor_amax_sample(Plan::Impl& p, const void* input, TensorFormat f) {
  constexpr int64_t kPiece = 16, kMaxPieces = 128;
  const int64_t count = input_elements(p.shape, p.layout);
  int64_t stride = std::max<int64_t>(61, ceil_div(ceil_div(count, kPiece), kMaxPieces));
  while (!is_prime(stride)) ++stride;
  const InputPaddingLanes lanes(p.shape, p.layout);
  StageLaps clock = p.laps(0);  // the calling thread's time, as worker 0's (--profile: "scales")
  float m = 0.0f;
  for (int64_t i = 0; i < count; i += kPiece * stride) {  // NCHW16c's padding lanes left out
    const int64_t len = lanes.any() && lanes.last_block(i) ? lanes.last_lanes : std::min(kPiece, count - i);
    m = std::max(m, range_amax(p, input, f, i, len));
  }
  clock.lap(Stage::kScales);
  return m;
}

// A pass over the input, a chunk a task (int8-spatial's input scale, fp16's V shift).
float input_tensor_amax(Plan::Impl& p, const void* input, TensorFormat f) {
  const int64_t count = input_elements(p.shape, p.layout);
  // NCHW16c padding lanes are skipped (they were read: 1000 in them set int8-spatial's input scale and zeroed
  // every output, nothing counted). Chunks and planes start at multiples of 16 elements, pixels of 16 lanes.
  const InputPaddingLanes lanes(p.shape, p.layout);
  static_assert(kScanChunk % 16 == 0);
  const auto scan_range = [&](int64_t i0, int64_t len) { return range_amax(p, input, f, i0, len); };
  std::vector<float> part(static_cast<std::size_t>(p.threads), 0.0f);
  const auto scan_chunk = [&](std::size_t task, int worker) {
    const int64_t i0 = static_cast<int64_t>(task) * kScanChunk, end = std::min(i0 + kScanChunk, count);
    float m = 0.0f;
    if (!lanes.any()) {
      m = scan_range(i0, end - i0);
    } else {
      for (int64_t i = i0; i < end;) {
        const int64_t stop = std::min(end, (i / lanes.plane + 1) * lanes.plane);
        if (!lanes.last_block(i)) {
          m = std::max(m, scan_range(i, stop - i));
        } else {
          for (int64_t pixel = i; pixel < stop; pixel += 16)
            m = std::max(m, scan_range(pixel, lanes.last_lanes));
        }
        i = stop;
      }
    }
    float& slot = part[static_cast<std::size_t>(worker)];
    slot = std::max(slot, m);
  };
  p.pool->run(static_cast<std::size_t>(ceil_div(count, kScanChunk)), p.charged(Stage::kScales, scan_chunk));
  float m = 0.0f;
  for (float v : part) m = std::max(m, v);
  return m;
}

// The largest |V| an fp16 plan lets through (nova/numerics/fp16_v_shift.hpp, whose rule the plans follow).
// FP32 arithmetic: fp16's largest finite value (a V within it rounds to a finite fp16; to nearest never
// passes it). fp16 arithmetic sums kFp16FmaChunk products in fp16 first, with U's columns at most 2^-2
// (build_lowp): V within 2^12 keeps a chunk's sum within 32 * 2^12 * 2^-2 = 2^15 (its roundings add under
// 2 %), whatever the data. Without it, data whose windows follow the sign pattern of a B^T row, channels
// alike, overflowed those sums from a sixth of where V itself would
// (Lowp.Fp16ArithmeticChunkSumsStayFiniteOnAlignedData).
static_assert(kFp16FmaChunk * kFp16VLimitFp16Sums / 4 * 1.02 < kFp16VLimitFp32Sums);  // sums and roundings

// V whose bound (fp16_v_gain * max |d|) lies below 1 is scaled up to a bound in [2^4, 2^5), that of
// unit-scale data (fp16_v_gain is at most about 16 for the balanced default transforms). Below, much of V
// sits in fp16's subnormals (its normals end at 2^-14): at inputs of 1e-5 the error was 5.6x that of
// unit-scale data with F(8,3) and FP32 arithmetic, and 25x with fp16 arithmetic, whose products round to
// fp16 too (docs/engine.md, "Small inputs: V shifted up"). Unit-scale data is not shifted and keeps its bits.
// The target leaves V 2^11 below its limit (2^7 with fp16 arithmetic), so a shift from a sample of the
// input (plans that read it in place, execute_winograd) overflows only where the sample missed the
// input's largest value by more than that; the output's NaN/Inf count then has it run again.
void set_fp16_v_shift(Plan::Impl& p, float amax) {
  const WinogradPlan& w = *p.wino;
  // The GEMMs' column scales become u_pow2 * 2^s, kept FP32 normals: the floor of an upward shift.
  int lowest_scale = 0;
  for (const float s : w.u_pow2)
    if (s > 0.0f) lowest_scale = std::min(lowest_scale, std::ilogb(s));
  const int shift =
      fp16_v_shift(w.fp16_v_gain, static_cast<double>(amax),
                   w.fp16_fma ? kFp16VLimitFp16Sums : kFp16VLimitFp32Sums, fp16_v_shift_floor(lowest_scale));
  p.v_shift = shift;
  if (shift == 0) return;
  p.call_pow2.resize(w.u_pow2.size());
  for (std::size_t i = 0; i < w.u_pow2.size(); ++i) p.call_pow2[i] = std::ldexp(w.u_pow2[i], shift);
}

}  // namespace nova::conv
