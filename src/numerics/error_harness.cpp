// The error evaluator: prepares stored data and float64 references once, then scores transforms.
#include "nova/numerics/error_harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "nova/error.hpp"
#include "nova/numerics/reference_conv.hpp"
#include "numerics/harness_size.hpp"
#include "numerics/parallel_for.hpp"
#include "numerics/stage.hpp"

namespace nova {

ErrorEvaluator::ErrorEvaluator(TileDataset data, const PrecisionModel& model)
    : model_(model), tile_(data.tile), paired_(true), tiles_(data.tiles), channels_(data.channels), outputs_(1) {
  model_.validate();
  const int n = tile_.n(), m = tile_.m, r = tile_.r;
  const int64_t T = tiles_, C = channels_;
  if (T < 1 || C < 1) throw Error("error harness: zero-size tile dataset");
  detail::check_tile_working_set(tile_, T, C);  // bounds every product below
  if (static_cast<int64_t>(data.d.size()) != T * C * n * n || static_cast<int64_t>(data.g.size()) != T * C * r * r)
    throw Error("error harness: tile dataset sizes do not match its tile");
  // The data is taken over (moved in by callers that are done with it) and staged in place; the
  // reference is computed from the stored or the original values as the model says.
  const bool reference_from_original = model_.reference == ReferenceData::kOriginal;
  auto stage_inputs = [&] {
    const int64_t ddims[] = {T, C, int64_t{n} * n};
    detail::apply_stage(model_.input, data.d, ddims, {{1}, {}, {}});
    const int64_t gdims[] = {T, C, int64_t{r} * r};
    detail::apply_stage(model_.filter, data.g, gdims, {{0}, {}, {}});
  };
  // Finite data that the stages store as inf or NaN (beyond fp16's 65504): a stored reference is
  // then not finite, and the error says so rather than blaming the data.
  const auto non_finite = [&] {
    const auto bad = [](double v) { return !std::isfinite(v); };
    return std::count_if(data.d.begin(), data.d.end(), bad) +
           std::count_if(data.g.begin(), data.g.end(), bad);
  };
  int64_t overflowed = 0;
  if (!reference_from_original) {
    overflowed = -non_finite();
    stage_inputs();
    overflowed += non_finite();
  }
  // Each pair is its own convolution: C x n x n input, one r x r filter, no padding, m x m output.
  ConvShape s;
  s.C = C;
  s.H = s.W = n;
  s.R = s.S = r;
  s.pad_h = s.pad_w = 0;
  ref_.resize(static_cast<std::size_t>(T * m * m));
  const auto in_size = static_cast<std::size_t>(C * n * n), w_size = static_cast<std::size_t>(C * r * r);
  const auto out_size = static_cast<std::size_t>(m * m);
  detail::parallel_for(T, std::max<int64_t>(1, (int64_t{1} << 16) / (C * m * m)), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      reference_conv2d(s, std::span<const double>(data.d).subspan(static_cast<std::size_t>(t) * in_size, in_size),
                       std::span<const double>(data.g).subspan(static_cast<std::size_t>(t) * w_size, w_size), {},
                       std::span<double>(ref_).subspan(static_cast<std::size_t>(t) * out_size, out_size));
  });
  if (reference_from_original) stage_inputs();
  d_ = std::move(data.d);
  g_ = std::move(data.g);
  valid_.assign(static_cast<std::size_t>(T * m * m), 1);
  check_reference(overflowed);
}

ErrorEvaluator::ErrorEvaluator(const LayerDataset& data, const PrecisionModel& model, TileSize tile)
    : model_(model), tile_(tile), paired_(false) {
  model_.validate();
  validate_tile(tile_);
  prepare_layer(data);
  check_reference();
}

