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

}  // namespace nova::detail
