#include "nova/analysis/analysis.hpp"

#include <algorithm>

#include "nova/analysis/vandermonde.hpp"
#include "nova/error.hpp"
#include "nova/exact/verify.hpp"

namespace nova {

namespace {

Eigen::MatrixXd to_eigen(const RationalMatrix& m) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(m.rows()), static_cast<Eigen::Index>(m.cols()));
  const auto values = m.to_double();
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) {
      out(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = values[i * m.cols() + j];
    }
  }
  return out;
}

// The exact inverse of a square matrix (V, B^T), the exact Moore-Penrose pseudo-inverse of a
// rectangular one of full rank (A^T: full row rank, M^T (M M^T)^-1; G: full column rank,
// (M^T M)^-1 M^T). Without it the small singular values and M^+ would come from a float64 SVD, which
// loses them below eps * sigma_max: A^T (x) A^T of F(12,3) has kappa2 5.9e17, printed as inf.
// Returns false for a rank-deficient matrix (which no verified transform has): the SVD then decides.
bool exact_inverse(const RationalMatrix& m, Eigen::MatrixXd& out) {
  try {
    if (m.rows() == m.cols()) {
      out = to_eigen(m.inverse());
    } else if (m.rows() < m.cols()) {
      out = to_eigen(m.transpose() * (m * m.transpose()).inverse());
    } else {
      out = to_eigen((m.transpose() * m).inverse() * m.transpose());
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

// 2D values come from the Kronecker matrix itself; its (pseudo-)inverse is the Kronecker product of
// the 1D one.
MatrixAnalysis analyze_matrix(const std::string& name, const RationalMatrix& m, bool two_d) {
  MatrixAnalysis a;
  a.name = name;
  const Eigen::MatrixXd md = to_eigen(m);
  Eigen::MatrixXd inv;
  const bool have_inverse = exact_inverse(m, inv);
  a.one_d = conditioning(md, have_inverse ? &inv : nullptr);
  if (two_d) {
    const Eigen::MatrixXd k = kron(md, md);
    Eigen::MatrixXd kinv;
    if (have_inverse) kinv = kron(inv, inv);
    a.two_d = conditioning(k, have_inverse ? &kinv : nullptr);
    a.kron_ratio = a.two_d->kappa2 / (a.one_d.kappa2 * a.one_d.kappa2);
  }
  return a;
}

}  // namespace

TransformAnalysis analyze(const Transform& t, const AnalysisOptions& options) {
  TransformAnalysis a;
  a.tile = t.tile();
  a.points = t.points();
  a.scaling = t.scaling().convention;
  if (!finite_values(t.points()).empty()) {
    a.V = analyze_matrix("V", vandermonde_exact(finite_values(t.points())), options.two_d);
  }
  a.AT = analyze_matrix("AT", t.AT(), options.two_d);
  a.G = analyze_matrix("G", t.G(), options.two_d);
  a.BT = analyze_matrix("BT", t.BT(), options.two_d);
  a.norm_product = a.AT.one_d.norm2 * a.G.one_d.norm2 * a.BT.one_d.norm2;
  if (options.two_d) a.norm_product_2d = a.AT.two_d->norm2 * a.G.two_d->norm2 * a.BT.two_d->norm2;
  a.max_abs_entry = std::max({a.AT.one_d.max_abs, a.G.one_d.max_abs, a.BT.one_d.max_abs});
  a.cost = transform_cost(t);
  for (Format f : options.formats) a.representability.push_back(representability(f, t));
  const Verification v = verify(t);
  a.verified = v.ok;
  a.verify_reason = v.reason;
  return a;
}

}  // namespace nova
