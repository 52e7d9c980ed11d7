// Direct convolution (any stride, dilation, groups, kernel size). Two GEMM forms over the same products
// in the same (u, v, c) order, so every layout gets the same bits:
//   pixels as rows: for a block of output pixels, an im2col copy from NHWC (rows of (u, v, c)), the GEMM
//     micro-kernels against the packed weights, and the epilogue (+bias, ReLU, into NHWC or NCHW16c, or
//     scattered into NCHW planes where the filters are large);
//   output channels as rows (NCHW with small filters): im2col^T panels of pixels packed from the NCHW
//     input, the weights as rows, and runs of pixels stored into each output plane.
// Depthwise convolutions sum their taps without a GEMM: without a channel multiplier over runs of a row's
// output pixels, 16 channels per vector; with one per pixel, or on NCHW per output row of a channel's plane.
#include <algorithm>
#include <vector>

#include "plan_impl.hpp"

namespace nova::conv {

namespace {

// The packing loops below are short runs (a panel, a kernel row): GCC's loop distribution turns them into
// memset and memmove calls, which cost more than the copies.
#if defined(__GNUC__) && !defined(__clang__)
#define NOVA_INLINE_RUN_LOOPS [[gnu::optimize("no-tree-loop-distribute-patterns")]]
#else
#define NOVA_INLINE_RUN_LOOPS
#endif

// The columns x in [0, count) whose strided read first + x * step falls inside [0, limit), as [lo, hi): a run
// of an im2col^T row or of a depthwise plane's phase, the rest being zeros of the padding.
struct InsideColumns {
  int64_t lo, hi;
};
InsideColumns inside_columns(int64_t first, int64_t step, int64_t limit, int64_t count) {
  const int64_t lo = first >= 0 ? 0 : std::min(count, ceil_div(-first, step));
  const int64_t hi = std::clamp<int64_t>(limit - first > 0 ? ceil_div(limit - first, step) : 0, lo, count);
  return {lo, hi};
}

// A panel's output pixels as runs along output rows: pixels [j, j + run) of the panel are (oy, ox0 ..).
struct PixelRun {
  int64_t j, run, oy, ox0;
};

// im2col^T for the output pixels [p0, p0 + count) of one image: row (u, v, c) holds the input pixels the
// tap (u, v) of channel c reads (zeros in the padding and past `count`, up to `width`). Along an output
// row the input is read at steps of the stride, so each run is a copy (stride 1) or a strided gather. The
// run bounds (divisions) are worked out once per tap, not per channel: per channel they had made
// 1x32x56x56->64 at stride 2 take 2.6x the time of the NHWC im2col.
NOVA_INLINE_RUN_LOOPS void pack_panel(const ConvShape& s, const float* image, int64_t cg, int64_t p0,
                                      int64_t count, int64_t width, std::vector<PixelRun>& runs, float* b) {
  const int64_t OW = s.out_w(), H = s.H, W = s.W, plane = H * W;
  runs.clear();
  for (int64_t j = 0; j < count;) {
    const int64_t pix = p0 + j, ox0 = pix % OW, run = std::min(count - j, OW - ox0);
    runs.push_back({j, run, pix / OW, ox0});
    j += run;
  }
  for (int64_t u = 0; u < s.R; ++u)
    for (int64_t v = 0; v < s.S; ++v) {
      float* tap = b + (u * s.S + v) * cg * width;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t x = count; x < width; ++x) tap[c * width + x] = 0.0f;
      for (const PixelRun& r : runs) {
        const int64_t iy = r.oy * s.stride + u * s.dilation - s.pad_h;
        if (iy < 0 || iy >= H) {
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t x = 0; x < r.run; ++x) tap[c * width + r.j + x] = 0.0f;
          continue;
        }
        const int64_t ix0 = r.ox0 * s.stride + v * s.dilation - s.pad_w;
        const auto [lo, hi] = inside_columns(ix0, s.stride, W, r.run);
        const float* from = image + iy * W + ix0;
        for (int64_t c = 0; c < cg; ++c) {
          float* d = tap + c * width + r.j;
          const float* row = from + c * plane;
          // Loops, not std::copy and std::fill: runs are a panel (16 * nv pixels) long at most, and calls
          // to memmove and memset for each cost more than the copies (dilated 1x64x56x56->64: 1.15x the
          // NHWC im2col's time with them).
          for (int64_t x = 0; x < lo; ++x) d[x] = 0.0f;
          if (s.stride == 1) {
            for (int64_t x = lo; x < hi; ++x) d[x] = row[x];
          } else if (s.stride == 2) {  // a constant step, which the compiler vectorizes with shuffles
            for (int64_t x = lo; x < hi; ++x) d[x] = row[2 * x];
          } else {
            for (int64_t x = lo; x < hi; ++x) d[x] = row[x * s.stride];
          }
          for (int64_t x = hi; x < r.run; ++x) d[x] = 0.0f;
        }
      }
    }
}

// The NHWC im2col of output pixels [q0, q1) of group grp: row q - q0 of `a` holds (u, v, c) over the
// group's channels. Where a kernel row's taps are adjacent pixels of one input row (dilation 1, one
// group) and all inside it, they are one run of S * Cg floats: one copy in place of S (1x3x224x224->64:
// runs of 9 floats, not 3 of 3). Copies are loops, not memcpy calls of a few floats each.
NOVA_INLINE_RUN_LOOPS void im2col_nhwc(const ConvShape& s, const DirectPlan& d, const float* src, int64_t grp,
                                       int64_t q0, int64_t q1, float* a) {
  const int64_t OH = s.out_h(), OW = s.out_w(), C = s.C, H = s.H, W = s.W, cg = d.Cg;
  const bool rows_contiguous = s.dilation == 1 && s.groups == 1;
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t img = q / (OH * OW), oy = q / OW % OH, ox = q % OW;
    float* row = a + (q - q0) * d.crs;
    const int64_t ix0 = ox * s.stride - s.pad_w;
    for (int64_t u = 0; u < s.R; ++u) {
      const int64_t iy = oy * s.stride + u * s.dilation - s.pad_h;
      float* dst = row + u * s.S * cg;
      if (iy < 0 || iy >= H) {
        for (int64_t i = 0; i < s.S * cg; ++i) dst[i] = 0.0f;
        continue;
      }
      const float* line = src + ((img * H + iy) * W) * C + grp * cg;
      if (rows_contiguous && ix0 >= 0 && ix0 + s.S <= W) {
        const float* from = line + ix0 * C;
        for (int64_t i = 0; i < s.S * cg; ++i) dst[i] = from[i];
        continue;
      }
      for (int64_t v = 0; v < s.S; ++v) {
        const int64_t ix = ix0 + v * s.dilation;
        float* t = dst + v * cg;
        if (ix < 0 || ix >= W) {
          for (int64_t c = 0; c < cg; ++c) t[c] = 0.0f;
        } else {
          const float* from = line + ix * C;
          for (int64_t c = 0; c < cg; ++c) t[c] = from[c];
        }
      }
    }
  }
}

