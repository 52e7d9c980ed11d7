#include "winograd_blocking.hpp"

#include <algorithm>

#include "plan_impl.hpp"

namespace nova::conv {

Blocking choose_blocking(const BlockingProblem& b) {
  const int64_t tiles = b.tiles(), nn = b.positions, mr = b.mr;
  const int threads = b.threads;
  Blocking out;
  // Blocking (measured on the layer set, docs/engine.md). Fused blocks run input transform, GEMMs and
  // output transform of `block` tiles while V (n^2 x block x Cpad) and M (n^2 x block x Kpad) are in L2.
  // When U fits in L2 beside a small block, small blocks win (U is re-read from L2); otherwise blocks of
  // about 1.25 MB amortize streaming U from L3. The phased order (each stage over all tiles, GEMMs split
  // by position and panel) reads U once but streams V and M through L3: it wins when U is large and
  // there are few tiles.
  // Bytes at FP32 sizes for every precision. The tile estimate counts a low-precision U at its stored
  // size on AVX2 (algorithm_choice.cpp); here that would move the AVX2 int8 plans to smaller fused
  // blocks (1x128x28x28: 13 tiles for 25, 1.06-1.13x the time) or from the phased order to fused ones
  // (1x256x14x14, 8x256x14x14: 0.98-1.01x), so the blocking keeps these sizes ("Session 18"). On the
  // AMX Xeon, int8 8x256x14x14 at stored sizes (fused blocks of 32 for phased) was level too ("Session 25").
  const int64_t per_tile = nn * (b.Cpad + b.Kpad) * 4;
  const int64_t u_bytes = nn * b.Cpad * b.Kpad * 4;
  int64_t block = 0;
  if (u_bytes + 2 * mr * per_tile <= kL2BudgetBytes) {
    block = std::clamp<int64_t>((kL2BudgetBytes - u_bytes) / per_tile / mr * mr, mr, 4 * mr);
  } else {
    block = std::clamp<int64_t>((int64_t{5} << 18) / per_tile / mr * mr, 2 * mr, 8 * mr);
  }
  block = std::min(block, round_up(ceil_div(tiles, threads), mr));
  block = std::max<int64_t>(1, std::min(block, tiles));
  const int64_t blocks = ceil_div(tiles, block);
  const double fused_bytes = u_bytes + 2 * mr * per_tile <= kL2BudgetBytes
                                 ? 0.0
                                 : static_cast<double>(blocks) * static_cast<double>(u_bytes);
  // V and M go out to L3 and come back (written, then read): count them twice over (b.phased_vm_passes).
  const double phased_bytes =
      static_cast<double>(u_bytes) + b.phased_vm_passes * static_cast<double>(per_tile * tiles);
  out.phased = phased_bytes < fused_bytes || blocks < threads;
  // The phased order holds V and M of every tile: keep that under 256 MiB (large images with many
  // channels go fused, in bigger blocks).
  constexpr double kMaxPhasedBytes = 256.0 * 1024 * 1024;
  if (out.phased && static_cast<double>(per_tile) * static_cast<double>(tiles) > kMaxPhasedBytes) {
    out.phased = false;
    block = std::min(std::max(block, 8 * mr), tiles);
  }
  // AMX plans: the tile kernels take rows in blocks of 16 (int8 leaves the rest to VNNI, bf16 pads it
  // to 16), so blocks are whole multiples of 16 rows. Measured on a Xeon with AMX (docs/engine-log.md,
  // "Session 11"): bf16 blocks of 16 or 32 tiles took 0.81-0.92x the time of the FP32 rule's 24.
  // Blocks of 32 let the kernels run their 2x2 tile form (one tile load per tile product, against 1.5
  // for 16 rows), where every thread gets at least two of them, so that the last block does not leave
  // a thread idle ("Session 18": in a sweep, 32 took 0.85-0.93 of 16's time on layers of 196-3136
  // tiles and 1.39 on one of 49; this rule against 16 everywhere, interleaved: 0.89-1.08, within that
  // host's noise except 1x64x224x224 at 0.92-0.94).
  constexpr int64_t kAmxRows = 16, kAmxPairRows = 2 * kAmxRows;
  const int64_t amx_block = tiles >= 2 * threads * kAmxPairRows ? kAmxPairRows : kAmxRows;
  if (b.amx_rows) block = std::min(tiles, std::max<int64_t>(amx_block, block / amx_block * amx_block));
  out.block = block;
  if (b.block_option > 0) {
    out.phased = false;
    out.block = std::min(b.block_option, tiles);
  } else if (b.block_option < 0) {
    out.phased = true;
  }
  if (out.phased) out.block = tiles;
  // Images per blocked input copy: as many as fit in 32 MiB (at least enough for four blocks per
  // thread). Fewer, smaller groups were meant to keep the copy in L2 until its tiles are transformed,
  // but on this machine's large L3 that gained nothing at 1 thread and each group costs two pool
  // barriers: at 2 threads one copy of the batch was 4-10 % faster (docs/engine.md).
  constexpr int64_t kPackedGroupBytes = int64_t{32} << 20;
  out.image_group =
      out.phased
          ? b.images
          : std::min(b.images, std::max({int64_t{1}, ceil_div(4 * threads * out.block, b.tiles_per_image),
                                         kPackedGroupBytes / std::max<int64_t>(1, b.packed_image_bytes)}));
  // Balance: the blocks of an image group are a whole multiple of the thread count (slightly smaller
  // blocks), so that at the end of a group no thread waits while another finishes an extra block.
  if (!out.phased && b.block_option <= 0 && threads > 1) {
    const int64_t group_tiles = out.image_group * b.tiles_per_image;
    const int64_t blocks_per_group = round_up(ceil_div(group_tiles, out.block), threads);
    out.block = std::max<int64_t>(1, ceil_div(group_tiles, blocks_per_group));
    if (b.amx_rows) out.block = std::min(tiles, round_up(out.block, kAmxRows));
    // AMX bf16 pads a block's last rows to a whole 16-row pass, so rounding up to 16 can leave few
    // blocks with a short last one: 49 tiles at 2 threads became 16, 16, 16 and 1, one thread
    // transforming 32 tiles and the other 17, each making two passes, and U (2 MB of bf16 at
    // 1x256x14x14 F(2,3)) read once per block. One block per thread makes the same passes, transforms
    // 25 and 24 tiles and reads U twice: on the AMX Xeon faster at 1x256x14x14 in each of 5 alternated
    // repetitions (median 0.87), 1x128x28x28 level; the rule against none, 0.91-0.99 on both
    // (docs/engine-log.md, "Session 25"). int8 keeps the rounding: its rows under 16 go to the VNNI kernel,
    // and blocks of 25 (16 on AMX, 9 on VNNI) were 1.37x the time there.
    if (b.amx_rows && b.precision == Precision::kBf16) {
      const int64_t one_each = ceil_div(group_tiles, threads);
      const int64_t rounded_blocks = ceil_div(group_tiles, out.block);
      const int64_t passes_now = ceil_div(rounded_blocks, threads) * ceil_div(out.block, kAmxRows);
      if (rounded_blocks <= 2 * threads && ceil_div(one_each, kAmxRows) <= passes_now) out.block = one_each;
    }
  }
  // AMX int8 plans of few tiles (one 16-row pass) that would run phased: one fused block of
  // every tile, its output channels in a part per thread, so that each thread streams its part of U
  // once, as the phased order's GEMM tasks do, without the phased order's pool barriers and its V and M
  // written out and read back. On the AMX Xeon int8 1x512x7x7 F(2,3) (16 tiles) took 0.70-0.94 of the
  // phased time (median 0.89, 6 alternated repetitions); the rule against none, 8 repetitions: median
  // 0.89 (NCHW16c) and 0.84 (NCHW). Not for bf16 and FP32, level there (1.00, 1.01), nor for fused plans
  // of one block per thread: the parts repeat the block's input transform, and bf16 1x128x28x28 (49
  // tiles) took 1.28x, int8 1.11-1.30x; nor past one pass: int8 8x512x7x7 F(4,3) (32 tiles) took 0.97-1.36x
  // the phased time, median 1.08 (docs/engine-log.md, "Session 25").
  if (b.amx_rows && b.precision == Precision::kInt8 && out.phased && b.block_option == 0 &&
      b.k_parts_option == 0 && threads > 1 && tiles <= kAmxRows && b.panels >= threads) {
    out.phased = false;
    out.block = tiles;
    out.image_group = b.images;
    out.k_parts = threads;
  }
  // VNNI int8 plans of few tiles that would run phased: one fused block per thread, so that each thread
  // streams all of U (int8: a quarter of the FP32 bytes the rule above counts) without the phased order's
  // pool barriers and its V and M written out and read back. On the Zen 4 VM (AVX-512 with VNNI, session
  // 49), int8 1x256x14x14 F(4,3) (16 tiles, 2.4 MB of U) took 0.92-0.93 of the phased time with int8
  // tensors in NCHW16c and 0.95 in NCHW (alternated medians). Not where a thread would get fewer rows than
  // the micro-kernel's (1x512x7x7, 2 tiles each: 1.22x), nor for U of more than 8 MiB over the threads
  // (8x512x7x7, 16 tiles each: level), nor past 4 micro-kernel heights a thread (8x256x14x14); not on
  // AVX2, whose int8 kernel took 1.02-1.03x.
  if (b.int8_vnni && !b.amx_rows && out.phased && b.block_option == 0 && b.k_parts_option == 0 &&
      threads > 1) {
    const int64_t per_thread = ceil_div(tiles, threads);
    const int64_t u_int8_bytes = nn * b.Cpad * b.Kpad;
    if (per_thread >= mr && per_thread <= 4 * mr && u_int8_bytes * threads <= (int64_t{8} << 20)) {
      out.phased = false;
      out.block = per_thread;
      out.image_group = b.images;
    }
  }
  if (!out.phased && b.k_parts_option > 0) out.k_parts = std::min(b.k_parts_option, b.panels);
  return out;
}

}  // namespace nova::conv
