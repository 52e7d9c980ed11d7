#include "nova/numerics/reference_conv.hpp"

#include <fmt/format.h>

#include "nova/error.hpp"

namespace nova {
namespace {

void check_size(const char* what, std::size_t got, int64_t want) {
  if (static_cast<int64_t>(got) != want)
    throw Error(fmt::format("reference convolution: {} has {} values, the shape needs {}", what, got, want));
}

template <class T>
std::vector<T> permute_nchw_nhwc(std::span<const T> x, int64_t N, int64_t C, int64_t H, int64_t W, bool to_nhwc) {
  check_size("tensor", x.size(), N * C * H * W);
  std::vector<T> y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          const auto nchw = static_cast<std::size_t>(((n * C + c) * H + h) * W + w);
          const auto nhwc = static_cast<std::size_t>(((n * H + h) * W + w) * C + c);
          if (to_nhwc)
            y[nhwc] = x[nchw];
          else
            y[nchw] = x[nhwc];
        }
  return y;
}

}  // namespace

void reference_conv2d(const ConvShape& s, std::span<const double> input, std::span<const double> weights,
                      std::span<const double> bias, std::span<double> output) {
  s.validate();
  check_size("input", input.size(), s.input_size());
  check_size("weights", weights.size(), s.weight_size());
  check_size("output", output.size(), s.output_size());
  if (!bias.empty()) check_size("bias", bias.size(), s.K);
  const int64_t OH = s.out_h(), OW = s.out_w();
  const int64_t Cg = s.C / s.groups, Kg = s.K / s.groups;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t k = 0; k < s.K; ++k) {
      const int64_t group = k / Kg;
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(k)];
          for (int64_t cg = 0; cg < Cg; ++cg) {
            const int64_t c = group * Cg + cg;
            for (int64_t u = 0; u < s.R; ++u) {
              const int64_t iy = y * s.stride + u * s.dilation - s.pad_h;
              if (iy < 0 || iy >= s.H) continue;  // zero padding
              for (int64_t v = 0; v < s.S; ++v) {
                const int64_t ix = x * s.stride + v * s.dilation - s.pad_w;
                if (ix < 0 || ix >= s.W) continue;
                acc += weights[static_cast<std::size_t>(((k * Cg + cg) * s.R + u) * s.S + v)] *
                       input[static_cast<std::size_t>(((n * s.C + c) * s.H + iy) * s.W + ix)];
              }
            }
          }
          output[static_cast<std::size_t>(((n * s.K + k) * OH + y) * OW + x)] = acc;
        }
    }
}

std::vector<double> reference_conv2d(const ConvShape& shape, std::span<const double> input,
                                     std::span<const double> weights, std::span<const double> bias) {
  shape.validate();
  std::vector<double> out(static_cast<std::size_t>(shape.output_size()));
  reference_conv2d(shape, input, weights, bias, out);
  return out;
}

std::vector<double> reference_conv2d_nhwc(const ConvShape& s, std::span<const double> input_nhwc,
                                          std::span<const double> weights, std::span<const double> bias) {
  s.validate();
  const std::vector<double> in = nhwc_to_nchw(input_nhwc, s.N, s.C, s.H, s.W);
  const std::vector<double> out = reference_conv2d(s, in, weights, bias);
  return nchw_to_nhwc(std::span<const double>(out), s.N, s.K, s.out_h(), s.out_w());
}

std::vector<double> nchw_to_nhwc(std::span<const double> x, int64_t N, int64_t C, int64_t H, int64_t W) {
  return permute_nchw_nhwc(x, N, C, H, W, true);
}
std::vector<double> nhwc_to_nchw(std::span<const double> x, int64_t N, int64_t C, int64_t H, int64_t W) {
  return permute_nchw_nhwc(x, N, C, H, W, false);
}
std::vector<float> nchw_to_nhwc(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W) {
  return permute_nchw_nhwc(x, N, C, H, W, true);
}
std::vector<float> nhwc_to_nchw(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W) {
  return permute_nchw_nhwc(x, N, C, H, W, false);
}

std::vector<float> nchw_to_nchw16c(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W) {
  check_size("tensor", x.size(), N * C * H * W);
  const int64_t Cb = (C + 15) / 16;
  std::vector<float> y(static_cast<std::size_t>(N * Cb * 16 * H * W), 0.0f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < H * W; ++p)
        y[static_cast<std::size_t>(((n * Cb + c / 16) * H * W + p) * 16 + c % 16)] =
            x[static_cast<std::size_t>((n * C + c) * H * W + p)];
  return y;
}
std::vector<float> nchw16c_to_nchw(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W) {
  const int64_t Cb = (C + 15) / 16;
  check_size("tensor", x.size(), N * Cb * 16 * H * W);
  std::vector<float> y(static_cast<std::size_t>(N * C * H * W));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < H * W; ++p)
        y[static_cast<std::size_t>((n * C + c) * H * W + p)] =
            x[static_cast<std::size_t>(((n * Cb + c / 16) * H * W + p) * 16 + c % 16)];
  return y;
}

}  // namespace nova
