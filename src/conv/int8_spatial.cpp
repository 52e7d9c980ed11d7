// The int8-spatial path (docs/engine.md, "int8-spatial"): ncnn's int8 Winograd design on nova's engine.
// The input is quantized to int8 codes per tensor and the filters per output channel *before* the
// transforms; the transforms are scaled to integer matrices (rows of B^T and G multiplied by exact
// rationals) so that V' = B' d B'^T and U' = G' g G'^T are exact integers that fit int16; the n^2 GEMMs
// sum U' V' exactly in int32 over channel runs short enough never to overflow; dequantization by
// s_d * s_g[k] / (row scales) per tap and output channel; FP32 output transform. Its only errors are
// the int8 quantization of d and g (the direct int8 convolution's) and FP32 rounding afterwards.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "nova/error.hpp"
#include "plan_impl.hpp"

namespace nova::conv {

namespace {

constexpr int64_t kInt16Max = 32767;
constexpr int64_t kInt32Max = 2147483647;

// Exact scale s of a row so that s * row is a primitive integer vector (lcm of the denominators over
// the gcd of the scaled numerators); the row as int64.
Rational integer_row(const RationalMatrix& m, std::size_t i, std::vector<int64_t>* out) {
  mpz_class lcm = 1;
  for (std::size_t j = 0; j < m.cols(); ++j)
    mpz_lcm(lcm.get_mpz_t(), lcm.get_mpz_t(), m(i, j).get_den_mpz_t());
  mpz_class g = 0;
  std::vector<mpz_class> ints(m.cols());
  for (std::size_t j = 0; j < m.cols(); ++j) {
    const mpq_class v = m(i, j) * lcm;
    ints[j] = v.get_num();
    mpz_gcd(g.get_mpz_t(), g.get_mpz_t(), ints[j].get_mpz_t());
  }
  if (g == 0) g = 1;
  out->assign(m.cols(), 0);
  for (std::size_t j = 0; j < m.cols(); ++j) {
    const mpz_class v = ints[j] / g;
    if (!v.fits_slong_p())
      throw Error("int8-spatial: an integer-scaled transform entry does not fit 64 bits");
    (*out)[j] = v.get_si();
  }
  return Rational(lcm, g);
}

int64_t abs_sum(const std::vector<int64_t>& row) {
  int64_t s = 0;
  for (int64_t v : row) s += v < 0 ? -v : v;
  return s;
}

std::string tile_text(const Transform& t) {
  return t.tile().to_string() + " {" + to_string(t.points()) + "}";
}

}  // namespace

Transform int8_spatial_transform(TileSize tile) {
  const int n = tile.n();
  return Transform::construct(tile, standard_points(n - 1, true));
}

void build_int8_spatial(Plan::Impl& p, WinogradPlan& w, const float* weights) {
  const Transform& t = w.transform;
  const ConvShape& s = p.shape;
  const int n = w.n, r = w.r;
  const int64_t nn = static_cast<int64_t>(n) * n, Cpad = w.Cpad, Kpad = w.Kpad, panel = w.panel;

  // Integer transforms: B' rows = sb_i * B^T rows, G' rows = sg_i * G rows.
  std::vector<std::vector<int64_t>> bt(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(n));
  std::vector<double> row_scale(static_cast<std::size_t>(n));  // sb_i * sg_i
  std::vector<int64_t> b_sum(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const Rational sb = integer_row(t.BT(), ui, &bt[ui]);
    const Rational sg = integer_row(t.G(), ui, &g[ui]);
    row_scale[ui] = to_double(Rational(sb * sg));
    b_sum[ui] = abs_sum(bt[ui]);
  }
  // The largest |code| of the input: 127 where the plan quantizes it (clamped), 128 where it reads an
  // int8 tensor's codes as given (at its own scale: a code of -128 is taken as it is). The bounds below
  // assumed 127: 76 channels of -128 and 127 codes built against one tap of F(4,3) took an int32 run sum
  // past 2^31 (relative error 52, nothing counted). 128 for every plan, so that plans of a layer with
  // FP32 and with int8 input run the same channel runs (the same bits on the same codes).
  const int64_t code_max = 128;
  // |V'| <= code_max * b_sum_i * b_sum_j for any input codes: it must fit int16.
  int64_t v_max = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      v_max =
          std::max(v_max, code_max * b_sum[static_cast<std::size_t>(i)] * b_sum[static_cast<std::size_t>(j)]);
  if (v_max > kInt16Max)
    throw Error("int8-spatial: the integer input transform of " + tile_text(t) +
                " reaches |V'| = " + std::to_string(v_max) +
                " > 32767 (int16); int8-spatial runs 3x3 kernels with F(2,3) or F(4,3) (points {0, ±1, ±2})");
  // V' from the codes with B' (exact: every intermediate is an integer far below 2^24); the output
  // transform keeps A^T. When B' is B^T itself (integer points), the tile code build_winograd chose
  // (generated for the default integer transforms) computes it; otherwise the generic code with B'.
  bool b_is_bt = true;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      b_is_bt = b_is_bt && Rational(bt[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]) ==
                               t.BT()(static_cast<std::size_t>(i), static_cast<std::size_t>(j));
  if (!b_is_bt) {
    w.generated = false;
    w.fns = p.kernels->transforms.generic;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        w.coeffs.bt[i * n + j] =
            static_cast<float>(bt[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
  }

  // Filters: int8 codes per output channel (s_g = max |g| / 127, round to nearest even), U' = G' g G'^T
  // exact in int64, packed as int16 with channel pairs interleaved (kernels/int16_kernels.hpp).
  const std::size_t count = static_cast<std::size_t>(nn * Cpad * Kpad);
  w.U_lowp.resize((count * 2 + 3) / 4);
  std::fill(w.U_lowp.data(), w.U_lowp.data() + w.U_lowp.size(), 0.0f);
  auto* u16 = reinterpret_cast<int16_t*>(w.U_lowp.data());
  w.u_scale.assign(static_cast<std::size_t>(nn * Kpad), 0.0f);
  std::vector<int64_t> tap_u_max(static_cast<std::size_t>(nn * s.K), 0);  // per (k, tap)
  p.pool->run(static_cast<std::size_t>(s.K), [&](std::size_t task, int) {
    const int64_t k = static_cast<int64_t>(task);
    const int64_t k0 = k / panel * panel, jj = k - k0, width = std::min(panel, Kpad - k0);
    const float* wk = weights + k * s.C * r * r;
    double amax = 0.0;
    for (int64_t i = 0; i < s.C * r * r; ++i) amax = std::max(amax, std::fabs(static_cast<double>(wk[i])));
    const double sg = amax > 0.0 ? amax / 127.0 : 1.0;
    std::vector<int64_t> code(static_cast<std::size_t>(r * r)), tmp(static_cast<std::size_t>(n * r));
    int64_t* umax = tap_u_max.data() + k * nn;
    for (int64_t c = 0; c < s.C; ++c) {
      for (int i = 0; i < r * r; ++i)
        code[static_cast<std::size_t>(i)] = static_cast<int64_t>(
            std::clamp(std::nearbyint(static_cast<double>(wk[c * r * r + i]) / sg), -127.0, 127.0));
      for (int a = 0; a < n; ++a)  // tmp = G' g  (n x r)
        for (int j = 0; j < r; ++j) {
          int64_t acc = 0;
          for (int i = 0; i < r; ++i)
            acc += g[static_cast<std::size_t>(a)][static_cast<std::size_t>(i)] *
                   code[static_cast<std::size_t>(i * r + j)];
          tmp[static_cast<std::size_t>(a * r + j)] = acc;
        }
      for (int a = 0; a < n; ++a)  // U' = tmp G'^T
        for (int b = 0; b < n; ++b) {
          int64_t u = 0;
          for (int j = 0; j < r; ++j)
            u += tmp[static_cast<std::size_t>(a * r + j)] *
                 g[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)];
          const int64_t tap = a * n + b;
          umax[tap] = std::max(umax[tap], u < 0 ? -u : u);
          if (u < -kInt16Max || u > kInt16Max) continue;  // reported below
          u16[tap * Cpad * Kpad + k0 * Cpad + (c / 2) * (2 * width) + 2 * jj + (c & 1)] =
              static_cast<int16_t>(u);
        }
    }
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        w.u_scale[static_cast<std::size_t>((a * n + b) * Kpad + k)] = static_cast<float>(
            sg / (row_scale[static_cast<std::size_t>(a)] * row_scale[static_cast<std::size_t>(b)]));
  });
  // The longest channel run whose int32 sum cannot overflow: |V'_a| * |U'_a| summed over `chunk`
  // channels stays below 2^31 on every tap.
  int64_t worst = 1, u_max = 0;
  for (int64_t k = 0; k < s.K; ++k)
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        const int64_t um = tap_u_max[static_cast<std::size_t>(k * nn + a * n + b)];
        u_max = std::max(u_max, um);
        worst = std::max(
            worst, um * code_max * b_sum[static_cast<std::size_t>(a)] * b_sum[static_cast<std::size_t>(b)]);
      }
  if (u_max > kInt16Max)
    throw Error("int8-spatial: the integer filter transform of " + tile_text(t) +
                " reaches |U'| = " + std::to_string(u_max) +
                " > 32767 (int16); int8-spatial runs 3x3 kernels with F(2,3) or F(4,3) (points {0, ±1, ±2})");
  int64_t chunk = std::min<int64_t>(Cpad, kInt32Max / worst);
  chunk -= chunk % 2;
  w.int16_chunk = std::max<int64_t>(chunk, 2);
  w.U.resize(0);
  p.reason += "; int8-spatial: |V'| <= " + std::to_string(v_max) + ", |U'| <= " + std::to_string(u_max) +
              ", exact int32 sums over " + std::to_string(w.int16_chunk) + " channels";
}

}  // namespace nova::conv
