#include "nova/numerics/quantization.hpp"

#include <cmath>
#include <string>

#include "nova/error.hpp"

namespace nova {

std::string_view to_string(QuantScheme s) { return s == QuantScheme::kSymmetric ? "symmetric" : "affine"; }

std::string_view to_string(Granularity g) {
  switch (g) {
    case Granularity::kTensor: return "tensor";
    case Granularity::kChannel: return "channel";
    case Granularity::kTap: return "tap";
    case Granularity::kTile: return "tile";
    case Granularity::kTapChannel: return "tap-channel";
  }
  return "tensor";
}

QuantScheme parse_quant_scheme(std::string_view text) {
  if (text == "symmetric") return QuantScheme::kSymmetric;
  if (text == "affine") return QuantScheme::kAffine;
  throw Error("unknown quantization scheme '" + std::string(text) + "' (valid: symmetric, affine)");
}

Granularity parse_granularity(std::string_view text) {
  if (text == "tensor") return Granularity::kTensor;
  if (text == "channel") return Granularity::kChannel;
  if (text == "tap") return Granularity::kTap;
  if (text == "tile") return Granularity::kTile;
  if (text == "tap-channel") return Granularity::kTapChannel;
  throw Error("unknown quantization granularity '" + std::string(text) +
              "' (valid: tensor, channel, tap, tile, tap-channel)");
}

QuantParams choose_quant_params(Format f, QuantScheme scheme, double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw Error("cannot choose a " + std::string(format_name(f)) +
                " quantization scale: the values contain inf or NaN (an earlier stage overflowed)");
  if (lo > hi) throw Error("quantization range is empty (lo > hi)");
  const FormatInfo& i = format_info(f);
  if (f == Format::kFp64) return {};
  // Zero must be exact (padding, ReLU zeros), so the range always contains it.
  lo = std::fmin(lo, 0.0);
  hi = std::fmax(hi, 0.0);
  QuantParams p;
  if (scheme == QuantScheme::kSymmetric) {
    const double amax = std::fmax(-lo, hi);
    // Integer codes use [-qmax, qmax] so that the grid is symmetric (int8: -127..127, as in the
    // seed paper's s = max|x| / 127); floating formats map amax to their largest finite value.
    p.scale = amax > 0 ? amax / i.max_finite : 1.0;
  } else {
    if (!i.is_integer)
      throw Error("affine quantization needs an integer format, not " + std::string(format_name(f)));
    const double qmin = i.min_value, qmax = i.max_finite;
    if (hi - lo == 0) return {};
    p.scale = (hi - lo) / (qmax - qmin);
    p.zero_point = std::fmin(qmax, std::fmax(qmin, std::nearbyint(qmin - lo / p.scale)));
  }
  if (!(p.scale > 0) || !std::isfinite(p.scale))
    throw Error("quantization scale for " + std::string(format_name(f)) + " is not a positive finite number");
  return p;
}

double quantize(Format f, const QuantParams& p, double x) {
  if (is_integer_format(f)) return round_to(f, x / p.scale + p.zero_point);
  // Scaled floating formats saturate: a scale chosen from the data never overflows, and a value
  // beyond the calibrated range is clamped as FP8 recipes do.
  return round_to(f, x / p.scale, Overflow::kSaturate);
}

double dequantize(const QuantParams& p, double code) { return (code - p.zero_point) * p.scale; }

namespace {

// A dense row-major tensor of 1 to 4 axes and the group (a combination of indices along the group
// axes, row-major) of each of its elements.
struct GroupedLayout {
  int64_t dim4[4] = {1, 1, 1, 1};
  int64_t gstride[4] = {0, 0, 0, 0};
  int64_t groups = 1;

