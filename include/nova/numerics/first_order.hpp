// The first-order prediction of the 2D Winograd error when only the Winograd-domain operands U
// and V are rounded (relative rounding error of unit roundoff u each, independent, data iid with
// zero mean):
//   P = sum_a ||A^T[:,a]||^2 ||G[a,:]||^2 ||B^T[a,:]||^2     (n Winograd positions a, 1D)
//   relative L2 error (2D) ~= c * u * P / (m * r)
// Derivation: in 1D the product at position a carries error U_a V_a (e_U + e_V); with the
// relative rounding error of round-to-nearest having mean square u^2/6 (error uniform within half
// an ulp, significand uniform in [1, 2)), the output error's mean square is (u^2/3) * P / (m r) of
// the output's. In 2D the positions are pairs (a, b), every factor is a Kronecker product, the sum
// is P^2, and the relative L2 error is u * P / (m r) / sqrt(3): c = 1/sqrt(3) ~= 0.577. P does not
// change under the diagonal rescalings of a transform (D1 D2 and (D1 D2)^-1 cancel per position).
#pragma once

#include <cstdint>

#include "nova/exact/transform.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova {

inline constexpr double kFirstOrderC = 0.57735026918962576;  // 1/sqrt(3), see above

double winograd_p(const TransformF64& t);
// c * u * P / (m r) with c = kFirstOrderC.
double predicted_rel_error_2d(const TransformF64& t, double unit_roundoff);

// The same analysis carried through every stage of a floating-point precision model: variance
// propagation of independent rounding errors (mean square u^2/6 relative each) through the
// transforms, the products, the accumulation over `channels`, and the output transform, for iid
// zero-mean data. Included: the rounded matrices (exactly, as a perturbation of the bilinear map:
// their rounding errors are correlated and must not be treated as noise), operands rounded
// to an arithmetic format, every product and partial sum of the transform arithmetic, U and V
// storage, products, the running sum (step c adds error to a sum of c terms), the stored sums, the
// output; and, with reference "original", the rounding of d and g. Approximations: elements of the
// intermediate matrices are treated as uncorrelated when their signal variance is needed; range
// effects (overflow, subnormals) are ignored. A cheap proxy for search, not a bound. Throws
// nova::Error for integer (quantized) stages, whose error depends on the data's range.
double predicted_rel_error_2d(const TransformF64& t, const PrecisionModel& model, int64_t channels);

}  // namespace nova
