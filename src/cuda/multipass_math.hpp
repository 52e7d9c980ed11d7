// The per-thread work of the CUDA multi-pass Winograd passes, written once for the device (nvcc, the
// kernels of multipass_kernels.cu) and the host (g++, multipass_emulation.cpp): the tests run the host
// copy against the float64 reference, so that the indexing and scaling the kernels run are checked on
// machines without a GPU. Plain C++ with no CUDA types: each pass gives its values to the caller, which
// stores them (as __half on the device, as fp16 bits on the host).
#pragma once

#include <cmath>
#include <cstdint>

#include "nova/numerics/fp16_v_shift.hpp"

// Full unrolling of output_pass_tile's loops over the tile's outputs where n <= 8 (nvcc; a no-op on the
// host; the pragma names that function's NP and MP). Without it, the stores of a type chosen at run time
// made ptxas give up unrolling the n = 6 and n = 8 tiles, whose arrays then went to the stack (144 and 256
// bytes, sm_90); at n = 10 unrolling costs more compile time than the 400-byte frame it would save.
#ifdef __CUDA_ARCH__
#define NOVA_UNROLL_OUTPUT _Pragma("unroll (MP > 0 && NP <= 8 ? MP : 1)")
#else
#define NOVA_UNROLL_OUTPUT
#endif

namespace nova::cuda::detail {

// n = m + r - 1 of the tiles the path runs: up to F(8,5) and F(10,3).
inline constexpr int kMaxTilePoints = 12;

struct TileGeometry {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t pad_h = 0, pad_w = 0;
  int m = 0, n = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  NOVA_HD int64_t tiles() const { return N * tiles_h * tiles_w; }
  // Threads of a pass: one per (image, channel, tile), `channels` C in the input pass, K in the output pass.
  NOVA_HD int64_t threads(int64_t channels) const { return channels * tiles(); }
  // V[a][c][t] (fp16): the GEMM's column-major A operand, T x C with leading dimension T.
  NOVA_HD int64_t v_index(int a, int64_t c, int64_t t) const { return (a * C + c) * tiles() + t; }
  // M[a][k][t] (FP32): the GEMM's column-major result, T x K with leading dimension T.
  NOVA_HD int64_t m_index(int a, int64_t k, int64_t t) const { return (a * K + k) * tiles() + t; }
};

// V's power-of-two shift as the plan fixes it (fp16_v_shift, FP32 sums): the transform's gain and the floor
// its U scales set; the shift of a call follows from the input's largest |value|, on the device (each block
// of passes 1 and 3) and on the host (the emulation, stats()) alike.
struct VShiftRule {
  double gain = 0.0;  // |V| <= gain * max|d|
  int floor = 0;      // the lowest shift that keeps u_pow2 * 2^shift FP32 normals
  NOVA_HD int shift(float amax) const { return fp16_v_shift(gain, amax, kFp16VLimitFp32Sums, floor); }
};

// One thread per (image, channel, tile), the tile column fastest: consecutive threads write consecutive
// elements of V.
struct InputPassArgs {
  TileGeometry g;
  float BT[kMaxTilePoints * kMaxTilePoints];  // row-major n x n
};

// One thread per (image, output channel, tile), the tile column fastest.
struct OutputPassArgs {
  TileGeometry g;
  float AT[kMaxTilePoints * kMaxTilePoints];  // row-major m x n
  bool relu = false;
};

// A thread's indices, from its flat index `i` over (image, channel, tile row, tile column), the tile column
// fastest; `channels` is C in the input pass, K in the output pass.
struct TileIndex {
  int64_t image, channel, tile_y, tile_x, tile;
};

NOVA_HD inline TileIndex tile_index(const TileGeometry& g, int64_t i, int64_t channels) {
  TileIndex x;
  x.tile_x = i % g.tiles_w;
  i /= g.tiles_w;
  x.tile_y = i % g.tiles_h;
  i /= g.tiles_h;
  x.channel = i % channels;
  x.image = i / channels;
  x.tile = (x.image * g.tiles_h + x.tile_y) * g.tiles_w + x.tile_x;
  return x;
}

// V = B^T d B for the tile of input-pass index `i`, times 2^-shift, into v[a] (a = row * n + column).
// NP: n at compile time (the loops unroll and the tile stays in registers), or 0 for a run-time n.
// `load(j)` gives the input's element j (flat NCHW index) as FP32: the caller's tensor type, widened.
template <int NP, class Load>
NOVA_HD inline TileIndex input_pass_tile(const InputPassArgs& p, const Load& load, int64_t i, int shift,
                                         float* v) {
  const TileGeometry& g = p.g;
  const int n = NP > 0 ? NP : g.n;
  constexpr int cap = NP > 0 ? NP : kMaxTilePoints;
  const TileIndex x = tile_index(g, i, g.C);
  const int64_t plane = (x.image * g.C + x.channel) * g.H * g.W;
  const int64_t y0 = x.tile_y * g.m - g.pad_h, x0 = x.tile_x * g.m - g.pad_w;
  float d[cap][cap];
  for (int u = 0; u < n; ++u)
    for (int w = 0; w < n; ++w) {
      const int64_t yy = y0 + u, xx = x0 + w;
      d[u][w] = (yy >= 0 && yy < g.H && xx >= 0 && xx < g.W) ? load(plane + yy * g.W + xx) : 0.0f;
    }
  // t = B^T d, then V = t B (V[a][b] = sum_w t[a][w] B^T[b][w]).
  float t[cap][cap];
  for (int a = 0; a < n; ++a)
    for (int w = 0; w < n; ++w) {
      float s = 0.0f;
      for (int u = 0; u < n; ++u) s += p.BT[a * n + u] * d[u][w];
      t[a][w] = s;
    }
  const float scale = ldexpf(1.0f, -shift);  // a power of two within FP32's normals: |shift| < 126
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      float s = 0.0f;
      for (int w = 0; w < n; ++w) s += t[a][w] * p.BT[b * n + w];
      v[a * n + b] = s * scale;
    }
  return x;
}

