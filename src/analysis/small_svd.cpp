#include "nova/analysis/small_svd.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "eigen_svd.hpp"
#include "nova/error.hpp"

namespace nova {

int small_singular_values(const double* a, int rows, int cols, double* sigma) {
  if (rows < 1 || cols < 1 || rows > kSmallSvdMax || cols > kSmallSvdMax) {
    throw Error("small_singular_values: matrix size out of range");
  }
  // Work on the orientation with at least as many rows as columns: its k = min(rows, cols) columns
  // are orthogonalized and their final norms are the singular values.
  const bool transpose = rows < cols;
  const int len = transpose ? cols : rows;  // length of each working column
  const int k = transpose ? rows : cols;    // number of working columns
  double w[kSmallSvdMax][kSmallSvdMax];     // w[c][i]: column c, entry i
  for (int c = 0; c < k; ++c) {
    for (int i = 0; i < len; ++i) w[c][i] = transpose ? a[c * cols + i] : a[i * cols + c];
  }
  // Householder QR with column pivoting first (Drmac-Veselic preconditioning): the singular values of
  // A are those of R, and one-sided Jacobi on the rows of R converges in two or three sweeps even for
  // badly conditioned candidates, where Jacobi on A itself needs eight or more.
  for (int j = 0; j < k; ++j) {
    int pivot = j;
    double pivot_norm = -1.0;
    for (int c = j; c < k; ++c) {
      double s = 0.0;
      for (int i = j; i < len; ++i) s += w[c][i] * w[c][i];
      if (s > pivot_norm) {
        pivot_norm = s;
        pivot = c;
      }
    }
    if (pivot != j) {
      for (int i = 0; i < len; ++i) std::swap(w[j][i], w[pivot][i]);
    }
    const double norm = std::sqrt(pivot_norm);
    if (norm == 0.0) continue;
    const double alpha = w[j][j] > 0 ? -norm : norm;
    double v[kSmallSvdMax];
    for (int i = j; i < len; ++i) v[i] = w[j][i];
    v[j] -= alpha;
    double vv = 0.0;
    for (int i = j; i < len; ++i) vv += v[i] * v[i];
    if (vv == 0.0) continue;
    for (int c = j; c < k; ++c) {
      double d = 0.0;
      for (int i = j; i < len; ++i) d += v[i] * w[c][i];
      d *= 2.0 / vv;
      for (int i = j; i < len; ++i) w[c][i] -= d * v[i];
    }
  }
  // Rows of the k x k triangle R become the working columns: r[i][c] = R(i, c).
  double r[kSmallSvdMax][kSmallSvdMax];
  for (int i = 0; i < k; ++i) {
    for (int c = 0; c < k; ++c) r[i][c] = c >= i ? w[c][i] : 0.0;
  }
  for (int i = 0; i < k; ++i) {
    for (int c = 0; c < k; ++c) w[i][c] = r[i][c];
  }
  double norm2[kSmallSvdMax];
  for (int c = 0; c < k; ++c) {
    double s = 0.0;
    for (int i = 0; i < k; ++i) s += w[c][i] * w[c][i];
    norm2[c] = s;
  }
  const double tol = std::numeric_limits<double>::epsilon() * k;
  for (int sweep = 0; sweep < 80; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < k - 1; ++p) {
      for (int q = p + 1; q < k; ++q) {
        double gamma = 0.0;
        for (int i = 0; i < k; ++i) gamma += w[p][i] * w[q][i];
        const double alpha = norm2[p], beta = norm2[q];
        if (gamma == 0.0 || std::abs(gamma) <= tol * std::sqrt(alpha * beta)) continue;
        rotated = true;
        // Rotation that zeroes the (p, q) entry of W^T W (Rutishauser's stable formulas).
        const double zeta = (beta - alpha) / (2.0 * gamma);
        const double t = std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1.0 + zeta * zeta));
        const double c = 1.0 / std::sqrt(1.0 + t * t);
        const double s = c * t;
        double np = 0.0, nq = 0.0;
        for (int i = 0; i < k; ++i) {
          const double wp = w[p][i], wq = w[q][i];
          const double xp = c * wp - s * wq;
          const double xq = s * wp + c * wq;
          w[p][i] = xp;
          w[q][i] = xq;
          np += xp * xp;
          nq += xq * xq;
        }
        // Recomputed rather than updated by t * gamma: the update loses the small norms to
        // cancellation, and those are the ones a condition number needs.
        norm2[p] = np;
        norm2[q] = nq;
      }
    }
    if (!rotated) break;
  }
  for (int c = 0; c < k; ++c) sigma[c] = std::sqrt(norm2[c]);
  std::sort(sigma, sigma + k, std::greater<double>());
  return k;
}

double small_kappa2(const double* a, int rows, int cols) {
  const int count = rows * cols;
  for (int i = 0; i < count; ++i) {
    if (!std::isfinite(a[i])) return std::numeric_limits<double>::infinity();
  }
  double sigma[kSmallSvdMax];
  const int k = small_singular_values(a, rows, cols, sigma);
  if (!(sigma[k - 1] > 0.0)) return std::numeric_limits<double>::infinity();
  return sigma[0] / sigma[k - 1];
}

std::vector<double> singular_values(const Eigen::MatrixXd& a) {
  const auto rows = static_cast<int>(a.rows()), cols = static_cast<int>(a.cols());
  if (rows == 0 || cols == 0) return {};
  if (rows <= kSmallSvdMax && cols <= kSmallSvdMax) {
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = a;
    std::vector<double> s(static_cast<std::size_t>(std::min(rows, cols)));
    small_singular_values(rm.data(), rows, cols, s.data());
    return s;
  }
  const Eigen::VectorXd s = detail::eigen_singular_values(a);
  return std::vector<double>(s.data(), s.data() + s.size());
}

}  // namespace nova
