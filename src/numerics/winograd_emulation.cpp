// The emulated Winograd pipeline (see precision_model.hpp for the stages). The tile transforms are
// sandwich.hpp's; the element-wise products and their sums over channels run in double, each
// result rounded by the software kernel (for formats of at most 24 significant bits the double
// result rounded once is the correctly rounded operation: double has more than 2p + 2 bits).
//
// Streaming: the transformed inputs V (and, for independent tile pairs, the transformed filters U)
// are as large as the input itself, C times the output. They are produced, staged and consumed a
// few tiles at a time, so memory holds the input, the output and small per-thread buffers. A stage
// whose quantization scales span tiles (per tensor, per channel, per Winograd position) gets them
// from a first pass that computes the transform and gathers its ranges without keeping it.
// Tiles are split over threads in contiguous ranges: every element is computed by the same
// operations whatever the split, so the results do not depend on the thread count.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/fp16_v_shift.hpp"
#include "numerics/harness_size.hpp"
#include "numerics/parallel_for.hpp"
#include "numerics/round_kernel.hpp"
#include "numerics/sandwich.hpp"
#include "numerics/stage.hpp"

namespace nova {
namespace {

// Work per thread below which threading does not pay (and searches, which score small training sets
// many times, stay on their own thread).
constexpr int64_t kMinBatchPerThread = 16384;

void sandwich(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out) {
  const int64_t II = int64_t{I} * I, PP = int64_t{P} * P;
  detail::parallel_for(batch, kMinBatchPerThread, [&](int64_t b0, int64_t b1) {
    detail::sandwich_range(f, L, P, I, X + b0 * II, b1 - b0, out + b0 * PP);
  });
}

// M[t][k][a] = sum_c U[f(t,k)][c][a] * V[t][c][a] for the tiles of one chunk (f = t when paired,
// else k; U then holds the chunk's own filters), each product rounded by `rp`, each sum by `ra`.
template <class RP, class RA>
void accumulate(const double* U, const double* V, int64_t tiles, int64_t C, int64_t K, int64_t nn, bool paired,
                double* M, RP rp, RA ra) {
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t f = paired ? t : k;
      double* acc = M + (t * K + k) * nn;
      for (int64_t a = 0; a < nn; ++a) acc[a] = 0.0;
      for (int64_t c = 0; c < C; ++c) {
        const double* u = U + (f * C + c) * nn;
        const double* v = V + (t * C + c) * nn;
        for (int64_t a = 0; a < nn; ++a) acc[a] = ra(acc[a] + rp(u[a] * v[a]));
      }
    }
}

// As accumulate, over chunks of L channels: each chunk's sum starts from zero and is rounded by `ra`
// after every step; the chunk sums are added in channel order into M, each sum rounded by `rc`.
template <class RP, class RA, class RC>
void accumulate_chunked(const double* U, const double* V, int64_t tiles, int64_t C, int64_t K, int64_t nn,
                        bool paired, int64_t L, double* M, RP rp, RA ra, RC rc) {
  std::vector<double> part(static_cast<std::size_t>(nn));
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t f = paired ? t : k;
      double* acc = M + (t * K + k) * nn;
      for (int64_t a = 0; a < nn; ++a) acc[a] = 0.0;
      for (int64_t c0 = 0; c0 < C; c0 += L) {
        for (int64_t a = 0; a < nn; ++a) part[static_cast<std::size_t>(a)] = 0.0;
        for (int64_t c = c0; c < std::min(C, c0 + L); ++c) {
          const double* u = U + (f * C + c) * nn;
          const double* v = V + (t * C + c) * nn;
          for (int64_t a = 0; a < nn; ++a) {
            double& p = part[static_cast<std::size_t>(a)];
            p = ra(p + rp(u[a] * v[a]));
          }
        }
        for (int64_t a = 0; a < nn; ++a) acc[a] = rc(acc[a] + part[static_cast<std::size_t>(a)]);
      }
    }
}

// A rounding functor for a floating format (fp64: none).
template <class F>
void with_rounding(Format f, const F& body) {
  if (f == Format::kFp64)
    body(detail::NoRound{});
  else
    body(detail::KernelRound{detail::float_kernel(f, Overflow::kIeee)});
}

template <class RP>
void accumulate_with(Format acc, const double* U, const double* V, int64_t tiles, int64_t C, int64_t K, int64_t nn,
                     bool paired, double* M, RP rp) {
  // int32 accumulation of integer codes is exact; with the scales constant along c (checked by the
  // model) it equals exact accumulation of the dequantized products, which float64 carries out up
  // to its own rounding (relative 1e-16, far below any integer format's error).
  if (acc == Format::kFp64 || acc == Format::kInt32)
    accumulate(U, V, tiles, C, K, nn, paired, M, rp, detail::NoRound{});
  else
    accumulate(U, V, tiles, C, K, nn, paired, M, rp, detail::KernelRound{detail::float_kernel(acc, Overflow::kIeee)});
}

