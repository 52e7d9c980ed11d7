// The model-aware first-order proxy (see stage_proxy.hpp for the model and its assumptions).
#include "nova/catalogue/stage_proxy.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "nova/numerics/format.hpp"

namespace nova {
namespace {

constexpr double kRho = 1.0 / 6.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_float_rounding(Format f) { return f != Format::kFp64 && !is_integer_format(f); }

double pow2_exact(double c) {
  if (c == 0) return true;
  int e = 0;
  return std::fabs(std::frexp(c, &e)) == 0.5;
}

// Rounds a matrix as the model stores it (float formats: nearest; integers: one symmetric scale),
// then as the arithmetic that consumes it loads it.
std::vector<double> prepared(const std::vector<double>& m, Format storage, Format arith) {
  std::vector<double> out = m;
  if (is_integer_format(storage)) {
    double amax = 0;
    for (double v : out) amax = std::max(amax, std::fabs(v));
    const double qmax = format_info(storage).max_finite;
    const double s = amax > 0 ? amax / qmax : 1.0;
    for (double& v : out) v = std::nearbyint(v / s) * s;
  } else if (storage != Format::kFp64) {
    for (double& v : out) v = round_to(storage, v);
  }
  if (is_float_rounding(arith))
    for (double& v : out) v = round_to(arith, v);
  return out;
}

// Noise factor of one row of a sandwich pass (in units of the operand's second moment): products by
// coefficients that are not 0 or a power of two, and partial sums once two terms are non-zero.
double row_factor(const double* row, int len, double u2) {
  double f = 0, prefix = 0;
  bool any = false;
  for (int j = 0; j < len; ++j) {
    const double c = row[j];
    if (c == 0) continue;
    if (!pow2_exact(c)) f += c * c;
    prefix += c * c;
    if (any) f += prefix;
    any = true;
  }
  return kRho * u2 * f;
}

struct StageNoise {
  double var = 0;       // noise variance for a value of second moment e2 (filled per call)
  bool overflow = false;
};

}  // namespace

ProxyTerms stage_proxy_terms(const TransformF64& t, const PrecisionModel& model, const ProxyOptions& o) {
  const int m = t.m, r = t.r, n = t.n;
  const double C = o.channels;
  const double h = o.headroom;
  ProxyTerms out;
  const std::vector<double> AT = prepared(t.AT, model.matrices, model.output_arith);
  const std::vector<double> G = prepared(t.G, model.matrices, model.transform_arith);
  const std::vector<double> BT = prepared(t.BT, model.matrices, model.transform_arith);
  auto at = [&](int i, int a) { return AT[static_cast<std::size_t>(i * n + a)]; };
  auto g = [&](int a, int k) { return G[static_cast<std::size_t>(a * r + k)]; };
  auto bt = [&](int a, int j) { return BT[static_cast<std::size_t>(a * n + j)]; };
  const auto N = static_cast<std::size_t>(n);
  auto idx = [&](int a, int b) { return static_cast<std::size_t>(a) * N + static_cast<std::size_t>(b); };

  std::vector<double> gA(N), nG(N), nB(N), KA(N * N), KG(N * N), KB(N * N);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      double sa = 0, sg = 0, sb = 0;
      for (int i = 0; i < m; ++i) sa += at(i, a) * at(i, b);
      for (int k = 0; k < r; ++k) sg += g(a, k) * g(b, k);
      for (int j = 0; j < n; ++j) sb += bt(a, j) * bt(b, j);
      KA[idx(a, b)] = sa;
      KG[idx(a, b)] = sg;
      KB[idx(a, b)] = sb;
    }
  for (int a = 0; a < n; ++a) {
    gA[static_cast<std::size_t>(a)] = KA[idx(a, a)];
    nG[static_cast<std::size_t>(a)] = KG[idx(a, a)];
    nB[static_cast<std::size_t>(a)] = KB[idx(a, a)];
  }
  auto EU = [&](int a, int b) { return nG[static_cast<std::size_t>(a)] * nG[static_cast<std::size_t>(b)]; };
  auto EV = [&](int a, int b) { return nB[static_cast<std::size_t>(a)] * nB[static_cast<std::size_t>(b)]; };
  const double signal = C * m * m * r * r;