// rows x cols values (row stride ld) += bias[0, cols), then ReLU where asked, in place: the two loops without
// a branch inside, so that they vectorize. max(v, 0) keeps NaN (and -0), as the epilogues' v < 0 test does.
void add_bias_rows(float* v, int64_t rows, int64_t cols, int64_t ld, const float* bias, bool relu) {
  for (int64_t i = 0; i < rows; ++i) {
    float* r = v + i * ld;
    if (relu) {
      for (int64_t j = 0; j < cols; ++j) r[j] = std::max(r[j] + bias[j], 0.0f);
    } else {
      for (int64_t j = 0; j < cols; ++j) r[j] += bias[j];
    }
  }
}

// Pixels [first, first + count) of a direct GEMM block in one output row: `inside` when every tap of each
// lies inside the input (their rows are read in place), else copied by the im2col.
struct BlockRun {
  int64_t first, count;
  bool inside;
};

// The direct GEMM of output pixels [q0, q1) of group grp over the panels [k0, k1), where the plan reads
// rows in place (DirectPlan::rows_in_place): the block as runs of pixels, those of one output row whose taps
// all lie inside the input read where they are (one segment per kernel row), the others copied by the
// im2col (rows of `a` at their own offsets). The GEMM computes the same chain either way
// (gemm_ukernel_segments). Where bias is not null (the output written in place), bias[k0, k1) and ReLU
// follow: in the segments kernel's registers, or as a pass over the copied runs' rows.
void gemm_rows_in_place(const ConvShape& s, const DirectPlan& d, const GemmTable& g, const float* src,
                        int64_t grp, int64_t q0, int64_t q1, int64_t k0, int64_t k1, float* a, float* mo,
                        int64_t ldm, const float* bias, bool relu, std::vector<BlockRun>& runs) {
  const int64_t OH = s.out_h(), OW = s.out_w(), C = s.C, H = s.H, W = s.W;
  runs.clear();
  // Output columns whose S taps all lie inside the input's columns (the first tap in [0, W - S]).
  const InsideColumns x = inside_columns(-s.pad_w, s.stride, W - s.S + 1, OW);
  for (int64_t q = q0; q < q1;) {
    const int64_t oy = q / OW % OH, ox = q % OW, row_end = std::min(q1, q - ox + OW);
    const int64_t iy0 = oy * s.stride - s.pad_h;
    const bool rows_inside = iy0 >= 0 && iy0 + s.R <= H;
    const int64_t row_start = q - ox;
    const int64_t cut[4] = {q, std::clamp(row_start + x.lo, q, row_end),
                            std::clamp(row_start + x.hi, q, row_end), row_end};
    for (int piece = 0; piece < 3; ++piece)
      if (cut[piece + 1] > cut[piece])
        runs.push_back({cut[piece], cut[piece + 1] - cut[piece], rows_inside && piece == 1});
    q = row_end;
  }
  for (const BlockRun& r : runs)
    if (!r.inside) im2col_nhwc(s, d, src, grp, r.first, r.first + r.count, a + (r.first - q0) * d.crs);
  const float* wg = d.W.data() + grp * d.crs * d.Kgpad;
  const auto kc = static_cast<std::size_t>(d.crs);
  const auto seg_len = static_cast<std::size_t>(s.S * C);
  const auto pixel_stride = static_cast<std::size_t>(s.stride * C);
  // Runs outer, panels inner: a row group's output pixels get all their channels before the next group's,
  // so the output is written as consecutive lines (one panel at a time over the block wrote lines a pixel
  // apart, once per panel).
  for (const BlockRun& r : runs) {
    float* c = mo + (r.first - q0) * ldm;
    if (!r.inside) {
      for (int64_t kp = k0; kp < k1; kp += d.panel) {
        const int64_t width = std::min(d.panel, d.Kgpad - kp);
        panel_gemm(g, r.count, static_cast<int>(width / kLanes), kc, a + (r.first - q0) * d.crs, kc,
                   wg + kp * d.crs, static_cast<std::size_t>(width), c + kp, static_cast<std::size_t>(ldm),
                   nullptr, 0);
      }
      if (bias != nullptr) add_bias_rows(c + k0, r.count, k1 - k0, ldm, bias + k0, relu);
      continue;
    }
    const int64_t img = r.first / (OH * OW), oy = r.first / OW % OH, ox = r.first % OW;
    const float* first = src + ((img * H + oy * s.stride - s.pad_h) * W + ox * s.stride - s.pad_w) * C;
    for_each_row_group(r.count, g.mr, [&](int64_t i0, int64_t mrows) {
      const float* seg[kRowsInPlaceMaxKernelRows];
      for (int64_t u = 0; u < s.R; ++u) seg[u] = first + (u * W) * C + i0 * s.stride * C;
      for (int64_t kp = k0; kp < k1; kp += d.panel) {
        const int64_t width = std::min(d.panel, d.Kgpad - kp);
        g.segments[mrows - 1][width / kLanes - 1](static_cast<std::size_t>(s.R), seg_len, seg, pixel_stride,
                                                  wg + kp * d.crs, static_cast<std::size_t>(width),
                                                  bias != nullptr ? bias + kp : nullptr, relu,
                                                  c + i0 * ldm + kp, static_cast<std::size_t>(ldm));
      }
    });
  }
}

// The longest reduction whose NHWC direct GEMM writes the output in place (pixel_block in execute_direct).
constexpr int64_t kInPlaceMaxCrs = 32;
// Direct GEMM tasks wanted per thread before a pixel block's output channels are split into parts.
constexpr int64_t kDirectTasksPerThread = 2;

