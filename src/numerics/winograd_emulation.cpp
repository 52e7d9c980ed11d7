// The emulated Winograd pipeline (see precision_model.hpp for the stages). Each arithmetic stage
// runs in one of three modes chosen once per call, so that the inner loops have no per-element
// dispatch and vectorize:
//   fp64   plain double arithmetic
//   fp32   plain float arithmetic (IEEE single operations are the fp32 model, bit for bit)
//   other  double arithmetic with each product and sum rounded by the software kernel; for
//          formats of at most 24 significant bits the double result rounded once is the correctly
//          rounded operation of the format (double has more than 2p + 2 bits)
// The batch (tiles x channels) is split over threads in contiguous chunks: every element is computed
// by the same operations whatever the split, so the results do not depend on the thread count.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "numerics/round_kernel.hpp"
#include "numerics/stage.hpp"

namespace nova {
namespace {

// f(begin, end) over [0, count) in contiguous chunks on up to hardware_concurrency() threads, each
// with at least `min_per_thread` elements.
template <class F>
void parallel_for(int64_t count, int64_t min_per_thread, const F& f) {
  const unsigned hw = std::thread::hardware_concurrency();
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(hw == 0 ? 1 : hw, count / min_per_thread));
  if (threads <= 1) {
    f(int64_t{0}, count);
    return;
  }
  const int64_t chunk = (count + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (int64_t b = chunk; b < count; b += chunk)
    pool.emplace_back([&f, b, count, chunk] { f(b, std::min(count, b + chunk)); });
  f(int64_t{0}, std::min(count, chunk));
  for (auto& t : pool) t.join();
}

// Work per thread below which threading does not pay (and searches, which score small training sets
// many times, stay on their own thread).
constexpr int64_t kMinBatchPerThread = 16384;

struct NoRound {
  double operator()(double x) const { return x; }
  float operator()(float x) const { return x; }
};
struct KernelRound {
  detail::FloatKernel k;
  double operator()(double x) const { return detail::round_float(x, k); }
};

// out[b] = L X[b] L^T for a batch of I x I matrices X, L being P x I, every operation through `rnd`.
// Sums run over the inner index in increasing order, starting from the first product.
// `load` converts an operand of X to the arithmetic (rounding it), so X itself is never copied.
template <class T, class Rnd, class Load>
void sandwich_batch(const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out, Rnd rnd,
                    Load load) {
  std::vector<T> l(L.size()), lt(static_cast<std::size_t>(I * P));
  for (std::size_t k = 0; k < L.size(); ++k) l[k] = load(L[k]);
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < I; ++i) lt[static_cast<std::size_t>(i * P + p)] = l[static_cast<std::size_t>(p * I + i)];
  std::vector<T> x(static_cast<std::size_t>(I * I)), tmp(static_cast<std::size_t>(P * I)), o(static_cast<std::size_t>(P * P));
  for (int64_t b = 0; b < batch; ++b) {
    const double* xb = X + b * I * I;
    for (int k = 0; k < I * I; ++k) x[static_cast<std::size_t>(k)] = load(xb[k]);
    for (int p = 0; p < P; ++p) {
      T* row = tmp.data() + p * I;
      const T* lp = l.data() + p * I;
      for (int j = 0; j < I; ++j) row[j] = rnd(lp[0] * x[static_cast<std::size_t>(j)]);
      for (int i = 1; i < I; ++i) {
        const T c = lp[i];
        const T* xi = x.data() + i * I;
        for (int j = 0; j < I; ++j) row[j] = rnd(row[j] + rnd(c * xi[j]));
      }
    }
    for (int p = 0; p < P; ++p) {
      T* orow = o.data() + p * P;
      const T* trow = tmp.data() + p * I;
      for (int q = 0; q < P; ++q) orow[q] = rnd(trow[0] * lt[static_cast<std::size_t>(q)]);
      for (int j = 1; j < I; ++j) {
        const T c = trow[j];
        const T* lj = lt.data() + j * P;
        for (int q = 0; q < P; ++q) orow[q] = rnd(orow[q] + rnd(c * lj[q]));
      }
    }
    double* ob = out + b * P * P;
    for (int k = 0; k < P * P; ++k) ob[k] = static_cast<double>(o[static_cast<std::size_t>(k)]);
  }
}

// L X L^T in the arithmetic `f`: operands are rounded to f first, then every operation.
void sandwich_range(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out) {
  if (f == Format::kFp64) {
    sandwich_batch<double>(L, P, I, X, batch, out, NoRound{}, NoRound{});
    return;
  }
  const KernelRound k{detail::float_kernel(f, Overflow::kIeee)};
  if (f == Format::kFp32) {
    // The kernel's fp32 result is a float value (or inf), so the cast is exact.
    sandwich_batch<float>(L, P, I, X, batch, out, NoRound{}, [k](double v) { return static_cast<float>(k(v)); });
    return;
  }
  sandwich_batch<double>(L, P, I, X, batch, out, k, k);
}

void sandwich(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out) {
  const int64_t II = int64_t{I} * I, PP = int64_t{P} * P;
  parallel_for(batch, kMinBatchPerThread, [&](int64_t b0, int64_t b1) {
    sandwich_range(f, L, P, I, X + b0 * II, b1 - b0, out + b0 * PP);
  });
}

// M[t][k][a] = sum_c U[f(t,k)][c][a] * V[t][c][a], each product rounded by `rp`, each sum by `ra`.
template <class RP, class RA>
void accumulate(const std::vector<double>& U, const std::vector<double>& V, int64_t T, int64_t C, int64_t K, int64_t nn,
                bool paired, std::vector<double>& M, RP rp, RA ra) {
  parallel_for(T, std::max<int64_t>(1, kMinBatchPerThread / std::max<int64_t>(1, C * K)), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t f = paired ? t : k;
        double* acc = M.data() + (t * K + k) * nn;
        for (int64_t a = 0; a < nn; ++a) acc[a] = 0.0;
        for (int64_t c = 0; c < C; ++c) {
          const double* u = U.data() + (f * C + c) * nn;
          const double* v = V.data() + (t * C + c) * nn;
          for (int64_t a = 0; a < nn; ++a) acc[a] = ra(acc[a] + rp(u[a] * v[a]));
        }
      }
  });
}

