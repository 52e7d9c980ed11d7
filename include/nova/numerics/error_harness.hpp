// The error harness: emulates a Winograd convolution stage by stage under a PrecisionModel and
// compares it with the float64 direct convolution (reference_conv.hpp).
//
// Two kinds of data:
//  - tiles: independent (n x n input patch, r x r filter) pairs with C channels each, every pair its
//    own filter; one m x m output per pair. Quantization "per tensor" spans the whole dataset.
//  - layer: a real convolution layer (N, C, H, W) * (K, C, r, r), stride 1, "same" zero padding
//    (r-1)/2, cut into m x m output tiles; partial edge tiles are computed on zero-extended input
//    and cropped, as an engine does.
// The harness is deterministic: the same dataset, model and transform give the same bits.
//
// Metrics over all outputs compared (cropped to the layer's output):
//   rel_l2       ||y - y_ref||_2 / ||y_ref||_2 (||y - y_ref||_2 when y_ref is all 0)
//   max_abs      max |y - y_ref|
//   elementwise  mean over outputs with y_ref != 0 of |y - y_ref| / |y_ref|: the seed paper's
//                Table 10 metric; NaN when every y_ref is 0. Caveat: dominated by outputs that
//                happen to be near zero (the denominator), so its absolute value says little;
//                compare ratios at best.
//   rel_l2, max_abs and elementwise are +inf when any output is inf or NaN: an unbounded error,
//   whatever the other outputs' errors. JSON writers give them as null (the counts say why).
//   nan_count, inf_count   non-finite outputs
//
// Size limit: the float64 arrays of one dataset and its evaluation together (the data, the
// evaluator's stored copy and references, the emulation's products and outputs) may hold at most
// kMaxHarnessValues values, 4 GiB: a run several times over it would not fit a workstation's
// memory. Larger requests, and sizes whose products overflow, are refused with a nova::Error
// naming the sizes, before anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nova/conv_shape.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova {

inline constexpr int64_t kMaxHarnessValues = int64_t{1} << 29;

enum class DataKind {
  kGaussian,  // N(0, 1) activations and weights
  kRelu,      // max(0, N(0, 1)) activations (post-activation), N(0, 1) weights
  kUniform,   // uniform [-1, 1] activations and weights (the seed's Table 20)
};
DataKind parse_data_kind(std::string_view text);  // "gaussian" | "relu" | "uniform"
std::string_view to_string(DataKind kind);

// Fills `out` from a generator defined here (splitmix64 + Box-Muller), so that a seed names the
// same numbers on every platform with the same libm.
void generate(DataKind kind, bool weights, uint64_t seed, std::vector<double>& out);

struct TileDataset {
  TileSize tile;
  int64_t tiles = 0, channels = 0;
  std::vector<double> d;  // [tiles][C][n][n]
  std::vector<double> g;  // [tiles][C][r][r]
  std::string source;     // "gaussian seed 1", for reports
};
TileDataset make_tile_dataset(TileSize tile, DataKind kind, int64_t tiles, int64_t channels, uint64_t seed);

struct LayerDataset {
  ConvShape shape;              // stride 1, dilation 1, groups 1, padding (R-1)/2
  std::vector<double> input;    // NCHW
  std::vector<double> weights;  // KCRS
  std::string source;
};
// Shape: N, C, H, W, K and the filter size r (R = S = r, odd). Throws nova::Error on a bad shape.
LayerDataset make_layer_dataset(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int r, DataKind kind,
                                uint64_t seed);
// Real data from .npy files: input [N, C, H, W] or [C, H, W]; weights [K, C, r, r]. With no weights
// file, K Gaussian filters of size r are generated from `seed`. Throws nova::Error on a wrong
// dtype, rank or a channel count that does not match.
LayerDataset load_layer_dataset(const std::string& input_npy, const std::string& weights_npy, int64_t K, int r,
                                uint64_t seed);

struct ErrorMetrics {
  int64_t count = 0;
  double rel_l2 = 0;
  double max_abs = 0;
  double elementwise = 0;
  int64_t nan_count = 0, inf_count = 0;
  double reference_rms = 0;  // sqrt(mean y_ref^2), to put max_abs in scale
};

// Holds a dataset prepared for one model (stored data, reference outputs, tiles cut for the tile
// size) and scores transforms of that tile size on it. Reusable by search: evaluate() is const
// and deterministic.
class ErrorEvaluator {
 public:
  // Takes the tile data over: pass an rvalue (std::move) to spare a copy of a large dataset.
  ErrorEvaluator(TileDataset data, const PrecisionModel& model);
  ErrorEvaluator(const LayerDataset& data, const PrecisionModel& model, TileSize tile);

  // Throws nova::Error when the transform's tile differs from the evaluator's.
  ErrorMetrics evaluate(const TransformF64& t) const;
  // rel_l2 (+inf when any output is not finite): the objective of error-driven discovery.
  double score(const TransformF64& t) const { return evaluate(t).rel_l2; }
  // The baseline: a direct convolution of the same stored d and g, each product rounded to the
  // model's `product` format and each partial sum (over c, then the filter rows and columns) to
  // its `accumulate` format (int32: exact), then the `output` stage. What the model's precision
  // costs without Winograd.
  ErrorMetrics evaluate_direct() const;

  TileSize tile() const { return tile_; }
  int64_t tiles() const { return tiles_; }
  int64_t channels() const { return channels_; }
  int64_t outputs_per_tile() const { return outputs_; }
  const PrecisionModel& model() const { return model_; }

 private:
  void prepare_layer(const LayerDataset& data);
  // Throws nova::Error when a reference output is not finite; `overflowed`: finite data values that
  // the input/filter stages stored as inf or NaN (tile data, stored reference), named in the message.
  void check_reference(int64_t overflowed = 0) const;
  ErrorMetrics compare(const std::vector<double>& y) const;
  PrecisionModel model_;
  TileSize tile_;
  bool paired_ = true;          // tiles: filter t belongs to tile t; layer: K shared filters
  int64_t tiles_ = 0, channels_ = 0, outputs_ = 1;
  std::vector<double> d_;       // stored input tiles [T][C][n*n]
  std::vector<double> g_;       // stored filters [F][C][r*r]
  std::vector<double> ref_;     // reference [T][outputs][m*m]
  std::vector<uint8_t> valid_;  // [T][m*m]: 1 where the output lies inside the layer (all 1 for tiles)
};

// The emulated Winograd pipeline itself, exposed for the engine's tests: stored input tiles
// d [T][C][n*n], stored filters g [F][C][r*r] (F = T when paired, else K), result [T][K'][m*m]
// with K' = 1 when paired, else K. Applies every stage of `model` after input and filter.
// `valid` [T][m*m], when given, marks the outputs that lie inside the layer: the others (the cropped
// part of an edge tile) are no part of the output tensor, so they are set to 0 before the output
// stage and do not enter its quantization scales.
// |V| <= v_gain_bound(t) * max|d| for V = B^T d B: the square of the largest L1 norm of a row of B^T, with a
// margin for roundings (2^-12). The gain of the fp16 V shift (nova/numerics/fp16_v_shift.hpp).
double v_gain_bound(const TransformF64& t);

std::vector<double> emulate_winograd(const TransformF64& t, const PrecisionModel& model,
                                     const std::vector<double>& d, const std::vector<double>& g,
                                     int64_t tiles, int64_t channels, int64_t filters, bool paired,
                                     const std::vector<uint8_t>* valid = nullptr);

}  // namespace nova
