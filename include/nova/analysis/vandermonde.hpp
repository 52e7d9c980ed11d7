// The finite-point Vandermonde matrix V_ij = x_i^j (i, j < number of finite points), whose spectral
// condition number is the seed paper's objective. The point at infinity has no row here.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <vector>

#include "nova/exact/matrix.hpp"
#include "nova/exact/points.hpp"

namespace nova {

Eigen::MatrixXd vandermonde(std::span<const double> x);
RationalMatrix vandermonde_exact(const std::vector<Rational>& x);

// kappa_2(V) without heap allocation for up to kSmallSvdMax points (the discovery inner loop);
// +inf for repeated points. Larger sets fall back to Eigen.
double kappa2_vandermonde(std::span<const double> x);

// The finite points of a list as doubles (each the nearest double to the exact value).
std::vector<double> finite_doubles(const PointList& points);

}  // namespace nova