// dst[i] = src[i] + bias, then ReLU where asked, for a run of one output channel (src may be dst): the
// NCHW-rows and depthwise-planes epilogues. max(v, 0) keeps NaN and -0, as the per-pixel epilogue does.
void store_biased_run(const float* src, float* dst, int64_t count, float bias, bool relu) {
  if (relu) {
    for (int64_t i = 0; i < count; ++i) dst[i] = std::max(src[i] + bias, 0.0f);
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = src[i] + bias;
  }
}

// NCHW stores of output pixels [q0, q1) (consecutive, across images if so), channels
// [k_first, k_first + kn) of pixel q at vals + (q - q0) * ldv, + bias, ReLU: 16 channels at a time staged as
// [pixel][16] and written by the layout table's transposing band store as runs of each output plane. One
// pixel at a time, each pixel's channels went to places a plane apart (depthwise 1x64x56x56 on NCHW:
// 1.8x its NHWC time).
void store_block_nchw(const Plan::Impl& p, const float* vals, int64_t ldv, int64_t q0, int64_t q1,
                      const float* bias, int64_t k_first, int64_t kn, float* output, float* stage) {
  const int64_t plane = p.shape.out_h() * p.shape.out_w(), K = p.shape.K;
  for (int64_t q = q0; q < q1;) {
    const int64_t img = q / plane, end = std::min(q1, (img + 1) * plane), count = end - q;
    for (int64_t kb0 = 0; kb0 < kn; kb0 += kLanes) {
      const int lanes = static_cast<int>(std::min<int64_t>(kLanes, kn - kb0));
      for (int64_t j = 0; j < count; ++j) {
        const float* v = vals + (q - q0 + j) * ldv + kb0;
        float* st = stage + j * kLanes;
        for (int l = 0; l < lanes; ++l) {
          const float val = v[l] + bias[kb0 + l];
          st[l] = p.relu ? std::max(val, 0.0f) : val;  // max keeps NaN and -0, as the other epilogues
        }
        for (int l = lanes; l < kLanes; ++l) st[l] = 0.0f;
      }
      p.kernels->layout.store_band_nchw(stage, count, 1, count, lanes,
                                        output + (img * K + k_first + kb0) * plane + q % plane, plane, 0);
    }
    q = end;
  }
}

// NCHW with small filters (DirectPlan::nchw_rows): per group, image and panel of output pixels,
// im2col^T packed straight from the NCHW input (no NHWC copy), then the GEMM with the group's output
// channels as rows, so that each row is a run of pixels of one output plane: the epilogue stores
// contiguous runs. The NHWC im2col's epilogue wrote each pixel's channels a plane apart, which took 98 %
// of 1x3x224x224->64 (13.5 ms against 3.9 on NHWC, AVX2, 2 threads).
void execute_direct_nchw_rows(Plan::Impl& p, const float* input, float* output) {
  const ConvShape& s = p.shape;
  const DirectPlan& d = *p.direct;
  const GemmTable& g = p.kernels->gemm;
  const int64_t C = s.C, K = s.K, H = s.H, W = s.W, plane_out = s.out_h() * s.out_w();
  const int64_t width = d.panel, crs = d.crs;
  const int nv = static_cast<int>(width / kLanes);
  const int64_t panels = ceil_div(plane_out, width);
  // Runs of panels per task: several tasks per thread, a few panels each so that a task's set-up and
  // its W (read once per panel from the L2 cache) amortize.
  const int64_t units = s.N * s.groups * panels;
  const int64_t per_task = std::clamp<int64_t>(units / (4 * p.threads), 1, 8);
  const int64_t chunks = ceil_div(panels, per_task);
  const auto task_fn = [&](std::size_t task, int worker) {
    const int64_t chunk = static_cast<int64_t>(task) % chunks;
    const int64_t grp = static_cast<int64_t>(task) / chunks % s.groups;
    const int64_t img = static_cast<int64_t>(task) / chunks / s.groups;
    float* b = p.thread_scratch[static_cast<std::size_t>(worker)].data();
    float* rows = b + crs * width;
    const float* wg = d.W.data() + grp * d.Kg * crs;
    const float* in_img = input + (img * C + grp * d.Cg) * H * W;
    thread_local std::vector<PixelRun> runs;  // kept per thread across tasks
    for (int64_t q = chunk * per_task; q < std::min(panels, (chunk + 1) * per_task); ++q) {
      const int64_t p0 = q * width, count = std::min(width, plane_out - p0);
      pack_panel(s, in_img, d.Cg, p0, count, width, runs, b);
      panel_gemm(g, d.Kg, nv, static_cast<std::size_t>(crs), wg, static_cast<std::size_t>(crs), b,
                 static_cast<std::size_t>(width), rows, static_cast<std::size_t>(width), nullptr, 0);
      for (int64_t k = 0; k < d.Kg; ++k) {
        const int64_t kk = grp * d.Kg + k;
        store_biased_run(rows + k * width, output + (img * K + kk) * plane_out + p0, count, d.bias.data()[kk],
                         p.relu);
      }
    }
  };
  p.pool->run(static_cast<std::size_t>(s.N * s.groups * chunks), p.charged(Stage::kDirect, task_fn));
}

// One input row (column x at in + x * sx, W columns) split into its st column phases: phase f's row, at
// phases + f * phase_stride, holds input column i * st + f - pad_w at column i < width, zeros where that
// lies outside the row. The column-phase copies of the direct path (DirectPlan::phases, depthwise_planes).
NOVA_INLINE_RUN_LOOPS void split_row_into_phases(const float* in, int64_t sx, int64_t W, int64_t st,
                                                 int64_t pad_w, int64_t width, float* phases,
                                                 int64_t phase_stride) {
  for (int64_t f = 0; f < st; ++f) {
    const auto [lo, hi] = inside_columns(f - pad_w, st, W, width);
    float* row = phases + f * phase_stride;
    const float* from = in + (f - pad_w) * sx;  // + i * st * sx: column i's input
    for (int64_t i = 0; i < lo; ++i) row[i] = 0.0f;
    if (sx == 1 && st == 1) {
      for (int64_t i = lo; i < hi; ++i) row[i] = from[i];
    } else if (sx == 1 && st == 2) {  // a constant step, which the compiler vectorizes with shuffles
      for (int64_t i = lo; i < hi; ++i) row[i] = from[2 * i];
    } else {
      const int64_t step = st * sx;
      for (int64_t i = lo; i < hi; ++i) row[i] = from[i * step];
    }
    for (int64_t i = hi; i < width; ++i) row[i] = 0.0f;
  }
}

