#include "nova/exact/verify.hpp"

#include <string>

namespace nova {
namespace {

std::string shape(const RationalMatrix& x) { return std::to_string(x.rows()) + "x" + std::to_string(x.cols()); }

Verification fail(std::string reason) { return {false, std::move(reason)}; }

Verification check_shapes(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT) {
  const std::size_t n = BT.rows();
  if (BT.cols() != n) return fail("BT is " + shape(BT) + ", not square");
  if (AT.cols() != n) return fail("AT is " + shape(AT) + " but BT is " + shape(BT) + ": AT needs n = " + std::to_string(n) + " columns");
  if (G.rows() != n) return fail("G is " + shape(G) + " but BT is " + shape(BT) + ": G needs n = " + std::to_string(n) + " rows");
  if (AT.rows() + G.cols() != n + 1)
    return fail("AT is " + shape(AT) + " and G is " + shape(G) + ": m + r - 1 must equal n = " + std::to_string(n));
  if (AT.rows() == 0 || G.cols() == 0) return fail("empty transform (m or r is 0)");
  return {true, {}};
}

// T[i][k][j] = sum_p AT[i][p] G[p][k] BT[p][j], stored as [(i*r + k)*n + j].
std::vector<Rational> tensor_1d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT) {
  const std::size_t m = AT.rows(), r = G.cols(), n = BT.rows();
  std::vector<Rational> t(m * r * n);
  Rational w;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < r; ++k) {
      Rational* row = &t[(i * r + k) * n];
      for (std::size_t p = 0; p < n; ++p) {
        if (AT(i, p) == 0 || G(p, k) == 0) continue;
        w = AT(i, p) * G(p, k);
        for (std::size_t j = 0; j < n; ++j)
          if (BT(p, j) != 0) row[j] += w * BT(p, j);
      }
    }
  return t;
}

}  // namespace

Verification verify_1d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT) {
  if (auto s = check_shapes(AT, G, BT); !s) return s;
  const std::size_t m = AT.rows(), r = G.cols(), n = BT.rows();
  const std::vector<Rational> t = tensor_1d(AT, G, BT);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < r; ++k)
      for (std::size_t j = 0; j < n; ++j) {
        const Rational& got = t[(i * r + k) * n + j];
        const int expected = j == i + k ? 1 : 0;
        if (got != expected)
          return fail("1D identity fails at output i=" + std::to_string(i) + ", tap k=" + std::to_string(k) +
                      ", input j=" + std::to_string(j) + ": sum_p AT[i][p] G[p][k] BT[p][j] = " + to_string(got) +
                      ", expected " + std::to_string(expected));
      }
  return {true, {}};
}

Verification verify_2d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT, bool separable) {
  if (auto s = check_shapes(AT, G, BT); !s) return s;
  const std::size_t m = AT.rows(), r = G.cols(), n = BT.rows();
  auto report = [&](std::size_t I, std::size_t K, std::size_t J, const Rational& got, int expected) {
    return fail("2D identity fails at output (" + std::to_string(I / m) + "," + std::to_string(I % m) + "), tap (" +
                std::to_string(K / r) + "," + std::to_string(K % r) + "), input (" + std::to_string(J / n) + "," +
                std::to_string(J % n) + "): sum = " + to_string(got) + ", expected " + std::to_string(expected));
  };
  if (separable) {
    // Each 2D sum over (p, q) factors as (sum_p ...)(sum_q ...) by distributivity.
    const std::vector<Rational> t = tensor_1d(AT, G, BT);
    Rational product;
    for (std::size_t I = 0; I < m * m; ++I)
      for (std::size_t K = 0; K < r * r; ++K)
        for (std::size_t J = 0; J < n * n; ++J) {
          const std::size_t i = I / m, i2 = I % m, k = K / r, k2 = K % r, j = J / n, j2 = J % n;
          product = t[(i * r + k) * n + j] * t[(i2 * r + k2) * n + j2];
          const int expected = (j == i + k && j2 == i2 + k2) ? 1 : 0;
          if (product != expected) return report(I, K, J, product, expected);
        }
    return {true, {}};
  }
  // Direct: the Kronecker matrices and every product of the n^2-term sums.
  const RationalMatrix AT2 = kron(AT, AT), G2 = kron(G, G), BT2 = kron(BT, BT);
  const std::size_t N = n * n;
  std::vector<Rational> row(N);
  Rational w;
  for (std::size_t I = 0; I < m * m; ++I)
    for (std::size_t K = 0; K < r * r; ++K) {
      for (auto& v : row) v = 0;
      for (std::size_t P = 0; P < N; ++P) {
        if (AT2(I, P) == 0 || G2(P, K) == 0) continue;
        w = AT2(I, P) * G2(P, K);
        for (std::size_t J = 0; J < N; ++J)
          if (BT2(P, J) != 0) row[J] += w * BT2(P, J);
      }
      const std::size_t i = I / m, i2 = I % m, k = K / r, k2 = K % r;
      for (std::size_t J = 0; J < N; ++J) {
        const int expected = (J / n == i + k && J % n == i2 + k2) ? 1 : 0;
        if (row[J] != expected) return report(I, K, J, row[J], expected);
      }
    }
  return {true, {}};
}

