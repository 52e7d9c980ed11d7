#include "nova/numerics/first_order.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "nova/error.hpp"

namespace nova {
namespace {

// Mean square relative rounding error of a floating format (see the header): u^2 / 6.
double s2(const StageFormat& s, const char* stage) {
  if (is_integer_format(s.format))
    throw Error(std::string("first-order prediction: stage '") + stage + "' is an integer format (its error depends on the data's range)");
  const double u = format_info(s.format).unit_roundoff;
  return s.format == Format::kFp64 ? 0.0 : u * u / 6;
}
double s2(Format f, const char* stage) { return s2(StageFormat{f}, stage); }

// Multiplying by zero or a power of two is exact in every floating format (away from range limits).
bool exact_factor(double l) {
  if (l == 0) return true;
  int e = 0;
  return std::frexp(l, &e) == 0.5 || std::frexp(l, &e) == -0.5;
}

// Signal and error variances of a dense rows x cols array.
struct Moments {
  int rows = 0, cols = 0;
  std::vector<double> signal, error;
};

// Y = L X for L (P x I), rounding every product and every partial sum with mean square `a`;
// `ax` is the error of rounding X's operands.
Moments multiply(const std::vector<double>& L, int P, int I, const Moments& x, double a, double ax) {
  Moments y{P, x.cols, std::vector<double>(static_cast<std::size_t>(P * x.cols)), std::vector<double>(static_cast<std::size_t>(P * x.cols))};
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < x.cols; ++j) {
      double sig = 0, err = 0, partial = 0;
      for (int i = 0; i < I; ++i) {
        const double l = L[static_cast<std::size_t>(p * I + i)], l2 = l * l;
        const double vx = x.signal[static_cast<std::size_t>(i * x.cols + j)];
        const double term = l2 * vx;
        sig += term;
        err += l2 * (x.error[static_cast<std::size_t>(i * x.cols + j)] + ax * vx);
        if (!exact_factor(l)) err += a * term;  // the product's rounding (none by 0 or +-2^k)
        if (l != 0 && partial != 0) err += a * (partial + term);  // the sum's rounding
        partial += term;
      }
      y.signal[static_cast<std::size_t>(p * x.cols + j)] = sig;
      y.error[static_cast<std::size_t>(p * x.cols + j)] = err;
    }
  return y;
}

Moments transpose(const Moments& m) {
  Moments t{m.cols, m.rows, std::vector<double>(m.signal.size()), std::vector<double>(m.error.size())};
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j) {
      t.signal[static_cast<std::size_t>(j * m.rows + i)] = m.signal[static_cast<std::size_t>(i * m.cols + j)];
      t.error[static_cast<std::size_t>(j * m.rows + i)] = m.error[static_cast<std::size_t>(i * m.cols + j)];
    }
  return t;
}

// L X L^T in the arithmetic `arith`.
Moments sandwich(const std::vector<double>& L, int P, int I, const Moments& x, Format arith, Format x_format) {
  const double a = s2(arith, "arithmetic");
  // Rounding operands again costs only when the arithmetic is coarser than their storage.
  const double ax = format_info(arith).unit_roundoff > format_info(x_format).unit_roundoff ? a : 0.0;
  const Moments t = multiply(L, P, I, x, a, ax);               // L X
  return transpose(multiply(L, P, I, transpose(t), a, 0.0));  // (L (L X)^T)^T = L X L^T
}

std::vector<double> rounded(const std::vector<double>& m, Format f) {
  std::vector<double> out(m.size());
  for (std::size_t k = 0; k < m.size(); ++k) out[k] = round_to(f, m[k]);
  return out;
}

// Rounded matrices are an exact perturbation, not noise: their rounding errors are correlated
// (a row of G = (1/N_p)(1, f, f^2) with dyadic f rounds by one common factor, which is a diagonal
// rescaling and costs nothing), so they are not propagated as independent errors. Instead: the
// 1D algorithm with matrices A', G', B' computes y_y = sum_{k,i} T'[y][k][i] g_k d_i with
// T'[y][k][i] = sum_a A'[y][a] G'[a][k] B'[a][i]; exactly, T[y][k][i] = (i == y + k). In 2D the
// coefficients are T' (x) T', and for iid unit data the mean square error per channel is
// sum (T'T' - TT)^2 = S''^2 - 2 S'^2 + S^2 with S'' = sum T'^2, S' = sum T' T, S = sum T^2 = m r.
double matrix_rounding_error2(const TransformF64& t, const std::vector<double>& AT, const std::vector<double>& G,
                              const std::vector<double>& BT) {
  double s2p = 0, s1p = 0;
  for (int y = 0; y < t.m; ++y)
    for (int k = 0; k < t.r; ++k)
      for (int i = 0; i < t.n; ++i) {
        double v = 0;
        for (int a = 0; a < t.n; ++a)
          v += AT[static_cast<std::size_t>(y * t.n + a)] * G[static_cast<std::size_t>(a * t.r + k)] *
               BT[static_cast<std::size_t>(a * t.n + i)];
        s2p += v * v;
        if (i == y + k) s1p += v;
      }
  const double s = static_cast<double>(t.m) * t.r;
  return std::fmax(0.0, s2p * s2p - 2 * s1p * s1p + s * s);
}

}  // namespace