  // 1. The matrices: exact for iid data.
  if (model.matrices != Format::kFp64 || is_float_rounding(model.transform_arith) ||
      is_float_rounding(model.output_arith)) {
    // sum_{e,f} (X_e X_f - T_e T_f)^2 with D = X - T: X_e X_f - T_e T_f = D_e X_f + T_e D_f, so the sum is
    // |D|^2 |X|^2 + 2 <D,T> <X,D> + |T|^2 |D|^2, free of the cancellation of the direct form.
    const int e1 = m * r * n;
    std::vector<double> X(static_cast<std::size_t>(e1)), T(static_cast<std::size_t>(e1));
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < r; ++k)
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int a = 0; a < n; ++a) s += at(i, a) * g(a, k) * bt(a, j);
          const auto e = static_cast<std::size_t>((i * r + k) * n + j);
          X[e] = s;
          T[e] = j == i + k ? 1.0 : 0.0;
        }
    double dd = 0, xx = 0, tt = 0, dt = 0, xd = 0;
    for (std::size_t e = 0; e < X.size(); ++e) {
      const double d = X[e] - T[e];
      dd += d * d;
      xx += X[e] * X[e];
      tt += T[e] * T[e];
      dt += d * T[e];
      xd += X[e] * d;
    }
    const double s2 = dd * xx + 2 * dt * xd + tt * dd;
    out.matrices = C * s2 / signal;
  }

  // Checks a float value of second moment e2 against the range; returns rounding noise.
  auto float_noise = [&](const StageFormat& s, double e2, bool storage) {
    StageNoise r_;
    if (!is_float_rounding(s.format)) return r_;
    const auto& info = format_info(s.format);
    if (!s.scaled && o.z_overflow * h * std::sqrt(e2) > info.max_finite) r_.overflow = true;
    r_.var = kRho * info.unit_roundoff * info.unit_roundoff * e2;
    if (storage && !s.scaled) r_.var += h * h * info.min_subnormal * info.min_subnormal / 12.0;
    return r_;
  };
  // Noise of storing a value of second moment e2 in stage s, whose quantization group has largest
  // second moment group_e2.
  auto storage_noise = [&](const StageFormat& s, double e2, double group_e2) {
    if (!s.quantized()) return float_noise(s, e2, true);
    StageNoise r_;
    const auto& info = format_info(s.format);
    const double z = s.granularity == Granularity::kTile ? o.z_quant_tile : o.z_quant;
    const double step = z * std::sqrt(group_e2) / info.max_finite;
    if (is_integer_format(s.format)) {
      // A value far below the step rounds to zero: its error is the value itself.
      const double q = step * step / 12.0;
      r_.var = q * e2 / (q + e2);
    } else {
      r_.var = kRho * info.unit_roundoff * info.unit_roundoff * e2 +
               step * step * info.min_subnormal * info.min_subnormal / 12.0;
    }
    return r_;
  };

  // 2. Transform arithmetic.
  if (is_float_rounding(model.transform_arith)) {
    const auto& info = format_info(model.transform_arith);
    const double u2 = info.unit_roundoff * info.unit_roundoff;
    std::vector<double> fB(N), fG(N);
    for (int p = 0; p < n; ++p) {
      fB[static_cast<std::size_t>(p)] = row_factor(&BT[static_cast<std::size_t>(p * n)], n, u2);
      fG[static_cast<std::size_t>(p)] = row_factor(&G[static_cast<std::size_t>(p * r)], r, u2);
    }
    double e = 0;
    for (int p = 0; p < n; ++p) {
      const auto P = static_cast<std::size_t>(p);
      // V, first pass: noise at tmp[p][j], through B^T[:, j] into V[p][:], U, and A^T (x) A^T.
      for (int j = 0; j < n; ++j) {
        double quad = 0;
        for (int q = 0; q < n; ++q)
          for (int q2 = 0; q2 < n; ++q2) quad += KA[idx(q, q2)] * KG[idx(q, q2)] * bt(q, j) * bt(q2, j);
        e += fB[P] * gA[P] * nG[P] * quad;
      }
      // U, first pass: noise at tmp[p][k], through G[:, k].
      for (int k = 0; k < r; ++k) {
        double quad = 0;
        for (int q = 0; q < n; ++q)
          for (int q2 = 0; q2 < n; ++q2) quad += KA[idx(q, q2)] * KB[idx(q, q2)] * g(q, k) * g(q2, k);
        e += fG[P] * gA[P] * nB[P] * quad;
      }
      // Second passes: noise at V[p][q] and U[p][q].
      for (int q = 0; q < n; ++q) {
        const auto Q = static_cast<std::size_t>(q);
        e += nB[P] * fB[Q] * gA[P] * gA[Q] * EU(p, q);
        e += nG[P] * fG[Q] * gA[P] * gA[Q] * EV(p, q);
      }
    }
    out.transform_arith = C * e / signal;
    // Range of the intermediate rows.
    for (int p = 0; p < n; ++p) {
      const StageFormat a{model.transform_arith};
      if (float_noise(a, nB[static_cast<std::size_t>(p)], false).overflow ||
          float_noise(a, nG[static_cast<std::size_t>(p)], false).overflow)
        out.overflow = true;
    }
  }

  // 3. U and V as stored.
  {
    double maxU = 0, maxV = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        maxU = std::max(maxU, EU(a, b));
        maxV = std::max(maxV, EV(a, b));
      }
    double e = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        const double w = gA[static_cast<std::size_t>(a)] * gA[static_cast<std::size_t>(b)];
        const bool tapU = model.filter_transform.granularity == Granularity::kTap;
        const bool tapV = model.input_transform.granularity == Granularity::kTap;
        const auto nu = storage_noise(model.filter_transform, EU(a, b), tapU ? EU(a, b) : maxU);
        const auto nv = storage_noise(model.input_transform, EV(a, b), tapV ? EV(a, b) : maxV);
        out.overflow = out.overflow || nu.overflow || nv.overflow;
        e += w * (nu.var * EV(a, b) + nv.var * EU(a, b));
      }
    out.storage = C * e / signal;
  }

  // 4. Products, accumulation and the stored sums M.
  {
    double e = 0, maxM = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) maxM = std::max(maxM, C * EU(a, b) * EV(a, b));
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        const double w = gA[static_cast<std::size_t>(a)] * gA[static_cast<std::size_t>(b)];
        const double uv = EU(a, b) * EV(a, b);
        if (is_float_rounding(model.product)) e += w * C * float_noise(StageFormat{model.product}, uv, false).var;
        const AccumulationWeights aw = accumulation_weights(model, C);
        if (is_float_rounding(model.accumulate))
          e += w * aw.accumulate * float_noise(StageFormat{model.accumulate}, uv, false).var;
        if (model.accumulate_chunk > 0 && is_float_rounding(model.chunk_accumulate))
          e += w * aw.chunk * float_noise(StageFormat{model.chunk_accumulate}, uv, false).var;
        const auto ng = storage_noise(model.gemm_output, C * uv, maxM);
        out.overflow = out.overflow || ng.overflow;
        e += w * ng.var;
      }
    out.gemm = e / signal;
  }

  // 5. The output transform and the stored output.
  {
    double e = 0;
    if (is_float_rounding(model.output_arith)) {
      const auto& info = format_info(model.output_arith);
      const double u2r = kRho * info.unit_roundoff * info.unit_roundoff;
      std::vector<double> W(N * N);
      for (std::size_t k = 0; k < W.size(); ++k) W[k] = KG[k] * KB[k];
      // F1[i]: the noise factor of row i of A^T applied to a column of M (covariance W).
      std::vector<double> F1(static_cast<std::size_t>(m)), wi(static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) {
        double f = 0, prefix = 0;
        bool any = false;
        for (int a = 0; a < n; ++a) {
          const double c = at(i, a);
          if (c == 0) continue;
          if (!pow2_exact(c)) f += c * c * W[idx(a, a)];
          for (int a2 = 0; a2 < a; ++a2) prefix += 2 * c * at(i, a2) * W[idx(a, a2)];
          prefix += c * c * W[idx(a, a)];
          if (any) f += prefix;
          any = true;
        }
        F1[static_cast<std::size_t>(i)] = u2r * f;
        double s = 0;
        for (int a = 0; a < n; ++a)
          for (int a2 = 0; a2 < n; ++a2) s += at(i, a) * at(i, a2) * W[idx(a, a2)];
        wi[static_cast<std::size_t>(i)] = s;
      }
      for (int i = 0; i < m; ++i) {
        for (int b = 0; b < n; ++b) e += C * W[idx(b, b)] * F1[static_cast<std::size_t>(i)] * gA[static_cast<std::size_t>(b)];
        for (int i2 = 0; i2 < m; ++i2) e += C * wi[static_cast<std::size_t>(i)] * F1[static_cast<std::size_t>(i2)];
      }
      // Range of the output transform's intermediates. M is correlated (E[M_ab M_a'b'] = C W_aa' W_bb'),
      // so the partial sums of A^T M and of (A^T M) A can be far larger than Y (cancellation), and they
      // are what overflows first: every product and prefix of both passes, as the emulation sums them.
      double peak = 0;
      for (int i = 0; i < m; ++i) {
        double prefix = 0;
        for (int a = 0; a < n; ++a) {
          const double c = at(i, a);
          for (int a2 = 0; a2 < a; ++a2) prefix += 2 * c * at(i, a2) * W[idx(a, a2)];
          prefix += c * c * W[idx(a, a)];
          peak = std::max(peak, std::max(prefix, c * c * W[idx(a, a)]));  // times C W_bb: the first pass
        }
      }
      double wmax = 0, wimax = 0;  // the second pass sums rows of A^T too: the same prefixes, times C wi
      for (int b = 0; b < n; ++b) wmax = std::max(wmax, W[idx(b, b)]);
      for (int i = 0; i < m; ++i) wimax = std::max(wimax, wi[static_cast<std::size_t>(i)]);
      // Checked at the data's own amplitude, not with the headroom: with it, no F(8,3) transform passes
      // in fp16 (the catalogue's F(8,3) fp16-all entry overflows on ReLU x16 data, 0.4 % of outputs), and
      // a search that sees +inf everywhere cannot rank.
      if (o.z_overflow * std::sqrt(C * std::max(wmax, wimax) * peak) > info.max_finite) out.overflow = true;
    }
    const double EY = C * r * r;
    const auto ny = storage_noise(model.output, EY, EY);
    out.overflow = out.overflow || ny.overflow;
    e += m * m * ny.var;
    out.output = e / signal;
  }

  // 6. The data's own rounding, when the reference is the original data.
  if (model.reference == ReferenceData::kOriginal) {
    const auto ni = storage_noise(model.input, 1.0, 1.0);
    const auto nf = storage_noise(model.filter, 1.0, 1.0);
    out.data = ni.var + nf.var;
  }

  const double total = out.matrices + out.transform_arith + out.storage + out.gemm + out.output + out.data;
  out.rel_l2 = out.overflow || !std::isfinite(total) ? kInf : std::sqrt(total);
  return out;
}

}  // namespace nova
