// Checks of a convolution's parameters shared by the CPU engine's plans (plan.cpp) and the CUDA path's
// (src/cuda/multipass_prepare.cpp), so that both refuse the same input with the same message.
#pragma once

#include <cstdint>

#include "nova/conv_shape.hpp"
#include "nova/exact/transform.hpp"

namespace nova::conv {

// Throws nova::Error naming the first NaN or Inf of `data` (`what`: "weights", with (k, c, r, s) named,
// or "bias", "input").
void check_finite(const float* data, int64_t count, const char* what, const ConvShape& s);
// Throws nova::Error where an entry of A^T, G or B^T lies beyond FP32's range, in which the engines compute
// (inf there, or 0: another transform, silently).
void check_fp32_range(const Transform& t);

}  // namespace nova::conv