void accumulate_chunk(const PrecisionModel& model, const double* U, const double* V, int64_t tiles, int64_t C,
                      int64_t K, int64_t nn, bool paired, double* M) {
  if (model.accumulate_chunk > 0) {  // validate() keeps every format here floating
    with_rounding(model.product, [&](auto rp) {
      with_rounding(model.accumulate, [&](auto ra) {
        with_rounding(model.chunk_accumulate, [&](auto rc) {
          accumulate_chunked(U, V, tiles, C, K, nn, paired, model.accumulate_chunk, M, rp, ra, rc);
        });
      });
    });
    return;
  }
  if (model.product == Format::kFp64)
    accumulate_with(model.accumulate, U, V, tiles, C, K, nn, paired, M, detail::NoRound{});
  else
    accumulate_with(model.accumulate, U, V, tiles, C, K, nn, paired, M,
                    detail::KernelRound{detail::float_kernel(model.product, Overflow::kIeee)});
}

// A transformed tensor [T][C][nn] produced chunk by chunk along its tiles, and its stage.
class ChunkedStage {
 public:
  ChunkedStage(const StageFormat& stage, detail::StageAxes axes)
      : stage_(stage), axes_(std::move(axes)), group_(detail::stage_group_axes(stage, axes_)),
        local_(detail::stage_is_chunk_local(stage, axes_)) {}

  // Whether the stage needs the ranges of the whole tensor before it can be applied to a chunk.
  bool needs_first_pass() const { return !local_; }
  void gather(std::span<const double> chunk, std::span<const int64_t> dims, GroupRanges& ranges) const {
    gather_group_ranges(chunk, dims, group_, ranges);
  }
  void set_ranges(const GroupRanges& ranges) { params_ = choose_group_params(stage_.format, stage_.scheme, ranges); }
  void apply(std::span<double> chunk, std::span<const int64_t> dims) const {
    if (local_)
      detail::apply_stage(stage_, chunk, dims, axes_);
    else
      apply_group_params(stage_.format, params_, chunk, dims, group_);
  }

 private:
  StageFormat stage_;
  detail::StageAxes axes_;
  std::vector<int> group_;
  bool local_;
  std::vector<QuantParams> params_;
};

// Matrices per chunk: a few hundred KB of doubles per buffer, so that a chunk's transforms and
// products run in cache.
constexpr int64_t kChunkValues = 32768;

std::vector<double> prepared_matrix(const std::vector<double>& m, Format f) {
  std::vector<double> out = m;
  if (is_integer_format(f)) {
    const int64_t dims[] = {static_cast<int64_t>(out.size())};
    fake_quantize_grouped(f, QuantScheme::kSymmetric, out, dims, {});
  } else {
    round_in_place(f, out);
  }
  return out;
}

}  // namespace

double v_gain_bound(const TransformF64& t) {
  double largest = 0.0;
  for (int i = 0; i < t.n; ++i) {
    double l1 = 0.0;
    for (int j = 0; j < t.n; ++j) l1 += std::abs(t.bt(i, j));
    largest = std::max(largest, l1);
  }
  return largest * largest * (1.0 + std::ldexp(1.0, -12));
}

namespace {

// The V shift of a v_shift model (nova/numerics/fp16_v_shift.hpp) on stored tiles d.
int model_v_shift(const TransformF64& t, const PrecisionModel& model, const std::vector<double>& d) {
  if (!model.v_shift) return 0;
  double amax = 0.0;
  for (double x : d) {
    if (std::isnan(x)) return 0;  // NaN data: no shift, as the engines
    amax = std::max(amax, std::abs(x));
  }
  const bool chunked_16bit = model.accumulate_chunk > 0 && !is_integer_format(model.accumulate) &&
                             storage_bits(model.accumulate) <= 16;
  const double limit =
      chunked_16bit ? kFp16VLimitFp16Sums : format_info(model.input_transform.format).max_finite;
  return fp16_v_shift(v_gain_bound(t), amax, limit);
}

}  // namespace

