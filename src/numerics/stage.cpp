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
  switch (s.granularity) {
    case Granularity::kTensor: group = &none; break;
    case Granularity::kChannel: group = &axes.channel; break;
    case Granularity::kTap: group = &axes.tap; break;
    case Granularity::kTile: group = &axes.tile; break;
  }
  fake_quantize_grouped(s.format, s.scheme, data, dims, *group);
}

}  // namespace nova::detail
