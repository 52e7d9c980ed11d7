#include "nova/analysis/vandermonde.hpp"

#include <limits>

#include "nova/analysis/small_svd.hpp"

namespace nova {

Eigen::MatrixXd vandermonde(std::span<const double> x) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd v(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    double p = 1.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      v(i, j) = p;
      p *= x[static_cast<std::size_t>(i)];
    }
  }
  return v;
}

RationalMatrix vandermonde_exact(const std::vector<Rational>& x) {
  RationalMatrix v(x.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    Rational p = 1;
    for (std::size_t j = 0; j < x.size(); ++j) {
      v(i, j) = p;
      p *= x[i];
    }
  }
  return v;
}

double kappa2_vandermonde(std::span<const double> x) {
  const int n = static_cast<int>(x.size());
  if (n == 0) return 1.0;
  if (n > kSmallSvdMax) {
    const auto s = singular_values(vandermonde(x));
    return s.back() > 0 ? s.front() / s.back() : std::numeric_limits<double>::infinity();
  }
  double v[kSmallSvdMax * kSmallSvdMax];
  for (int i = 0; i < n; ++i) {
    double p = 1.0;
    for (int j = 0; j < n; ++j) {
      v[i * n + j] = p;
      p *= x[static_cast<std::size_t>(i)];
    }
  }
  return small_kappa2(v, n, n);
}

std::vector<double> finite_doubles(const PointList& points) {
  std::vector<double> out;
  for (const auto& p : points) {
    if (!p.infinite) out.push_back(to_double(p.value));
  }
  return out;
}

}  // namespace nova
