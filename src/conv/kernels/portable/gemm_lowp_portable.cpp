// Portable low-precision GEMM kernels: plain C++ that computes every element of C exactly as the SIMD
// kernels do (lowp_kernels.hpp), so the paths can be compared bit for bit.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../int8_code_scalar.hpp"
#include "../lowp_kernels.hpp"

namespace nova::conv {

namespace {

constexpr int kRows = 4;  // rows per pass (accumulators of 4 x 64 columns)

void bf16_gemm(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
               float* c, std::size_t ldc) {
  const int w = 16 * nv;
  for (int64_t i0 = 0; i0 < rows; i0 += kRows) {
    const int mr = static_cast<int>(std::min<int64_t>(kRows, rows - i0));
    float acc[kRows][64] = {};
    for (std::size_t p = 0; p < kc / 2; ++p) {
      const uint16_t* bp = b + p * static_cast<std::size_t>(2 * w);
      for (int i = 0; i < mr; ++i) {
        const uint16_t* ai = a + static_cast<std::size_t>(i0 + i) * lda + 2 * p;
        const float a0 = bf16_daz(ai[0]), a1 = bf16_daz(ai[1]);
        for (int j = 0; j < w; ++j) {
          float s = bf16_dp_step(acc[i][j], a1, bf16_daz(bp[2 * j + 1]));
          acc[i][j] = bf16_dp_step(s, a0, bf16_daz(bp[2 * j]));
        }
      }
    }
    for (int i = 0; i < mr; ++i) std::copy(acc[i], acc[i] + w, c + static_cast<std::size_t>(i0 + i) * ldc);
  }
}

// A fp32 values times B widened to floats row by row (widen_row(k, bw): channel k's w columns), every
// channel added in order with one fused multiply-add: std::fma rounds as the SIMD kernels'
// vfmadd231ps (the products of bf16 or fp16 operands are exact in any case).
template <class WidenRow>
void widened_fma_gemm(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda,
                      const float* col_scale, float* c, std::size_t ldc, const WidenRow& widen_row) {
  const int w = 16 * nv;
  for (int64_t i0 = 0; i0 < rows; i0 += kRows) {
    const int mr = static_cast<int>(std::min<int64_t>(kRows, rows - i0));
    float acc[kRows][64] = {};
    float bw[64];
    for (std::size_t k = 0; k < kc; ++k) {
      widen_row(k, bw);
      for (int i = 0; i < mr; ++i) {
        const float ai = a[static_cast<std::size_t>(i0 + i) * lda + k];
        for (int j = 0; j < w; ++j) acc[i][j] = std::fma(ai, bw[j], acc[i][j]);
      }
    }
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < w; ++j)
        c[static_cast<std::size_t>(i0 + i) * ldc + static_cast<std::size_t>(j)] =
            col_scale != nullptr ? acc[i][j] * col_scale[j] : acc[i][j];
  }
}

// bf16 on FP32 FMAs: B in the pair-interleaved bf16 panel.
void bf16_fma_gemm(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda, const uint16_t* b,
                   const float* col_scale, float* c, std::size_t ldc) {
  const auto w = static_cast<std::size_t>(16 * nv);
  widened_fma_gemm(rows, nv, kc, a, lda, col_scale, c, ldc, [&](std::size_t k, float* bw) {
    const uint16_t* bp = b + (k / 2) * (2 * w) + (k & 1);
    for (std::size_t j = 0; j < w; ++j) bw[j] = bf16_to_float(bp[2 * j]);
  });
}

// fp16 with FP32 arithmetic: B rows of fp16 bits.
void fp16_gemm(int64_t rows, int nv, std::size_t kc, const float* a, std::size_t lda, const uint16_t* b,
               const float* col_scale, float* c, std::size_t ldc) {
  const auto w = static_cast<std::size_t>(16 * nv);
  widened_fma_gemm(rows, nv, kc, a, lda, col_scale, c, ldc, [&](std::size_t k, float* bw) {
    for (std::size_t j = 0; j < w; ++j) bw[j] = fp16_to_float(b[k * w + j]);
  });
}

// |s + e| (s = RN_double(x), e its exact error, |e| <= ulp(s)/2) rounded to fp16 with one rounding:
// s is scaled to fp16 ulps (exactly: a power of two) and rounded to an integer, ties decided by e,
// which is what makes the result correct when s lands on an fp16 midpoint the exact value is not on.
inline float round_fp16_exact(double s, double e) {
  if (!std::isfinite(s) || s == 0.0) return static_cast<float>(s);  // inf, NaN, signed zero as IEEE
  const double mag = std::fabs(s);
  const double err = s > 0.0 ? e : -e;  // the error in the direction of |s|
  int ex = 0;
  std::frexp(mag, &ex);                        // mag in [2^(ex-1), 2^ex)
  const int ulp_exp = std::max(ex - 11, -24);  // fp16: 11 significant bits, subnormals at 2^-24
  const double q = std::ldexp(mag, -ulp_exp), fl = std::floor(q), frac = q - fl;
  const bool odd = std::fmod(fl, 2.0) != 0.0;
  const bool up = frac > 0.5 || (frac == 0.5 && (err > 0.0 || (err == 0.0 && odd)));
  const double r = std::ldexp(up ? fl + 1.0 : fl, ulp_exp);
  const double out = r > 65504.0 ? std::numeric_limits<double>::infinity() : r;
  return static_cast<float>(s > 0.0 ? out : -out);
}

// One vfmadd231ph lane: fp16(c + a*b), a, b, c fp16 values. The product is exact in double (22
// significant bits); the sum is computed with TwoSum's error term, so the one rounding to fp16 sees
// the exact value. (Double rounding alone would be correct for fp16 operands too, but this does not
// need the argument.) No flushing: AVX512-FP16 keeps subnormals.
inline float fp16_fma(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b), cd = static_cast<double>(c);
  const double s = p + cd;
  const double bb = s - p;
  const double e = (p - (s - bb)) + (cd - bb);
  return round_fp16_exact(s, std::isfinite(e) ? e : 0.0);
}

