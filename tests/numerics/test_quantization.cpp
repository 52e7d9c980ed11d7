// Quantization: codes are integers of the format's range, values on the grid round-trip, and the
// error of a fake-quantized value is at most half a step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "nova/error.hpp"
#include "nova/numerics/quantization.hpp"

namespace nova {
namespace {

TEST(Quantization, SymmetricInt8RoundTripsGridValuesAndBoundsError) {
  const QuantParams p = choose_quant_params(Format::kInt8, QuantScheme::kSymmetric, -3.0, 2.0);
  EXPECT_DOUBLE_EQ(p.scale, 3.0 / 127);
  EXPECT_EQ(p.zero_point, 0.0);
  for (int q = -127; q <= 127; ++q) EXPECT_EQ(quantize(Format::kInt8, p, dequantize(p, q)), q);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (int i = 0; i < 10000; ++i) {
    const double x = u(rng);
    const double code = quantize(Format::kInt8, p, x);
    EXPECT_EQ(code, std::nearbyint(code));
    EXPECT_LE(std::fabs(fake_quantize(Format::kInt8, p, x) - x), p.scale / 2 * (1 + 1e-12));
  }
  EXPECT_EQ(quantize(Format::kInt8, p, 100.0), 127.0);   // saturates
  EXPECT_EQ(quantize(Format::kInt8, p, -100.0), -128.0);
}

TEST(Quantization, AffineKeepsZeroExactAndCoversTheRange) {
  const QuantParams p = choose_quant_params(Format::kInt8, QuantScheme::kAffine, 0.5, 10.0);  // range becomes [0, 10]
  EXPECT_EQ(fake_quantize(Format::kInt8, p, 0.0), 0.0);
  EXPECT_EQ(quantize(Format::kInt8, p, 0.0), -128.0);
  EXPECT_NEAR(fake_quantize(Format::kInt8, p, 10.0), 10.0, p.scale / 2);
  const QuantParams q = choose_quant_params(Format::kInt4, QuantScheme::kAffine, -1.0, 2.0);
  EXPECT_EQ(fake_quantize(Format::kInt4, q, 0.0), 0.0);
  for (double x = -1.0; x <= 2.0; x += 0.01) EXPECT_LE(std::fabs(fake_quantize(Format::kInt4, q, x) - x), q.scale / 2 + 1e-12);
}

TEST(Quantization, ScaledFloatFormatMapsAmaxToMaxFinite) {
  const QuantParams p = choose_quant_params(Format::kFp8E4M3, QuantScheme::kSymmetric, -0.01, 0.02);
  EXPECT_EQ(quantize(Format::kFp8E4M3, p, 0.02), 448.0);
  EXPECT_EQ(quantize(Format::kFp8E4M3, p, 0.05), 448.0);  // saturating, never NaN
  EXPECT_THROW(choose_quant_params(Format::kFp16, QuantScheme::kAffine, -1, 1), Error);
}

TEST(Quantization, ZeroTensorAndNonFiniteRange) {
  EXPECT_EQ(choose_quant_params(Format::kInt8, QuantScheme::kSymmetric, 0, 0).scale, 1.0);
  EXPECT_THROW(choose_quant_params(Format::kInt8, QuantScheme::kSymmetric, 0, INFINITY), Error);
  EXPECT_THROW(choose_quant_params(Format::kInt8, QuantScheme::kSymmetric, 1, -1), Error);
}

TEST(Quantization, GroupedScalesFollowTheirAxis) {
  // [2][3][4] tensor; group over axis 2: each of the 4 "taps" gets its own scale from its amax.
  std::vector<double> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<double>(i % 4) + 1) * (i % 2 ? -0.37 : 0.59) * static_cast<double>(i + 1);
  std::vector<double> amax(4, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) amax[i % 4] = std::fmax(amax[i % 4], std::fabs(x[i]));
  std::vector<double> y = x;
  const int64_t dims[] = {2, 3, 4};
  const int axes[] = {2};
  const auto params = fake_quantize_grouped(Format::kInt8, QuantScheme::kSymmetric, y, dims, axes);
  ASSERT_EQ(params.size(), 4U);
  for (std::size_t t = 0; t < 4; ++t) EXPECT_DOUBLE_EQ(params[t].scale, amax[t] / 127);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(std::fabs(y[i] - x[i]), params[i % 4].scale / 2 * (1 + 1e-12));
    // y is on its group's grid
    const double code = y[i] / params[i % 4].scale;
    EXPECT_NEAR(code, std::nearbyint(code), 1e-9);
  }
  // Two axes: one scale per (axis0, axis2) pair.
  std::vector<double> z = x;
  const int axes2[] = {0, 2};
  EXPECT_EQ(fake_quantize_grouped(Format::kInt8, QuantScheme::kSymmetric, z, dims, axes2).size(), 8U);
  const int64_t bad_dims[] = {2, 3, 5};
  EXPECT_THROW(fake_quantize_grouped(Format::kInt8, QuantScheme::kSymmetric, z, bad_dims, axes), Error);
  std::vector<double> w = {1.0, INFINITY, 2.0, 3.0};
  const int64_t wd[] = {2, 2};
  const int rows[] = {0};
  const auto wp = fake_quantize_grouped(Format::kInt8, QuantScheme::kSymmetric, w, wd, rows);
  EXPECT_TRUE(std::isnan(w[0]) && std::isnan(w[1]));  // the group with inf has no scale
  EXPECT_NEAR(w[3], 3.0, wp[1].scale / 2);             // the other group is untouched by it
  std::vector<double> empty;
  const int64_t zero_dims[] = {0};
  EXPECT_THROW(fake_quantize_grouped(Format::kInt8, QuantScheme::kSymmetric, empty, zero_dims, {}), Error);
}

}  // namespace
}  // namespace nova