// Small filters over few input channels per group (DirectPlan::phases): first every input plane is copied
// with its columns split into `stride` phases, zero-padded (phase f's column i holds input column
// i * stride + f - pad_w; nchw_phase_width columns), so that the pixels of an output row that one tap
// (u, v) of a channel reads are consecutive floats of one phase row. Then per output row the addresses of
// those runs, one per im2col^T row (u, v, c), a row of zeros for input rows outside the image, and per
// panel of the row the GEMM reads them through the kernels' B-rows form: the values and the order of the
// packed panel, so its bits. Packing the panels took 34 % of the 7x7 stride-2 stem's time (perf, AVX2).
// The copy reads NCHW planes, or gathers a channel from NHWC pixels or NCHW16c blocks.
NOVA_INLINE_RUN_LOOPS void copy_column_phases(Plan::Impl& p, const float* input) {
  const ConvShape& s = p.shape;
  const int64_t C = s.C, H = s.H, W = s.W, st = s.stride, wph = nchw_phase_width(s);
  // Input element (y, x) of channel c of image img at channel_base(img, c) + y * sy + x * sx.
  const bool nchw = p.layout == Layout::kNCHW, nhwc = p.layout == Layout::kNHWC;
  const int64_t sy = nchw ? W : nhwc ? W * C : W * kLanes, sx = nchw ? 1 : nhwc ? C : kLanes;
  const auto channel_base = [&](int64_t img, int64_t c) {
    return nchw   ? input + (img * C + c) * H * W
           : nhwc ? input + img * H * W * C + c
                  : input + ((img * ceil_div(C, kLanes) + c / kLanes) * H * W) * kLanes + c % kLanes;
  };
  // Input row y of channel c into its `st` phase rows.
  const auto copy_row = [&](int64_t img, int64_t c, int64_t y) {
    const float* base = channel_base(img, c) + y * sy;
    float* phases = p.packed_input.data() + (img * C + c) * st * H * wph;
    split_row_into_phases(base, sx, W, st, s.pad_w, wph, phases + y * wph, H * wph);
  };
  // NCHW: a task per plane. NHWC and NCHW16c: a task per input row of an image, all its channels, so that
  // the row is read from the cache C times (a task per channel read the whole input with a stride of C
  // floats: 1x256x56x56 at stride 2 in 32 groups took 1.9x the pixel-rows form's time).
  const int64_t units = s.N * (nchw ? C : H);
  const auto task_fn = [&](std::size_t task, int) {
    const int64_t u = static_cast<int64_t>(task);
    if (nchw) {
      for (int64_t y = 0; y < H; ++y) copy_row(u / C, u % C, y);
    } else {
      for (int64_t c = 0; c < C; ++c) copy_row(u / H, c, u % H);
    }
  };
  p.pool->run(static_cast<std::size_t>(units), p.charged(Stage::kDirect, task_fn));
}

NOVA_INLINE_RUN_LOOPS void execute_direct_phases(Plan::Impl& p, const float* input, float* output) {
  copy_column_phases(p, input);
  const ConvShape& s = p.shape;
  const DirectPlan& d = *p.direct;
  const GemmTable& g = p.kernels->gemm;
  const int64_t C = s.C, K = s.K, H = s.H, OH = s.out_h(), OW = s.out_w(), plane_out = OH * OW;
  const int64_t st = s.stride, wph = nchw_phase_width(s), crs = d.crs, row_width = round_up(OW, kLanes);
  const bool nchw = p.layout == Layout::kNCHW, nhwc = p.layout == Layout::kNHWC;
  const float* phases = p.packed_input.data();
  const float* zeros = phases + s.N * C * st * H * wph;
  const PackRows16Fn transpose = p.kernels->layout.pack_rows16[static_cast<int>(DataType::kFp32)];
  // Units: output rows of a group and image (NCHW), or of an image with all its groups (transposed
  // together), shared out in contiguous runs, a few per thread.
  const int64_t unit_groups = nchw ? 1 : s.groups;
  const int64_t rows = s.N * (s.groups / unit_groups) * OH;
  const int64_t tasks = std::min(rows, 4 * int64_t{p.threads});
  const auto task_fn = [&](std::size_t task, int worker) {
    float* sums = p.thread_scratch[static_cast<std::size_t>(worker)].data();
    thread_local std::vector<const float*> b_rows;  // kept per thread across tasks
    b_rows.resize(static_cast<std::size_t>(crs));
    const int64_t r0 = static_cast<int64_t>(task) * rows / tasks,
                  r1 = (static_cast<int64_t>(task) + 1) * rows / tasks;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t oy = r % OH, img = r / OH / (s.groups / unit_groups);
      for (int64_t grp = r / OH % (s.groups / unit_groups) * unit_groups, last = grp + unit_groups;
           grp < last; ++grp) {
        const float* in_grp = phases + (img * C + grp * d.Cg) * st * H * wph;
        for (int64_t u = 0; u < s.R; ++u) {
          const int64_t iy = oy * st + u * s.dilation - s.pad_h;
          for (int64_t v = 0; v < s.S; ++v) {
            const float** to = b_rows.data() + (u * s.S + v) * d.Cg;
            if (iy < 0 || iy >= H) {
              for (int64_t c = 0; c < d.Cg; ++c) to[c] = zeros;
              continue;
            }
            const int64_t col = v * s.dilation;
            const float* first = in_grp + ((col % st) * H + iy) * wph + col / st;  // channel 0's run
            for (int64_t c = 0; c < d.Cg; ++c) to[c] = first + c * st * H * wph;
          }
        }
        // A row group's output channels over the whole row, panel by panel: the row's phase runs (19 KB for
        // the 7x7 stride-2 stem) stay in L1, and each output plane is written along the row. All the
        // row groups of one panel first (the output written 64 bytes at a time into 64 planes) spent 21 % of
        // the stem's time on the stores. NHWC and NCHW16c: the row's sums [K][row_width], then transposed.
        const float* wg = d.W.data() + grp * d.Kg * crs;
        float* out_row = output + (img * K + grp * d.Kg) * plane_out + oy * OW;  // NCHW
        const float* bias = d.bias.data() + grp * d.Kg;
        for_each_row_group(d.Kg, g.mr, [&](int64_t i0, int64_t mrows) {
          const float* a = wg + i0 * crs;
          for (int64_t ox0 = 0; ox0 < OW; ox0 += d.panel) {
            const int64_t count = std::min(d.panel, OW - ox0);
            const int nv = static_cast<int>(ceil_div(count, kLanes));
            // NCHW: whole vectors go to the output planes themselves (bias and ReLU applied by the kernel), a
            // part of one through `sums`.
            const bool whole = nchw && count == nv * kLanes;
            float* out = out_row + i0 * plane_out + ox0;
            float* to = whole ? out : nchw ? sums : sums + (grp * d.Kg + i0) * row_width + ox0;
            const auto ldc = static_cast<std::size_t>(whole ? plane_out : nchw ? nv * kLanes : row_width);
            g.b_rows[mrows - 1][nv - 1](static_cast<std::size_t>(crs), a, static_cast<std::size_t>(crs),
                                        b_rows.data(), ox0, bias + i0, p.relu, to, ldc);
            if (nchw && !whole)
              for (int64_t k = 0; k < mrows; ++k)
                std::copy_n(sums + static_cast<std::size_t>(k) * ldc, count, out + k * plane_out);
          }
        });
      }
      if (nchw) continue;
      // The row's K channels (every group's), 16 at a time, as [pixel][16]: an NCHW16c block's row in
      // place; for NHWC staged, then each pixel's channels copied.
      float* stage = sums + K * row_width;
      for (int64_t kb = 0; kb < ceil_div(K, kLanes); ++kb) {
        const int lanes = static_cast<int>(std::min<int64_t>(kLanes, K - kb * kLanes));
        float* dst = nhwc ? stage : output + ((img * ceil_div(K, kLanes) + kb) * OH + oy) * OW * kLanes;
        transpose(sums + kb * kLanes * row_width, 1.0f, row_width, lanes, OW, dst);
        if (nhwc)
          for (int64_t x = 0; x < OW; ++x) {  // a loop, not a memmove call per pixel (40 % of the time)
            float* to = output + ((img * OH + oy) * OW + x) * K + kb * kLanes;
            for (int l = 0; l < lanes; ++l) to[l] = stage[x * kLanes + l];
          }
      }
    }
  };
  p.pool->run(static_cast<std::size_t>(tasks), p.charged(Stage::kDirect, task_fn));
}

