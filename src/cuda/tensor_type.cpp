// The CUDA path's tensor types: names, sizes, and the host conversions the emulation and the device plan's
// staging use (the CPU engine's: round to nearest even, as __float2half_rn and __float2bfloat16_rn).
#include <cstdint>
#include <string>

#include "nova/conv/conv.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"
#include "tensor_convert.hpp"

namespace nova::cuda {
namespace {

// The CPU engine's tensor format of the same type: its conversions round as the kernels' stores do
// (__float2half_rn, __float2bfloat16_rn) and widen exactly, vectorized where the CPU can.
conv::TensorFormat format_of(TensorType t) {
  switch (t) {
    case TensorType::kFp16:
      return {conv::DataType::kFp16, 1.0f};
    case TensorType::kBf16:
      return {conv::DataType::kBf16, 1.0f};
    default:
      return {conv::DataType::kFp32, 1.0f};
  }
}

}  // namespace

const char* to_string(TensorType t) {
  switch (t) {
    case TensorType::kFp16:
      return "fp16";
    case TensorType::kBf16:
      return "bf16";
    default:
      return "fp32";
  }
}

TensorType parse_tensor_type(const std::string& name) {
  if (name == "fp32") return TensorType::kFp32;
  if (name == "fp16") return TensorType::kFp16;
  if (name == "bf16") return TensorType::kBf16;
  throw Error("unknown tensor type '" + name + "' for the CUDA path: fp32, fp16 or bf16");
}

int element_bytes(TensorType t) {
  return t == TensorType::kFp32 ? 4 : 2;
}

float round_to_type(TensorType t, float value) {
  if (t == TensorType::kFp32) return value;
  uint16_t bits;
  conv::convert_from_fp32(&value, 1, format_of(t), &bits);
  conv::convert_to_fp32(&bits, 1, format_of(t), &value);
  return value;
}

void round_to_type(TensorType t, std::span<float> values) {
  if (t == TensorType::kFp32) return;
  const std::vector<unsigned char> tensor = detail::to_tensor(values, t);
  detail::from_tensor(tensor.data(), t, values);
}

}  // namespace nova::cuda

namespace nova::cuda::detail {

std::vector<unsigned char> to_tensor(std::span<const float> values, TensorType type) {
  std::vector<unsigned char> out(values.size() * static_cast<std::size_t>(element_bytes(type)));
  conv::convert_from_fp32(values.data(), static_cast<int64_t>(values.size()), format_of(type), out.data());
  return out;
}

void from_tensor(const void* data, TensorType type, std::span<float> out) {
  conv::convert_to_fp32(data, static_cast<int64_t>(out.size()), format_of(type), out.data());
}

}  // namespace nova::cuda::detail
