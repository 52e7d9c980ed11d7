#include "eigen_svd.hpp"

#include <Eigen/SVD>

namespace nova::detail {

namespace {

bool jacobi_is_cheap(const Eigen::MatrixXd& a) {
  return a.rows() <= 128 && a.cols() <= 128;
}

}  // namespace

Eigen::VectorXd eigen_singular_values(const Eigen::MatrixXd& a) {
  if (jacobi_is_cheap(a)) return Eigen::JacobiSVD<Eigen::MatrixXd>(a).singularValues();
  return Eigen::BDCSVD<Eigen::MatrixXd>(a).singularValues();
}

Eigen::MatrixXd eigen_pseudo_inverse(const Eigen::MatrixXd& a) {
  const unsigned opts = Eigen::ComputeThinU | Eigen::ComputeThinV;
  auto build = [](const auto& svd) {
    Eigen::VectorXd inv = svd.singularValues();
    for (Eigen::Index i = 0; i < inv.size(); ++i) inv(i) = inv(i) > 0 ? 1.0 / inv(i) : 0.0;
    return Eigen::MatrixXd(svd.matrixV() * inv.asDiagonal() * svd.matrixU().transpose());
  };
  if (jacobi_is_cheap(a)) return build(Eigen::JacobiSVD<Eigen::MatrixXd>(a, opts));
  return build(Eigen::BDCSVD<Eigen::MatrixXd>(a, opts));
}

}  // namespace nova::detail
