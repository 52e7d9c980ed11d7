// The Winograd half of Plan::create: picks the tile code (generated or generic), transforms and packs
// the filters once (U = G g G^T in float64, rounded once to float), and chooses the execution blocking.
#include <algorithm>
#include <cmath>
#include <string>

#include "nova/error.hpp"
#include "plan_impl.hpp"
#include "tile_transforms_generated.hpp"

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

}  // namespace

void build_winograd(Plan::Impl& p, const float* weights, const float* bias, const Transform& t,
                    bool allow_generated, int64_t block_option) {
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

  // U[a] = (G g G^T)[a] for every (k, c), packed as panels of `panel` output channels: panel q holds
  // columns [q*panel, q*panel + width) as Cpad rows of `width` floats.
  const int n = w.n, r = w.r;
  const int64_t nn = static_cast<int64_t>(n) * n;
  // A panel's GEMM may prefetch up to Cpad lines (16 floats each) past the start of the next panel
  // (gemm_stage): the slack keeps every address it forms inside the buffer.
  w.U.resize(static_cast<std::size_t>(nn * w.Cpad * w.Kpad + w.Cpad * kLanes));
  std::fill(w.U.data(), w.U.data() + w.U.size(), 0.0f);
  float* U = w.U.data();
  const int64_t Cpad = w.Cpad, Kpad = w.Kpad, panel = w.panel;
  p.pool->run(static_cast<std::size_t>(s.K), [&](std::size_t task, int) {
    const int64_t k = static_cast<int64_t>(task);
    const int64_t k0 = k / panel * panel;
    const int64_t width = std::min(panel, Kpad - k0);
    std::vector<double> tmp(static_cast<std::size_t>(n * r)), u(static_cast<std::size_t>(nn));
    for (int64_t c = 0; c < s.C; ++c) {
      const float* g = weights + (k * s.C + c) * r * r;
      for (int a = 0; a < n; ++a)  // tmp = G g   (n x r)
        for (int j = 0; j < r; ++j) {
          double acc = 0.0;
          for (int i = 0; i < r; ++i) acc += f.g(a, i) * static_cast<double>(g[i * r + j]);
          tmp[static_cast<std::size_t>(a * r + j)] = acc;
        }
      for (int a = 0; a < n; ++a)  // u = tmp G^T (n x n)
        for (int b = 0; b < n; ++b) {
          double acc = 0.0;
          for (int j = 0; j < r; ++j) acc += tmp[static_cast<std::size_t>(a * r + j)] * f.g(b, j);
          u[static_cast<std::size_t>(a * n + b)] = acc;
        }
      for (int64_t a = 0; a < nn; ++a)
        U[a * Cpad * Kpad + k0 * Cpad + c * width + (k - k0)] =
            static_cast<float>(u[static_cast<std::size_t>(a)]);
    }
  });
  w.bias.resize(static_cast<std::size_t>(w.Kpad));
  for (int64_t k = 0; k < w.Kpad; ++k) w.bias.data()[k] = (bias != nullptr && k < s.K) ? bias[k] : 0.0f;

  // Blocking (measured on the layer set, docs/engine.md). Fused blocks run input transform, GEMMs and
  // output transform of `block` tiles while V (n^2 x block x Cpad) and M (n^2 x block x Kpad) are in L2.
  // When U fits in L2 beside a small block, small blocks win (U is re-read from L2); otherwise blocks of
  // about 1.25 MB amortize streaming U from L3. The phased order (each stage over all tiles, GEMMs split
  // by position and panel) reads U once but streams V and M through L3: it wins when U is large and
  // there are few tiles.
  // Bytes at FP32 sizes for every precision. The tile estimate counts a low-precision U at its stored
  // size on AVX2 (algorithm_choice.cpp); here that would move the AVX2 int8 plans to smaller fused
  // blocks (1x128x28x28: 13 tiles for 25, 1.06-1.13x the time) or from the phased order to fused ones
  // (1x256x14x14, 8x256x14x14: 0.98-1.01x), so the blocking keeps these sizes ("Session 18").
  const int64_t mr = p.kernels->gemm.mr;
  const int64_t per_tile = nn * (w.Cpad + w.Kpad) * 4;
  const int64_t u_bytes = nn * w.Cpad * w.Kpad * 4;
  int64_t block = 0;
  if (u_bytes + 2 * mr * per_tile <= kL2BudgetBytes) {
    block = std::clamp<int64_t>((kL2BudgetBytes - u_bytes) / per_tile / mr * mr, mr, 4 * mr);
  } else {
    block = std::clamp<int64_t>((int64_t{5} << 18) / per_tile / mr * mr, 2 * mr, 8 * mr);
  }
  block = std::min(block, round_up(ceil_div(w.tiles, p.threads), mr));
  block = std::max<int64_t>(1, std::min(block, w.tiles));
  const int64_t blocks = ceil_div(w.tiles, block);
  const double fused_bytes = u_bytes + 2 * mr * per_tile <= kL2BudgetBytes
                                 ? 0.0
                                 : static_cast<double>(blocks) * static_cast<double>(u_bytes);
  // V and M go out to L3 and come back (written, then read): count them twice over.
  const double phased_bytes = static_cast<double>(u_bytes) + 4.0 * static_cast<double>(per_tile * w.tiles);
  w.phased = phased_bytes < fused_bytes || blocks < p.threads;
  // The phased order holds V and M of every tile: keep that under 256 MiB (large images with many
  // channels go fused, in bigger blocks).
  constexpr double kMaxPhasedBytes = 256.0 * 1024 * 1024;
  if (w.phased && static_cast<double>(per_tile) * static_cast<double>(w.tiles) > kMaxPhasedBytes) {
    w.phased = false;
    block = std::min(std::max(block, 8 * mr), w.tiles);
  }
  // AMX plans: the tile kernels take rows in blocks of 16 (int8 leaves the rest to VNNI, bf16 pads it
  // to 16), so blocks are whole multiples of 16 rows. Measured on a Xeon with AMX (docs/engine.md,
  // "Session 11"): bf16 blocks of 16 or 32 tiles took 0.81-0.92x the time of the FP32 rule's 24.
  // Blocks of 32 let the kernels run their 2x2 tile form (one tile load per tile product, against 1.5
  // for 16 rows), where every thread gets at least two of them, so that the last block does not leave
  // a thread idle ("Session 18": in a sweep, 32 took 0.85-0.93 of 16's time on layers of 196-3136
  // tiles and 1.39 on one of 49; this rule against 16 everywhere, interleaved: 0.89-1.08, within that
  // host's noise except 1x64x224x224 at 0.92-0.94).
  constexpr int64_t kAmxRows = 16, kAmxPairRows = 2 * kAmxRows;
  const bool amx_rows = lowp_gemm_speedup(p, s.C) > 1.0;  // above 1 only where AMX runs the GEMMs
  const int64_t amx_block = w.tiles >= 2 * p.threads * kAmxPairRows ? kAmxPairRows : kAmxRows;
  if (amx_rows) block = std::min(w.tiles, std::max<int64_t>(amx_block, block / amx_block * amx_block));
  w.block = block;
  if (block_option > 0) {
    w.phased = false;
    w.block = std::min(block_option, w.tiles);
  } else if (block_option < 0) {
    w.phased = true;
  }
  if (w.phased) w.block = w.tiles;
  w.prefetch_u = prefetches_u(p.precision, static_cast<double>(u_bytes));
  if (p.precision != Precision::kFp32) build_lowp(p, w, weights);
  const int64_t per_image = w.tiles_y * w.tiles_x;
  // Images per blocked input copy: as many as fit in 32 MiB (at least enough for four blocks per
  // thread). Fewer, smaller groups were meant to keep the copy in L2 until its tiles are transformed,
  // but on this machine's large L3 that gained nothing at 1 thread and each group costs two pool
  // barriers: at 2 threads one copy of the batch was 4-10 % faster (docs/engine.md).
  const int64_t packed_image_bytes = w.Cb * w.Hp * w.Wp * kLanes * static_cast<int64_t>(sizeof(float));
  constexpr int64_t kPackedGroupBytes = int64_t{32} << 20;
  w.image_group = w.phased ? s.N
                           : std::min(s.N, std::max({int64_t{1}, ceil_div(4 * p.threads * w.block, per_image),
                                                     kPackedGroupBytes / packed_image_bytes}));
  // Balance: the blocks of an image group are a whole multiple of the thread count (slightly smaller
  // blocks), so that at the end of a group no thread waits while another finishes an extra block.
  if (!w.phased && block_option <= 0 && p.threads > 1) {
    const int64_t group_tiles = w.image_group * per_image;
    const int64_t blocks_per_group = round_up(ceil_div(group_tiles, w.block), p.threads);
    w.block = std::max<int64_t>(1, ceil_div(group_tiles, blocks_per_group));
    if (amx_rows) w.block = std::min(w.tiles, round_up(w.block, kAmxRows));
    // AMX bf16 pads a block's last rows to a whole 16-row pass, so rounding up to 16 can leave few
    // blocks with a short last one: 49 tiles at 2 threads became 16, 16, 16 and 1, one thread
    // transforming 32 tiles and the other 17, each making two passes, and U (2 MB of bf16 at
    // 1x256x14x14 F(2,3)) read once per block. One block per thread makes the same passes, transforms
    // 25 and 24 tiles and reads U twice: on the AMX Xeon faster at 1x256x14x14 in each of 5 alternated
    // repetitions (median 0.87), 1x128x28x28 level; the rule against none, 0.91-0.99 on both
    // (docs/engine.md, "Session 25"). int8 keeps the
    // rounding: its rows under 16 go to the VNNI kernel, and blocks of 25 (16 on AMX, 9 on VNNI) were
    // 1.37x the time there.
    if (amx_rows && p.precision == Precision::kBf16) {
      const int64_t one_each = ceil_div(group_tiles, p.threads);
      const int64_t rounded_blocks = ceil_div(group_tiles, w.block);
      const int64_t passes_now = ceil_div(rounded_blocks, p.threads) * ceil_div(w.block, kAmxRows);
      if (rounded_blocks <= 2 * p.threads && ceil_div(one_each, kAmxRows) <= passes_now) w.block = one_each;
    }
  }
  p.wino = std::move(w);

  // Scratch.
  // The blocked copy exists to pad the input, widen typed tensors, zero padding lanes and give NCHW the
  // transform's layout (16 channels a vector); NCHW16c and NHWC tensors of whole channel blocks can be
  // read in place with their own strides: FP32 windows inside the image where they are, those at the
  // image's edges and every window of a typed tensor staged (and widened) per tile, thread_stage. Saves
  // the copy: 3-20 % of an FP32 execute on those layouts (docs/engine.md, "Session 12"); typed ones ran
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
    b.resize(wp.phased ? tile_tmp
                       : static_cast<std::size_t>(nn) *
                                 (position_stride(wp.block, wp.Cpad) + position_stride(wp.block, wp.Kpad)) +
                             tile_tmp);
  if (wp.phased) {
    p.shared_v.resize(static_cast<std::size_t>(nn) * position_stride(wp.tiles, wp.Cpad));
    p.shared_m.resize(static_cast<std::size_t>(nn) * position_stride(wp.tiles, wp.Kpad));
  }
  if (wp.precision != Precision::kFp32) allocate_lowp_scratch(p);
}

}  // namespace nova::conv
