// The host half of a CUDA multi-pass plan: checks, transform choice, filter transform, scales.
#include "multipass_prepare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "conv/plan_checks.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/error.hpp"
#include "nova/exact/points.hpp"
#include "nova/exact/verify.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/format.hpp"

namespace nova::cuda::detail {
namespace {

// cuBLAS takes int dimensions and the kernels' grids are flat 64-bit indices; a GEMM dimension or a
// buffer past 2^31 - 1 elements is refused here rather than wrapped.
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

void check_supported(const ConvShape& s) {
  s.validate();
  if (s.stride != 1 || s.dilation != 1 || s.groups != 1)
    throw Error("the CUDA path runs Winograd only (stride 1, dilation 1, groups 1); " + s.to_string() +
                " has stride " + std::to_string(s.stride) + ", dilation " + std::to_string(s.dilation) +
                ", groups " + std::to_string(s.groups) + ": run it on the CPU engine");
  if (s.R != s.S)
    throw Error("the CUDA path needs a square kernel; " + s.to_string() + " is " + std::to_string(s.R) + "x" +
                std::to_string(s.S));
}

TileSize default_tile(int r) {
  if (r == 3) return {6, 3};
  if (r == 5) return {4, 5};
  return {2, r};
}

// The transform and why: given (verified here), or the engine's default for the tile, its B^T rows
// balanced (fp16 keeps V within 16 max|d| and none far below d: docs/engine.md, "fp16: V's exponent range").
Transform choose_transform(const ConvShape& s, const CudaPlanOptions& o, std::string& reason) {
  Transform t = [&] {
    if (o.transform) {
      if (o.tile && *o.tile != o.transform->tile())
        throw Error("a tile (" + o.tile->to_string() + ") and a transform of another tile (" +
                    o.transform->tile().to_string() + ") were both given");
      const Verification v = verify(*o.transform);
      if (!v) throw Error("the transform fails exact verification: " + v.reason);
      reason = "transform given";
      return *o.transform;
    }
    const TileSize tile = o.tile ? *o.tile : default_tile(static_cast<int>(s.R));
    reason = std::string(o.tile ? "tile requested" : "default tile") +
             "; the engine's default transform with its B^T rows balanced by powers of two";
    return balance_input_rows(nova::conv::default_transform(tile));  // throws for a tile without one
  }();
  if (t.r() != s.R)
    throw Error("transform " + t.tile().to_string() + " is for " + std::to_string(t.r()) + "x" +
                std::to_string(t.r()) + " kernels but the kernel is " + std::to_string(s.R) + "x" +
                std::to_string(s.S));
  conv::check_fp32_range(t);
  if (t.n() > kMaxTilePoints)
    throw Error("the CUDA path runs tiles of at most " + std::to_string(kMaxTilePoints) + " points; " +
                t.tile().to_string() + " has " + std::to_string(t.n()));
  return t;
}

// The entries the kernels use, as FP32 (within its range: check_fp32_range).
void copy_matrix(const std::vector<double>& values, float* out) {
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
}

}  // namespace

MultipassPlanData prepare_multipass(const ConvShape& shape, std::span<const float> weights,
                                    std::span<const float> bias, const CudaPlanOptions& options) {
  check_supported(shape);
  if (static_cast<int64_t>(weights.size()) != shape.weight_size())
    throw Error("weights hold " + std::to_string(weights.size()) + " values; " + shape.to_string() +
                " needs " + std::to_string(shape.weight_size()));
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != shape.K)
    throw Error("bias holds " + std::to_string(bias.size()) +
                " values; it needs 0 or K = " + std::to_string(shape.K));
  for (TensorType t : {options.input, options.output})
    if (t != TensorType::kFp32 && t != TensorType::kFp16 && t != TensorType::kBf16)
      throw Error("tensor type " + std::to_string(static_cast<int>(t)) +
                  " is not one of the CUDA path's: fp32, fp16, bf16");
  conv::check_finite(weights.data(), shape.weight_size(), "weights", shape);
  conv::check_finite(bias.data(), static_cast<int64_t>(bias.size()), "bias", shape);

  std::string reason;
  Transform transform = choose_transform(shape, options, reason);
  const TransformF64 f = transform.to_f64();
  const int m = f.m, r = f.r, n = f.n, nn = n * n;

  TileGeometry g;
  g.N = shape.N, g.C = shape.C, g.H = shape.H, g.W = shape.W, g.K = shape.K;
  g.out_h = shape.out_h(), g.out_w = shape.out_w();
  g.pad_h = shape.pad_h, g.pad_w = shape.pad_w;
  g.m = m, g.n = n;
  g.tiles_h = (g.out_h + m - 1) / m, g.tiles_w = (g.out_w + m - 1) / m;
  const int64_t T = g.tiles();
  if (T > kIntMax || shape.C > kIntMax || shape.K > kIntMax || nn * shape.C * T > kIntMax * 4 ||
      nn * shape.K * T > kIntMax * 4)
    throw Error("the CUDA path's buffers for " + shape.to_string() + " pass the sizes cuBLAS takes (" +
                std::to_string(T) + " tiles); split the batch");

