// The int8-spatial kernels, one element at a time: the definition the SIMD kernels match bit for bit.
#include <algorithm>
#include <cmath>

#include "../int16_kernels.hpp"

namespace nova::conv {

namespace {

void gemm(int64_t rows, int nv, std::size_t kc, std::size_t chunk, const int16_t* a, std::size_t lda,
          const int16_t* b, const float* scale, float* c, std::size_t ldc) {
  const std::size_t w = static_cast<std::size_t>(16 * nv);
  for (int64_t i = 0; i < rows; ++i) {
    const int16_t* ai = a + static_cast<std::size_t>(i) * lda;
    for (std::size_t j = 0; j < w; ++j) {
      float acc = 0.0f;
      for (std::size_t c0 = 0; c0 < kc; c0 += chunk) {
        const std::size_t c1 = std::min(kc, c0 + chunk);
        int32_t s = 0;  // exact: the plan's chunk keeps every partial sum inside int32
        for (std::size_t ch = c0; ch < c1; ++ch)
          s += static_cast<int32_t>(ai[ch]) * static_cast<int32_t>(b[(ch / 2) * (2 * w) + 2 * j + (ch & 1)]);
        acc = c0 == 0 ? static_cast<float>(s) : acc + static_cast<float>(s);
      }
      c[static_cast<std::size_t>(i) * ldc + j] = acc * scale[j];
    }
  }
}

void convert(const float* src, int16_t* dst, int64_t count, int* bad) {
  for (int64_t i = 0; i < count; ++i) {
    const float v = src[i];
    if (!(std::fabs(v) <= 32767.0f)) {  // NaN fails the comparison too
      dst[i] = 0;
      *bad = 1;
    } else {
      dst[i] = static_cast<int16_t>(v);  // an integer already (exact transform of integer codes)
    }
  }
}

int64_t codes(float* x, int64_t count, float inv) {
  int64_t saturated = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(x[i])) continue;
    const float q = x[i] * inv;
    if (std::fabs(q) > 127.5f) ++saturated;
    x[i] = std::fmin(std::fmax(std::nearbyint(q), -127.0f), 127.0f);  // ties to even (default mode)
  }
  return saturated;
}

}  // namespace

Int16Fns int16_fns_portable() {
  return {&gemm, &convert, &codes};
}

}  // namespace nova::conv