double winograd_p(const TransformF64& t) {
  double p = 0;
  for (int a = 0; a < t.n; ++a) {
    double na = 0, ng = 0, nb = 0;
    for (int i = 0; i < t.m; ++i) na += t.at(i, a) * t.at(i, a);
    for (int k = 0; k < t.r; ++k) ng += t.g(a, k) * t.g(a, k);
    for (int j = 0; j < t.n; ++j) nb += t.bt(a, j) * t.bt(a, j);
    p += na * ng * nb;
  }
  return p;
}

double predicted_rel_error_2d(const TransformF64& t, double unit_roundoff) {
  return kFirstOrderC * unit_roundoff * winograd_p(t) / (static_cast<double>(t.m) * static_cast<double>(t.r));
}

}  // namespace nova

namespace nova {

double predicted_rel_error_2d(const TransformF64& t, const PrecisionModel& model, int64_t channels) {
  model.validate();
  if (channels < 1) throw Error("first-order prediction: channels must be at least 1");
  if (is_integer_format(model.matrices)) throw Error("first-order prediction: integer matrices are not modelled");
  const int m = t.m, r = t.r, n = t.n;
  const bool original = model.reference == ReferenceData::kOriginal;
  // The arithmetic formats round the matrices again; the coarser rounding is what the pipeline uses.
  const std::vector<double> AT = rounded(rounded(t.AT, model.matrices), model.output_arith);
  const std::vector<double> G = rounded(rounded(t.G, model.matrices), model.transform_arith);
  const std::vector<double> BT = rounded(rounded(t.BT, model.matrices), model.transform_arith);

  Moments d{n, n, std::vector<double>(static_cast<std::size_t>(n * n), 1.0), {}};
  d.error.assign(d.signal.size(), 0.0);
  Moments g{r, r, std::vector<double>(static_cast<std::size_t>(r * r), 1.0), {}};
  g.error.assign(g.signal.size(), 0.0);

  Moments U = sandwich(G, n, r, g, model.transform_arith, model.filter.format);
  Moments V = sandwich(BT, n, n, d, model.transform_arith, model.input.format);
  const double su = s2(model.filter_transform, "filter_transform"), sv = s2(model.input_transform, "input_transform");
  for (std::size_t k = 0; k < U.error.size(); ++k) {
    U.error[k] += su * U.signal[k];
    V.error[k] += sv * V.signal[k];
  }
  const double sp = s2(model.product, "product");
  const double sa = model.accumulate == Format::kInt32 ? 0.0 : s2(model.accumulate, "accumulate");
  const double sc = model.accumulate_chunk > 0 ? s2(model.chunk_accumulate, "chunk_accumulate") : 0.0;
  const double sm = s2(model.gemm_output, "gemm_output");
  const auto C = static_cast<double>(channels);
  const AccumulationWeights aw = accumulation_weights(model, C);
  Moments M{n, n, std::vector<double>(U.signal.size()), std::vector<double>(U.signal.size())};
  for (std::size_t k = 0; k < M.signal.size(); ++k) {
    const double uv = U.signal[k] * V.signal[k];
    M.signal[k] = C * uv;
    M.error[k] = C * (U.error[k] * V.signal[k] + U.signal[k] * V.error[k] + sp * uv) +
                 sa * uv * aw.accumulate + sc * uv * aw.chunk + sm * C * uv;
  }
  Moments Y = sandwich(AT, m, n, M, model.output_arith, model.gemm_output.format);
  const double so = s2(model.output, "output");
  double err = 0;
  for (std::size_t k = 0; k < Y.error.size(); ++k) err += Y.error[k] + so * Y.signal[k];
  // E||Y||^2 for unit iid data: every output sums C r^2 unit products.
  const double signal = C * static_cast<double>(m) * m * static_cast<double>(r) * r;
  // Rounding d and g perturbs the data, not the algorithm: the exact Winograd map passes it on as
  // a direct convolution would, relative mean square s2 each (only against the original data).
  const double data = original ? s2(model.input, "input") + s2(model.filter, "filter") : 0.0;
  const double matrices = matrix_rounding_error2(t, AT, G, BT) / (signal / C);
  return std::sqrt(err / signal + data + matrices);
}

}  // namespace nova