// Y = A^T (M o s) A for the tile of output-pass index `i`, s[a] = u_pow2[a * K + k] * 2^shift (the U
// columns' and V's scales undone), plus bias, ReLU; writes the tile's outputs inside the image with
// `store(j, y)` (flat NCHW index j; it rounds y to the caller's tensor type and returns the stored value as
// FP32) and returns how many of the stored values are NaN or Inf. NP, MP: n and m at compile time (both, or
// 0 for run-time ones).
template <int NP, int MP, class Store>
NOVA_HD inline int output_pass_tile(const OutputPassArgs& p, const float* M, const float* u_pow2,
                                    const float* bias, int64_t i, int shift, const Store& store) {
  const TileGeometry& g = p.g;
  const int n = NP > 0 ? NP : g.n;
  constexpr int cap = NP > 0 ? NP : kMaxTilePoints;
  const int m = MP > 0 ? MP : g.m;
  const TileIndex x = tile_index(g, i, g.K);
  float z[cap][cap];
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      const int pos = a * n + b;
      const float s = ldexpf(u_pow2[pos * g.K + x.channel], shift);  // an FP32 normal (the plan's floor)
      z[a][b] = M[g.m_index(pos, x.channel, x.tile)] * s;
    }
  // t = A^T z (m x n), then y = t A (y[i][j] = sum_b t[i][b] A^T[j][b]).
  float t[cap][cap];
  for (int r = 0; r < m; ++r)
    for (int b = 0; b < n; ++b) {
      float s = 0.0f;
      for (int a = 0; a < n; ++a) s += p.AT[r * n + a] * z[a][b];
      t[r][b] = s;
    }
  const float beta = bias ? bias[x.channel] : 0.0f;
  const int64_t plane = (x.image * g.K + x.channel) * g.out_h * g.out_w;
  int nonfinite = 0;
  NOVA_UNROLL_OUTPUT
  for (int r = 0; r < m; ++r) {
    const int64_t yy = x.tile_y * m + r;
    NOVA_UNROLL_OUTPUT
    for (int c = 0; c < m; ++c) {
      const int64_t xx = x.tile_x * m + c;
      if (yy >= g.out_h || xx >= g.out_w) continue;  // a partial tile at the image's edge
      float s = 0.0f;
      for (int b = 0; b < n; ++b) s += t[r][b] * p.AT[c * n + b];
      s += beta;
      if (p.relu) s = s > 0.0f ? s : (s == s ? 0.0f : s);  // NaN stays NaN, as max(x, 0) in a framework
      const float stored = store(plane + yy * g.out_w + xx, s);
      nonfinite += (stored - stored != 0.0f) ? 1 : 0;  // NaN and +-Inf (also fp16's overflow): x - x is NaN
    }
  }
  return nonfinite;
}

}  // namespace nova::cuda::detail
