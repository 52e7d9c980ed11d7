// The float64 direct convolution: the ground truth every other result in nova is measured against
// (the error harness, the convolution engine's tests). Plain loops in the order of the definition
// in conv_shape.hpp, so that it can be checked by reading; speed is secondary.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nova/conv_shape.hpp"

namespace nova {

// out[n][k][y][x] = bias[k] + sum_{c in group of k, u, v} w[k][c'][u][v] * in[n][c][y*s + u*d - ph][x*s + v*d - pw]
// NCHW input (shape.input_size()), KCRS weights with C/groups input channels (shape.weight_size()),
// bias empty or K values, output NCHW (shape.output_size()). Validates the shape and every span
// size; throws nova::Error naming the mismatch.
void reference_conv2d(const ConvShape& shape, std::span<const double> input, std::span<const double> weights,
                      std::span<const double> bias, std::span<double> output);
std::vector<double> reference_conv2d(const ConvShape& shape, std::span<const double> input,
                                     std::span<const double> weights, std::span<const double> bias = {});

// The same convolution with NHWC input and output (weights stay KCRS): it converts, calls the NCHW
// reference, and converts back, so both layouts share one definition.
std::vector<double> reference_conv2d_nhwc(const ConvShape& shape, std::span<const double> input_nhwc,
                                          std::span<const double> weights, std::span<const double> bias = {});

// Layout conversions of a dense 4D tensor [N][C][H][W] <-> [N][H][W][C].
std::vector<double> nchw_to_nhwc(std::span<const double> x, int64_t N, int64_t C, int64_t H, int64_t W);
std::vector<double> nhwc_to_nchw(std::span<const double> x, int64_t N, int64_t C, int64_t H, int64_t W);
std::vector<float> nchw_to_nhwc(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W);
std::vector<float> nhwc_to_nchw(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W);
// [N][C][H][W] <-> [N][ceil(C/16)][H][W][16] (oneDNN's nChw16c; padding lanes zero, ignored on the way back).
std::vector<float> nchw_to_nchw16c(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W);
std::vector<float> nchw16c_to_nchw(std::span<const float> x, int64_t N, int64_t C, int64_t H, int64_t W);

}  // namespace nova
