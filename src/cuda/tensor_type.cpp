// The CUDA path's tensor types: names, sizes, and the host conversions the emulation and the device plan's
// staging use (nova's own encoder: round to nearest even, as __float2half_rn and __float2bfloat16_rn).
#include <cstring>
#include <string>

#include "nova/error.hpp"
#include "nova/numerics/format.hpp"
#include "tensor_convert.hpp"

namespace nova::cuda {
namespace {

// The numerics' format of a 2-byte type.
Format format_of(TensorType t) {
  return t == TensorType::kFp16 ? Format::kFp16 : Format::kBf16;
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
  const Format f = format_of(t);
  return static_cast<float>(decode_bits(f, encode_bits(f, value)));
}

}  // namespace nova::cuda

namespace nova::cuda::detail {

std::vector<unsigned char> to_tensor(std::span<const float> values, TensorType type) {
  std::vector<unsigned char> out(values.size() * static_cast<std::size_t>(element_bytes(type)));
  if (type == TensorType::kFp32) {
    if (!values.empty()) std::memcpy(out.data(), values.data(), values.size_bytes());
    return out;
  }
  const Format f = format_of(type);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto bits = static_cast<uint16_t>(encode_bits(f, values[i]));
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
  return out;
}

void from_tensor(const void* data, TensorType type, std::span<float> out) {
  if (type == TensorType::kFp32) {
    if (!out.empty()) std::memcpy(out.data(), data, out.size_bytes());
    return;
  }
  const Format f = format_of(type);
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < out.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * i, 2);
    out[i] = static_cast<float>(decode_bits(f, bits));
  }
}

}  // namespace nova::cuda::detail
