// The shape of a 2D convolution layer, shared by the float64 reference, the error harness and the
// engine. Cross-correlation, as in every deep learning framework:
//   out[n][k][y][x] = bias[k] + sum_{c,u,v} w[k][c][u][v] * in[n][c][y*stride + u*dil - pad_h][x*stride + v*dil - pad_w]
// with zero padding. Tensors are dense; NCHW / KCRS unless a function says otherwise.
#pragma once

#include <cstdint>
#include <string>

namespace nova {

struct ConvShape {
  int64_t N = 1;            // batch
  int64_t C = 1;            // input channels
  int64_t H = 1, W = 1;     // input height, width
  int64_t K = 1;            // output channels
  int64_t R = 3, S = 3;     // kernel height, width
  int64_t pad_h = 1, pad_w = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t groups = 1;

  int64_t out_h() const { return (H + 2 * pad_h - dilation * (R - 1) - 1) / stride + 1; }
  int64_t out_w() const { return (W + 2 * pad_w - dilation * (S - 1) - 1) / stride + 1; }
  int64_t input_size() const { return N * C * H * W; }
  int64_t weight_size() const { return K * (C / groups) * R * S; }
  int64_t output_size() const { return N * K * out_h() * out_w(); }
  // Multiply-adds of a direct convolution, times two.
  double direct_flops() const { return 2.0 * double(N * K * (C / groups) * R * S) * double(out_h() * out_w()); }
  std::string to_string() const;  // "1x64x56x56->64 k3x3 p1 s1"
  // Throws nova::Error naming the first impossible field (sizes < 1, negative padding, C or K not
  // divisible by groups, a kernel larger than the padded input).
  void validate() const;
};

}  // namespace nova
