// The library's only instantiations of Eigen's SVDs (JacobiSVD and BDCSVD of MatrixXd), kept in one
// translation unit: they are the slowest code in the project to compile (about 45 s per file at -O1,
// twice that with UBSan), and two files instantiating them had doubled that cost.
#pragma once

#include <Eigen/Dense>

namespace nova::detail {

// Singular values, descending: JacobiSVD up to 128 rows and columns (still quick, most accurate),
// BDCSVD beyond (the 2D Kronecker matrices of large tiles).
Eigen::VectorXd eigen_singular_values(const Eigen::MatrixXd& a);

// Moore-Penrose pseudo-inverse from the thin SVD (zero singular values dropped), same choice of SVD.
Eigen::MatrixXd eigen_pseudo_inverse(const Eigen::MatrixXd& a);

}  // namespace nova::detail
