// The plan's automatic choice between the direct path and the Winograd tiles: a small cost model
// (GEMM flops at the path's rate, transform vector operations, filter bytes streamed per block).
#pragma once

#include <optional>
#include <string>

#include "nova/conv/conv.hpp"

namespace nova::conv {

// Whose measured cache and memory behaviour the cost model and the Winograd blocking assume. The AMD
// EPYC's (Zen 3 and Zen 4, 1 MiB L2 a core, a large L3): transformed filters U stream from L3 at about
// 80 B/ns a thread and, prefetched, overlap the GEMMs; U re-read by fused blocks is cheap against the
// phased order's V and M (weighted 6). The Intel Xeon's (the AMX host): a flat 20 B/ns summed with the
// GEMMs, V and M weighted 4. Every AVX2 machine measured was an EPYC, so AVX2 takes its rules on any CPU;
// AVX-512 takes them on AMD CPUs (Zen 4) and the Xeon's elsewhere; the portable path keeps the flat
// rules. Before session 47 the rules followed the ISA alone, and Zen 4 with AVX-512 visible ran the Xeon's:
// F(4,3) where F(7,3) took 0.70-0.94 of the time (FP32, batch 1, 8x64x56x56, 8x512x7x7), F(2,3) where
// F(4,3) took 0.58-0.70 in low precision and 0.88-0.97 in FP32 (1x512x7x7), and the phased order where fused
// blocks took 0.78-0.84 (FP32 8x128x28x28 F(7,3)); bench/results/2026-11-30-session47-zen4-avx512/.
enum class MemoryRules { kXeon, kEpyc };
MemoryRules memory_rules(Isa isa, bool amd_cpu);

struct AlgorithmEstimate {
  Algorithm algorithm = Algorithm::kDirect;
  std::optional<TileSize> tile;
  double ms = 0.0;
};

// Estimated time of the direct path and of Winograd with a default tile (tile.r must be shape.R).
// `gemm_speedup`: how many times faster than the FP32 kernels of `isa` the plan's Winograd GEMMs run
// (1 but for the AMX paths, lowp_gemm_speedup in lowp.cpp); `precision`: the plan's GEMM precision (the
// rate at which U streams depends on it on AVX2); `filters_from_memory`: U is priced at memory's rate
// instead of the L3's (PlanOptions::filters_from_memory; FP32 plans under the EPYC's rules only, the
// others' rates are flat). `rules`: the cache rules (MemoryRules); by default those every CPU of `isa` took
// before session 47 (the EPYC's for AVX2, the Xeon's otherwise); plans pass memory_rules(isa, cpu_is_amd()).
// The direct path is FP32 whatever the precision.
AlgorithmEstimate estimate_direct(const ConvShape& shape, Layout layout, int threads, Isa isa);
AlgorithmEstimate estimate_winograd(const ConvShape& shape, Layout layout, int threads, Isa isa,
                                    TileSize tile, double gemm_speedup = 1.0,
                                    Precision precision = Precision::kFp32, bool filters_from_memory = false,
                                    std::optional<MemoryRules> rules = std::nullopt);

// Can Winograd run this shape at all? Empty when it can, otherwise why not.
std::string winograd_ineligible(const ConvShape& shape);

// Whether the automatic choice may use a default tile at a GEMM precision: F(8,3) never (in FP32
// about 40x the error of a direct convolution for a few percent of speed); F(7,3) (9 points) in FP32
// only (about 10x F(4,3)'s error, 2x F(6,3)'s; in fp16 and bf16 it is 2-3x F(6,3)'s, already at
// 1e-2 to 5e-2), and then only with kNinePointMargin; in int8 nothing beyond 6 points (F(4,3),
// F(2,5)): with F(6,3) the measured top-1 of the validation networks drops 4-11 points and with F(8,3)
// it collapses (docs/engine.md). A requested tile is always honoured.
bool auto_tile_allowed(TileSize tile, Precision precision);

// FP32: a 9-point tile (F(7,3)) is chosen only when its estimate is at least this factor faster than
// that of the best smaller tile. It divides ResNet's 7x2^k images exactly and cuts the GEMM flops by
// 1.36-1.78x against F(4,3), which wins 15-35 % with 128-256 channels at batch 8; where the estimates
// are closer (64 channels, 7x7 images with 512 channels: a tie measured) the smaller tile's accuracy
// is worth more (docs/engine-log.md, "Session 12").
inline constexpr double kNinePointMargin = 1.08;

// A caution for the plan's reason when a requested tile is one the automatic choice avoids at this
// precision; empty otherwise.
std::string tile_precision_caution(TileSize tile, Precision precision);
// "; caution: ..." when a transform given to a plan is predicted (first order, U and V rounded to the
// GEMM operands' format: numerics/first_order.hpp) to give a relative error above 10 %: an
// ill-conditioned transform (a point such as 1e20, a 16-point tile) ran silently into useless or all-NaN
// outputs. "" otherwise, and for int8 (its error depends on the data's range).
std::string transform_error_caution(const Transform& transform, Precision precision);

// int8 (Winograd-domain) only: a tile with fewer points whose estimate is within this factor of the
// fastest Winograd estimate is taken instead, for its accuracy.
inline constexpr double kInt8AccuracyMargin = 1.10;

// The fastest estimate among direct and every default tile of the kernel size that
// auto_tile_allowed admits (int8: the smallest tile within kInt8AccuracyMargin of it; a 9-point tile
// only by kNinePointMargin), with a reason.
// The fastest of Winograd estimates (each of an allowed default tile), a 9-point tile only when it
// beats every other by kNinePointMargin. Empty input: an estimate without a tile.
AlgorithmEstimate fastest_tile_estimate(const std::vector<AlgorithmEstimate>& tiles);

AlgorithmEstimate choose_algorithm(const ConvShape& shape, Layout layout, int threads, Isa isa,
                                   Precision precision, std::string* reason, double gemm_speedup = 1.0,
                                   bool filters_from_memory = false,
                                   std::optional<MemoryRules> rules = std::nullopt);

}  // namespace nova::conv