void fp16_fma_gemm(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda,
                   const uint16_t* b, const float* col_scale, float* c, std::size_t ldc) {
  const auto w = static_cast<std::size_t>(16 * nv);
  const auto chunk = static_cast<std::size_t>(kFp16FmaChunk);
  for (int64_t i = 0; i < rows; ++i) {
    const uint16_t* ai = a + static_cast<std::size_t>(i) * lda;
    float* ci = c + static_cast<std::size_t>(i) * ldc;
    for (std::size_t j = 0; j < w; ++j) {
      float total = 0.0f;
      for (std::size_t k0 = 0; k0 < kc; k0 += chunk) {
        float s = 0.0f;
        for (std::size_t k = k0; k < std::min(kc, k0 + chunk); ++k)
          s = fp16_fma(fp16_to_float(ai[k]), fp16_to_float(b[k * w + j]), s);
        total += s;  // exact widening, one fp32 rounding (vaddps)
      }
      ci[j] = col_scale != nullptr ? total * col_scale[j] : total;
    }
  }
}

void int8_gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
               const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  const int w = 16 * nv;
  for (int64_t i0 = 0; i0 < rows; i0 += kRows) {
    const int mr = static_cast<int>(std::min<int64_t>(kRows, rows - i0));
    int32_t acc[kRows][64] = {};
    for (std::size_t q = 0; q < kc / 4; ++q) {
      const int8_t* bq = b + q * static_cast<std::size_t>(4 * w);
      for (int i = 0; i < mr; ++i) {
        const uint8_t* ai = a + static_cast<std::size_t>(i0 + i) * lda + 4 * q;
        for (int j = 0; j < w; ++j)
          acc[i][j] +=
              ai[0] * bq[4 * j] + ai[1] * bq[4 * j + 1] + ai[2] * bq[4 * j + 2] + ai[3] * bq[4 * j + 3];
      }
    }
    for (int i = 0; i < mr; ++i) {
      float* ci = c + static_cast<std::size_t>(i0 + i) * ldc;
      for (int j = 0; j < w; ++j) ci[j] = static_cast<float>(acc[i][j] - comp[j]) * scale[j];
    }
  }
}

void bf16_convert(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = bf16_bits_rne(src[i]);
}

void bf16_round(float* v, int64_t count) {
  for (int64_t i = 0; i < count; ++i) v[i] = round_bf16(v[i]);
}

void fp16_round(float* v, int64_t count) {
  for (int64_t i = 0; i < count; ++i) v[i] = round_fp16(v[i]);
}

void fp16_convert(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = fp16_bits_rne(src[i]);
}

int64_t int8_quantize(const float* src, uint8_t* dst, int64_t count, float inv, int* bad) {
  int64_t saturated = 0;
  int nonfinite = 0;
  for (int64_t c = 0; c < count; ++c) dst[c] = int8_code(src[c], inv, saturated, nonfinite);
  *bad |= nonfinite;
  return saturated;
}

float amax(const float* v, int64_t count) {
  uint32_t m = 0;
  for (int64_t i = 0; i < count; ++i) m = max_finite_magnitude(m, v[i]);
  return f32_from_bits(m);
}

}  // namespace

LowpConvertFns lowp_convert_portable() {
  return LowpConvertFns{&bf16_convert, &fp16_round, &fp16_convert, &int8_quantize, &amax, &bf16_round};
}

Bf16GemmFn bf16_gemm_portable() {
  return &bf16_gemm;
}
WidenedGemmFn bf16_fma_gemm_portable() {
  return &bf16_fma_gemm;
}
WidenedGemmFn fp16_gemm_portable() {
  return &fp16_gemm;
}
Fp16FmaGemmFn fp16_fma_gemm_portable() {
  return &fp16_fma_gemm;
}
Int8GemmFn int8_gemm_portable() {
  return &int8_gemm;
}

}  // namespace nova::conv
