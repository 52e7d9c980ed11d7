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

std::vector<QuantParams> fake_quantize_grouped(Format f, QuantScheme scheme, std::span<double> data,
                                               std::span<const int64_t> dims, std::span<const int> group_axes) {
  if (dims.empty() || dims.size() > 4) throw Error("fake_quantize_grouped: a tensor needs 1 to 4 axes");
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 1) throw Error("fake_quantize_grouped: zero-size tensor");
    total *= d;
  }
  if (static_cast<int64_t>(data.size()) != total)
    throw Error("fake_quantize_grouped: data size " + std::to_string(data.size()) + " does not match the shape");
  // Pad the shape to 4 axes; an element's group is its index along the group axes, row-major.
  int64_t dim4[4] = {1, 1, 1, 1};
  const std::size_t off = 4 - dims.size();
  for (std::size_t a = 0; a < dims.size(); ++a) dim4[off + a] = dims[a];
  int64_t gstride[4] = {0, 0, 0, 0};
  int64_t groups = 1;
  for (auto it = group_axes.rbegin(); it != group_axes.rend(); ++it) {
    const int a = *it;
    if (a < 0 || a >= static_cast<int>(dims.size())) throw Error("fake_quantize_grouped: bad group axis");
    gstride[off + static_cast<std::size_t>(a)] = groups;
    groups *= dims[static_cast<std::size_t>(a)];
  }
  std::vector<double> lo(static_cast<std::size_t>(groups), 0.0), hi(static_cast<std::size_t>(groups), 0.0);
  auto for_each = [&](auto&& fn) {
    int64_t idx = 0;
    for (int64_t i0 = 0; i0 < dim4[0]; ++i0)
      for (int64_t i1 = 0; i1 < dim4[1]; ++i1)
        for (int64_t i2 = 0; i2 < dim4[2]; ++i2) {
          const int64_t gbase = i0 * gstride[0] + i1 * gstride[1] + i2 * gstride[2];
          for (int64_t i3 = 0; i3 < dim4[3]; ++i3, ++idx) fn(idx, static_cast<std::size_t>(gbase + i3 * gstride[3]));
        }
  };
  std::vector<uint8_t> broken(static_cast<std::size_t>(groups), 0);
  for_each([&](int64_t idx, std::size_t g) {
    const double v = data[static_cast<std::size_t>(idx)];
    broken[g] |= std::isfinite(v) ? 0 : 1;
    lo[g] = v < lo[g] ? v : lo[g];
    hi[g] = v > hi[g] ? v : hi[g];
  });
  // A group holding inf or NaN (an earlier stage overflowed) has no usable scale: as in a real
  // pipeline, whose amax would be inf, all its values become NaN, and the harness counts them.
  std::vector<QuantParams> params(static_cast<std::size_t>(groups));
  for (std::size_t g = 0; g < params.size(); ++g)
    params[g] = broken[g] ? QuantParams{std::nan(""), 0.0} : choose_quant_params(f, scheme, lo[g], hi[g]);
  for_each([&](int64_t idx, std::size_t g) {
    double& v = data[static_cast<std::size_t>(idx)];
    v = broken[g] ? std::nan("") : fake_quantize(f, params[g], v);
  });
  return params;
}

}  // namespace nova
