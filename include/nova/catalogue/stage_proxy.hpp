// The model-aware first-order error proxy: an analytic prediction of the relative L2 error of a 2D
// Winograd convolution under a PrecisionModel, propagating every stage's rounding through the
// stages after it. Cheap (O(n^4) per transform), so that a search can call it hundreds of
// thousands of times, and sensitive to everything a diagonal scaling changes: which entries are
// powers of two (exact products), which entries fp16 or bf16 can hold (matrix rounding), where the
// values sit in a format's range (overflow, subnormals), and how one quantization scale per tensor,
// channel, tap or tile covers positions of different size.
//
// Data model: d and g iid, zero mean, unit variance; C input channels; every rounding an
// independent error, of variance rho u^2 E[x^2] (rho = 1/6: round to nearest with a uniform
// significand) for a float format and s^2/12 for a quantization step s, zero where the operation is
// exact (a zero or power-of-two coefficient, a sum with a zero term). Sources and their paths:
//   matrices            exact for iid data: ||(X (x) X) - (T (x) T)||_F^2 with X the tensor of the
//                       rounded matrices and T the correlation tensor
//   transform_arith     every product and partial sum of G g G^T and B^T d B, carried through the
//                       second pass, the element-wise products (with the covariance of the other
//                       operand) and the output transform
//   U, V storage        float: relative; quantized: scale = z sigma_max(group) / qmax
//   product, accumulate, gemm_output, output_arith, output    float roundings on M and Y
//   input, filter       only with reference "original"
// Range: a float stage whose value at `headroom` times the data's amplitude (z_overflow sigma)
// exceeds the format's largest finite value makes the prediction +inf; subnormal spacing adds an
// absolute error evaluated at 1/headroom of the amplitude. The output transform's intermediates (every
// product and partial sum of A^T M and (A^T M) A; M's entries are correlated, so these can be far
// larger than Y) are checked at the data's own amplitude (headroom 1): +inf there means the
// measurement overflows too.
// With only the U, V storage rounding active it reduces to DESIGN.md's sqrt(2 rho) u P / (m r).
#pragma once

#include "nova/exact/transform.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova {

struct ProxyOptions {
  int channels = 16;         // C, the accumulation length
  double headroom = 16;      // range the float stages must survive: data amplitudes in [1/h, h]
  double z_overflow = 4;     // a value's magnitude is taken as z * sigma for the overflow check
  double z_quant = 4;        // amax of a quantization group of many values, in sigmas
  double z_quant_tile = 2.5; // amax of a per-tile group (n^2 values)
};

struct ProxyTerms {
  double matrices = 0, transform_arith = 0, storage = 0, gemm = 0, output = 0, data = 0;  // squared relative
  double rel_l2 = 0;  // sqrt of the sum; +inf when a stage overflows
  bool overflow = false;
};

ProxyTerms stage_proxy_terms(const TransformF64& t, const PrecisionModel& model, const ProxyOptions& options = {});
inline double stage_proxy(const TransformF64& t, const PrecisionModel& model, const ProxyOptions& options = {}) {
  return stage_proxy_terms(t, model, options).rel_l2;
}

}  // namespace nova
