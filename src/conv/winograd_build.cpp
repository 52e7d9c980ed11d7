// The Winograd half of Plan::create: picks the tile code (generated or generic), transforms and packs
// the filters once (U = G g G^T in float64, rounded once to float), and chooses the execution blocking.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "nova/error.hpp"
#include "plan_impl.hpp"
#include "tile_transforms_generated.hpp"
#include "winograd_blocking.hpp"

namespace nova::conv {

namespace {

// Index of the generated code whose exact matrices equal the transform's, or -1.
int find_generated(const Transform& t) {
  for (int i = 0; i < generated::kGeneratedCount; ++i) {
    const auto& info = generated::kGeneratedInfo[i];
    if (info.m != t.m() || info.r != t.r()) continue;
    bool same = true;
    const int n = t.n();
    for (int a = 0; a < t.m() && same; ++a)
      for (int b = 0; b < n && same; ++b) same = nova::to_string(t.AT()(a, b)) == info.at[a * n + b];
    for (int a = 0; a < n && same; ++a)
      for (int b = 0; b < t.r() && same; ++b) same = nova::to_string(t.G()(a, b)) == info.g[a * t.r() + b];
    for (int a = 0; a < n && same; ++a)
      for (int b = 0; b < n && same; ++b) same = nova::to_string(t.BT()(a, b)) == info.bt[a * n + b];
    if (same) return i;
  }
  return -1;
}

void fill_generic(const TransformF64& f, GenericCoeffs& c) {
  c.m = f.m;
  c.n = f.n;
  for (int p = 0; p < f.n; ++p) {
    c.bt_nnz[p] = 0;
    for (int j = 0; j < f.n; ++j) {
      c.bt[p * f.n + j] = static_cast<float>(f.bt(p, j));
      if (f.bt(p, j) != 0.0) c.bt_idx[p][c.bt_nnz[p]++] = static_cast<unsigned char>(j);
    }
  }
  for (int i = 0; i < f.m; ++i) {
    c.at_nnz[i] = 0;
    for (int j = 0; j < f.n; ++j) {
      c.at[i * f.n + j] = static_cast<float>(f.at(i, j));
      if (f.at(i, j) != 0.0) c.at_idx[i][c.at_nnz[i]++] = static_cast<unsigned char>(j);
    }
  }
}

// U[a] = (G g G^T)[a] for every (k, c), the FP32 transformed filters, into w.U, packed as panels of `panel`
// output channels: panel q holds columns [q*panel, q*panel + width) as Cpad rows of `width` floats.
void transform_filters(Plan::Impl& p, WinogradPlan& w, const TransformF64& f, const float* weights) {
  // A task is one panel and a block of input channels; for each channel it transforms the panel's `width`
  // filters side by side (each sum in double, G's entries exact, in the same order as one filter at a time:
  // the same bits), so the loops run over the panel's columns, which the compiler vectorizes, and then
  // writes each tap's row of `width` floats at once. One filter at a time, a task per output channel writing one float per row, planning
  // 1x256x14x14->256 had taken 21-30 ms at F(4,3) on one thread of the development machine and 49-76 at
  // F(7,3), against 0.3 ms to run it; now 0.49-0.84 of that time (BM_PlanCreate, best of two alternated
  // runs, on 1x256x14x14, 1x512x7x7 and 8x256x14x14 at F(4,3) and F(7,3), 1 and 2 threads; session 29).
  // Storing the rows into U as they were computed, without the copy, was slower (0.68-1.02).
  const ConvShape& s = p.shape;
  const int n = w.n, r = w.r;
  const int64_t nn = static_cast<int64_t>(n) * n;
  // A panel's GEMM may prefetch up to Cpad lines (16 floats each) past the start of the next panel
  // (gemm_stage): the slack keeps every address it forms inside the buffer.
  w.U.resize(static_cast<std::size_t>(nn * w.Cpad * w.Kpad + w.Cpad * kLanes));
  std::fill(w.U.data(), w.U.data() + w.U.size(), 0.0f);
  float* U = w.U.data();
  const int64_t Cpad = w.Cpad, Kpad = w.Kpad, panel = w.panel;
  constexpr int64_t kChannelBlock = 32;
  const int64_t panels = ceil_div(s.K, panel), channel_blocks = ceil_div(s.C, kChannelBlock);
  p.pool->run(static_cast<std::size_t>(panels * channel_blocks), [&](std::size_t task, int) {
    const int64_t k0 = static_cast<int64_t>(task) / channel_blocks * panel;
    const int64_t c0 = static_cast<int64_t>(task) % channel_blocks * kChannelBlock;
    const auto width = static_cast<std::size_t>(std::min(panel, Kpad - k0));
    const int64_t real = std::min<int64_t>(static_cast<int64_t>(width), s.K - k0);  // columns past K stay 0
    std::vector<double> g(static_cast<std::size_t>(r * r) * width, 0.0),
        tmp(static_cast<std::size_t>(n * r) * width), acc(width);
    std::vector<float> rows(static_cast<std::size_t>(nn) * width);  // [tap][column]
    for (int64_t c = c0; c < std::min(c0 + kChannelBlock, s.C); ++c) {
      for (int64_t l = 0; l < real; ++l)
        for (int ij = 0; ij < r * r; ++ij)
          g[static_cast<std::size_t>(ij) * width + static_cast<std::size_t>(l)] =
              weights[((k0 + l) * s.C + c) * r * r + ij];
      for (int a = 0; a < n; ++a)  // tmp = G g   (n x r, per column)
        for (int j = 0; j < r; ++j) {
          double* sum = tmp.data() + static_cast<std::size_t>(a * r + j) * width;
          std::fill_n(sum, width, 0.0);
          for (int i = 0; i < r; ++i) {
            const double gai = f.g(a, i);
            const double* gij = g.data() + static_cast<std::size_t>(i * r + j) * width;
            for (std::size_t l = 0; l < width; ++l) sum[l] += gai * gij[l];
          }
        }
      for (int a = 0; a < n; ++a)  // u = tmp G^T (n x n, per column)
        for (int b = 0; b < n; ++b) {
          std::fill_n(acc.data(), width, 0.0);
          for (int j = 0; j < r; ++j) {
            const double gbj = f.g(b, j);
            const double* taj = tmp.data() + static_cast<std::size_t>(a * r + j) * width;
            for (std::size_t l = 0; l < width; ++l) acc[l] += taj[l] * gbj;
          }
          float* row = rows.data() + static_cast<std::size_t>(a * n + b) * width;
          for (std::size_t l = 0; l < width; ++l) row[l] = static_cast<float>(acc[l]);
        }
      for (int64_t a = 0; a < nn; ++a)
        std::copy_n(rows.data() + static_cast<std::size_t>(a) * width, width,
                    U + a * Cpad * Kpad + k0 * Cpad + c * static_cast<int64_t>(width));
    }
  });
}

}  // namespace

void build_winograd(Plan::Impl& p, const float* weights, const float* bias, const Transform& t,
                    bool allow_generated, int64_t block_option, int64_t k_parts_option) {
  const ConvShape& s = p.shape;
  WinogradPlan w;
  w.transform = t;
  w.m = t.m();
  w.r = t.r();
  w.n = t.n();
  if (w.n > kMaxGenericN)
    throw Error("Winograd tiles with more than 16 points are not supported by the engine");
  const int gi = allow_generated ? find_generated(t) : -1;
  const TransformTable& tt = p.kernels->transforms;
  const TransformF64 f = t.to_f64();
  if (gi >= 0) {
    w.generated = true;
    w.fns = tt.generated[gi];
  } else {
    w.generated = false;
    w.fns = tt.generic;
  }
  fill_generic(f, w.coeffs);
  // bf16 bits for the dot-product and AMX GEMMs stored by vcvtneps2bf16 where the CPU has it (the same
  // GEMM results as the integer rounding: Bf16HwInputFns).
  if (p.precision == Precision::kBf16 && p.isa == Isa::kAvx512 && lowp_simd_supported(Precision::kBf16)) {
    const Bf16HwInputFns hw = bf16_hw_input_fns_avx512bf16();
    w.fns.input_bf16 = gi >= 0 ? hw.generated[gi] : hw.generic;
    w.fns.words_from_bf16 = gi >= 0 ? hw.generated_from_bf16[gi] : hw.generic_from_bf16;
  }

  // bf16 outputs narrowed by vcvtneps2bf16 where the CPU has it (the bits of the other narrowing).
  if (p.isa == Isa::kAvx512 && lowp_simd_supported(Precision::kBf16)) {
    const Bf16HwOutputFns hw = bf16_hw_output_fns_avx512bf16();
    w.fns.output_bf16 = gi >= 0 ? hw.generated[gi] : hw.generic;
  }

  const int64_t OH = s.out_h(), OW = s.out_w();
  w.tiles_y = ceil_div(OH, w.m);
  w.tiles_x = ceil_div(OW, w.m);
  w.tiles = s.N * w.tiles_y * w.tiles_x;
  w.Cb = ceil_div(s.C, kLanes);
  w.Kb = ceil_div(s.K, kLanes);
  w.Cpad = w.Cb * kLanes;
  w.Kpad = w.Kb * kLanes;
  w.Hp = w.tiles_y * w.m + w.r - 1;
  w.Wp = w.tiles_x * w.m + w.r - 1;
  w.panel = 16 * static_cast<int64_t>(p.kernels->gemm.nv);

  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  // int8-spatial makes its own integer U' from the weights (build_int8_spatial) and uses no FP32 U: making
  // one anyway had made its plans take 1.3-3x as long (1x512x7x7, 1x256x14x14; session 29).
  if (p.precision != Precision::kInt8Spatial) {
    transform_filters(p, w, f, weights);
    // The weights are finite (checked), so a non-finite U is the transform's FP32 arithmetic overflowing (G's
    // entries and products near FP32's range, e.g. a point 1e-30): every output would be NaN, and FP32
    // plans count none.
    const int64_t bad = p.kernels->convert.count_beyond(
        w.U.data(), 0, 1, static_cast<int64_t>(w.U.size()) / 16, 16, std::numeric_limits<float>::infinity());
    if (bad > 0)
      throw Error("the transformed filters G w G^T overflow FP32 (" + std::to_string(bad) +
                  " values NaN or Inf): the transform's G is too large for these weights in FP32; choose " +
                  "points that keep its entries moderate (`nova analyze` prints the largest |entry|)");
  }
  w.bias.resize(static_cast<std::size_t>(w.Kpad));
  for (int64_t k = 0; k < w.Kpad; ++k) w.bias.data()[k] = (bias != nullptr && k < s.K) ? bias[k] : 0.0f;

  // The order of the work (winograd_blocking.cpp has the rules and what they were measured on).
  BlockingProblem bp;
  bp.images = s.N;
  bp.tiles_per_image = w.tiles_y * w.tiles_x;
  bp.positions = nn;
  bp.Cpad = w.Cpad;
  bp.Kpad = w.Kpad;
  bp.packed_image_bytes = w.Cb * w.Hp * w.Wp * kLanes * static_cast<int64_t>(sizeof(float));
  bp.mr = p.kernels->gemm.mr;
  bp.threads = p.threads;
  bp.amx_rows = lowp_gemm_speedup(p, s.C) > 1.0;  // above 1 only where AMX runs the GEMMs
  bp.precision = p.precision;
  // As build_lowp picks the int8 kernel (lowp.cpp): the VNNI one on the avx512 path where the CPU has it.
  bp.int8_vnni = p.precision == Precision::kInt8 && p.isa == Isa::kAvx512 &&
                 lowp_simd_supported(Precision::kInt8) && p.lowp_kernel != LowpKernel::kPortable;
  bp.block_option = block_option;
  bp.panels = ceil_div(w.Kpad, w.panel);
  bp.k_parts_option = k_parts_option;
  // The byte comparison of the fused and phased orders was measured on the AVX-512 Xeon, whose L3 gives
  // a core about 12 GB/s: there U re-read from L3 per fused block is dear. On the AVX2 machine measured
  // (Zen 4, 2 vCPUs, 1 MiB L2), FP32 8x128x28x28 F(7,3) ran phased by that rule (48 MB moved against
  // 58 MB for fused blocks of 12) but fused blocks of 12 took 0.80-0.84 of the phased time at 2 threads
  // and 0.83 at 1 (alternated medians); 8x256x14x14 F(7,3) stays phased (fused blocks took 1.09x). V and M
  // weighted 6 times, not 4, give both (docs/engine.md, "Blocking"). The weight follows the plan's cache
  // rules (MemoryRules): the EPYC's for AVX2 and for AVX-512 on AMD CPUs (Zen 4 with AVX-512 visible: fused
  // blocks of F(7,3) 8x128x28x28 took 0.78-0.84 of the phased time, session 47), the Xeon's otherwise.
  bp.phased_vm_passes = p.memory_rules == MemoryRules::kEpyc ? 6.0 : 4.0;
  const Blocking blocking = choose_blocking(bp);
  w.phased = blocking.phased;
  w.block = blocking.block;
  w.image_group = blocking.image_group;
  w.k_parts = blocking.k_parts;
  w.prefetch_u = prefetches_u(p.precision, static_cast<double>(nn * w.Cpad * w.Kpad * 4));
  if (p.precision != Precision::kFp32) build_lowp(p, w, weights);
  const int64_t pass_tiles = w.phased ? w.tiles : w.block;
  w.pos_v = position_stride(pass_tiles, w.Cpad, 4);
  w.pos_m = position_stride(pass_tiles, w.Kpad, 4);
  w.pos_vl = position_stride(pass_tiles, w.Cpad, static_cast<int64_t>(w.v_operand_size()));
  p.wino = std::move(w);

  // Scratch.
  // The blocked copy exists to pad the input, widen typed tensors, zero padding lanes and give NCHW the
  // transform's layout (16 channels a vector); NCHW16c and NHWC tensors of whole channel blocks can be
  // read in place with their own strides: FP32 windows inside the image where they are, those at the
  // image's edges and every window of a typed tensor staged (and widened) per tile, thread_stage. Saves
  // the copy: 3-20 % of an FP32 execute on those layouts (docs/engine-log.md, "Session 12"); typed ones ran
  // at 0.72-0.97 of the time on the AMX host and 0.78-1.04 on AVX2 ("Session 19"). int8-spatial keeps
  // it, since its copy quantizes the input, but for calls whose int8 codes are already the call's own
  // (spatial_codes_directly). Reading NCHW in place (transposing bands) was slower on the AMX host's
  // 64- and 128-channel layers and was reverted ("Session 19").
  const bool whole_blocks = (p.layout == Layout::kNCHW16c || p.layout == Layout::kNHWC) && s.C % kLanes == 0;
  const bool spatial = p.precision == Precision::kInt8Spatial;
  p.wino->reads_input_directly = whole_blocks && !spatial;
  p.wino->spatial_codes_directly = whole_blocks && spatial && p.input_format.type == DataType::kInt8;
  const WinogradPlan& wp = *p.wino;
  if (wp.reads_input_directly || wp.spatial_codes_directly) {
    p.thread_stage.resize(static_cast<std::size_t>(p.threads));
    for (auto& b : p.thread_stage) b.resize(input_stage_floats(wp));
  }
  if (!wp.reads_input_directly)  // the execute's input is copied (and widened, when typed)
    p.packed_input.resize(static_cast<std::size_t>(wp.image_group * wp.Cb * wp.Hp * wp.Wp * kLanes));
  const std::size_t tile_tmp = static_cast<std::size_t>(wp.m * kBandTiles * wp.m * kLanes);  // output band
  p.thread_scratch.resize(static_cast<std::size_t>(p.threads));
  for (auto& b : p.thread_scratch)
    b.resize(wp.phased ? tile_tmp : static_cast<std::size_t>(nn) * (wp.pos_v + wp.pos_m) + tile_tmp);
  if (wp.phased) {
    p.shared_v.resize(static_cast<std::size_t>(nn) * wp.pos_v);
    p.shared_m.resize(static_cast<std::size_t>(nn) * wp.pos_m);
  }
  if (wp.precision != Precision::kFp32) allocate_lowp_scratch(p);
}

}  // namespace nova::conv
