#include "algorithm_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "nova/conv/default_transforms.hpp"
#include "nova/numerics/first_order.hpp"
#include "nova/numerics/format.hpp"
#include "plan_impl.hpp"
#include "tile_transforms_generated.hpp"

namespace nova::conv {

namespace {

// Per-thread rates, measured roughly on the development machines: GEMM flops per ns, 16-lane vector
// operations per ns in the transforms, bytes per ns from L3/memory. The AVX-512 rate is a Xeon's; the AVX2
// GEMM rate is an AMD EPYC's (Zen 3, the first machine without AVX-512: nova_bench_gemm's 6x16 kernel at
// 92-96 GFLOP/s, 29-30 of 32 flop/cycle). At the earlier 50 the choice took F(4,3) for 1x512x7x7 there,
// where F(2,3) ran 1.4x faster (its transformed filters are 16.8 MB against 37.7, beside a 32 MB L3); at
// 90 it takes F(2,3). On the other layers F(4,3), F(6,3) and F(7,3) swapped places between two runs
// (docs/engine-log.md, "Session 13").
double gemm_rate(Isa isa) {
  return isa == Isa::kAvx512 ? 110.0 : isa == Isa::kAvx2 ? 90.0 : 8.0;
}
double vec_rate(Isa isa) {
  return isa == Isa::kAvx512 ? 2.0 : isa == Isa::kAvx2 ? 1.0 : 0.3;
}
constexpr double kStreamRate = 20.0;
// FP32 plans under the EPYC's rules (AVX2; AVX-512 on AMD CPUs): about the L3's bandwidth per core on the
// EPYC (32 MiB L3), where streaming U
// overlaps the GEMMs. At kStreamRate the model priced F(7,3) on the batch-1 64-256-channel layers within
// 8 % of F(4,3), which then took 1.16-1.25x F(7,3)'s time there (docs/engine-log.md, "Session 16": with this
// rate the choice is the fastest measured tile, or within 1 % of it, on 16 of the layer set's 18 layer
// and layout cases, against 8). It applied to U that fits the L3 only until U larger than L2 was
// prefetched (session 22): since then 37.7 MB of F(4,3) filters at 1x512x7x7 stream at about this rate
// too, and F(4,3) took 0.67 of F(2,3)'s time there (1x1024x7x7 0.73, 1x512x14x14 F(7,3) against F(4,3)
// 0.65). Low-precision plans keep the flat rate, with which their choices were measured (their tiles
// trade accuracy, not only time), and so does AVX-512 under the Xeon's rules, not measured with it.
constexpr double kAvx2L3StreamRate = 80.0;
// FP32 plans under the EPYC's rules whose filters come from memory (PlanOptions::filters_from_memory: a layer
// of a network, whose other layers and operations evict its U between executes): the EPYC's DRAM rate per
// thread, two threads. In ResNet-18 through the drop-in (session 24) the 37.7 MB of F(4,3) filters at
// 1x512x7x7 took 1.3-1.6 ms a layer (24-29 B/ns for both threads) against 1.0 ms for F(2,3)'s 16.8 MB,
// and at 1x256x14x14 F(7,3)'s 21 MB took 0.76-0.89 ms against 0.63-0.68 for F(4,3)'s 9.4 MB, where the
// L3 rate had chosen F(4,3) and F(7,3). The 64- and 128-channel layers' choices (F(7,3), 1.3-5.3 MB) were
// the fastest there at either rate.
constexpr double kAvx2MemoryStreamRate = 12.0;

double stream_rate(MemoryRules rules, Precision precision, bool filters_from_memory) {
  if (rules != MemoryRules::kEpyc || precision != Precision::kFp32) return kStreamRate;
  return filters_from_memory ? kAvx2MemoryStreamRate : kAvx2L3StreamRate;
}

// Bytes per element of the transformed filters U as the GEMMs read them, for the streaming term. On AVX2
// (and the portable path) each precision's GEMM reads U at its stored size: int8 codes, int16 U' of
// int8-spatial, bf16 and fp16 bits (widened as they are loaded). Counted at 4 bytes, as before, the
// model streamed 4x an int8 U and took F(2,3) for 1x512x7x7 in every low precision, where F(4,3) ran in
// 0.63-0.68 of its time on the EPYC ("Session 18"). AVX-512 under the Xeon's rules keeps 4 bytes: its
// low-precision choices were measured with them on the Xeon, and there the AMX kernels pad F(4,3)'s 4-tile
// GEMMs to 16 rows, which this model does not see (F(2,3) ran 1.2-1.8x faster on 1x512x7x7, "Session 16").
// Under the EPYC's rules (AMD, no AMX) it reads U at the stored size as AVX2 does (session 47: F(4,3) for
// F(2,3) on 1x512x7x7 at 0.58-0.70 of the time in every low precision).
double u_element_bytes(Isa isa, MemoryRules rules, Precision precision) {
  if (isa == Isa::kAvx512 && rules == MemoryRules::kXeon) return 4.0;
  switch (precision) {
    case Precision::kInt8:
      return 1.0;
    case Precision::kInt8Spatial:
    case Precision::kBf16:
    case Precision::kFp16:
      return 2.0;
    default:
      return 4.0;
  }
}

// The default, the rules every CPU of `isa` took before session 47: those of a CPU other than AMD's.
MemoryRules resolve(Isa isa, std::optional<MemoryRules> rules) {
  return rules.value_or(memory_rules(isa, false));
}

}  // namespace

MemoryRules memory_rules(Isa isa, bool amd_cpu) {
  if (isa == Isa::kAvx2 || (isa == Isa::kAvx512 && amd_cpu)) return MemoryRules::kEpyc;
  return MemoryRules::kXeon;
}

std::string winograd_ineligible(const ConvShape& s) {
  if (s.stride != 1) return "stride " + std::to_string(s.stride) + " (Winograd needs stride 1)";
  if (s.dilation != 1) return "dilation " + std::to_string(s.dilation) + " (Winograd needs dilation 1)";
  if (s.groups != 1) return "groups " + std::to_string(s.groups) + " (Winograd needs groups 1)";
  if (s.R != s.S) return "non-square kernel " + std::to_string(s.R) + "x" + std::to_string(s.S);
  if (s.R < 2) return "1x1 kernel (a GEMM; nothing for Winograd to save)";
  return "";
}

AlgorithmEstimate estimate_direct(const ConvShape& s, Layout layout, int threads, Isa isa) {
  const double flops = s.direct_flops();
  const double pixels = static_cast<double>(s.N * s.out_h() * s.out_w());
  const double crs = static_cast<double>(s.C / s.groups * s.R * s.S);
  double ns =
      flops / (gemm_rate(isa) * 0.9) + pixels * crs * static_cast<double>(s.groups) / 8.0 / vec_rate(isa);
  if (layout != Layout::kNHWC)
    ns += static_cast<double>(s.input_size() + s.output_size()) / 2.0;  // copies to and from NHWC
  return {Algorithm::kDirect, std::nullopt, ns / threads / 1e6};
}

AlgorithmEstimate estimate_winograd(const ConvShape& s, Layout layout, int threads, Isa isa, TileSize tile,
                                    double gemm_speedup, Precision precision, bool filters_from_memory,
                                    std::optional<MemoryRules> rules_option) {
  const MemoryRules rules = resolve(isa, rules_option);
  const double m = tile.m, n = tile.n();
  const double ty = static_cast<double>(ceil_div(s.out_h(), tile.m)),
               tx = static_cast<double>(ceil_div(s.out_w(), tile.m));
  const double T = static_cast<double>(s.N) * ty * tx;
  const double Cb = static_cast<double>(ceil_div(s.C, kLanes)),
               Kb = static_cast<double>(ceil_div(s.K, kLanes));
  double in_ops = 3.0 * n, out_ops = 3.0 * n;
  for (const auto& g : generated::kGeneratedInfo)
    if (g.m == tile.m && g.r == tile.r) {
      in_ops = g.input_ops;
      out_ops = g.output_ops;
    }
  const double gemm = 2.0 * n * n * T * Cb * 16 * Kb * 16 / (gemm_rate(isa) * gemm_speedup);
  const double vin = T * Cb * (2 * n * n + 2 * n * in_ops);
  const double vout = T * Kb * (n * n + (n + m) * out_ops + m * m * (layout == Layout::kNCHW ? 10.0 : 2.0));
  const double pack =
      static_cast<double>(s.N) * Cb * (ty * m + n) * (tx * m + n) * (layout == Layout::kNCHW ? 3.0 : 1.0);
  const double u_bytes = n * n * Cb * Kb * 256 * u_element_bytes(isa, rules, precision);
  // Filter bytes: the fused order reads U once per block, the phased order about once.
  const double per_tile = n * n * (Cb + Kb) * 16 * 4;
  const double block = std::max(12.0, std::min(1.5e6 / per_tile, std::ceil(T / threads)));
  const double blocks = std::ceil(T / block);
  const double stream = std::min(blocks * u_bytes, u_bytes + 2 * per_tile * T);
  const double stream_ns = stream / stream_rate(rules, precision, filters_from_memory) / std::min(threads, 2);
  const double transforms_ns = ((vin + vout) / vec_rate(isa) + pack / 4.0) / threads;
  // FP32 plans whose U exceeds L2 prefetch its next panel during the GEMMs (WinogradPlan::prefetch_u):
  // the streaming overlaps the products. Summed, the model kept F(4,3) for 1x512x28x28, where F(7,3) took
  // 0.80 of its time, and F(2,3) for 1x512x14x14 (F(4,3): 0.79; docs/engine-log.md, "Session 22"), on the
  // EPYC. The Xeon's choices were measured with the sum and keep it.
  const bool overlapped = rules == MemoryRules::kEpyc && prefetches_u(precision, u_bytes);
  const double ns = overlapped ? transforms_ns + std::max(gemm / threads, stream_ns)
                               : gemm / threads + transforms_ns + stream_ns;
  return {Algorithm::kWinograd, tile, ns / 1e6};
}

bool auto_tile_allowed(TileSize tile, Precision precision) {
  if (tile.n() > 9) return false;
  if (tile.n() == 9) return precision == Precision::kFp32;  // and only by kNinePointMargin
  // int8-spatial: its integer transforms fit int16 for F(2,3) and F(4,3) only (F(2,5)'s U' does not).
  if (precision == Precision::kInt8Spatial) return tile.r == 3 && tile.n() <= 6;
  return precision != Precision::kInt8 || tile.n() <= 6;
}

std::string transform_error_caution(const Transform& transform, Precision precision) {
  Format operands;  // the GEMM operands' format
  switch (precision) {
    case Precision::kFp32:
      operands = Format::kFp32;
      break;
    case Precision::kFp16:
      operands = Format::kFp16;
      break;
    case Precision::kBf16:
      operands = Format::kBf16;
      break;
    default:
      return "";
  }
  const double u = format_info(operands).unit_roundoff;
  const double predicted = predicted_rel_error_2d(transform.to_f64(), u);
  if (!(predicted > 0.1)) return "";
  char text[64];
  std::snprintf(text, sizeof text, "%.2g", predicted);
  return std::string("; caution: the transform's predicted relative error in ") + to_string(precision) +
         " is " + text +
         " (first order; `nova error` measures it): ill-conditioned points, results may be useless";
}

std::string tile_precision_caution(TileSize tile, Precision precision) {
  if (precision == Precision::kInt8 && tile.n() > 6)
    return "; caution: int8 with " + tile.to_string() +
           " is far less accurate than with F(4,3) (validation networks lose 4-11 top-1 points with F(6,3) "
           "and collapse with F(8,3), docs/engine.md)";
  return "";
}

AlgorithmEstimate fastest_tile_estimate(const std::vector<AlgorithmEstimate>& tiles) {
  AlgorithmEstimate best, best_small;
  best.ms = best_small.ms = HUGE_VAL;
  for (const AlgorithmEstimate& e : tiles) {
    if (e.ms < best.ms) best = e;
    if (e.tile->n() < 9 && e.ms < best_small.ms) best_small = e;
  }
  if (best.tile && best.tile->n() == 9 && best_small.tile && best.ms * kNinePointMargin > best_small.ms)
    return best_small;
  return best;
}

AlgorithmEstimate choose_algorithm(const ConvShape& s, Layout layout, int threads, Isa isa,
                                   Precision precision, std::string* reason, double gemm_speedup,
                                   bool filters_from_memory, std::optional<MemoryRules> rules) {
  AlgorithmEstimate best = estimate_direct(s, layout, threads, isa);
  const std::string why_not = winograd_ineligible(s);
  if (!why_not.empty()) {
    *reason = "direct: " + why_not;
    return best;
  }
  std::string detail;
  char buf[96];
  std::snprintf(buf, sizeof buf, "direct %.3g ms", best.ms);
  detail = buf;
  std::vector<AlgorithmEstimate> tiles;
  for (const TileSize& t : default_tiles()) {
    if (t.r != s.R || !auto_tile_allowed(t, precision)) continue;
    const AlgorithmEstimate e =
        estimate_winograd(s, layout, threads, isa, t, gemm_speedup, precision, filters_from_memory, rules);
    std::snprintf(buf, sizeof buf, ", %s %.3g ms", t.to_string().c_str(), e.ms);
    detail += buf;
    tiles.push_back(e);
  }
  const AlgorithmEstimate wino = fastest_tile_estimate(tiles);
  if (wino.tile && wino.ms < best.ms) best = wino;
  *reason = "auto: fastest estimate (" + detail + ")";
  if (filters_from_memory) *reason += "; filters priced at memory's rate";
  // AVX-512 on an AMD CPU: the cache rules are not the ISA's usual ones; say whose they are.
  if (isa == Isa::kAvx512 && resolve(isa, rules) == MemoryRules::kEpyc)
    *reason += "; cache rules of the AMD EPYC";
  for (const AlgorithmEstimate& e : tiles)
    if (e.tile->n() == 9 && best.tile && best.tile->n() != 9 && e.ms < best.ms) {
      std::snprintf(buf, sizeof buf, "; %s: not %.0f %% faster than %s, which is more accurate",
                    e.tile->to_string().c_str(), (kNinePointMargin - 1.0) * 100.0,
                    best.tile->to_string().c_str());
      *reason += buf;
    }
  if (gemm_speedup != 1.0) {
    std::snprintf(buf, sizeof buf, "; Winograd GEMMs estimated at %.3gx the fp32 rate (AMX)", gemm_speedup);
    *reason += buf;
  }
  if (precision == Precision::kInt8) {
    *reason += "; int8: tiles up to 6 points only, for accuracy";
    // The int8 error grows fast with the tile (F(4,3) about 2.5x F(2,3)'s on the layer set) and the
    // estimates are close where the int8 GEMM is cheap: a smaller tile estimated within the margin wins.
    if (best.tile) {
      const AlgorithmEstimate fastest = best;
      for (const AlgorithmEstimate& e : tiles)
        if (e.tile->n() < best.tile->n() && e.ms <= kInt8AccuracyMargin * fastest.ms) best = e;
      if (best.tile->n() != fastest.tile->n()) {
        std::snprintf(buf, sizeof buf,
                      "; int8: %s, within %.0f %% of the fastest estimate (%s), for accuracy",
                      best.tile->to_string().c_str(), (kInt8AccuracyMargin - 1.0) * 100.0,
                      fastest.tile->to_string().c_str());
        *reason += buf;
      }
    }
  }
  if (precision == Precision::kInt8Spatial)
    *reason += "; int8-spatial: F(2,3) or F(4,3) (integer transforms in int16)";
  return best;
}

}  // namespace nova::conv
