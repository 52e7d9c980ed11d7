#include "nova/exact/matrix.hpp"

#include <string>
#include <utility>

#include "nova/error.hpp"

namespace nova {

RationalMatrix::RationalMatrix(std::size_t rows, std::size_t cols) : rows_(rows), cols_(cols), data_(rows * cols) {}

RationalMatrix RationalMatrix::identity(std::size_t n) {
  RationalMatrix m(n, n);
  for (std::size_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}

RationalMatrix RationalMatrix::diagonal(const std::vector<Rational>& diag) {
  RationalMatrix m(diag.size(), diag.size());
  for (std::size_t i = 0; i < diag.size(); ++i) m(i, i) = diag[i];
  return m;
}

RationalMatrix RationalMatrix::transpose() const {
  RationalMatrix t(cols_, rows_);
  for (std::size_t i = 0; i < rows_; ++i)
    for (std::size_t j = 0; j < cols_; ++j) t(j, i) = (*this)(i, j);
  return t;
}

RationalMatrix RationalMatrix::inverse() const {
  if (rows_ != cols_)
    throw Error("cannot invert a " + std::to_string(rows_) + "x" + std::to_string(cols_) + " matrix: not square");
  const std::size_t n = rows_;
  RationalMatrix a = *this;
  RationalMatrix inv = identity(n);
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    while (pivot < n && a(pivot, col) == 0) ++pivot;
    if (pivot == n) throw Error("matrix is singular (no pivot in column " + std::to_string(col) + ")");
    if (pivot != col) {
      for (std::size_t j = 0; j < n; ++j) {
        std::swap(a(pivot, j), a(col, j));
        std::swap(inv(pivot, j), inv(col, j));
      }
    }
    const Rational scale = 1 / a(col, col);
    for (std::size_t j = 0; j < n; ++j) {
      a(col, j) *= scale;
      inv(col, j) *= scale;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (i == col || a(i, col) == 0) continue;
      const Rational factor = a(i, col);
      for (std::size_t j = 0; j < n; ++j) {
        if (a(col, j) != 0) a(i, j) -= factor * a(col, j);
        if (inv(col, j) != 0) inv(i, j) -= factor * inv(col, j);
      }
    }
  }
  return inv;
}

std::vector<double> RationalMatrix::to_double() const {
  std::vector<double> out(data_.size());
  for (std::size_t i = 0; i < data_.size(); ++i) out[i] = nova::to_double(data_[i]);
  return out;
}

std::size_t RationalMatrix::count_nonzeros() const {
  std::size_t count = 0;
  for (const auto& v : data_) count += v != 0;
  return count;
}

RationalMatrix operator*(const RationalMatrix& a, const RationalMatrix& b) {
  if (a.cols_ != b.rows_)
    throw Error("matrix product of " + std::to_string(a.rows_) + "x" + std::to_string(a.cols_) + " and " +
                std::to_string(b.rows_) + "x" + std::to_string(b.cols_) + ": inner sizes differ");
  RationalMatrix c(a.rows_, b.cols_);
  for (std::size_t i = 0; i < a.rows_; ++i)
    for (std::size_t k = 0; k < a.cols_; ++k) {
      const Rational& aik = a(i, k);
      if (aik == 0) continue;
      for (std::size_t j = 0; j < b.cols_; ++j)
        if (b(k, j) != 0) c(i, j) += aik * b(k, j);
    }
  return c;
}

bool operator==(const RationalMatrix& a, const RationalMatrix& b) {
  return a.rows_ == b.rows_ && a.cols_ == b.cols_ && a.data_ == b.data_;
}

RationalMatrix kron(const RationalMatrix& a, const RationalMatrix& b) {
  RationalMatrix k(a.rows() * b.rows(), a.cols() * b.cols());
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) {
      if (a(i, j) == 0) continue;
      for (std::size_t p = 0; p < b.rows(); ++p)
        for (std::size_t q = 0; q < b.cols(); ++q) k(i * b.rows() + p, j * b.cols() + q) = a(i, j) * b(p, q);
    }
  return k;
}

}  // namespace nova
