// Batched two-sided products out[b] = L X[b] L^T in an emulated arithmetic: the tile transforms of
// the emulated Winograd pipeline (winograd_emulation.cpp). Private to src/numerics.
//
// The definition: the operands (L and X) are rounded to the arithmetic format `f` first, then
// every product and every sum; a sum over the inner index runs in increasing order starting from
// the first product. fp64 is plain double arithmetic.
//
// How it is computed (same bits as the definition, tested):
//   fp64                  double arithmetic, one matrix at a time
//   fp32                  float arithmetic, 16 matrices at a time in SIMD lanes
//   fp16, bf16, fp8       float arithmetic with each result rounded to the format, 16 matrices in
//                         lanes. A float operation rounded once more to a format of p <= 11 bits
//                         is the correctly rounded operation of that format: float has
//                         24 >= 2p + 2 bits (Figueroa's double-rounding theorem), and the format's
//                         range lies inside float's. The one place float's range is tight, bf16
//                         products below 2^-126, is harmless: such a product M 2^e (M < 2^16) is
//                         inexact in float only when e < -149, so it is below 2^-134, half of
//                         bf16's smallest subnormal; float rounds it to at most 2^-134, and both
//                         round to zero in bf16.
//   anything else         double arithmetic with the software rounding kernel on every result
// The lanes kernels are compiled for AVX-512, AVX2 and baseline x86-64 and picked at run time;
// they use integer and IEEE float operations only, so the bits do not depend on the path.
#pragma once

#include <cstdint>
#include <vector>

#include "nova/numerics/format.hpp"

namespace nova::detail {

// L is P x I row-major; X holds `batch` I x I matrices, out `batch` P x P matrices.
void sandwich_range(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out);

// The definition computed without the lanes kernels (double arithmetic with the software rounding
// kernel, or plain double/float): the reference the tests compare sandwich_range with.
void sandwich_range_reference(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch,
                              double* out);

}  // namespace nova::detail
