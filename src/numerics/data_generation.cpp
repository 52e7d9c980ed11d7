// Datasets for the error harness: generated (seeded, platform-independent generator) or read
// from .npy files.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/npy.hpp"
#include "numerics/harness_size.hpp"
#include "numerics/parallel_for.hpp"

namespace nova {
namespace {

// splitmix64: tiny, full-period, and defined bit for bit here (std::normal_distribution is not
// the same across standard libraries).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

void check_positive(const char* what, int64_t v) {
  if (v < 1) throw Error(fmt::format("error harness: {} must be at least 1 (got {})", what, v));
}

}  // namespace

DataKind parse_data_kind(std::string_view text) {
  if (text == "gaussian") return DataKind::kGaussian;
  if (text == "relu") return DataKind::kRelu;
  if (text == "uniform") return DataKind::kUniform;
  throw Error("unknown data kind '" + std::string(text) + "' (valid: gaussian, relu, uniform)");
}

std::string_view to_string(DataKind kind) {
  switch (kind) {
    case DataKind::kGaussian: return "gaussian";
    case DataKind::kRelu: return "relu";
    case DataKind::kUniform: return "uniform";
  }
  return "gaussian";
}

void generate(DataKind kind, bool weights, uint64_t seed, std::vector<double>& out) {
  // Weights and activations come from different streams of the same seed. splitmix64's state after
  // k draws is the start plus k times its increment, so a range of the output can start anywhere:
  // threads fill ranges of even length (Box-Muller draws in pairs) and give the same numbers as
  // one thread would.
  const uint64_t start = seed * 2 + (weights ? 1 : 0) + 0x5eed;
  const auto count = static_cast<int64_t>(out.size());
  constexpr int64_t kMinPerThread = int64_t{1} << 20;
  detail::parallel_for((count + 1) / 2, kMinPerThread / 2, [&](int64_t pair_begin, int64_t pair_end) {
    const int64_t begin = 2 * pair_begin, end = std::min(count, 2 * pair_end);
    double* o = out.data();
    if (kind == DataKind::kUniform) {  // one draw per value
      SplitMix64 rng{start + static_cast<uint64_t>(begin) * 0x9e3779b97f4a7c15ULL};
      for (int64_t i = begin; i < end; ++i) o[i] = 2.0 * rng.uniform01() - 1.0;
      return;
    }
    SplitMix64 rng{start + static_cast<uint64_t>(begin) * 0x9e3779b97f4a7c15ULL};
    for (int64_t i = begin; i < end; i += 2) {
      // Box-Muller; 1 - u keeps the logarithm finite.
      const double u1 = 1.0 - rng.uniform01(), u2 = rng.uniform01();
      const double radius = std::sqrt(-2.0 * std::log(u1));
      o[i] = radius * std::cos(2 * std::numbers::pi * u2);
      if (i + 1 < end) o[i + 1] = radius * std::sin(2 * std::numbers::pi * u2);
    }
    if (kind == DataKind::kRelu && !weights)
      for (int64_t i = begin; i < end; ++i) o[i] = o[i] > 0 ? o[i] : 0.0;
  });
}

TileDataset make_tile_dataset(TileSize tile, DataKind kind, int64_t tiles, int64_t channels, uint64_t seed) {
  validate_tile(tile);
  check_positive("the number of tiles", tiles);
  check_positive("the number of channels", channels);
  detail::check_tile_working_set(tile, tiles, channels);  // bounds every product below
  const int64_t n = tile.n();
  TileDataset ds;
  ds.tile = tile;
  ds.tiles = tiles;
  ds.channels = channels;
  ds.d.resize(static_cast<std::size_t>(tiles * channels * n * n));
  ds.g.resize(static_cast<std::size_t>(tiles * channels * tile.r * tile.r));
  generate(kind, false, seed, ds.d);
  generate(kind, true, seed, ds.g);
  ds.source = fmt::format("{} seed {}", to_string(kind), seed);
  return ds;
}

namespace {
ConvShape layer_shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int r) {
  if (r < 1 || r % 2 == 0) throw Error(fmt::format("error harness: layer filters must have odd size (got {})", r));
  const ConvShape s{N, C, H, W, K, r, r, (r - 1) / 2, (r - 1) / 2};
  s.validate();
  // The dataset alone; the evaluator checks its own arrays, which depend on the tile, when built.
  detail::check_harness_values(fmt::format("a layer {}x{}x{}x{} with {} filters {}x{}", N, C, H, W, K, r, r),
                               detail::saturating_sum({detail::saturating_product({N, C, H, W}),
                                                       detail::saturating_product({K, C, r, r})}));
  return s;
}
}  // namespace

LayerDataset make_layer_dataset(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int r, DataKind kind,
                                uint64_t seed) {
  LayerDataset ds;
  ds.shape = layer_shape(N, C, H, W, K, r);
  ds.input.resize(static_cast<std::size_t>(ds.shape.input_size()));
  ds.weights.resize(static_cast<std::size_t>(ds.shape.weight_size()));
  generate(kind, false, seed, ds.input);
  generate(kind, true, seed, ds.weights);
  ds.source = fmt::format("{} seed {}", to_string(kind), seed);
  return ds;
}

LayerDataset load_layer_dataset(const std::string& input_npy, const std::string& weights_npy, int64_t K, int r,
                                uint64_t seed) {
  NpyArray in = read_npy(input_npy);
  if (in.shape.size() == 3) in.shape.insert(in.shape.begin(), 1);
  if (in.shape.size() != 4)
    throw Error(fmt::format("'{}': activations must have shape [N, C, H, W] or [C, H, W] (got {} axes)", input_npy,
                            in.shape.size()));
  LayerDataset ds;
  if (!weights_npy.empty()) {
    NpyArray w = read_npy(weights_npy);
    if (w.shape.size() != 4)
      throw Error(fmt::format("'{}': weights must have shape [K, C, R, S] (got {} axes)", weights_npy, w.shape.size()));
    if (w.shape[1] != in.shape[1])
      throw Error(fmt::format("'{}': weights have {} input channels, the activations {}", weights_npy, w.shape[1],
                              in.shape[1]));
    if (w.shape[2] != r || w.shape[3] != r)
      throw Error(fmt::format("'{}': weights are {}x{}, the tile's filter is {}x{}", weights_npy, w.shape[2],
                              w.shape[3], r, r));
    ds.shape = layer_shape(in.shape[0], in.shape[1], in.shape[2], in.shape[3], w.shape[0], r);
    ds.weights = std::move(w.data);
    ds.source = fmt::format("{} with weights {}", input_npy, weights_npy);
  } else {
    ds.shape = layer_shape(in.shape[0], in.shape[1], in.shape[2], in.shape[3], K, r);
    ds.weights.resize(static_cast<std::size_t>(ds.shape.weight_size()));
    generate(DataKind::kGaussian, true, seed, ds.weights);
    ds.source = fmt::format("{} with gaussian weights seed {}", input_npy, seed);
  }
  ds.input = std::move(in.data);
  return ds;
}

}  // namespace nova
