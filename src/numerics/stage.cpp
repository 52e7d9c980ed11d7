#include "numerics/stage.hpp"

#include <algorithm>

#include "nova/error.hpp"

namespace nova::detail {

std::vector<int> stage_group_axes(const StageFormat& s, const StageAxes& axes) {
  switch (s.granularity) {
    case Granularity::kTensor: return {};
    case Granularity::kChannel: return axes.channel;
    case Granularity::kTap: return axes.tap;
    case Granularity::kTile: return axes.tile;
    case Granularity::kTapChannel: {
      std::vector<int> both = axes.channel;  // the channel axes and the tap axes together
      both.insert(both.end(), axes.tap.begin(), axes.tap.end());
      return both;
    }
  }
  return {};
}

bool stage_is_chunk_local(const StageFormat& s, const StageAxes& axes) {
  if (!s.quantized()) return true;
  const std::vector<int> group = stage_group_axes(s, axes);
  return std::find(group.begin(), group.end(), 0) != group.end();
}

void apply_stage(const StageFormat& s, std::span<double> data, std::span<const int64_t> dims, const StageAxes& axes) {
  if (!s.quantized()) {
    round_in_place(s.format, data, s.overflow);
    return;
  }
  const std::vector<int> group = stage_group_axes(s, axes);
  fake_quantize_grouped(s.format, s.scheme, data, dims, group);
}

void clear_invalid_outputs(const std::vector<uint8_t>& valid, int64_t T, int64_t K, int64_t mm,
                           std::vector<double>& y) {
  if (static_cast<int64_t>(valid.size()) != T * mm || static_cast<int64_t>(y.size()) != T * K * mm)
    throw Error("output mask: sizes do not match the outputs");
  for (int64_t t = 0; t < T; ++t)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t a = 0; a < mm; ++a)
        if (!valid[static_cast<std::size_t>(t * mm + a)])
          y[static_cast<std::size_t>((t * K + k) * mm + a)] = 0;
}

}  // namespace nova::detail
