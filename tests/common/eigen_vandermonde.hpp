// kappa_2 of a Vandermonde matrix by Eigen's JacobiSVD: the tests' independent reference for the
// library's own small SVD (one-sided Jacobi with QR preconditioning).
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <vector>

namespace nova::testing {

// kappa_2(V), V_ij = x_i^j over the given (finite) points.
inline double eigen_vandermonde_kappa(const std::vector<double>& x) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd v(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) v(i, j) = std::pow(x[i], static_cast<double>(j));
  const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(v).singularValues();
  return s(0) / s(n - 1);
}

}  // namespace nova::testing
