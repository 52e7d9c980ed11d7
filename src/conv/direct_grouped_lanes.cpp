// The direct path's grouped-lanes form (DirectPlan::grouped_lanes): grouped convolutions with as many
// output as input channels per group, and 2, 4 or 8 of them (ResNeXt's 3x3 layers), on NHWC and NCHW16c
// tensors. Output channels sit in vector lanes, as in a depthwise convolution: lane k of output channel
// k = g*Cg + j sums x[g*Cg + c] * w[k][c] over the taps and c. The input value a lane needs is its
// group's channel c, the same for the Cg lanes of a group: the ISA's grouped_lanes kernel shuffles it
// out of each loaded input vector in registers (kernels/grouped_lanes_template.hpp). Every lane does useful
// work, where the pixel-rows GEMM padded each group's few output channels to 16 lanes, and no output rows
// are transposed, as they were in the column-phases form. Each task stages its band's input rows with the
// zero padding, `piece` channels of them, so that the kernel needs no edge cases.
//
// The sums: per output, from +0, one fused multiply-add per (u, v, c) in that order, then + bias and the
// ReLU: the chain of the other forms (the NHWC im2col's (u, v, c) order), with the zero padding as zero
// products, so the same bits as NCHW.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "plan_impl.hpp"

namespace nova::conv {
namespace {

// Channels of one task's staged rows on NHWC (NCHW16c: one block of 16), and the most bytes of staged rows
// a task holds (its band of output rows is cut to fit, so that they stay in L2).
constexpr int64_t kGroupedLanesPiece = 64;
constexpr int64_t kGroupedLanesBandBytes = 192 * 1024;
// Tasks wanted per thread (bands of output rows are cut for them).
constexpr int64_t kGroupedLanesTasksPerThread = 4;
// Kernel rows (a row pointer each, on the stack).
constexpr int64_t kGroupedLanesMaxKernelRows = 16;

// Floats of one 16-channel chunk of W ([chunk][u][v][c][16]).
int64_t chunk_weight_floats(const ConvShape& s, int64_t cg) {
  return s.R * s.S * cg * kLanes;
}

int64_t staged_row_width(const ConvShape& s) {
  return (s.out_w() - 1) * s.stride + (s.S - 1) * s.dilation + 1;
}

}  // namespace

bool grouped_lanes_applies(const ConvShape& s, Layout layout) {
  const int64_t cg = s.C / s.groups;
  return s.groups > 1 && s.K == s.C && (cg == 2 || cg == 4 || cg == 8) && layout != Layout::kNCHW &&
         s.R <= kGroupedLanesMaxKernelRows;
}

void build_grouped_lanes(Plan::Impl& p, DirectPlan& d, const float* weights, const float* bias) {
  const ConvShape& s = p.shape;
  const int64_t K = s.K, taps = s.R * s.S, cg = d.Cg;
  d.grouped_lanes = true;
  d.piece = p.layout == Layout::kNHWC ? std::min(round_up(K, kLanes), kGroupedLanesPiece) : kLanes;
  // W as [chunk of 16 output channels][u][v][c][16]: output channel k = g*Cg + j's weight on its group's
  // input channel c, zeros past K (the kernel's offsets inside a chunk are then compile-time constants).
  const int64_t chunks = ceil_div(K, kLanes), per_chunk = chunk_weight_floats(s, cg);
  d.W.resize(static_cast<std::size_t>(chunks * per_chunk));
  std::fill(d.W.data(), d.W.data() + d.W.size(), 0.0f);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t t = 0; t < taps; ++t)
        d.W.data()[k / kLanes * per_chunk + (t * cg + c) * kLanes + k % kLanes] =
            weights[(k * cg + c) * taps + t];
  d.bias.resize(static_cast<std::size_t>(chunks * kLanes));
  for (int64_t k = 0; k < chunks * kLanes; ++k) d.bias.data()[k] = bias != nullptr && k < K ? bias[k] : 0.0f;
  // Bands of output rows: as many rows as keep the staged rows within kGroupedLanesBandBytes, fewer where
  // that leaves a thread without kGroupedLanesTasksPerThread tasks.
  const int64_t row_bytes = staged_row_width(s) * d.piece * static_cast<int64_t>(sizeof(float));
  const int64_t by_bytes = (kGroupedLanesBandBytes / row_bytes - (s.R - 1) * s.dilation - 1) / s.stride + 1;
  const int64_t pieces = ceil_div(K, d.piece);
  const int64_t by_tasks = s.N * pieces * s.out_h() / (kGroupedLanesTasksPerThread * int64_t{p.threads});
  d.band = std::clamp<int64_t>(std::min(by_bytes, by_tasks), 1, s.out_h());
  const int64_t in_rows = (d.band - 1) * s.stride + (s.R - 1) * s.dilation + 1;
  p.direct = std::move(d);
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  for (auto& b : p.thread_scratch)
    b.resize(static_cast<std::size_t>(in_rows * staged_row_width(s) * p.direct->piece));
}