Verification verify(const Transform& t) {
  if (auto v = verify_1d(t.AT(), t.G(), t.BT()); !v) return v;
  return verify_2d(t.AT(), t.G(), t.BT(), /*separable=*/true);
}

Verification equal_up_to_scaling(const RationalMatrix& AT1, const RationalMatrix& G1, const RationalMatrix& BT1,
                                 const RationalMatrix& AT2, const RationalMatrix& G2, const RationalMatrix& BT2,
                                 std::vector<Rational>* d1_out, std::vector<Rational>* d2_out) {
  if (!(AT1.rows() == AT2.rows() && AT1.cols() == AT2.cols() && G1.rows() == G2.rows() && G1.cols() == G2.cols() &&
        BT1.rows() == BT2.rows() && BT1.cols() == BT2.cols()))
    return fail("matrix shapes differ");
  const std::size_t n = BT1.rows();
  std::vector<Rational> d1(n), d2(n);
  // A diagonal factor per column of AT (row of G) from its first non-zero entry, then checked on all.
  auto factor = [&](auto get1, auto get2, std::size_t len, std::size_t p, Rational& d, const char* name) -> Verification {
    std::size_t lead = 0;
    while (lead < len && get1(lead) == 0) ++lead;
    if (lead == len) return fail(std::string(name) + " has an all-zero line at position " + std::to_string(p));
    d = get2(lead) / get1(lead);
    if (d == 0) return fail(std::string(name) + " line " + std::to_string(p) + " is zero where the reference is not");
    for (std::size_t e = 0; e < len; ++e)
      if (get2(e) != d * get1(e))
        return fail(std::string(name) + "[" + std::to_string(p) + "] is not a multiple of the reference's at entry " +
                    std::to_string(e) + ": " + to_string(get2(e)) + " vs " + to_string(get1(e)));
    return {true, {}};
  };
  for (std::size_t p = 0; p < n; ++p) {
    auto v1 = factor([&](std::size_t i) { return AT1(i, p); }, [&](std::size_t i) { return AT2(i, p); }, AT1.rows(), p,
                     d1[p], "AT column");
    if (!v1) return v1;
    auto v2 = factor([&](std::size_t k) { return G1(p, k); }, [&](std::size_t k) { return G2(p, k); }, G1.cols(), p,
                     d2[p], "G row");
    if (!v2) return v2;
    const Rational inverse = 1 / (d1[p] * d2[p]);
    for (std::size_t j = 0; j < n; ++j)
      if (BT2(p, j) != BT1(p, j) * inverse)
        return fail("BT[" + std::to_string(p) + "][" + std::to_string(j) + "] = " + to_string(BT2(p, j)) + ", but the scaling of AT and G implies " +
                    to_string(BT1(p, j) * inverse));
  }
  if (d1_out) *d1_out = std::move(d1);
  if (d2_out) *d2_out = std::move(d2);
  return {true, {}};
}

Verification match_points(const Transform& t, std::vector<Rational>* d1, std::vector<Rational>* d2) {
  if (t.points().empty()) return fail("the transform does not name its points");
  const LagrangeTriple base = lagrange_triple(t.tile(), t.points());
  auto v = equal_up_to_scaling(base.AT, base.G, base.BT, t.AT(), t.G(), t.BT(), d1, d2);
  if (!v) v.reason = "matrices do not come from the points {" + to_string(t.points()) + "} by any diagonal scaling: " + v.reason;
  return v;
}

}  // namespace nova
