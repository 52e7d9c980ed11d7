// The float64 reference against closed-form cases and an independent integer implementation.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "nova/conv_shape.hpp"
#include "nova/error.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova {
namespace {

ConvShape shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S) {
  return ConvShape{N, C, H, W, K, R, S};
}

TEST(ConvShape, ToStringAndValidate) {
  ConvShape s = shape(1, 64, 56, 56, 64, 3, 3);
  EXPECT_EQ(s.to_string(), "1x64x56x56->64 k3x3 p1 s1");
  s.stride = 2;
  s.groups = 2;
  EXPECT_EQ(s.to_string(), "1x64x56x56->64 k3x3 p1 s2 g2");
  EXPECT_NO_THROW(s.validate());
  s.groups = 3;
  EXPECT_THROW(s.validate(), Error);
  ConvShape z = shape(1, 0, 5, 5, 1, 3, 3);
  try {
    z.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("C must be at least 1"), std::string::npos);
  }
  ConvShape big = shape(1, 1, 2, 2, 1, 7, 7);  // 7x7 kernel on a 2x2 input padded by 1
  EXPECT_THROW(big.validate(), Error);
  ConvShape neg = shape(1, 1, 4, 4, 1, 3, 3);
  neg.pad_w = -1;
  EXPECT_THROW(neg.validate(), Error);
}

TEST(ReferenceConv, ClosedFormCases) {
  // All-ones input and weights with zero padding 1: every output counts the taps inside the image.
  ConvShape s = shape(1, 2, 4, 5, 1, 3, 3);
  std::vector<double> in(static_cast<std::size_t>(s.input_size()), 1.0), w(static_cast<std::size_t>(s.weight_size()), 1.0);
  const std::vector<double> bias = {0.5};
  const auto out = reference_conv2d(s, in, w, bias);
  ASSERT_EQ(out.size(), 20U);
  EXPECT_EQ(out[0], 2 * 4 + 0.5);       // corner: 2x2 taps inside, 2 channels
  EXPECT_EQ(out[1], 2 * 6 + 0.5);       // top edge
  EXPECT_EQ(out[1 * 5 + 1], 2 * 9 + 0.5);  // interior
  // A centred delta filter is the identity.
  std::vector<double> delta(9, 0.0);
  delta[4] = 1.0;
  ConvShape s1 = shape(2, 1, 3, 4, 1, 3, 3);
  std::vector<double> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) * 0.25 - 3;
  EXPECT_EQ(reference_conv2d(s1, x, delta), x);
}

// Integer data: every partial sum is exact in float64, so the reference must equal this
// differently organised int64 computation (im2col order, groups as separate convolutions).
TEST(ReferenceConv, MatchesIntegerImplementationWithStrideDilationGroupsPadding) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> v(-9, 9);
  for (int trial = 0; trial < 6; ++trial) {
    ConvShape s = shape(2, 4, 9 + trial, 7 + trial % 3, 6, 3, 2 + trial % 2);
    s.stride = 1 + trial % 2;
    s.dilation = 1 + (trial / 2) % 2;
    s.groups = trial % 3 == 0 ? 2 : 1;
    s.pad_h = trial % 3;
    s.pad_w = (trial + 1) % 2;
    s.validate();
    std::vector<double> in(static_cast<std::size_t>(s.input_size())), w(static_cast<std::size_t>(s.weight_size()));
    std::vector<double> bias(static_cast<std::size_t>(s.K));
    for (auto& a : in) a = v(rng);
    for (auto& a : w) a = v(rng);
    for (auto& a : bias) a = v(rng);
    const auto out = reference_conv2d(s, in, w, bias);
    const int64_t OH = s.out_h(), OW = s.out_w(), Cg = s.C / s.groups, Kg = s.K / s.groups;
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t k = 0; k < s.K; ++k)
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            int64_t acc = static_cast<int64_t>(bias[static_cast<std::size_t>(k)]);
            for (int64_t col = 0; col < Cg * s.R * s.S; ++col) {
              const int64_t cg = col / (s.R * s.S), u = (col / s.S) % s.R, vv = col % s.S;
              const int64_t c = (k / Kg) * Cg + cg;
              const int64_t iy = oy * s.stride + u * s.dilation - s.pad_h, ix = ox * s.stride + vv * s.dilation - s.pad_w;
              if (iy < 0 || ix < 0 || iy >= s.H || ix >= s.W) continue;
              acc += static_cast<int64_t>(w[static_cast<std::size_t>(k * Cg * s.R * s.S + col)]) *
                     static_cast<int64_t>(in[static_cast<std::size_t>(((n * s.C + c) * s.H + iy) * s.W + ix)]);
            }
            ASSERT_EQ(out[static_cast<std::size_t>(((n * s.K + k) * OH + oy) * OW + ox)], static_cast<double>(acc))
                << s.to_string();
          }
  }
}

TEST(ReferenceConv, NhwcAgreesWithNchwAndLayoutsRoundTrip) {
  ConvShape s = shape(2, 3, 5, 6, 4, 3, 3);
  std::mt19937_64 rng(9);
  std::normal_distribution<double> nd;
  std::vector<double> in(static_cast<std::size_t>(s.input_size())), w(static_cast<std::size_t>(s.weight_size()));
  for (auto& a : in) a = nd(rng);
  for (auto& a : w) a = nd(rng);
  const auto nhwc_in = nchw_to_nhwc(std::span<const double>(in), s.N, s.C, s.H, s.W);
  EXPECT_EQ(nhwc_to_nchw(std::span<const double>(nhwc_in), s.N, s.C, s.H, s.W), in);
  EXPECT_EQ(nhwc_in[1], in[static_cast<std::size_t>(s.H * s.W)]);  // (n0, h0, w0, c1) is (n0, c1, h0, w0)
  const auto out_nchw = reference_conv2d(s, in, w);
  const auto out_nhwc = reference_conv2d_nhwc(s, nhwc_in, w);
  EXPECT_EQ(nhwc_to_nchw(std::span<const double>(out_nhwc), s.N, s.K, s.out_h(), s.out_w()), out_nchw);
  std::vector<float> f(in.begin(), in.end());
  EXPECT_EQ(nhwc_to_nchw(std::span<const float>(nchw_to_nhwc(std::span<const float>(f), 2, 3, 5, 6)), 2, 3, 5, 6), f);
}

TEST(ReferenceConv, SizeMismatchesAreErrors) {
  ConvShape s = shape(1, 2, 4, 4, 1, 3, 3);
  std::vector<double> in(31), w(18);
  EXPECT_THROW(reference_conv2d(s, in, w), Error);
  in.resize(32);
  const std::vector<double> bias = {1, 2};
  EXPECT_THROW(reference_conv2d(s, in, w, bias), Error);
  w.resize(17);
  EXPECT_THROW(reference_conv2d(s, in, w), Error);
}

}  // namespace
}  // namespace nova
