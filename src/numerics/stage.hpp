// Applying one stage of a precision model to a tensor: rounding, or quantization with the
// stage's granularity. Private to src/numerics.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nova/numerics/precision_model.hpp"

namespace nova::detail {

// Which axes of the tensor a scale is shared across is said by the axes it varies along, for
// each granularity of this tensor. An empty list for a granularity the stage does not define.
struct StageAxes {
  std::vector<int> channel, tap, tile;
};

void apply_stage(const StageFormat& s, std::span<double> data, std::span<const int64_t> dims, const StageAxes& axes);

}  // namespace nova::detail