void ErrorEvaluator::prepare_layer(const LayerDataset& data) {
  const ConvShape& s = data.shape;
  s.validate();
  if (s.stride != 1 || s.dilation != 1 || s.groups != 1 || s.R != tile_.r || s.S != tile_.r)
    throw Error(
        fmt::format("error harness: layer {} does not fit tile {} (needs stride 1, no dilation or groups, "
                    "{}x{} filters)",
                    s.to_string(), tile_.to_string(), tile_.r, tile_.r));
  const int m = tile_.m, n = tile_.n(), r = tile_.r;
  const int64_t OH = s.out_h(), OW = s.out_w();
  const int64_t TH = (OH + m - 1) / m, TW = (OW + m - 1) / m;
  {
    // Checked before the copies below: the data and its stored copy (weights twice more: stored
    // and kept), the reference output, then the tiles' inputs, references, shared transformed
    // filters, products and outputs.
    using detail::saturating_product, detail::saturating_sum;
    const int64_t nn = int64_t{n} * n, mm = int64_t{m} * m, T = saturating_product({s.N, TH, TW});
    const int64_t values =
        saturating_sum({saturating_product({2, s.input_size()}), saturating_product({3, s.K, s.C, s.R, s.S}),
                        saturating_product({s.N, s.K, OH, OW}), saturating_product({T, s.C, nn}),
                        saturating_product({T, s.K, mm}), saturating_product({s.K, s.C, nn}),
                        saturating_product({T, s.K, nn}), saturating_product({T, s.K, mm})});
    detail::check_harness_values(fmt::format("layer {} in {} tiles", s.to_string(), tile_.to_string()),
                                 values);
  }
  if (static_cast<int64_t>(data.input.size()) != s.input_size() ||
      static_cast<int64_t>(data.weights.size()) != s.weight_size())
    throw Error("error harness: layer data sizes do not match its shape");
  tiles_ = s.N * TH * TW;
  channels_ = s.C;
  outputs_ = s.K;

  // Stages on the whole tensors (per tensor / per channel scales are the same on the image as on
  // its tiles), then cut tiles from the stored input.
  std::vector<double> in = data.input, w = data.weights;
  {
    const int64_t dims[] = {s.N, s.C, s.H * s.W};
    detail::apply_stage(model_.input, in, dims, {{1}, {}, {}});
  }
  {
    const int64_t dims[] = {s.K, s.C, int64_t{r} * r};
    detail::apply_stage(model_.filter, w, dims, {{0}, {}, {}});
  }
  g_ = w;
  std::vector<double> ref_out = model_.reference == ReferenceData::kStored
                                    ? reference_conv2d(s, in, w)
                                    : reference_conv2d(s, data.input, data.weights);
  if (model_.reference == ReferenceData::kStored &&
      std::any_of(ref_out.begin(), ref_out.end(), [](double v) { return !std::isfinite(v); })) {
    // The model's input or filter format overflowed (fp16 stores 7e4 as inf): the stored data has no
    // finite convolution there. Those outputs are measured against the convolution of the data as
    // given, so that the emulated outputs (NaN or inf, from the same stored values) are counted and
    // every metric is inf, instead of the harness refusing finite data as if it held inf or NaN.
    const std::vector<double> original = reference_conv2d(s, data.input, data.weights);
    for (std::size_t i = 0; i < ref_out.size(); ++i)
      if (!std::isfinite(ref_out[i])) ref_out[i] = original[i];
  }

  d_.assign(static_cast<std::size_t>(tiles_ * s.C * n * n), 0.0);
  ref_.assign(static_cast<std::size_t>(tiles_ * s.K * m * m), 0.0);
  valid_.assign(static_cast<std::size_t>(tiles_ * m * m), 0);
  for (int64_t b = 0; b < s.N; ++b)
    for (int64_t ty = 0; ty < TH; ++ty)
      for (int64_t tx = 0; tx < TW; ++tx) {
        const int64_t t = (b * TH + ty) * TW + tx;
        for (int64_t c = 0; c < s.C; ++c)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              const int64_t y = ty * m + i - s.pad_h, x = tx * m + j - s.pad_w;
              if (y < 0 || y >= s.H || x < 0 || x >= s.W) continue;  // zero padding and zero extension
              d_[static_cast<std::size_t>(((t * s.C + c) * n + i) * n + j)] =
                  in[static_cast<std::size_t>(((b * s.C + c) * s.H + y) * s.W + x)];
            }
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j) {
            const int64_t y = ty * m + i, x = tx * m + j;
            if (y >= OH || x >= OW) continue;  // the cropped part of an edge tile
            valid_[static_cast<std::size_t>(t * m * m + i * m + j)] = 1;
            for (int64_t k = 0; k < s.K; ++k)
              ref_[static_cast<std::size_t>(((t * s.K + k) * m + i) * m + j)] =
                  ref_out[static_cast<std::size_t>(((b * s.K + k) * OH + y) * OW + x)];
          }
      }
}

ErrorMetrics ErrorEvaluator::evaluate(const TransformF64& t) const {
  if (t.m != tile_.m || t.r != tile_.r || t.n != tile_.n())
    throw Error(fmt::format("error harness: transform F({},{}) does not match the dataset's tile {}", t.m, t.r,
                            tile_.to_string()));
  const int64_t F = paired_ ? tiles_ : outputs_;
  return compare(emulate_winograd(t, model_, d_, g_, tiles_, channels_, F, paired_, &valid_));
}

