// The direct half of Plan::create: packs the weights of every group as GEMM panels over the
// reduction index (u, v, c) (the order of an NHWC im2col row), and sizes the pixel blocks.
#include <algorithm>

#include "plan_impl.hpp"

namespace nova::conv {

namespace {

// The bias as K floats (zeros without one): the depthwise and NCHW-rows forms' epilogues index it by
// output channel.
void copy_bias(DirectPlan& d, const float* bias, int64_t K) {
  d.bias.resize(static_cast<std::size_t>(K));
  for (int64_t k = 0; k < K; ++k) d.bias.data()[k] = bias != nullptr ? bias[k] : 0.0f;
}

// Depthwise with a channel multiplier (the per-pixel and planes forms; without one, the runs form):
// output pixels per task, at most kDepthwiseMaxBlock, fewer where that would leave a thread without two
// blocks (a late MobileNet layer's 7x7 pixels were one block: one thread of two worked). The NCHW planes
// form works a row of one channel's plane per kernel call: on short rows the calls cost more than the
// NHWC form's copies (AVX2, 2 threads, NCHW planes over the NHWC form at stride 1: 7 pixels per row 2.8x
// the time, 14 1.1-2.6x, 28 1.2x, 56 0.92x, 112 0.44x; at stride 2, where the plane's columns are first
// split into phases: 56 1.06-1.25x, 112 0.60x, 160 0.38x; docs/engine-log.md, "Session 22", measured without
// a multiplier), so it takes rows of at least kDepthwisePlanesMinRow output pixels at stride 1 and
// kDepthwisePlanesMinRowStrided at larger strides.
constexpr int64_t kDepthwiseMaxBlock = 64;
constexpr int64_t kDepthwisePlanesMinRow = 32;
constexpr int64_t kDepthwisePlanesMinRowStrided = 96;
// The depthwise runs form on NCHW (DirectPlan::band): a band's packed input rows fill about this.
constexpr int64_t kDepthwiseBandBytes = 32 << 10;

// Depthwise (one input channel per group, Kg output channels each): the weights tap-major and, within a
// tap, by j (the output channel's place in its group) then group, [u][v][j][g], so that the weights
// that multiply a tap's input pixel for one j are one contiguous run over the input channels (the
// depthwise kernel's operand in execute_direct).
void build_depthwise(Plan::Impl& p, DirectPlan& d, const float* weights, const float* bias) {
  const ConvShape& s = p.shape;
  const int64_t K = s.K, G = s.groups, taps = s.R * s.S;
  d.pixel_block = std::clamp<int64_t>(ceil_div(s.N * s.out_h() * s.out_w(), 2 * int64_t{p.threads}), 1,
                                      kDepthwiseMaxBlock);
  d.W.resize(static_cast<std::size_t>(taps * K));
  for (int64_t g = 0; g < G; ++g)
    for (int64_t j = 0; j < d.Kg; ++j)
      for (int64_t t = 0; t < taps; ++t)
        d.W.data()[(t * d.Kg + j) * G + g] = weights[(g * d.Kg + j) * taps + t];
  copy_bias(d, bias, K);
  d.depthwise_runs = d.Kg == 1;
  d.depthwise_planes = !d.depthwise_runs && p.layout == Layout::kNCHW &&
                       s.out_w() >= (s.stride == 1 ? kDepthwisePlanesMinRow : kDepthwisePlanesMinRowStrided);
  if (d.depthwise_runs && p.layout == Layout::kNCHW) {
    // Bands of output rows whose packed input rows fill about kDepthwiseBandBytes, and enough of them
    // for kDepthwiseUnitsPerThread units per thread.
    const int64_t units_wanted = kDepthwiseUnitsPerThread * int64_t{p.threads};
    const int64_t by_bytes = kDepthwiseBandBytes / (s.stride * s.W * kLanes * int64_t{sizeof(float)});
    const int64_t by_units = s.out_h() * s.N * ceil_div(s.K, kLanes) / units_wanted;
    d.band = std::clamp<int64_t>(std::min(by_bytes, by_units), 1, s.out_h());
  }
  p.direct = std::move(d);
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  if (p.direct->depthwise_runs) {
    // NCHW: a band's packed input rows and its staged output rows, 16 lanes each (direct_execute.cpp).
    if (p.layout == Layout::kNCHW) {
      const int64_t band = p.direct->band;
      const int64_t in_rows = std::min(s.H, (band - 1) * s.stride + (s.R - 1) * s.dilation + 1);
      for (auto& b : p.thread_scratch)
        b.resize(static_cast<std::size_t>((in_rows * s.W + band * s.out_w()) * kLanes));
    }
    return;  // NHWC, NCHW16c: tap lists per thread, the tensors read in place
  }
  if (p.direct->depthwise_planes) {  // one zero-padded input plane, its columns in `stride` phases
    for (auto& b : p.thread_scratch)
      b.resize(static_cast<std::size_t>(s.stride * s.H * depthwise_phase_width(s)));
    return;
  }
  if (p.layout != Layout::kNHWC) p.packed_input.resize(static_cast<std::size_t>(s.input_size()));
  // The sums by j, a pixel block's sums in channel order, and the NCHW stores' staging (direct_execute.cpp).
  const int64_t block = p.direct->pixel_block;
  for (auto& b : p.thread_scratch) b.resize(static_cast<std::size_t>(K + block * K + block * kLanes));
}

// NCHW with small filters: C^T = W . im2col^T (direct_execute.cpp). The whole W is read for every panel
// of 16 * nv output pixels, so it has to stay in the L2 cache: up to kNchwRowsWeightBytes (the first
// layers of image networks: 7 KB for 3x3 over 3 channels to 64, 37 KB for ResNet's 7x7 stem), and
// reductions up to kNchwRowsMaxCrs. Other filters keep the NHWC im2col, whose scatter of each pixel's
// channels into the NCHW planes is then small beside the GEMM. Measured against the im2col on AVX2, 2
// threads (docs/engine-log.md, "Session 21"): 1x3x224x224->64 0.16 of the time, its 7x7 stride-2 form 0.51,
// 1x1 over 64 channels 0.81, 4 groups of 16 channels 0.87, stride 2 over 16-32 channels 0.91-0.99; but
// dilation 2 over 64 channels, a reduction of 576, 1.05 (hence kNchwRowsMaxCrs).
constexpr int64_t kNchwRowsWeightBytes = 256 * 1024;
constexpr int64_t kNchwRowsMaxCrs = 512;

// Groups of at most kNchwPhasesMaxChannels input channels (a network's first layer), or of at most
// kNchwPhasesMaxChannelsGrouped in grouped convolutions, with output rows at least kNchwPhasesMinRow wide
// read im2col^T's rows from a phase copy of the planes (DirectPlan::phases) instead of packing panels.
// Against the packed panels, AVX2, 2 threads, alternated (docs/engine-log.md, "Session 26"): without groups,
// 1-4 channels 0.29-0.66 of the time (7x7 stride 2 0.50, 3x3 0.29, 5x5 0.37-0.52), 14-pixel rows 0.86,
// 8-pixel rows 1.14; 6-16 channels level (0.98-1.03); 32-128 channels 0.90-1.58 (1x1 stride 2 1.41-1.58:
// the copy holds the whole input, the layer reads a quarter of it). Grouped (2-32 groups, ResNeXt's
// 3x3 layers among them), where each group's few output channels share a packed panel: 4-16 channels per
// group 0.27-0.61, 32 channels 0.78, 16 channels of 32 groups on 14-pixel rows 0.92-1.01.
constexpr int64_t kNchwPhasesMaxChannels = 4;
constexpr int64_t kNchwPhasesMaxChannelsGrouped = 32;
constexpr int64_t kNchwPhasesMinRow = 14;

// W as the GEMM's rows: [group][Kg][crs] with crs in the NHWC im2col's (u, v, c) order, so that each
// output sums the same products in the same order as on the other layouts (the same bits).
void build_nchw_rows(Plan::Impl& p, DirectPlan& d, const float* weights, const float* bias) {
  const ConvShape& s = p.shape;
  d.W.resize(static_cast<std::size_t>(s.K * d.crs));
  for (int64_t k = 0; k < s.K; ++k)
    for (int64_t c = 0; c < d.Cg; ++c)
      for (int64_t u = 0; u < s.R; ++u)
        for (int64_t v = 0; v < s.S; ++v)
          d.W.data()[k * d.crs + (u * s.S + v) * d.Cg + c] = weights[((k * d.Cg + c) * s.R + u) * s.S + v];
  copy_bias(d, bias, s.K);
  p.direct = std::move(d);
  const DirectPlan& dp = *p.direct;
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  if (dp.phases) {
    // The phase copy of every image's planes and one row of zeros (the rows above and below the input),
    // and per thread: on NCHW a row group's sums for a partial panel (mr x panel); else an output row's
    // sums (K x its whole vectors) and one 16-channel block of it transposed (OW x 16).
    const int64_t wph = nchw_phase_width(s), copy = s.N * s.C * s.stride * s.H * wph;
    p.packed_input.resize(static_cast<std::size_t>(copy + wph));
    std::fill(p.packed_input.data() + copy, p.packed_input.data() + copy + wph, 0.0f);
    const int64_t per_thread = p.layout == Layout::kNCHW
                                   ? p.kernels->gemm.mr * dp.panel
                                   : s.K * round_up(s.out_w(), kLanes) + s.out_w() * kLanes;
    for (auto& b : p.thread_scratch) b.resize(static_cast<std::size_t>(per_thread));
    return;
  }
  // A panel of im2col^T (crs x panel) and the GEMM's rows for it (Kg x panel).
  for (auto& b : p.thread_scratch) b.resize(static_cast<std::size_t>((dp.crs + dp.Kg) * dp.panel));
}

}  // namespace

int64_t balanced_pixel_block(int64_t pixels, int64_t cap, int64_t mr, int threads) {
  int64_t blocks = ceil_div(pixels, cap);
  if (blocks > 1 && blocks < 8 * int64_t{threads}) blocks = round_up(blocks, int64_t{threads});
  return std::min(cap, round_up(ceil_div(pixels, blocks), mr));
}

void build_direct(Plan::Impl& p, const float* weights, const float* bias) {
  const ConvShape& s = p.shape;
  DirectPlan d;
  d.Cg = s.C / s.groups;
  d.Kg = s.K / s.groups;
  d.Kgpad = round_up(d.Kg, kLanes);
  d.crs = d.Cg * s.R * s.S;
  d.panel = 16 * static_cast<int64_t>(p.kernels->gemm.nv);
  const int64_t mr = p.kernels->gemm.mr;
  d.pixel_block = balanced_pixel_block(s.N * s.out_h() * s.out_w(),
                                       std::clamp<int64_t>(131072 / d.crs / mr * mr, mr, 144), mr, p.threads);
  // Depthwise: one input channel per group, and groups, which its kernels put in vector lanes. A single
  // input channel without groups (a grayscale first layer) is a GEMM over K output channels: through the
  // depthwise form, one lane of 16 did work, and 8x1x28x28->32 5x5 took 7.4 ms against 0.14 as a GEMM
  // (NCHW, AVX2, 2 threads).
  d.depthwise = d.Cg == 1 && s.groups > 1;
  if (d.depthwise) {
    build_depthwise(p, d, weights, bias);
    return;
  }
  // Grouped with 2, 4 or 8 channels per group in and out, on NHWC and NCHW16c: output channels in lanes
  // (direct_grouped_lanes.cpp). Against the column phases and pixel rows, AVX2, 2 threads
  // (docs/engine-log.md, "Session 27"): ResNeXt-50's 3x3 layers 0.32-0.92 of the time, 8 per group at
  // stride 1 0.74-1.14.
  if (grouped_lanes_applies(s, p.layout)) {
    build_grouped_lanes(p, d, weights, bias);
    return;
  }
  const bool small_filters =
      d.crs <= kNchwRowsMaxCrs && s.K * d.crs * static_cast<int64_t>(sizeof(float)) <= kNchwRowsWeightBytes;
  d.nchw_rows = p.layout == Layout::kNCHW && small_filters;
  // NHWC and NCHW16c tensors only with groups of at most 8 output channels (4 at strides above 1), which
  // the pixel-rows GEMM pads to 16 lanes; the copy gathers each channel from the pixels and the output rows
  // are transposed, which cost more than that form where it wastes less (docs/engine-log.md, "Session 26":
  // without groups 0.91-1.82 of its time; 16 channels per group 0.99-1.08; 8 at stride 2 1.22 on NHWC).
  const bool pads_most = s.groups > 1 && d.Kg <= (s.stride == 1 ? 8 : 4);
  d.phases = small_filters && s.out_w() >= kNchwPhasesMinRow &&
             (p.layout == Layout::kNCHW
                  ? d.Cg <= (s.groups > 1 ? kNchwPhasesMaxChannelsGrouped : kNchwPhasesMaxChannels)
                  : pads_most && d.Cg <= kNchwPhasesMaxChannelsGrouped);
  if (d.nchw_rows || d.phases) {
    build_nchw_rows(p, d, weights, bias);
    return;
  }
  d.rows_in_place = s.groups == 1 && s.dilation == 1 && s.R <= kRowsInPlaceMaxKernelRows &&
                    s.S * d.Cg <= kRowsInPlaceMaxSegment;
  d.pixels_in_place =
      !d.rows_in_place && s.R == 1 && s.S == 1 && s.stride == 1 && s.pad_h == 0 && s.pad_w == 0;
  d.W.resize(static_cast<std::size_t>(s.groups * d.crs * d.Kgpad));
  std::fill(d.W.data(), d.W.data() + d.W.size(), 0.0f);
  for (int64_t g = 0; g < s.groups; ++g) {
    float* wg = d.W.data() + g * d.crs * d.Kgpad;
    for (int64_t k = 0; k < d.Kg; ++k) {
      const int64_t k0 = k / d.panel * d.panel;
      const int64_t width = std::min(d.panel, d.Kgpad - k0);
      for (int64_t c = 0; c < d.Cg; ++c)
        for (int64_t u = 0; u < s.R; ++u)
          for (int64_t v = 0; v < s.S; ++v) {
            const int64_t idx = (u * s.S + v) * d.Cg + c;
            wg[k0 * d.crs + idx * width + (k - k0)] =
                weights[(((g * d.Kg + k) * d.Cg + c) * s.R + u) * s.S + v];
          }
    }
  }
  d.bias.resize(static_cast<std::size_t>(s.groups * d.Kgpad));
  for (int64_t g = 0; g < s.groups; ++g)
    for (int64_t k = 0; k < d.Kgpad; ++k)
      d.bias.data()[g * d.Kgpad + k] = (bias != nullptr && k < d.Kg) ? bias[g * d.Kg + k] : 0.0f;
  p.direct = std::move(d);
  const DirectPlan& dp = *p.direct;
  if (p.layout != Layout::kNHWC) p.packed_input.resize(static_cast<std::size_t>(s.input_size()));
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  // im2col rows, the GEMM's rows, and the NCHW stores' staging (direct_execute.cpp).
  for (auto& b : p.thread_scratch)
    b.resize(static_cast<std::size_t>(dp.pixel_block * (dp.crs + dp.Kgpad + kLanes)));
}

}  // namespace nova::conv
