// Linear quantization: real values to codes of an integer format (or to a scaled floating format,
// as FP8 pipelines do) and back.
//
//   symmetric: code = round(x / s),      s = amax / qmax          (int8: codes in [-127, 127])
//   affine:    code = round(x / s) + z,  s = (hi - lo) / (qmax - qmin), z = round(qmin - lo / s)
// with round-to-nearest-even and saturation to the format's range. The range [lo, hi] always
// contains 0 so that zero (padding, ReLU output) is exact. For a floating format only the symmetric
// scheme exists: s = amax / max_finite, so the largest magnitude lands on the largest finite value.
// A tensor of zeros gets s = 1. Scales are float64 (the harness measures the formats, not the
// scale's own storage).
//
// Granularity names where a scale varies; what an axis means depends on the tensor (see
// precision_model.hpp): per tensor, per channel, per Winograd position ("tap"), per tile.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nova/numerics/format.hpp"

namespace nova {

enum class QuantScheme { kSymmetric, kAffine };
// kTapChannel: one scale per (Winograd position, channel) pair: U per tap x output channel, the
// granularity of the engine's int8 filters.
enum class Granularity { kTensor, kChannel, kTap, kTile, kTapChannel };

std::string_view to_string(QuantScheme s);
std::string_view to_string(Granularity g);
QuantScheme parse_quant_scheme(std::string_view text);  // "symmetric" | "affine"
Granularity parse_granularity(std::string_view text);   // "tensor" | "channel" | "tap" | "tile" | "tap-channel"

struct QuantParams {
  double scale = 1.0;
  double zero_point = 0.0;  // an integer value; 0 for symmetric
};

// Scale (and zero point) for values in [lo, hi]. Throws nova::Error for an affine floating
// format, lo > hi, or a non-finite range (a tensor that already overflowed cannot be quantized).
QuantParams choose_quant_params(Format f, QuantScheme scheme, double lo, double hi);

double quantize(Format f, const QuantParams& p, double x);  // the code (saturating)
double dequantize(const QuantParams& p, double code);
inline double fake_quantize(Format f, const QuantParams& p, double x) { return dequantize(p, quantize(f, p, x)); }

// Quantizes `data` in place (replacing each value by its dequantized code), a dense row-major
// tensor of shape `dims` (1 to 4 axes), with one scale per combination of the indices along
// `group_axes` (empty: one scale for the whole tensor). Returns the parameters, row-major over the
// group axes. A group that holds inf or NaN gets a NaN scale and all-NaN values (an earlier stage
// overflowed; a real pipeline's scale would be inf). Throws nova::Error on empty data, a shape
// that does not match, or a bad axis.
std::vector<QuantParams> fake_quantize_grouped(Format f, QuantScheme scheme, std::span<double> data,
                                               std::span<const int64_t> dims, std::span<const int> group_axes);

// The same in two steps, for tensors processed in chunks along axis 0 (the error harness streams
// its tiles): the value range of every group is gathered over all chunks first, then each chunk
// is quantized with the parameters chosen from the whole. Needs group axes that exclude axis 0,
// so that a chunk's groups are the tensor's groups; `dims` are the chunk's.
struct GroupRanges {
  std::vector<double> lo, hi;   // per group; start at 0 (the range always contains zero)
  std::vector<uint8_t> broken;  // 1 where the group holds inf or NaN
  void merge(const GroupRanges& other);
};
// Adds the ranges of one chunk (resizing `ranges` on first use).
void gather_group_ranges(std::span<const double> data, std::span<const int64_t> dims, std::span<const int> group_axes,
                         GroupRanges& ranges);
std::vector<QuantParams> choose_group_params(Format f, QuantScheme scheme, const GroupRanges& ranges);
// Quantizes one chunk with parameters from choose_group_params (a NaN scale: the group is broken,
// its values become NaN).
void apply_group_params(Format f, std::span<const QuantParams> params, std::span<double> data,
                        std::span<const int64_t> dims, std::span<const int> group_axes);

}  // namespace nova
