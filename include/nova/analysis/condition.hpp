// Norms and condition numbers of one float64 matrix in the 1, 2, infinity and Frobenius norms.
// For a rectangular matrix (A^T is m x n, G is n x r) the condition number is ||M|| ||M^+|| with the
// Moore-Penrose pseudo-inverse, which for the 2-norm is sigma_max / sigma_min. analyze() passes the
// exact (pseudo-)inverse of every matrix, computed in rational arithmetic.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace nova {

struct Conditioning {
  int rows = 0, cols = 0;
  std::vector<double> sigma;  // singular values, descending
  double norm1 = 0, norm2 = 0, norm_inf = 0, norm_fro = 0;
  double kappa1 = 0, kappa2 = 0, kappa_inf = 0, kappa_fro = 0;
  double max_abs = 0;  // largest |entry|
};

// `inverse`, when given, is M^-1 (or M^+) computed elsewhere, e.g. exactly in rational arithmetic;
// otherwise M^+ comes from an SVD, and singular values within its error (max(rows, cols) eps sigma_max)
// count as 0: a numerically rank-deficient matrix has infinite condition numbers. kappa2 always comes
// from the singular values; with an inverse given, the small ones come from the inverse's large ones
// (sigma_i(M) = 1 / sigma(M^-1)), which a float64 SVD of M alone loses below eps * sigma_max:
// kappa2 = sigma_max(M) sigma_max(M^-1), finite wherever the inverse's entries fit float64 (inf where
// they do not).
Conditioning conditioning(const Eigen::MatrixXd& m, const Eigen::MatrixXd* inverse = nullptr);

double norm1(const Eigen::MatrixXd& m);     // max column sum
double norm_inf(const Eigen::MatrixXd& m);  // max row sum

// Kronecker product a (x) b in float64 (each entry one rounded product).
Eigen::MatrixXd kron(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);

}  // namespace nova
