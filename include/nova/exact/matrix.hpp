// A small dense matrix of exact rationals, row-major. Sizes here are at most 32x32 in 1D and
// 1024x1024 for 2D Kronecker products, so clarity wins over blocking.
#pragma once

#include <cstddef>
#include <vector>

#include "nova/exact/rational.hpp"

namespace nova {

class RationalMatrix {
 public:
  RationalMatrix() = default;
  RationalMatrix(std::size_t rows, std::size_t cols);  // all zeros
  static RationalMatrix identity(std::size_t n);
  static RationalMatrix diagonal(const std::vector<Rational>& diag);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  Rational& operator()(std::size_t i, std::size_t j) { return data_[i * cols_ + j]; }
  const Rational& operator()(std::size_t i, std::size_t j) const { return data_[i * cols_ + j]; }

  RationalMatrix transpose() const;
  // Exact inverse by Gauss-Jordan elimination; throws nova::Error if not square or singular.
  RationalMatrix inverse() const;
  // Row-major float64 values, each the nearest double to the exact entry.
  std::vector<double> to_double() const;
  std::size_t count_nonzeros() const;

  friend RationalMatrix operator*(const RationalMatrix& a, const RationalMatrix& b);
  friend bool operator==(const RationalMatrix& a, const RationalMatrix& b);

 private:
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::vector<Rational> data_;
};

// Kronecker product a (x) b.
RationalMatrix kron(const RationalMatrix& a, const RationalMatrix& b);

}  // namespace nova