std::vector<double> emulate_winograd(const TransformF64& t, const PrecisionModel& model,
                                     const std::vector<double>& d, const std::vector<double>& g, int64_t T,
                                     int64_t C, int64_t F, bool paired, const std::vector<uint8_t>* valid) {
  model.validate();
  const int m = t.m, r = t.r, n = t.n;
  const int64_t nn = int64_t{n} * n, rr = int64_t{r} * r, mm = int64_t{m} * m;
  if (T < 1 || C < 1 || F < 1) throw Error("Winograd emulation: zero-size data");
  // Saturating products: counts whose product overflows match no vector's size.
  if (static_cast<int64_t>(d.size()) != detail::saturating_product({T, C, nn}) ||
      static_cast<int64_t>(g.size()) != detail::saturating_product({F, C, rr}))
    throw Error("Winograd emulation: data sizes do not match the tile");
  if (paired && F != T) throw Error("Winograd emulation: paired tiles need one filter per tile");
  const int64_t K = paired ? 1 : F;
  detail::check_harness_values(fmt::format("{} tiles x {} filters of F({},{})", T, K, m, r),
                               detail::saturating_product({T, K, nn + mm}));

  const std::vector<double> AT = prepared_matrix(t.AT, model.matrices);
  const std::vector<double> G = prepared_matrix(t.G, model.matrices);
  const std::vector<double> BT = prepared_matrix(t.BT, model.matrices);

  // Layer data: the K filters are shared by every tile, transformed and staged once.
  std::vector<double> shared_U;
  if (!paired) {
    shared_U.resize(static_cast<std::size_t>(F * C * nn));
    sandwich(model.transform_arith, G, n, r, g.data(), F * C, shared_U.data());
    const int64_t dims[] = {F, C, nn};
    detail::apply_stage(model.filter_transform, shared_U, dims, {{0}, {2}, {0, 1}});
  }
  // V [T][C][nn]: channel axis 1, tap axis 2, tile (per patch) axes 0 and 1. Paired data's U has
  // the same shape, its "output channel" being the tile's own filter (axis 0).
  ChunkedStage v_stage(model.input_transform, {{1}, {2}, {0, 1}});
  ChunkedStage u_stage(model.filter_transform, {{0}, {2}, {0, 1}});
  const bool u_streamed = paired;
  const int64_t chunk_tiles = std::max<int64_t>(1, kChunkValues / (C * nn));
  const int64_t min_tiles_per_thread = std::max<int64_t>(1, kMinBatchPerThread / C);
  auto transform_chunk = [&](const std::vector<double>& L, int I, const std::vector<double>& src, int64_t t0,
                             int64_t tiles, std::vector<double>& out) {
    out.resize(static_cast<std::size_t>(tiles * C * nn));
    detail::sandwich_range(model.transform_arith, L, n, I, src.data() + t0 * C * I * I, tiles * C, out.data());
  };
  // V * 2^-shift (exact in float64), and the sums times 2^shift after the GEMM.
  const int v_shift = model_v_shift(t, model, d);
  auto shift_v = [&](std::vector<double>& v) {
    if (v_shift != 0)
      for (double& x : v) x = std::ldexp(x, -v_shift);
  };

  // First pass, only for stages whose scales span tiles: their ranges over all tiles.
  const bool v_first = v_stage.needs_first_pass(), u_first = u_streamed && u_stage.needs_first_pass();
  if (v_first || u_first) {
    GroupRanges v_ranges, u_ranges;
    std::mutex merge;
    detail::parallel_for(T, min_tiles_per_thread, [&](int64_t t_begin, int64_t t_end) {
      GroupRanges v_local, u_local;
      std::vector<double> buf;
      for (int64_t t0 = t_begin; t0 < t_end; t0 += chunk_tiles) {
        const int64_t tiles = std::min(chunk_tiles, t_end - t0);
        const int64_t dims[] = {tiles, C, nn};
        if (v_first) {
          transform_chunk(BT, n, d, t0, tiles, buf);
          shift_v(buf);
          v_stage.gather(buf, dims, v_local);
        }
        if (u_first) {
          transform_chunk(G, r, g, t0, tiles, buf);
          u_stage.gather(buf, dims, u_local);
        }
      }
      const std::lock_guard<std::mutex> lock(merge);  // min, max and or: the merge order does not matter
      v_ranges.merge(v_local);
      u_ranges.merge(u_local);
    });
    if (v_first) v_stage.set_ranges(v_ranges);
    if (u_first) u_stage.set_ranges(u_ranges);
  }

  // Second pass: transform, stage and multiply-accumulate chunk by chunk.
  std::vector<double> M(static_cast<std::size_t>(T * K * nn));
  detail::parallel_for(T, min_tiles_per_thread, [&](int64_t t_begin, int64_t t_end) {
    std::vector<double> v, u;
    for (int64_t t0 = t_begin; t0 < t_end; t0 += chunk_tiles) {
      const int64_t tiles = std::min(chunk_tiles, t_end - t0);
      const int64_t dims[] = {tiles, C, nn};
      transform_chunk(BT, n, d, t0, tiles, v);
      shift_v(v);
      v_stage.apply(v, dims);
      if (u_streamed) {
        transform_chunk(G, r, g, t0, tiles, u);
        u_stage.apply(u, dims);
      }
      accumulate_chunk(model, u_streamed ? u.data() : shared_U.data(), v.data(), tiles, C, K, nn, paired,
                       M.data() + t0 * K * nn);
    }
  });
  if (v_shift != 0)
    for (double& x : M) x = std::ldexp(x, v_shift);
  {
    const int64_t dims[] = {T, K, nn};
    detail::apply_stage(model.gemm_output, M, dims, {{1}, {}, {}});
  }

  std::vector<double> Y(static_cast<std::size_t>(T * K * mm));
  sandwich(model.output_arith, AT, m, n, M.data(), T * K, Y.data());
  {
    // Outputs beyond the layer took part in the per-tensor / per-channel output scales: one large
    // cropped output (the zero-extended input under a filter's first row) set the int8 step of the
    // whole tensor (an int8 output measured 0.50 instead of 0.0069). Zero is in every range anyway.
    if (valid) detail::clear_invalid_outputs(*valid, T, K, mm, Y);
    const int64_t dims[] = {T, K, mm};
    detail::apply_stage(model.output, Y, dims, {{1}, {}, {}});
  }
  return Y;
}

}  // namespace nova