// Depthwise on NCHW (DirectPlan::depthwise_planes): per image and input channel, the plane is copied once
// with zero columns of padding on both sides, and each output row of each of the channel's Kg outputs is
// one depthwise_row call over the kernel rows inside the image. The padding columns add exact zeros, so
// every output gets the NHWC form's bits (which skips those taps). At stride s the padded columns are
// split into s phases (phase f holds columns f, f + s, ...), so that the columns an output row reads for
// one tap, ox * s + v * dil, are contiguous in phase (v * dil) % s. The NHWC form on NCHW tensors copied
// the input to NHWC and stored 16 channels at a time through a staging transpose: 1.3-2.2x its NHWC time.
// Stride 1 (kStrided false) keeps its plain row copy and column offsets: the phase arithmetic cost it
// 3-10 % of its time on AVX2.
template <bool kStrided>
NOVA_INLINE_RUN_LOOPS void depthwise_planes(Plan::Impl& p, const float* input, float* output) {
  const ConvShape& s = p.shape;
  const DirectPlan& d = *p.direct;
  const int64_t C = s.C, K = s.K, H = s.H, W = s.W, OH = s.out_h(), OW = s.out_w(), Kg = d.Kg;
  const int64_t st = kStrided ? s.stride : 1, wph = depthwise_phase_width(s), taps = s.R * s.S;
  const auto plane_task = [&](std::size_t task, int worker) {
    const int64_t img = static_cast<int64_t>(task) / C, c = static_cast<int64_t>(task) % C;
    float* padded = p.thread_scratch[static_cast<std::size_t>(worker)].data();  // [phase][H][wph]
    const float* plane = input + (img * C + c) * H * W;
    if constexpr (!kStrided) {
      for (int64_t y = 0; y < H; ++y) {
        float* row = padded + y * wph;
        for (int64_t x = 0; x < s.pad_w; ++x) row[x] = 0.0f;
        for (int64_t x = 0; x < W; ++x) row[s.pad_w + x] = plane[y * W + x];
        for (int64_t x = s.pad_w + W; x < wph; ++x) row[x] = 0.0f;
      }
    } else {
      for (int64_t y = 0; y < H; ++y)
        split_row_into_phases(plane + y * W, 1, W, st, s.pad_w, wph, padded + y * wph, H * wph);
    }
    thread_local std::vector<const float*> xs;
    thread_local std::vector<float> ws;
    thread_local std::vector<int64_t> column_at;  // strided: per v, where output column 0 reads in a row
    xs.resize(static_cast<std::size_t>(taps));
    ws.resize(xs.size());
    if constexpr (kStrided) {
      column_at.resize(static_cast<std::size_t>(s.S));
      for (int64_t v = 0; v < s.S; ++v) {
        // Output column ox reads padded column ox * st + col: phase col % st, at ox + col / st.
        const int64_t col = v * s.dilation;
        column_at[static_cast<std::size_t>(v)] = (col % st) * H * wph + col / st;
      }
    }
    for (int64_t j = 0; j < Kg; ++j) {
      const int64_t k = c * Kg + j;
      const float bias = d.bias.data()[k];
      for (int64_t oy = 0; oy < OH; ++oy) {
        std::size_t inside = 0;
        for (int64_t u = 0; u < s.R; ++u) {
          const int64_t iy = oy * st + u * s.dilation - s.pad_h;
          if (iy < 0 || iy >= H) continue;
          for (int64_t v = 0; v < s.S; ++v) {
            if constexpr (kStrided)
              xs[inside] = padded + iy * wph + column_at[static_cast<std::size_t>(v)];
            else
              xs[inside] = padded + iy * wph + v * s.dilation;
            ws[inside++] = d.W.data()[((u * s.S + v) * Kg + j) * C + c];
          }
        }
        float* out = output + ((img * K + k) * OH + oy) * OW;
        p.kernels->gemm.depthwise_row(xs.data(), ws.data(), inside, static_cast<std::size_t>(OW), out);
        store_biased_run(out, out, OW, bias, p.relu);
      }
    }
  };
  p.pool->run(static_cast<std::size_t>(s.N * C), p.charged(Stage::kDirect, plane_task));
}