  MultipassPlanData p{shape, transform, {}, {}, {}, {}, {}, {}, {}, {}};
  p.input_pass.g = g;
  p.output_pass.g = g;
  p.output_pass.relu = options.relu;
  copy_matrix(f.BT, p.input_pass.BT);
  copy_matrix(f.AT, p.output_pass.AT);
  p.v_shift.gain = v_gain_bound(f);

  // U[a = (i, j)][k][c] = (G g G^T)[i][j] in float64; each (a, k) column's largest |U| scaled into [1, 2)
  // by a power of two, then rounded to fp16 (the column's scale, u_pow2, is undone by the output pass).
  const int64_t K = shape.K, C = shape.C;
  std::vector<double> u(static_cast<std::size_t>(nn * K * C));
  std::vector<double> gw(static_cast<std::size_t>(n * r));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float* w = weights.data() + (k * C + c) * r * r;
      for (int i = 0; i < n; ++i)  // (G w)[i][v]
        for (int v = 0; v < r; ++v) {
          double s = 0.0;
          for (int q = 0; q < r; ++q) s += f.g(i, q) * static_cast<double>(w[q * r + v]);
          gw[static_cast<std::size_t>(i * r + v)] = s;
        }
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double s = 0.0;
          for (int v = 0; v < r; ++v) s += gw[static_cast<std::size_t>(i * r + v)] * f.g(j, v);
          u[static_cast<std::size_t>(((i * n + j) * K + k) * C + c)] = s;
        }
    }
  p.u_fp16.resize(u.size());
  p.u_pow2.resize(static_cast<std::size_t>(nn * K));
  int lowest = 0;
  for (int64_t col = 0; col < nn * K; ++col) {
    const double* values = u.data() + col * C;
    double amax = 0.0;
    for (int64_t c = 0; c < C; ++c) amax = std::max(amax, std::abs(values[c]));
    if (!std::isfinite(amax))
      throw Error(
          "the transformed filters G w G^T overflow float64: the transform's G is too large for these "
          "weights");
    // Scales kept within FP32's normals (weights below 2^-126 lose their smallest bits in fp16).
    const int e = amax > 0.0 ? std::clamp(std::ilogb(amax), std::numeric_limits<float>::min_exponent - 1,
                                          std::numeric_limits<float>::max_exponent - 1)
                             : 0;
    p.u_pow2[static_cast<std::size_t>(col)] = std::ldexp(1.0f, e);
    lowest = std::min(lowest, e);
    for (int64_t c = 0; c < C; ++c)
      p.u_fp16[static_cast<std::size_t>(col * C + c)] =
          static_cast<uint16_t>(encode_bits(Format::kFp16, std::ldexp(values[c], -e)));
  }
  p.v_shift.floor = fp16_v_shift_floor(lowest);
  p.bias.assign(bias.begin(), bias.end());

  p.gemm.m = T, p.gemm.n = K, p.gemm.k = C;
  p.gemm.lda = T, p.gemm.ldb = C, p.gemm.ldc = T;
  p.gemm.stride_a = C * T, p.gemm.stride_b = K * C, p.gemm.stride_c = K * T;
  p.gemm.batch = nn;

  MultipassDescription& d = p.description;
  d.tile = transform.tile();
  d.points = to_string(transform.points());
  d.reason = reason;
  d.tiles = T;
  d.v_bytes = nn * C * T * 2;
  d.m_bytes = nn * K * T * 4;
  d.u_bytes = nn * K * C * 2;
  d.v_gain = p.v_shift.gain;
  d.input = options.input;
  d.output = options.output;
  return p;
}

void check_size(std::size_t got, int64_t want, const char* what, const ConvShape& s) {
  if (static_cast<int64_t>(got) != want)
    throw Error(std::string(what) + " hold" + (std::string(what) == "weights" ? "" : "s") + " " +
                std::to_string(got) + " values; " + s.to_string() + " needs " + std::to_string(want));
}

void gemm_fp16_fp32_host(const GemmCall& call, const uint16_t* A, const uint16_t* B, float* C) {
  std::vector<float> a(static_cast<std::size_t>(call.lda * call.k)),
      b(static_cast<std::size_t>(call.ldb * call.n));
  for (int64_t batch = 0; batch < call.batch; ++batch) {
    const uint16_t* Ab = A + batch * call.stride_a;
    const uint16_t* Bb = B + batch * call.stride_b;
    float* Cb = C + batch * call.stride_c;
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(decode_bits(Format::kFp16, Ab[i]));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(decode_bits(Format::kFp16, Bb[i]));
    for (int64_t j = 0; j < call.n; ++j) {
      float* c = Cb + j * call.ldc;
      std::fill(c, c + call.m, 0.0f);
      for (int64_t l = 0; l < call.k; ++l) {
        const float bl = b[static_cast<std::size_t>(l + j * call.ldb)];
        const float* al = a.data() + l * call.lda;
        for (int64_t i = 0; i < call.m; ++i) c[i] += al[i] * bl;  // fp16 x fp16 is exact in FP32
      }
    }
  }
}

}  // namespace nova::cuda::detail
