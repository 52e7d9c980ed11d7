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

// The axes a quantized stage's scales vary along (empty: one scale for the tensor).
std::vector<int> stage_group_axes(const StageFormat& s, const StageAxes& axes);

// True when the stage gives the same result applied to chunks of the tensor along axis 0 one at a
// time: it only rounds, or each of its scales lies within one index of axis 0.
bool stage_is_chunk_local(const StageFormat& s, const StageAxes& axes);

// Sets to 0 the outputs y [T][K][mm] whose valid [T][mm] is 0 (outside the layer), before an output
// stage, so that they do not enter its scales.
void clear_invalid_outputs(const std::vector<uint8_t>& valid, int64_t T, int64_t K, int64_t mm,
                           std::vector<double>& y);

}  // namespace nova::detail
