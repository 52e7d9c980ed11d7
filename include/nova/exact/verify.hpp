// Exact verification of a transform: proves the Winograd identity in rational arithmetic.
#pragma once

#include <string>

#include "nova/exact/transform.hpp"

namespace nova {

struct Verification {
  bool ok = false;
  std::string reason;  // empty when ok; otherwise names the first failing entry and its value
  explicit operator bool() const { return ok; }
};

// 1D: for all i < m, k < r, j < n: sum_p A^T[i][p] G[p][k] B^T[p][j] == [j == i + k].
Verification verify_1d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT);

// 2D, on the Kronecker matrices A^T(x)A^T, G(x)G, B^T(x)B^T: for every output (i,i'), filter tap
// (k,k') and input (j,j'), sum over the n^2 Winograd positions equals [j=i+k][j'=i'+k'].
// `separable` evaluates each term's sum as a product of two 1D sums (exact, by distributivity;
// O(m r n^2) work); otherwise every one of the m^2 r^2 n^4 products is summed (slow, for tests).
Verification verify_2d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT,
                       bool separable = true);

// Shapes, then 1D, then 2D (separable).
Verification verify(const Transform& t);

// When the points are known: do the matrices equal the construction from those points up to a
// diagonal scaling (A^T D1, D2 G, (D1 D2)^{-1} B^T)? On success fills d1, d2 (relative to lagrange).
Verification match_points(const Transform& t, std::vector<Rational>* d1 = nullptr,
                          std::vector<Rational>* d2 = nullptr);

// Do AT2 = AT1 D1 and G2 = D2 G1 for some non-zero diagonals? (B^T is then fixed by the identity, which
// verify checks: a file's points are checked against its AT and G as it is read, B^T left to verification.)
Verification at_g_up_to_scaling(const RationalMatrix& AT1, const RationalMatrix& G1,
                                const RationalMatrix& AT2, const RationalMatrix& G2,
                                std::vector<Rational>* d1 = nullptr, std::vector<Rational>* d2 = nullptr);

// Do (AT2, G2, BT2) equal (AT1 D1, D2 G1, (D1 D2)^{-1} BT1) for some non-zero diagonals?
Verification equal_up_to_scaling(const RationalMatrix& AT1, const RationalMatrix& G1, const RationalMatrix& BT1,
                                 const RationalMatrix& AT2, const RationalMatrix& G2, const RationalMatrix& BT2,
                                 std::vector<Rational>* d1 = nullptr, std::vector<Rational>* d2 = nullptr);

}  // namespace nova