  GroupedLayout(std::size_t size, std::span<const int64_t> dims, std::span<const int> group_axes) {
    if (dims.empty() || dims.size() > 4) throw Error("fake_quantize_grouped: a tensor needs 1 to 4 axes");
    int64_t total = 1;
    for (int64_t d : dims) {
      if (d < 1) throw Error("fake_quantize_grouped: zero-size tensor");
      total *= d;
    }
    if (static_cast<int64_t>(size) != total)
      throw Error("fake_quantize_grouped: data size " + std::to_string(size) + " does not match the shape");
    // Pad the shape to 4 axes.
    const std::size_t off = 4 - dims.size();
    for (std::size_t a = 0; a < dims.size(); ++a) dim4[off + a] = dims[a];
    for (auto it = group_axes.rbegin(); it != group_axes.rend(); ++it) {
      const int a = *it;
      if (a < 0 || a >= static_cast<int>(dims.size())) throw Error("fake_quantize_grouped: bad group axis");
      gstride[off + static_cast<std::size_t>(a)] = groups;
      groups *= dims[static_cast<std::size_t>(a)];
    }
  }

  // fn(element index, group index) for every element in order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    int64_t idx = 0;
    for (int64_t i0 = 0; i0 < dim4[0]; ++i0)
      for (int64_t i1 = 0; i1 < dim4[1]; ++i1)
        for (int64_t i2 = 0; i2 < dim4[2]; ++i2) {
          const int64_t gbase = i0 * gstride[0] + i1 * gstride[1] + i2 * gstride[2];
          for (int64_t i3 = 0; i3 < dim4[3]; ++i3, ++idx)
            fn(static_cast<std::size_t>(idx), static_cast<std::size_t>(gbase + i3 * gstride[3]));
        }
  }
};

}  // namespace

void GroupRanges::merge(const GroupRanges& other) {
  if (lo.empty()) {
    *this = other;
    return;
  }
  if (other.lo.size() != lo.size()) throw Error("GroupRanges::merge: different group counts");
  for (std::size_t g = 0; g < lo.size(); ++g) {
    lo[g] = std::fmin(lo[g], other.lo[g]);
    hi[g] = std::fmax(hi[g], other.hi[g]);
    broken[g] |= other.broken[g];
  }
}

void gather_group_ranges(std::span<const double> data, std::span<const int64_t> dims, std::span<const int> group_axes,
                         GroupRanges& r) {
  const GroupedLayout layout(data.size(), dims, group_axes);
  const auto groups = static_cast<std::size_t>(layout.groups);
  if (r.lo.empty()) {
    r.lo.assign(groups, 0.0);
    r.hi.assign(groups, 0.0);
    r.broken.assign(groups, 0);
  } else if (r.lo.size() != groups) {
    throw Error("gather_group_ranges: a chunk with a different group count");
  }
  layout.for_each([&](std::size_t idx, std::size_t g) {
    const double v = data[idx];
    r.broken[g] |= std::isfinite(v) ? 0 : 1;
    r.lo[g] = v < r.lo[g] ? v : r.lo[g];
    r.hi[g] = v > r.hi[g] ? v : r.hi[g];
  });
}

std::vector<QuantParams> choose_group_params(Format f, QuantScheme scheme, const GroupRanges& r) {
  // A group holding inf or NaN (an earlier stage overflowed) has no usable scale: as in a real
  // pipeline, whose amax would be inf, all its values become NaN, and the harness counts them.
  std::vector<QuantParams> params(r.lo.size());
  for (std::size_t g = 0; g < params.size(); ++g)
    params[g] = r.broken[g] ? QuantParams{std::nan(""), 0.0} : choose_quant_params(f, scheme, r.lo[g], r.hi[g]);
  return params;
}

void apply_group_params(Format f, std::span<const QuantParams> params, std::span<double> data,
                        std::span<const int64_t> dims, std::span<const int> group_axes) {
  const GroupedLayout layout(data.size(), dims, group_axes);
  if (static_cast<int64_t>(params.size()) != layout.groups)
    throw Error("apply_group_params: the parameters do not match the groups");
  layout.for_each([&](std::size_t idx, std::size_t g) {
    double& v = data[idx];
    v = std::isnan(params[g].scale) ? std::nan("") : fake_quantize(f, params[g], v);
  });
}

std::vector<QuantParams> fake_quantize_grouped(Format f, QuantScheme scheme, std::span<double> data,
                                               std::span<const int64_t> dims, std::span<const int> group_axes) {
  GroupRanges ranges;
  gather_group_ranges(data, dims, group_axes, ranges);
  std::vector<QuantParams> params = choose_group_params(f, scheme, ranges);
  apply_group_params(f, params, data, dims, group_axes);
  return params;
}

}  // namespace nova
