#include "nova/conv_shape.hpp"

#include <fmt/format.h>

#include "nova/error.hpp"

namespace nova {

std::string ConvShape::to_string() const {
  std::string s = fmt::format("{}x{}x{}x{}->{} k{}x{} p{}", N, C, H, W, K, R, S, pad_h);
  if (pad_w != pad_h) s += fmt::format(",{}", pad_w);
  s += fmt::format(" s{}", stride);
  if (dilation != 1) s += fmt::format(" d{}", dilation);
  if (groups != 1) s += fmt::format(" g{}", groups);
  return s;
}

void ConvShape::validate() const {
  auto positive = [](const char* name, int64_t v) {
    if (v < 1) throw Error(fmt::format("convolution shape: {} must be at least 1 (got {})", name, v));
  };
  positive("N", N);
  positive("C", C);
  positive("H", H);
  positive("W", W);
  positive("K", K);
  positive("R", R);
  positive("S", S);
  positive("stride", stride);
  positive("dilation", dilation);
  positive("groups", groups);
  if (pad_h < 0 || pad_w < 0) throw Error(fmt::format("convolution shape: negative padding ({}, {})", pad_h, pad_w));
  if (C % groups != 0) throw Error(fmt::format("convolution shape: C = {} is not divisible by groups = {}", C, groups));
  if (K % groups != 0) throw Error(fmt::format("convolution shape: K = {} is not divisible by groups = {}", K, groups));
  // Guard the products used for sizes against int64 overflow before anything allocates them.
  constexpr int64_t kLimit = int64_t{1} << 40;
  if (N > kLimit / C || N * C > kLimit / H || N * C * H > kLimit / W)
    throw Error(
        fmt::format("convolution shape: input tensor {}x{}x{}x{} too large (limit 2^40 values)", N, C, H, W));
  if (dilation * (R - 1) + 1 > H + 2 * pad_h)
    throw Error(fmt::format("convolution shape: kernel height {} (dilation {}) exceeds padded input height {}", R,
                            dilation, H + 2 * pad_h));
  if (dilation * (S - 1) + 1 > W + 2 * pad_w)
    throw Error(fmt::format("convolution shape: kernel width {} (dilation {}) exceeds padded input width {}", S,
                            dilation, W + 2 * pad_w));
}

}  // namespace nova