template <class RP>
void accumulate_with(Format acc, const std::vector<double>& U, const std::vector<double>& V, int64_t T, int64_t C,
                     int64_t K, int64_t nn, bool paired, std::vector<double>& M, RP rp) {
  // int32 accumulation of integer codes is exact; with the scales constant along c (checked by the
  // model) it equals exact accumulation of the dequantized products, which float64 carries out up
  // to its own rounding (relative 1e-16, far below any integer format's error).
  if (acc == Format::kFp64 || acc == Format::kInt32)
    accumulate(U, V, T, C, K, nn, paired, M, rp, NoRound{});
  else
    accumulate(U, V, T, C, K, nn, paired, M, rp, KernelRound{detail::float_kernel(acc, Overflow::kIeee)});
}

std::vector<double> prepared_matrix(const std::vector<double>& m, Format f) {
  std::vector<double> out = m;
  if (is_integer_format(f)) {
    const int64_t dims[] = {static_cast<int64_t>(out.size())};
    fake_quantize_grouped(f, QuantScheme::kSymmetric, out, dims, {});
  } else {
    round_in_place(f, out);
  }
  return out;
}

}  // namespace

std::vector<double> emulate_winograd(const TransformF64& t, const PrecisionModel& model, const std::vector<double>& d,
                                     const std::vector<double>& g, int64_t T, int64_t C, int64_t F, bool paired) {
  model.validate();
  const int m = t.m, r = t.r, n = t.n;
  const int64_t nn = int64_t{n} * n, rr = int64_t{r} * r, mm = int64_t{m} * m;
  if (T < 1 || C < 1 || F < 1) throw Error("Winograd emulation: zero-size data");
  if (static_cast<int64_t>(d.size()) != T * C * nn || static_cast<int64_t>(g.size()) != F * C * rr)
    throw Error("Winograd emulation: data sizes do not match the tile");
  if (paired && F != T) throw Error("Winograd emulation: paired tiles need one filter per tile");
  const int64_t K = paired ? 1 : F;

  const std::vector<double> AT = prepared_matrix(t.AT, model.matrices);
  const std::vector<double> G = prepared_matrix(t.G, model.matrices);
  const std::vector<double> BT = prepared_matrix(t.BT, model.matrices);

  std::vector<double> U(static_cast<std::size_t>(F * C * nn));
  sandwich(model.transform_arith, G, n, r, g.data(), F * C, U.data());
  {
    const int64_t dims[] = {F, C, nn};
    detail::apply_stage(model.filter_transform, U, dims, {{0}, {2}, {0, 1}});
  }
  std::vector<double> V(static_cast<std::size_t>(T * C * nn));
  sandwich(model.transform_arith, BT, n, n, d.data(), T * C, V.data());
  {
    const int64_t dims[] = {T, C, nn};
    detail::apply_stage(model.input_transform, V, dims, {{1}, {2}, {0, 1}});
  }

  std::vector<double> M(static_cast<std::size_t>(T * K * nn));
  if (model.product == Format::kFp64)
    accumulate_with(model.accumulate, U, V, T, C, K, nn, paired, M, NoRound{});
  else
    accumulate_with(model.accumulate, U, V, T, C, K, nn, paired, M, KernelRound{detail::float_kernel(model.product, Overflow::kIeee)});
  {
    const int64_t dims[] = {T, K, nn};
    detail::apply_stage(model.gemm_output, M, dims, {{1}, {}, {}});
  }

  std::vector<double> Y(static_cast<std::size_t>(T * K * mm));
  sandwich(model.output_arith, AT, m, n, M.data(), T * K, Y.data());
  {
    const int64_t dims[] = {T, K, mm};
    detail::apply_stage(model.output, Y, dims, {{1}, {}, {}});
  }
  return Y;
}

}  // namespace nova
