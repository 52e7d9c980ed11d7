// Element conversions of typed input and output tensors, one element at a time: the definition the
// SIMD paths must match bit for bit (tests/conv/test_conv_io.cpp checks it).
#include <cmath>
#include <cstring>

#include "../kernel_table.hpp"
#include "../convert_table_template.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

// fp16 bits of a float that round_fp16 has already rounded (so it is an fp16 value, inf or NaN).
uint16_t fp16_bits_of_rounded(float r) {
  const uint32_t b = f32_bits(r);
  const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  const uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | ((a & 0x7FFFFFu) >> 13));
  if (a >= 0x38800000u)
    return static_cast<uint16_t>(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3FFu));
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(f32_from_bits(a) * 16777216.0f));  // k * 2^-24
}

void widen_fp32(const void* src, float* dst, int64_t count, float) {
  std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}
void widen_bf16(const void* src, float* dst, int64_t count, float) {
  const auto* s = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < count; ++i) dst[i] = bf16_to_float(s[i]);
}
void widen_fp16(const void* src, float* dst, int64_t count, float) {
  const auto* s = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < count; ++i) dst[i] = fp16_to_float(s[i]);
}
void widen_int8(const void* src, float* dst, int64_t count, float scale) {
  const auto* s = static_cast<const int8_t*>(src);
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(s[i]) * scale;
}

void narrow_fp32(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}
void narrow_bf16(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; ++i) d[i] = bf16_bits_rne(src[i]);
}
void narrow_fp16(const float* src, void* dst, int64_t count, float, NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; ++i) d[i] = fp16_bits_of_rounded(round_fp16(src[i]));
}
void narrow_int8(const float* src, void* dst, int64_t count, float inv_scale, NarrowCounts* counts) {
  auto* d = static_cast<int8_t*>(dst);
  for (int64_t i = 0; i < count; ++i) {
    // NaN and Inf are told by the result itself: a finite result whose quotient overflows (a scale near
    // FP32's smallest normal) saturates like any other beyond +-127.5.
    const float x = src[i], q = x * inv_scale;
    float code;
    if (std::isnan(x)) {
      code = 0.0f;
      ++counts->nonfinite;
    } else if (std::isinf(x)) {
      code = x > 0.0f ? 127.0f : -127.0f;
      ++counts->nonfinite;
    } else {
      if (std::fabs(q) > 127.5f) ++counts->saturated;
      code = std::fmin(std::fmax(std::nearbyint(q), -127.0f), 127.0f);  // ties to even (default mode)
    }
    d[i] = static_cast<int8_t>(code);
  }
}

int64_t count_beyond(const float* src, std::ptrdiff_t row_stride, int64_t rows, int64_t pixels, int lanes,
                     float limit) {
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < pixels; ++x)
      for (int l = 0; l < lanes; ++l) count += !(std::fabs(src[r * row_stride + x * 16 + l]) < limit);
  return count;
}

}  // namespace

ConvertTable convert_table_portable() {
  ConvertTable t = kernels_impl::make_convert_table<&widen_fp32, &widen_bf16, &widen_fp16, &widen_int8,
                                                    &narrow_fp32, &narrow_bf16, &narrow_fp16, &narrow_int8>();
  t.count_beyond = &count_beyond;
  return t;
}

}  // namespace nova::conv
