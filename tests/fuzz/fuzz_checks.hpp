// What the convolution fuzz targets (fuzz_conv.cpp, fuzz_cuda.cpp) share: the failure report, the
// poisons they plant, and the error of outputs that cancel.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nova/conv_shape.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::fuzz {

// Prints "target: what" and aborts, which libFuzzer and the replay driver (replay_main.cpp) report.
[[noreturn]] inline void fail(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

// A NaN or Inf planted in the weights, bias or input.
enum class Poison { kNone, kWeightNaN, kWeightInf, kBiasNaN, kInputNaN, kInputInf };

// Outputs that cancel (a few outputs, one near zero) have large relative errors at no fault of the code
// under test: rounding errors scale with the sums of |terms|, the convolution of |x| with |w| plus |b|.
// The error of `got` against `ref` measured against that, over the square root of the terms per output,
// which gives it the size of the output itself for random signs.
inline double error_against_magnitudes(const ConvShape& s, std::vector<double> x, std::vector<double> w,
                                       std::vector<double> b, const std::vector<float>& got,
                                       const std::vector<double>& ref) {
  for (auto* v : {&x, &w, &b})
    for (double& e : *v) e = std::abs(e);
  const std::vector<double> magnitude = reference_conv2d(s, x, w, b);
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += magnitude[i] * magnitude[i];
  }
  const double terms = static_cast<double>((s.C / s.groups) * s.R * s.S);
  return den == 0.0 ? std::sqrt(num) : std::sqrt(num / den * terms);
}

}  // namespace nova::fuzz