void execute_depthwise_planes(Plan::Impl& p, const float* input, float* output) {
  if (p.shape.stride == 1)
    depthwise_planes<false>(p, input, output);
  else
    depthwise_planes<true>(p, input, output);
}

// The taps of depthwise output pixel (oy, ox) inside the input, in (u, v) order: xs[i] = pixel(iy, ix),
// ws[i] = weight_run + (u * S + v) * K for each; returns how many. Both depthwise forms list them so.
template <class PixelAt>
std::size_t depthwise_taps_inside(const ConvShape& s, int64_t oy, int64_t ox, PixelAt&& pixel,
                                  const float* weight_run, std::vector<const float*>& xs,
                                  std::vector<const float*>& ws) {
  std::size_t inside = 0;
  for (int64_t u = 0; u < s.R; ++u) {
    const int64_t iy = oy * s.stride + u * s.dilation - s.pad_h;
    if (iy < 0 || iy >= s.H) continue;
    for (int64_t v = 0; v < s.S; ++v) {
      const int64_t ix = ox * s.stride + v * s.dilation - s.pad_w;
      if (ix < 0 || ix >= s.W) continue;
      xs[inside] = pixel(iy, ix);
      ws[inside++] = weight_run + (u * s.S + v) * s.K;
    }
  }
  return inside;
}

// Where a unit reads its input rows: input row iy, column ix of its channel range at
// base + (iy - iy0) * row + ix * pix.
struct DepthwiseRows {
  const float* base;
  int64_t iy0, row, pix;
};

// Output pixels [c0, c1) of row oy, channels [k0, k0 + channels), at out_row + ox * pix_out.
void depthwise_row_segment(const Plan::Impl& p, const DepthwiseRows& in, int64_t oy, int64_t c0, int64_t c1,
                           int64_t k0, std::size_t channels, bool pad_lanes, float* out_row, int64_t pix_out,
                           std::vector<const float*>& xs, std::vector<const float*>& ws) {
  const ConvShape& s = p.shape;
  const DirectPlan& d = *p.direct;
  const int64_t W = s.W, OW = s.out_w();
  // The output columns whose taps all lie inside the input's columns (the first tap in
  // [0, W - (S - 1) * dilation)): [ox_lo, ox_hi).
  const auto [ox_lo, ox_hi] = inside_columns(-s.pad_w, s.stride, W - (s.S - 1) * s.dilation, OW);
  const float* bias = d.bias.data() + k0;
  // Output pixels [ox, ox + count) of this row, all with the same taps inside the input.
  const auto pixels = [&](int64_t ox, int64_t count) {
    if (count <= 0) return;
    const std::size_t inside = depthwise_taps_inside(
        s, oy, ox, [&](int64_t iy, int64_t ix) { return in.base + (iy - in.iy0) * in.row + ix * in.pix; },
        d.W.data() + k0, xs, ws);
    p.kernels->gemm.depthwise_pixels(xs.data(), ws.data(), inside, s.stride * in.pix,
                                     static_cast<std::size_t>(count), channels, bias, p.relu, pad_lanes,
                                     out_row + ox * pix_out, pix_out);
  };
  for (int64_t ox = c0; ox < std::min(c1, ox_lo); ++ox) pixels(ox, 1);
  const int64_t i0 = std::max(c0, ox_lo), i1 = std::min(c1, ox_hi);
  pixels(i0, i1 - i0);
  for (int64_t ox = std::max(c0, ox_hi); ox < c1; ++ox) pixels(ox, 1);
}

// Depthwise without a channel multiplier (DirectPlan::depthwise_runs): each output row is cut into the
// pixels whose taps reach past the input's sides (one depthwise_pixels call each, with the taps inside)
// and the run between them (one call: every tap inside, its input pixels x_step apart), bias and ReLU
// fused. NHWC and NCHW16c tensors are read and written in place (NCHW16c a channel block per call); NCHW
// ones through a band of rows of 16 channels at a time, packed to 16-lane pixels and stored back to the
// planes by the layout table's kernels. The taps outside the image are skipped, as in the per-pixel form,
// so the bits are its bits on every layout. The per-pixel form (pointer lists and an indirect call per
// pixel, a scalar epilogue, an NHWC copy of NCHW16c input) and the NCHW planes form (a padded copy of each
// plane, a kernel call per row of one channel) took 1.4-4.8x longer on AVX2 (docs/engine-log.md,
// "Session 23").
// Units: (image, channel block, row segment): rows are cut into `segments` pieces of columns where there
// are too few to share out (1x1024x7x7 NHWC: 7 rows; splitting its channels instead took 1.5x the time
// on 2 threads), and on NCHW into bands of rows; kDepthwiseUnitsPerThread of them per thread.
void execute_depthwise_runs(Plan::Impl& p, const float* input, float* output) {
  const ConvShape& s = p.shape;
  const int64_t K = s.K, H = s.H, W = s.W, OH = s.out_h(), OW = s.out_w(), taps = s.R * s.S;
  const bool nhwc = p.layout == Layout::kNHWC, nchw = p.layout == Layout::kNCHW;
  const int64_t blocks = nhwc ? 1 : ceil_div(K, kLanes);
  const int64_t pix = nhwc ? K : kLanes;  // elements between pixels (NCHW: of the packed band)
  const int64_t band = p.direct->band;    // output rows per unit: NCHW's bands (direct_build.cpp), else 1
  const int64_t bands = ceil_div(OH, band), rows = s.N * blocks * bands;
  const int64_t segments =
      nchw ? 1 : std::clamp<int64_t>(ceil_div(kDepthwiseUnitsPerThread * p.threads, rows), 1, OW);
  const int64_t units = rows * segments, tasks = std::min(units, kDepthwiseUnitsPerThread * p.threads);
  const PackRows16Fn pack = p.kernels->layout.pack_rows16[static_cast<int>(DataType::kFp32)];  // NCHW
  const auto task_fn = [&](std::size_t task, int worker) {
    thread_local std::vector<const float*> xs, ws;
    xs.resize(static_cast<std::size_t>(taps));
    ws.resize(xs.size());
    const int64_t u0 = static_cast<int64_t>(task) * units / tasks,
                  u1 = (static_cast<int64_t>(task) + 1) * units / tasks;
    for (int64_t unit = u0; unit < u1; ++unit) {
      const int64_t seg = unit % segments, bnd = unit / segments % bands,
                    cb = unit / segments / bands % blocks, img = unit / segments / bands / blocks;
      const int64_t c0 = seg * OW / segments, c1 = (seg + 1) * OW / segments;  // the segment's columns
      const int64_t oy0 = bnd * band, oy1 = std::min(OH, oy0 + band);
      const int64_t k0 = cb * kLanes;
      const std::size_t channels = static_cast<std::size_t>(nhwc ? K : std::min<int64_t>(kLanes, K - k0));
      if (!nchw) {
        const DepthwiseRows in{input + (img * blocks + cb) * H * W * pix, 0, W * pix, pix};
        for (int64_t oy = oy0; oy < oy1; ++oy)
          depthwise_row_segment(p, in, oy, c0, c1, k0, channels, !nhwc,
                                output + ((img * blocks + cb) * OH + oy) * OW * pix, pix, xs, ws);
        continue;
      }
      // NCHW: the band's input rows inside the image, packed; its output rows staged, then stored.
      float* stage_in = p.thread_scratch[static_cast<std::size_t>(worker)].data();
      const int64_t iy0 = std::max<int64_t>(0, oy0 * s.stride - s.pad_h),
                    iy1 = std::min(H, (oy1 - 1) * s.stride - s.pad_h + (s.R - 1) * s.dilation + 1);
      float* stage_out = stage_in + std::max<int64_t>(0, iy1 - iy0) * W * kLanes;
      for (int64_t iy = iy0; iy < iy1; ++iy)
        pack(input + ((img * s.C + k0) * H + iy) * W, 1.0f, H * W, static_cast<int>(channels), W,
             stage_in + (iy - iy0) * W * kLanes);
      const DepthwiseRows in{stage_in, iy0, W * kLanes, kLanes};
      for (int64_t oy = oy0; oy < oy1; ++oy)
        depthwise_row_segment(p, in, oy, 0, OW, k0, channels, true, stage_out + (oy - oy0) * OW * kLanes,
                              kLanes, xs, ws);
      p.kernels->layout.store_band_nchw(stage_out, OW, static_cast<int>(oy1 - oy0), OW,
                                        static_cast<int>(channels), output + ((img * K + k0) * OH + oy0) * OW,
                                        OH * OW, OW);
    }
  };
  p.pool->run(static_cast<std::size_t>(tasks), p.charged(Stage::kDirect, task_fn));
}

}  // namespace

