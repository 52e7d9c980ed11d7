// Batched L X L^T in an emulated arithmetic; see sandwich.hpp for the definition and the paths.
#include "numerics/sandwich.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <optional>

#include "numerics/isa_clones.hpp"
#include "numerics/round_kernel.hpp"

namespace nova::detail {
namespace {

// ---- The definition: one matrix at a time -------------------------------------------------------

// out[b] = L X[b] L^T, every operation through `rnd`; `load` converts an operand to the
// arithmetic (rounding it), so X itself is never copied.
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

void general_range(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out) {
  const KernelRound k{float_kernel(f, Overflow::kIeee)};
  sandwich_batch<double>(L, P, I, X, batch, out, k, k);
}

// ---- Lanes: kLanes matrices at once, element k of matrix s at [k][s] ---------------------------

constexpr int kLanes = 16;

// Round-to-nearest-even of a float to a binary format of p <= 11 bits whose range lies inside
// float's: the bit trick of round_kernel.hpp on 32-bit patterns for results normal in the format,
// adding and subtracting a power of two for the subnormal ones (its ulp is the format's smallest
// subnormal), then overflow. Branch-free, so the lane loops vectorize.
struct NarrowRound {
  uint32_t shift, half_minus_one, keep;
  float min_normal, subnormal_magic, max_finite, overflow_value;

  explicit NarrowRound(const FloatKernel& k)
      : shift(static_cast<uint32_t>(24 - k.precision)),
        half_minus_one((1u << (shift - 1)) - 1),
        keep(~((1u << shift) - 1)),
        min_normal(static_cast<float>(k.min_normal)),
        subnormal_magic(std::ldexp(1.0f, k.min_exponent - k.precision + 1 + 23)),
        max_finite(static_cast<float>(k.max_finite)),
        overflow_value(static_cast<float>(k.overflow_value)) {}

