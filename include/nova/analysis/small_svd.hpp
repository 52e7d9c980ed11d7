// Singular values of small dense matrices, fast enough for the inner loop of discovery (about 15k
// condition numbers per run), and Eigen-based ones for anything larger.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace nova {

// Matrices up to this many rows and columns go through the stack-only one-sided Jacobi path.
inline constexpr int kSmallSvdMax = 16;

// Singular values of the row-major rows x cols matrix `a` (rows, cols <= kSmallSvdMax), written to
// `sigma` in descending order; returns min(rows, cols). One-sided (Hestenes) Jacobi on the columns of
// the taller orientation: it needs no heap, and its relative accuracy is unaffected by column scaling,
// which is exactly the grading of a Vandermonde matrix (column j scales like x^j).
int small_singular_values(const double* a, int rows, int cols, double* sigma);

// sigma_max / sigma_min of a small matrix; +inf when sigma_min is 0 or the input is not finite.
double small_kappa2(const double* a, int rows, int cols);

// Singular values of any matrix, descending: the small path when it fits, otherwise Eigen's
// JacobiSVD (up to 128 rows/cols, where it is still quick and most accurate) or BDCSVD.
std::vector<double> singular_values(const Eigen::MatrixXd& a);

}  // namespace nova