void execute_direct(Plan::Impl& p, const float* input, float* output) {
  const ConvShape& s = p.shape;
  const DirectPlan& d = *p.direct;
  if (d.grouped_lanes) {
    execute_grouped_lanes(p, input, output);
    return;
  }
  if (d.phases) {
    execute_direct_phases(p, input, output);
    return;
  }
  if (d.nchw_rows) {
    execute_direct_nchw_rows(p, input, output);
    return;
  }
  if (d.depthwise_planes) {
    execute_depthwise_planes(p, input, output);
    return;
  }
  if (d.depthwise_runs) {
    execute_depthwise_runs(p, input, output);
    return;
  }
  const float* src = input;
  if (p.layout == Layout::kNCHW) {
    pack_nchw_to_nhwc(p, input, p.packed_input.data());
    src = p.packed_input.data();
  } else if (p.layout == Layout::kNCHW16c) {
    pack_nchw16c_to_nhwc(p, input, p.packed_input.data());
    src = p.packed_input.data();
  }
  const int64_t OH = s.out_h(), OW = s.out_w(), C = s.C, H = s.H, W = s.W, K = s.K;
  const int64_t pixels = s.N * OH * OW;
  const int64_t blocks = ceil_div(pixels, d.pixel_block);
  const GemmTable& g = p.kernels->gemm;
  const bool nhwc = p.layout == Layout::kNHWC, blocked = p.layout == Layout::kNCHW16c,
             nchw = !nhwc && !blocked;
  const int64_t Kb = ceil_div(K, kLanes);
  // The NHWC and NCHW16c epilogue: output channels [k_first, k_first + count) of output pixel q from
  // vals[0, count), +bias, ReLU (NCHW16c: with the padding lanes of the last block made zero once the run
  // reaches K). NCHW output goes through store_block_nchw.
  const auto store_pixel = [&](int64_t q, const float* vals, const float* bias, int64_t k_first,
                               int64_t count) {
    const int64_t img = q / (OH * OW), pix = q % (OH * OW);
    if (nhwc) {
      float* o = output + q * K + k_first;
      for (int64_t k = 0; k < count; ++k) {
        const float val = vals[k] + bias[k];
        o[k] = p.relu && val < 0.0f ? 0.0f : val;
      }
    } else {  // NCHW16c: runs of a channel block's lanes, contiguous
      for (int64_t k = 0; k < count;) {
        const int64_t c = k_first + k, lane = c % kLanes, run = std::min(kLanes - lane, count - k);
        float* o = output + ((img * Kb + c / kLanes) * OH * OW + pix) * kLanes + lane;
        for (int64_t i = 0; i < run; ++i) {
          const float val = vals[k + i] + bias[k + i];
          o[i] = p.relu && val < 0.0f ? 0.0f : val;
        }
        k += run;
      }
      if (k_first + count == K && K % kLanes != 0) {  // the padding lanes of the last block
        float* o = output + ((img * Kb + Kb - 1) * OH * OW + pix) * kLanes;
        std::fill(o + K % kLanes, o + kLanes, 0.0f);
      }
    }
  };
  if (d.depthwise) {
    // One input channel per group and a channel multiplier Kg > 1 (Kg 1: execute_depthwise_runs). Per
    // output pixel, the taps inside the image are listed once; then the ISA's depthwise kernel sums them in
    // (u, v) order, 16 channels per vector, once per j over the groups, the sums are put in channel order,
    // and the epilogue. The
    // GEMM form ran each group as a 16-column GEMM with one useful column and an im2col per group and
    // pixel block: 7.1-8.6 ms for 1x64x56x56 depthwise on AVX2, 2 threads.
    const int64_t Kg = d.Kg, G = s.groups, taps = s.R * s.S;
    const auto depthwise_block = [&](std::size_t task, int worker) {
      const int64_t q0 = static_cast<int64_t>(task) * d.pixel_block,
                    q1 = std::min(pixels, q0 + d.pixel_block);
      // Scratch: by_j (K), the block's sums [pixel][K] (NCHW; one pixel's otherwise), the NCHW staging.
      float* by_j = p.thread_scratch[static_cast<std::size_t>(worker)].data();
      float* sums = by_j + K;
      float* stage = sums + d.pixel_block * K;
      // The taps' input pixels and weight runs (and one j's runs), kept per thread across calls.
      thread_local std::vector<const float*> xs, ws, wj;
      xs.resize(static_cast<std::size_t>(taps));
      ws.resize(xs.size());
      wj.resize(xs.size());
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t img = q / (OH * OW), oy = q / OW % OH, ox = q % OW;
        float* acc = nchw ? sums + (q - q0) * K : sums;
        // Each j's weight runs lie at + j * G from its j = 0 run.
        const std::size_t inside = depthwise_taps_inside(
            s, oy, ox, [&](int64_t iy, int64_t ix) { return src + ((img * H + iy) * W + ix) * C; },
            d.W.data(), xs, ws);
        // The sums of each j over the groups, then in channel order.
        for (int64_t j = 0; j < Kg; ++j) {
          for (std::size_t t = 0; t < inside; ++t) wj[t] = ws[t] + j * G;
          p.kernels->gemm.depthwise(xs.data(), wj.data(), inside, static_cast<std::size_t>(G), by_j + j * G);
        }
        for (int64_t grp = 0; grp < G; ++grp)
          for (int64_t j = 0; j < Kg; ++j) acc[grp * Kg + j] = by_j[j * G + grp];
        if (!nchw) store_pixel(q, acc, d.bias.data(), 0, K);
      }
      if (nchw) store_block_nchw(p, sums, K, q0, q1, d.bias.data(), 0, K, output, stage);
    };
    p.pool->run(static_cast<std::size_t>(blocks), p.charged(Stage::kDirect, depthwise_block));
    return;
  }
  // NHWC output of one group whose channels fill whole panels, with a reduction of a few taps (a first
  // layer's 3 channels): the GEMM writes the output rows themselves and the epilogue adds the bias in
  // place. The copy it saves is a large share where each output sums few products (1x3x224x224->64:
  // 0.78 of the time); with longer reductions, writing the output twice cost more than the copy
  // (stride-2 layers over 16-64 channels 1.02-1.20, AVX2, 2 threads, docs/engine-log.md "Session 21").
  const bool in_place = nhwc && s.groups == 1 && d.Kgpad == K && d.crs <= kInPlaceMaxCrs;
  // One group, dilation 1: a kernel row's taps of a pixel are S*C consecutive floats of the NHWC input, and
  // neighbouring output pixels' rows are stride*C apart, so the GEMM reads the rows of pixels whose taps
  // are all inside the input in place (gemm_ukernel_segments); only the others need the im2col.
  const bool in_place_rows = d.rows_in_place;
  std::vector<std::vector<BlockRun>> run_lists(in_place_rows ? static_cast<std::size_t>(p.threads) : 0);
  // Tasks: a pixel block of a group, and a part of its output channels where there are fewer blocks than
  // kDirectTasksPerThread per thread (a deep layer's few output pixels: 1x256x14x14->512 at stride 2 has
  // 49, one block, and ran on one thread). Each part makes the block's im2col again and computes its own
  // panels: the same sums, so the same bits.
  const int64_t panels = ceil_div(d.Kgpad, d.panel), units = blocks * s.groups;
  const int64_t parts =
      in_place ? 1 : std::clamp<int64_t>(ceil_div(kDirectTasksPerThread * p.threads, units), 1, panels);
  const auto pixel_block = [&](std::size_t task, int worker) {
    const int64_t unit = static_cast<int64_t>(task) / parts, part = static_cast<int64_t>(task) % parts;
    const int64_t grp = unit % s.groups, blk = unit / s.groups;
    const int64_t q0 = blk * d.pixel_block, q1 = std::min(pixels, q0 + d.pixel_block);
    const int64_t rows = q1 - q0;
    const int64_t k0 = part * panels / parts * d.panel,
                  k1 = std::min(d.Kgpad, (part + 1) * panels / parts * d.panel);
    float* a = p.thread_scratch[static_cast<std::size_t>(worker)].data();
    float* mo = in_place ? output + q0 * K : a + d.pixel_block * d.crs;
    const int64_t ldm = in_place ? K : d.Kgpad;
    const float* bias = d.bias.data() + grp * d.Kgpad;
    if (in_place_rows) {
      // In place, the bias and ReLU come with the GEMM (the part is the whole of K: parts is 1).
      gemm_rows_in_place(s, d, g, src, grp, q0, q1, k0, k1, a, mo, ldm, in_place ? bias : nullptr, p.relu,
                         run_lists[static_cast<std::size_t>(worker)]);
      if (in_place) return;
    } else {
      // The GEMM's rows: the block's pixels themselves (1x1 at stride 1, DirectPlan::pixels_in_place) or
      // their im2col copy.
      const float* rows_a = d.pixels_in_place ? src + q0 * C + grp * d.Cg : a;
      const auto lda = static_cast<std::size_t>(d.pixels_in_place ? C : d.crs);
      if (!d.pixels_in_place) im2col_nhwc(s, d, src, grp, q0, q1, a);
      const float* wg = d.W.data() + grp * d.crs * d.Kgpad;
      const auto kc = static_cast<std::size_t>(d.crs);
      for (int64_t kp = k0; kp < k1; kp += d.panel) {
        const int64_t width = std::min(d.panel, d.Kgpad - kp);
        panel_gemm(g, rows, static_cast<int>(width / kLanes), kc, rows_a, lda, wg + kp * d.crs,
                   static_cast<std::size_t>(width), mo + kp, static_cast<std::size_t>(ldm), nullptr, 0);
      }
      if (in_place) {
        add_bias_rows(mo, rows, K, K, bias, p.relu);
        return;
      }
    }
    // Epilogue: the part's channels [k0, kn) of the group
    const int64_t kn = std::min(k1, d.Kg) - k0;
    if (nchw) {
      store_block_nchw(p, mo + k0, d.Kgpad, q0, q1, bias + k0, grp * d.Kg + k0, kn, output,
                       mo + d.pixel_block * d.Kgpad);
      return;
    }
    for (int64_t q = q0; q < q1; ++q)
      store_pixel(q, mo + (q - q0) * d.Kgpad + k0, bias + k0, grp * d.Kg + k0, kn);
  };
  p.pool->run(static_cast<std::size_t>(units * parts), p.charged(Stage::kDirect, pixel_block));
}

}  // namespace nova::conv