ErrorMetrics ErrorEvaluator::evaluate_direct() const {
  const int m = tile_.m, n = tile_.n(), r = tile_.r;
  const int64_t mm = int64_t{m} * m, K = outputs_;
  std::vector<double> y(static_cast<std::size_t>(tiles_ * K * mm));
  const auto rp = [f = model_.product](double v) { return round_to(f, v); };
  const Format af = model_.accumulate == Format::kInt32 ? Format::kFp64 : model_.accumulate;
  const auto ra = [af](double v) { return round_to(af, v); };
  for (int64_t t = 0; t < tiles_; ++t)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t f = paired_ ? t : k;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
          double acc = 0;
          bool first = true;
          for (int64_t c = 0; c < channels_; ++c)
            for (int u = 0; u < r; ++u)
              for (int v = 0; v < r; ++v) {
                const double p = rp(g_[static_cast<std::size_t>((f * channels_ + c) * r * r + u * r + v)] *
                                    d_[static_cast<std::size_t>((t * channels_ + c) * n * n + (i + u) * n + j + v)]);
                acc = first ? p : ra(acc + p);
                first = false;
              }
          y[static_cast<std::size_t>((t * K + k) * mm + i * m + j)] = acc;
        }
    }
  detail::clear_invalid_outputs(valid_, tiles_, K, mm, y);  // outside the layer: not in the output's scales
  const int64_t dims[] = {tiles_, K, mm};
  detail::apply_stage(model_.output, y, dims, {{1}, {}, {}});
  return compare(y);
}

void ErrorEvaluator::check_reference(int64_t overflowed) const {
  // A non-finite reference (data that overflows float64, or NaN in .npy data) leaves nothing to
  // measure against: every metric would be inf or NaN whatever the transform.
  const auto bad = std::count_if(ref_.begin(), ref_.end(), [](double v) { return !std::isfinite(v); });
  if (bad > 0 && overflowed > 0)
    throw Error(fmt::format(
        "error harness: the model's input/filter formats store {} finite data values as inf or NaN (beyond "
        "their range), so {} of the {} outputs of the convolution of the stored data (\"reference\": "
        "\"stored\") are not finite; scale the data, or compare with \"reference\": \"original\"",
        overflowed, bad, ref_.size()));
  if (bad > 0)
    throw Error(
        fmt::format("error harness: {} of the float64 reference's {} outputs are inf or NaN (NaN or "
                    "inf in the data, or magnitudes that overflow float64)",
                    bad, ref_.size()));
}

ErrorMetrics ErrorEvaluator::compare(const std::vector<double>& y) const {
  const int64_t mm = int64_t{tile_.m} * tile_.m;
  ErrorMetrics e;
  // Two passes: the first finds the largest |y_ref| and |y - y_ref|, by which the second scales
  // the sums of squares, so that they overflow (to a spurious rel_l2 of 0 or NaN) for no finite
  // data.
  double ref_max = 0, rel_sum = 0;
  int64_t rel_count = 0;
  auto for_each_output = [&](auto&& f) {
    for (int64_t tile = 0; tile < tiles_; ++tile)
      for (int64_t k = 0; k < outputs_; ++k)
        for (int64_t a = 0; a < mm; ++a)
          if (valid_[static_cast<std::size_t>(tile * mm + a)])
            f(static_cast<std::size_t>((tile * outputs_ + k) * mm + a));
  };
  for_each_output([&](std::size_t i) {
    const double yi = y[i], ri = ref_[i];
    ++e.count;
    ref_max = std::max(ref_max, std::fabs(ri));
    if (std::isnan(yi)) {
      ++e.nan_count;
    } else if (std::isinf(yi)) {
      ++e.inf_count;
    } else {
      const double diff = std::fabs(yi - ri);  // inf where finite y and y_ref differ by more than DBL_MAX
      e.max_abs = std::max(e.max_abs, diff);
      if (ri != 0) {
        rel_sum += diff / std::fabs(ri);
        ++rel_count;
      }
    }
  });
  double err2 = 0, ref2 = 0;
  const double ref_scale = ref_max > 0 ? ref_max : 1.0;
  const double err_scale = e.max_abs > 0 && std::isfinite(e.max_abs) ? e.max_abs : 1.0;
  for_each_output([&](std::size_t i) {
    const double ri = ref_[i] / ref_scale;
    ref2 += ri * ri;
    if (std::isfinite(y[i])) {
      const double di = std::fabs(y[i] - ref_[i]) / err_scale;
      err2 += di * di;
    }
  });
  const double ref_norm = ref_scale * std::sqrt(ref2), err_norm = err_scale * std::sqrt(err2);
  e.reference_rms = ref_scale * std::sqrt(ref2 / static_cast<double>(e.count));
  if (e.nan_count + e.inf_count > 0) {
    // A NaN or infinite output is an unbounded error: no metric may report the finite outputs'
    // error alone, which can be 0 when every output overflowed.
    e.rel_l2 = e.max_abs = e.elementwise = HUGE_VAL;
    return e;
  }
  e.rel_l2 = ref_norm > 0 ? err_norm / ref_norm : err_norm;
  // The mean over no outputs (every reference 0) is undefined, not 0.
  e.elementwise =
      rel_count ? rel_sum / static_cast<double>(rel_count) : std::numeric_limits<double>::quiet_NaN();
  return e;
}

}  // namespace nova
