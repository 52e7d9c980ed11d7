#include "nova/conv_shape.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

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
  // Padding, kernel and dilation bounded first, so that the padded sizes below cannot overflow; then the
  // padded input, the output and the weights within the same limit (a padding of 2e9 passed, and the
  // engine's allocation failed with an internal error).
  constexpr int64_t kSideLimit = int64_t{1} << 30;
  for (const auto& [name, v] :
       {std::pair{"padding", std::max(pad_h, pad_w)}, std::pair{"kernel size", std::max(R, S)},
        std::pair{"dilation", dilation}, std::pair{"stride", stride}})
    if (v > kSideLimit) throw Error(fmt::format("convolution shape: {} {} too large (limit 2^30)", name, v));
  auto within = [&](const char* what, std::initializer_list<int64_t> dims) {
    int64_t product = 1;
    for (int64_t d : dims) {
      if (d > kLimit / product)
        throw Error(fmt::format("convolution shape: {} {} too large (limit 2^40 values)", what,
                                fmt::join(dims, "x")));
      product *= d;
    }
  };
  within("padded input", {N, C, H + 2 * pad_h, W + 2 * pad_w});
  within("weights", {K, C / groups, R, S});
  if (dilation * (R - 1) + 1 > H + 2 * pad_h)
    throw Error(fmt::format("convolution shape: kernel height {} (dilation {}) exceeds padded input height {}", R,
                            dilation, H + 2 * pad_h));
  if (dilation * (S - 1) + 1 > W + 2 * pad_w)
    throw Error(fmt::format("convolution shape: kernel width {} (dilation {}) exceeds padded input width {}", S,
                            dilation, W + 2 * pad_w));
  within("output", {N, K, out_h(), out_w()});
}

}  // namespace nova
