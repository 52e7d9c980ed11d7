#include "nova/analysis/analysis.hpp"

#include <algorithm>

#include "nova/analysis/vandermonde.hpp"
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

// `inverse` is the exact inverse when the matrix is square (V, B^T); rectangular ones use the SVD
// pseudo-inverse. 2D values come from the Kronecker matrix itself.
MatrixAnalysis analyze_matrix(const std::string& name, const RationalMatrix& m, bool square, bool two_d) {
  MatrixAnalysis a;
  a.name = name;
  const Eigen::MatrixXd md = to_eigen(m);
  Eigen::MatrixXd inv;
  if (square) inv = to_eigen(m.inverse());
  a.one_d = conditioning(md, square ? &inv : nullptr);
  if (two_d) {
    const Eigen::MatrixXd k = kron(md, md);
    Eigen::MatrixXd kinv;
    if (square) kinv = kron(inv, inv);
    a.two_d = conditioning(k, square ? &kinv : nullptr);
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
    a.V = analyze_matrix("V", vandermonde_exact(finite_values(t.points())), true, options.two_d);
  }
  a.AT = analyze_matrix("AT", t.AT(), false, options.two_d);
  a.G = analyze_matrix("G", t.G(), false, options.two_d);
  a.BT = analyze_matrix("BT", t.BT(), true, options.two_d);
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
