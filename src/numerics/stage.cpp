#include "numerics/stage.hpp"

#include "nova/error.hpp"

namespace nova::detail {

void apply_stage(const StageFormat& s, std::span<double> data, std::span<const int64_t> dims, const StageAxes& axes) {
  if (!s.quantized()) {
    round_in_place(s.format, data, s.overflow);
    return;
  }
  const std::vector<int>* group = nullptr;
  static const std::vector<int> none;
  std::vector<int> tap_channel;  // the channel axes and the tap axes together
  switch (s.granularity) {
    case Granularity::kTensor: group = &none; break;
    case Granularity::kChannel: group = &axes.channel; break;
    case Granularity::kTap: group = &axes.tap; break;
    case Granularity::kTile: group = &axes.tile; break;
    case Granularity::kTapChannel:
      tap_channel = axes.channel;
      tap_channel.insert(tap_channel.end(), axes.tap.begin(), axes.tap.end());
      group = &tap_channel;
      break;
  }
  fake_quantize_grouped(s.format, s.scheme, data, dims, *group);
}

}  // namespace nova::detail
