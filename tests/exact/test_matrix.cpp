#include <gtest/gtest.h>

#include <random>

#include "nova/error.hpp"
#include "nova/exact/matrix.hpp"

namespace nova {
namespace {

RationalMatrix random_matrix(std::size_t rows, std::size_t cols, std::mt19937& rng) {
  std::uniform_int_distribution<int> num(-9, 9), den(1, 7);
  RationalMatrix a(rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      a(i, j) = Rational(num(rng), den(rng));
      a(i, j).canonicalize();
    }
  return a;
}

TEST(RationalMatrix, InverseTimesMatrixIsIdentity) {
  std::mt19937 rng(3);
  for (std::size_t n : {1u, 2u, 5u, 9u}) {
    RationalMatrix a = random_matrix(n, n, rng);
    RationalMatrix inv = a.inverse();  // random rational matrices are non-singular with probability ~1
    EXPECT_EQ(a * inv, RationalMatrix::identity(n));
    EXPECT_EQ(inv * a, RationalMatrix::identity(n));
  }
}

TEST(RationalMatrix, InverseNeedsPivoting) {
  RationalMatrix a(2, 2);
  a(0, 1) = 1;
  a(1, 0) = 1;  // zero on the diagonal
  EXPECT_EQ(a.inverse(), a);
}

TEST(RationalMatrix, SingularAndNonSquareAreErrors) {
  RationalMatrix s(2, 2);
  s(0, 0) = 1;
  s(0, 1) = 2;
  s(1, 0) = 2;
  s(1, 1) = 4;
  EXPECT_THROW(s.inverse(), Error);
  EXPECT_THROW(RationalMatrix(2, 3).inverse(), Error);
  EXPECT_THROW(RationalMatrix(2, 3) * RationalMatrix(2, 3), Error);
}

TEST(RationalMatrix, KroneckerMixedProductProperty) {
  std::mt19937 rng(5);
  const RationalMatrix a = random_matrix(2, 3, rng), b = random_matrix(3, 2, rng);
  const RationalMatrix c = random_matrix(3, 2, rng), d = random_matrix(2, 4, rng);
  EXPECT_EQ(kron(a, b) * kron(c, d), kron(a * c, b * d));
  const RationalMatrix k = kron(a, b);
  EXPECT_EQ(k.rows(), 6u);
  EXPECT_EQ(k.cols(), 6u);
  EXPECT_EQ(k(1 * 3 + 2, 2 * 2 + 1), a(1, 2) * b(2, 1));
}

TEST(RationalMatrix, TransposeAndProduct) {
  std::mt19937 rng(9);
  const RationalMatrix a = random_matrix(3, 4, rng), b = random_matrix(4, 2, rng);
  EXPECT_EQ((a * b).transpose(), b.transpose() * a.transpose());
  EXPECT_EQ(a.transpose().transpose(), a);
}

}  // namespace
}  // namespace nova
