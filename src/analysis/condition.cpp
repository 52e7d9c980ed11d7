#include "nova/analysis/condition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eigen_svd.hpp"
#include "nova/analysis/small_svd.hpp"

namespace nova {

double norm1(const Eigen::MatrixXd& m) {
  return m.size() == 0 ? 0.0 : m.cwiseAbs().colwise().sum().maxCoeff();
}

double norm_inf(const Eigen::MatrixXd& m) {
  return m.size() == 0 ? 0.0 : m.cwiseAbs().rowwise().sum().maxCoeff();
}

Eigen::MatrixXd kron(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd k(a.rows() * b.rows(), a.cols() * b.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      k.block(i * b.rows(), j * b.cols(), b.rows(), b.cols()) = a(i, j) * b;
    }
  }
  return k;
}

Conditioning conditioning(const Eigen::MatrixXd& m, const Eigen::MatrixXd* inverse) {
  Conditioning c;
  c.rows = static_cast<int>(m.rows());
  c.cols = static_cast<int>(m.cols());
  if (m.size() == 0) return c;
  c.sigma = singular_values(m);
  c.norm1 = norm1(m);
  c.norm2 = c.sigma.front();
  c.norm_inf = norm_inf(m);
  c.norm_fro = m.norm();
  c.max_abs = m.cwiseAbs().maxCoeff();
  const double inf = std::numeric_limits<double>::infinity();
  if (inverse) {
    // A float64 SVD finds each singular value to within about eps * sigma_max, so an ill-conditioned
    // matrix's small ones are noise (or 0: kappa = inf for a Vandermonde matrix of kappa 1e40). Those
    // of the inverse are 1 / sigma_i, the small ones its large, accurate ones: each sigma_i is taken
    // from whichever SVD gives it to the better relative accuracy, that of M above the geometric
    // mean of sigma_max and sigma_min, that of M^-1 below.
    if (!inverse->allFinite()) {  // entries beyond float64: the condition numbers overflow too
      c.kappa1 = c.kappa2 = c.kappa_inf = c.kappa_fro = inf;
      return c;
    }
    const std::vector<double> tau = singular_values(*inverse);
    const std::size_t k = std::min(c.sigma.size(), tau.size());
    const double mean_sq = c.sigma.front() / tau.front();  // sigma_max * sigma_min
    for (std::size_t i = 0; i < k; ++i) {
      const double from_inverse = 1.0 / tau[k - 1 - i];
      if (from_inverse * from_inverse < mean_sq || !(c.sigma[i] > 0.0)) c.sigma[i] = from_inverse;
    }
    c.kappa2 = c.sigma.front() * tau.front();
    c.kappa1 = c.norm1 * norm1(*inverse);
    c.kappa_inf = c.norm_inf * norm_inf(*inverse);
    c.kappa_fro = c.norm_fro * inverse->norm();
    return c;
  }
  // Without an inverse, singular values below the SVD's own error (about max(rows, cols) eps sigma_max,
  // the numerical-rank threshold of LAPACK and numpy) are indistinguishable from 0: the matrix is
  // rank-deficient as far as float64 can tell, and its condition numbers are infinite. (Taken as they
  // came, a rank-one 2 x 3 matrix had kappa_2 = 9.4e15.)
  const double rank_tolerance =
      std::max(c.rows, c.cols) * std::numeric_limits<double>::epsilon() * c.sigma.front();
  if (!(c.sigma.back() > rank_tolerance)) {
    c.kappa1 = c.kappa2 = c.kappa_inf = c.kappa_fro = inf;
    return c;
  }
  c.kappa2 = c.sigma.front() / c.sigma.back();
  const Eigen::MatrixXd pinv = detail::eigen_pseudo_inverse(m);
  c.kappa1 = c.norm1 * norm1(pinv);
  c.kappa_inf = c.norm_inf * norm_inf(pinv);
  c.kappa_fro = c.norm_fro * pinv.norm();
  return c;
}

}  // namespace nova
