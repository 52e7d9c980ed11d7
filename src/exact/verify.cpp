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

// The 1D identity on the tensor of tensor_1d: T[i][k][j] = [j == i + k].
Verification check_identity_1d(const std::vector<Rational>& t, std::size_t m, std::size_t r, std::size_t n) {
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

// Failure message of the 2D identity at output I, tap K, input J (flattened 2D indices).
Verification report_2d(std::size_t m, std::size_t r, std::size_t n, std::size_t I, std::size_t K, std::size_t J,
                       const Rational& got, int expected) {
  return fail("2D identity fails at output (" + std::to_string(I / m) + "," + std::to_string(I % m) + "), tap (" +
              std::to_string(K / r) + "," + std::to_string(K % r) + "), input (" + std::to_string(J / n) + "," +
              std::to_string(J % n) + "): sum = " + to_string(got) + ", expected " + std::to_string(expected));
}

// The 2D identity from the 1D tensor t: each 2D sum over (p, q) factors as t[a] * t[b] with a = (i, k, j)
// and b = (i', k', j') (distributivity). A product is non-zero only when both factors are, so it suffices
// to check every pair of non-zero factors, and that the pairs expected to give 1 have non-zero factors.
Verification check_separable_2d(const std::vector<Rational>& t, std::size_t m, std::size_t r, std::size_t n) {
  auto on_diagonal = [&](std::size_t e) { return e % n == (e / (r * n)) + (e / n) % r; };  // j == i + k
  auto pair_report = [&](std::size_t a, std::size_t b, const Rational& got, int expected) {
    const std::size_t i = a / (r * n), k = (a / n) % r, j = a % n;
    const std::size_t i2 = b / (r * n), k2 = (b / n) % r, j2 = b % n;
    return report_2d(m, r, n, i * m + i2, k * r + k2, j * n + j2, got, expected);
  };
  std::vector<std::size_t> nonzero;
  for (std::size_t e = 0; e < t.size(); ++e)
    if (t[e] != 0) nonzero.push_back(e);
  Rational product;
  for (std::size_t a : nonzero)
    for (std::size_t b : nonzero) {
      const int expected = on_diagonal(a) && on_diagonal(b) ? 1 : 0;
      product = t[a] * t[b];
      if (product != expected) return pair_report(a, b, product, expected);
    }
  std::vector<std::size_t> diagonal;
  for (std::size_t e = 0; e < t.size(); ++e)
    if (on_diagonal(e)) diagonal.push_back(e);
  for (std::size_t a : diagonal)
    for (std::size_t b : diagonal)
      if (t[a] == 0 || t[b] == 0) return pair_report(a, b, Rational(0), 1);
  return {true, {}};
}

}  // namespace

Verification verify_1d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT) {
  if (auto s = check_shapes(AT, G, BT); !s) return s;
  return check_identity_1d(tensor_1d(AT, G, BT), AT.rows(), G.cols(), BT.rows());
}

Verification verify_2d(const RationalMatrix& AT, const RationalMatrix& G, const RationalMatrix& BT, bool separable) {
  if (auto s = check_shapes(AT, G, BT); !s) return s;
  const std::size_t m = AT.rows(), r = G.cols(), n = BT.rows();
  if (separable) return check_separable_2d(tensor_1d(AT, G, BT), m, r, n);
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
        if (row[J] != expected) return report_2d(m, r, n, I, K, J, row[J], expected);
      }
    }
  return {true, {}};
}

Verification verify(const Transform& t) {
  if (auto s = check_shapes(t.AT(), t.G(), t.BT()); !s) return s;
  const std::size_t m = t.AT().rows(), r = t.G().cols(), n = t.BT().rows();
  const std::vector<Rational> tensor = tensor_1d(t.AT(), t.G(), t.BT());  // once, for both identities
  if (auto v = check_identity_1d(tensor, m, r, n); !v) return v;
  return check_separable_2d(tensor, m, r, n);
}

Verification at_g_up_to_scaling(const RationalMatrix& AT1, const RationalMatrix& G1,
                                const RationalMatrix& AT2, const RationalMatrix& G2,
                                std::vector<Rational>* d1_out, std::vector<Rational>* d2_out) {
  if (!(AT1.rows() == AT2.rows() && AT1.cols() == AT2.cols() && G1.rows() == G2.rows() &&
        G1.cols() == G2.cols() && AT1.cols() == G1.rows()))
    return fail("matrix shapes differ");
  const std::size_t n = G1.rows();
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
  }
  if (d1_out) *d1_out = std::move(d1);
  if (d2_out) *d2_out = std::move(d2);
  return {true, {}};
}

Verification equal_up_to_scaling(const RationalMatrix& AT1, const RationalMatrix& G1,
                                 const RationalMatrix& BT1, const RationalMatrix& AT2,
                                 const RationalMatrix& G2, const RationalMatrix& BT2,
                                 std::vector<Rational>* d1_out, std::vector<Rational>* d2_out) {
  if (!(BT1.rows() == BT2.rows() && BT1.cols() == BT2.cols() && BT1.rows() == G1.rows()))
    return fail("matrix shapes differ");
  std::vector<Rational> d1, d2;
  Verification v = at_g_up_to_scaling(AT1, G1, AT2, G2, &d1, &d2);
  if (!v) return v;
  const std::size_t n = BT1.rows();
  for (std::size_t p = 0; p < n; ++p) {
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
