// Host conversions between FP32 values and the CUDA path's tensor types, as the kernels load and store them
// (fp16 and bf16 rounded to nearest even, overflow to +-Inf, NaN kept): the emulation's and the device
// plan's host-side staging.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nova/cuda/tensor_type.hpp"

namespace nova::cuda::detail {

// `values` as a tensor of `type` (bytes: values.size() * element_bytes(type)).
std::vector<unsigned char> to_tensor(std::span<const float> values, TensorType type);
// `count` elements of a tensor of `type` at `data`, widened to FP32 (exactly) into `out`.
void from_tensor(const void* data, TensorType type, std::span<float> out);

}  // namespace nova::cuda::detail