  float operator()(float x) const {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    const uint32_t sign = bits & 0x80000000u, mag = bits & 0x7fffffffu;
    const float a = std::bit_cast<float>(mag);
    const float normal = std::bit_cast<float>((mag + half_minus_one + ((mag >> shift) & 1u)) & keep);
    const float subnormal = (a + subnormal_magic) - subnormal_magic;
    float r = a < min_normal ? subnormal : normal;
    r = r > max_finite ? overflow_value : r;
    r = a != a ? a : r;  // NaN stays NaN
    return std::bit_cast<float>(std::bit_cast<uint32_t>(r) | sign);
  }
};

// One group of kLanes matrices: x [I*I][kLanes] -> o [P*P][kLanes] through tmp [P*I][kLanes], the
// operations and their order exactly those of sandwich_batch.
template <class Rnd>
[[gnu::always_inline]] inline void lanes_group(const float* l, const float* lt, int P, int I, const float* x, float* tmp,
                                               float* o, Rnd rnd) {
  for (int p = 0; p < P; ++p) {
    float* row = tmp + static_cast<std::ptrdiff_t>(p) * I * kLanes;
    const float* lp = l + static_cast<std::ptrdiff_t>(p) * I;
    for (int j = 0; j < I; ++j) {
      const float c = lp[0];
      const float* xj = x + j * kLanes;
      float* rj = row + j * kLanes;
      for (int s = 0; s < kLanes; ++s) rj[s] = rnd(c * xj[s]);
    }
    for (int i = 1; i < I; ++i) {
      const float c = lp[i];
      for (int j = 0; j < I; ++j) {
        const float* xij = x + (i * I + j) * kLanes;
        float* rj = row + j * kLanes;
        for (int s = 0; s < kLanes; ++s) rj[s] = rnd(rj[s] + rnd(c * xij[s]));
      }
    }
  }
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < P; ++q) {
      float* oq = o + (p * P + q) * kLanes;
      const float* t0 = tmp + (p * I) * kLanes;
      const float c0 = lt[q];
      for (int s = 0; s < kLanes; ++s) oq[s] = rnd(t0[s] * c0);
      for (int j = 1; j < I; ++j) {
        const float* tj = tmp + (p * I + j) * kLanes;
        const float c = lt[j * P + q];
        for (int s = 0; s < kLanes; ++s) oq[s] = rnd(oq[s] + rnd(tj[s] * c));
      }
    }
}

NOVA_ISA_CLONES void lanes_group_fp32(const float* l, const float* lt, int P, int I, const float* x, float* tmp,
                                      float* o) {
  lanes_group(l, lt, P, I, x, tmp, o, NoRound{});
}

NOVA_ISA_CLONES void lanes_group_narrow(const NarrowRound& k, const float* l, const float* lt, int P, int I,
                                        const float* x, float* tmp, float* o) {
  lanes_group(l, lt, P, I, x, tmp, o, k);
}

// Whether float arithmetic rounded once more gives format f's operations (see sandwich.hpp).
bool narrow_in_float(const FloatKernel& k) {
  return k.precision <= 11 && k.min_exponent >= -126 && k.max_finite <= FLT_MAX;
}

void lanes_range(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out) {
  const FloatKernel dk = float_kernel(f, Overflow::kIeee);
  // Operands are rounded from double to the format once (a float holds the result exactly).
  auto load = [&dk](double v) { return static_cast<float>(round_float(v, dk)); };
  std::vector<float> l(L.size()), lt(static_cast<std::size_t>(I * P));
  for (std::size_t k = 0; k < L.size(); ++k) l[k] = load(L[k]);
  for (int p = 0; p < P; ++p)
    for (int i = 0; i < I; ++i) lt[static_cast<std::size_t>(i * P + p)] = l[static_cast<std::size_t>(p * I + i)];
  const int64_t II = int64_t{I} * I, PP = int64_t{P} * P;
  std::vector<float> x(static_cast<std::size_t>(II * kLanes)), tmp(static_cast<std::size_t>(P * I * kLanes)),
      o(static_cast<std::size_t>(PP * kLanes));
  // The narrow rounding only for formats narrower than float (its shift is 24 - p >= 13).
  const std::optional<NarrowRound> nk = f == Format::kFp32 ? std::nullopt : std::optional<NarrowRound>(dk);
  for (int64_t b0 = 0; b0 < batch; b0 += kLanes) {
    const int count = static_cast<int>(std::min<int64_t>(kLanes, batch - b0));
    for (int s = 0; s < kLanes; ++s) {
      if (s >= count) {  // lanes past the batch: zeros, never read from X
        for (int64_t k = 0; k < II; ++k) x[static_cast<std::size_t>(k * kLanes + s)] = 0.0f;
        continue;
      }
      const double* xs = X + (b0 + s) * II;
      for (int64_t k = 0; k < II; ++k) x[static_cast<std::size_t>(k * kLanes + s)] = load(xs[k]);
    }
    if (nk)
      lanes_group_narrow(*nk, l.data(), lt.data(), P, I, x.data(), tmp.data(), o.data());
    else
      lanes_group_fp32(l.data(), lt.data(), P, I, x.data(), tmp.data(), o.data());
    for (int s = 0; s < count; ++s) {
      double* os = out + (b0 + s) * PP;
      for (int64_t k = 0; k < PP; ++k) os[k] = static_cast<double>(o[static_cast<std::size_t>(k * kLanes + s)]);
    }
  }
}

}  // namespace

void sandwich_range_reference(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch,
                              double* out) {
  if (f == Format::kFp64) {
    sandwich_batch<double>(L, P, I, X, batch, out, NoRound{}, NoRound{});
    return;
  }
  if (f == Format::kFp32) {
    // The kernel's fp32 result is a float value (or inf), so the cast is exact.
    const KernelRound k{float_kernel(f, Overflow::kIeee)};
    sandwich_batch<float>(L, P, I, X, batch, out, NoRound{}, [k](double v) { return static_cast<float>(k(v)); });
    return;
  }
  general_range(f, L, P, I, X, batch, out);
}

void sandwich_range(Format f, const std::vector<double>& L, int P, int I, const double* X, int64_t batch, double* out) {
  if (f == Format::kFp64 || is_integer_format(f)) {
    sandwich_range_reference(f, L, P, I, X, batch, out);
    return;
  }
  if (f == Format::kFp32 || narrow_in_float(float_kernel(f, Overflow::kIeee))) {
    lanes_range(f, L, P, I, X, batch, out);
    return;
  }
  general_range(f, L, P, I, X, batch, out);
}

}  // namespace nova::detail