void execute_grouped_lanes(Plan::Impl& p, const float* input, float* output) {
  const ConvShape& s = p.shape;
  const DirectPlan& d = *p.direct;
  const int64_t K = s.K, C = s.C, H = s.H, W = s.W, OH = s.out_h(), OW = s.out_w();
  const int64_t wx = staged_row_width(s), piece = d.piece;
  const bool nhwc = p.layout == Layout::kNHWC;
  const int64_t pieces = ceil_div(K, piece), bands = ceil_div(OH, d.band);
  const int64_t blocks = ceil_div(C, kLanes);  // NCHW16c channel blocks (input and output: K == C)
  const GroupedLanesFn kernel = p.kernels->gemm.grouped_lanes[d.Cg == 2 ? 0 : d.Cg == 4 ? 1 : 2];
  const auto task_fn = [&](std::size_t task, int worker) {
    const int64_t bnd = static_cast<int64_t>(task) % bands, pc = static_cast<int64_t>(task) / bands % pieces,
                  img = static_cast<int64_t>(task) / bands / pieces;
    const int64_t oy0 = bnd * d.band, oy1 = std::min(OH, oy0 + d.band), k0 = pc * piece;
    const int64_t channels = std::min(piece, K - k0);
    const int64_t iy0 = oy0 * s.stride - s.pad_h,
                  rows = (oy1 - oy0 - 1) * s.stride + (s.R - 1) * s.dilation + 1;
    float* stage = p.thread_scratch[static_cast<std::size_t>(worker)].data();
    // The band's input rows, chunk after chunk of 16 channels (16 floats a pixel), with the zero padding
    // (rows and columns outside the input, lanes past the channels) as zeros. Read in place instead (the
    // edge pixels' windows copied), NHWC rows of 256-512 channels ran 1.2-1.6x slower: each task reads a
    // quarter of every pixel, 1-2 KB apart (docs/engine-log.md, "Session 27").
    const int64_t chunks = ceil_div(channels, kLanes), row_chunk = wx * kLanes;
    const int64_t x_lo = std::clamp<int64_t>(s.pad_w, 0, wx),
                  x_hi = std::clamp<int64_t>(s.pad_w + W, x_lo, wx);
    for (int64_t r = 0; r < rows; ++r) {
      float* row = stage + r * chunks * row_chunk;
      const int64_t iy = iy0 + r;
      if (iy < 0 || iy >= H) {
        std::fill(row, row + chunks * row_chunk, 0.0f);
        continue;
      }
      for (int64_t q = 0; q < chunks; ++q) {
        float* rq = row + q * row_chunk;
        std::fill(rq, rq + x_lo * kLanes, 0.0f);
        std::fill(rq + x_hi * kLanes, rq + row_chunk, 0.0f);
        if (nhwc) {
          // A loop, not std::copy: a library call per pixel of 16-64 floats was a third of the time.
          const int64_t lanes = std::min<int64_t>(kLanes, channels - q * kLanes);
          const float* src = input + ((img * H + iy) * W + x_lo - s.pad_w) * C + k0 + q * kLanes;
          for (int64_t xc = x_lo; xc < x_hi; ++xc, src += C) {
            float* dst = rq + xc * kLanes;
            for (int64_t i = 0; i < lanes; ++i) dst[i] = src[i];
            for (int64_t i = lanes; i < kLanes; ++i) dst[i] = 0.0f;
          }
        } else {  // one channel block: the row's pixels are contiguous
          const float* src = input + (((img * blocks + pc) * H + iy) * W + x_lo - s.pad_w) * kLanes;
          std::copy(src, src + (x_hi - x_lo) * kLanes, rq + x_lo * kLanes);
          // The last block's padding lanes as zeros whatever the tensor holds there: they meet zero weights,
          // and a NaN there would make the output's padding lanes NaN.
          if (channels < kLanes)
            for (int64_t xc = x_lo; xc < x_hi; ++xc)
              std::fill(rq + xc * kLanes + channels, rq + (xc + 1) * kLanes, 0.0f);
        }
      }
    }
    const float* row_ptrs[kGroupedLanesMaxKernelRows];
    const float* w = d.W.data() + k0 / kLanes * chunk_weight_floats(s, d.Cg);
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      for (int64_t u = 0; u < s.R; ++u)
        row_ptrs[u] = stage + ((oy - oy0) * s.stride + u * s.dilation) * chunks * row_chunk;
      float* out = nhwc ? output + ((img * OH + oy) * OW) * K + k0
                        : output + (((img * blocks + pc) * OH + oy) * OW) * kLanes;
      kernel(row_ptrs, static_cast<std::size_t>(s.R), static_cast<std::size_t>(s.S),
             static_cast<std::size_t>(s.stride), static_cast<std::size_t>(s.dilation),
             static_cast<std::size_t>(row_chunk), w, static_cast<std::size_t>(OW),
             static_cast<std::size_t>(channels), d.bias.data() + k0, p.relu, !nhwc, out, nhwc ? K : kLanes);
    }
  };
  p.pool->run(static_cast<std::size_t>(s.N * pieces * bands), p.charged(Stage::kDirect, task_fn));
}

}  // namespace nova::conv
