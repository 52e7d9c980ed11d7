// The Winograd plans' order of work (choose_blocking, winograd_blocking.cpp) as a pure function of the
// plan's sizes: the AMX rules are checked here on any machine, not only where AMX runs
// (Lowp.AmxBf16PlansOfFewTilesTakeOneBlockPerThread checks the plans there).
#include <gtest/gtest.h>

#include <cstdint>

#include "conv/winograd_blocking.hpp"

namespace nova::conv {
namespace {

int64_t ceil_div64(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// A plan's problem as winograd_build.cpp forms it: F(m,3) on an n x H x W image, C -> K channels.
BlockingProblem problem(int64_t images, int64_t hw, int m, int64_t channels, int threads, bool amx,
                        Precision precision) {
  BlockingProblem b;
  const int64_t n = m + 2, tiles_side = ceil_div64(hw, m), padded = tiles_side * m + 2;
  b.images = images;
  b.tiles_per_image = tiles_side * tiles_side;
  b.positions = n * n;
  b.Cpad = b.Kpad = ceil_div64(channels, 16) * 16;
  b.packed_image_bytes = b.Cpad * padded * padded * 4;
  b.mr = 6;
  b.threads = threads;
  b.amx_rows = amx;
  b.precision = precision;
  b.panels = ceil_div64(b.Kpad, 64);  // AVX-512's panels of 64 columns
  return b;
}

TEST(WinogradBlocking, AmxBf16FewTilesTakeOneBlockPerThreadAndInt8KeepsWholePasses) {
  // 1x256x14x14 at F(2,3): 49 tiles. Rounded to 16-row passes the blocks were 16, 16, 16 and 1; now
  // one block per thread (25 and 24), output channels not split (asked for here, as automatically).
  BlockingProblem one_each = problem(1, 14, 2, 256, 2, true, Precision::kBf16);
  one_each.panels = 4;
  one_each.k_parts_option = 1;
  const Blocking bf16 = choose_blocking(one_each);
  EXPECT_FALSE(bf16.phased);
  EXPECT_EQ(bf16.block, 25);
  EXPECT_EQ(bf16.k_parts, 1);
  const Blocking int8 = choose_blocking(problem(1, 14, 2, 256, 2, true, Precision::kInt8));
  EXPECT_FALSE(int8.phased);
  EXPECT_EQ(int8.block, 16);
  // Without AMX the balancing alone gives two blocks of 25 and 24.
  const Blocking fp32 = choose_blocking(problem(1, 14, 2, 256, 2, false, Precision::kFp32));
  EXPECT_FALSE(fp32.phased);
  EXPECT_EQ(fp32.block, 25);
  // 1x128x28x28 at F(4,3): 49 tiles too.
  BlockingProblem p128 = problem(1, 28, 4, 128, 2, true, Precision::kBf16);
  p128.k_parts_option = 1;
  EXPECT_EQ(choose_blocking(p128).block, 25);
  EXPECT_EQ(choose_blocking(problem(1, 28, 4, 128, 2, true, Precision::kInt8)).block, 16);
}

// AMX int8 plans of few tiles that would run phased run one fused block of every tile instead, its output
// channels in a part per thread (whole panels; never more parts than panels); bf16 and FP32 stay phased,
// and fused plans are not split on their own; a requested split applies to fused plans only, at most one
// part per panel.
TEST(WinogradBlocking, AmxInt8FewTilesSplitOutputChannelsWhereTheyWouldRunPhased) {
  // 1x512x7x7 at F(2,3): 16 tiles, 8 panels of 64 columns.
  const Blocking int8 = choose_blocking(problem(1, 7, 2, 512, 2, true, Precision::kInt8));
  EXPECT_FALSE(int8.phased);
  EXPECT_EQ(int8.block, 16);
  EXPECT_EQ(int8.k_parts, 2);
  EXPECT_TRUE(choose_blocking(problem(1, 7, 2, 512, 2, true, Precision::kBf16)).phased);
  EXPECT_TRUE(choose_blocking(problem(8, 7, 4, 512, 2, true, Precision::kInt8)).phased);  // 32 tiles
  EXPECT_TRUE(choose_blocking(problem(1, 7, 2, 512, 2, false, Precision::kFp32)).phased);
  EXPECT_EQ(choose_blocking(problem(1, 7, 2, 512, 1, true, Precision::kInt8)).k_parts, 1);  // one thread
  BlockingProblem forced = problem(1, 7, 2, 512, 2, true, Precision::kInt8);
  forced.block_option = -1;  // phased asked for
  EXPECT_TRUE(choose_blocking(forced).phased);
  // 49 tiles (1x256x14x14 F(2,3)): fused already, not split.
  EXPECT_EQ(choose_blocking(problem(1, 14, 2, 256, 2, true, Precision::kBf16)).k_parts, 1);
  EXPECT_EQ(choose_blocking(problem(1, 14, 2, 256, 2, true, Precision::kInt8)).k_parts, 1);
  BlockingProblem fp32 = problem(1, 14, 2, 256, 2, false, Precision::kFp32);
  EXPECT_EQ(choose_blocking(fp32).k_parts, 1);
  fp32.k_parts_option = 3;
  EXPECT_EQ(choose_blocking(fp32).k_parts, 3);
  fp32.k_parts_option = 9;
  EXPECT_EQ(choose_blocking(fp32).k_parts, 4);  // 256 channels: 4 panels
  fp32.block_option = -1;                       // phased: parts are a fused-order notion
  EXPECT_EQ(choose_blocking(fp32).k_parts, 1);
}

// VNNI int8 plans of few tiles that would run phased take one fused block per thread instead; not with
// fewer tiles a thread than the micro-kernel's rows, more than four heights of them, or U over 8 MiB
// across the threads; never for AVX2's int8 kernel, AMX, other precisions, one thread or a requested order.
TEST(WinogradBlocking, VnniInt8FewTilesTakeOneFusedBlockPerThreadWhereTheyWouldRunPhased) {
  const auto vnni = [](int64_t images, int64_t hw, int64_t channels, int threads) {
    BlockingProblem b = problem(images, hw, 4, channels, threads, false, Precision::kInt8);
    b.int8_vnni = true;
    return b;
  };
  BlockingProblem b256 = vnni(1, 14, 256, 2);  // 16 tiles, U 2.4 MB of int8
  ASSERT_TRUE(choose_blocking(problem(1, 14, 4, 256, 2, false, Precision::kInt8)).phased);  // without VNNI
  const Blocking fused = choose_blocking(b256);
  EXPECT_FALSE(fused.phased);
  EXPECT_EQ(fused.block, 8);
  EXPECT_EQ(fused.k_parts, 1);
  EXPECT_EQ(fused.image_group, 1);
  EXPECT_TRUE(choose_blocking(vnni(1, 7, 512, 2)).phased);   // 4 tiles: 2 a thread, under 6 rows
  EXPECT_TRUE(choose_blocking(vnni(8, 7, 512, 2)).phased);   // 16 a thread, but U 9.4 MB x 2 threads
  EXPECT_TRUE(choose_blocking(vnni(8, 14, 256, 2)).phased);  // 64 tiles a thread
  EXPECT_TRUE(choose_blocking(vnni(1, 14, 256, 1)).phased);  // one thread
  BlockingProblem amx = b256;
  amx.amx_rows = true;
  EXPECT_NE(choose_blocking(amx).block, 8);  // the AMX rules, not this one
  BlockingProblem bf16 = b256;
  bf16.precision = Precision::kBf16;
  bf16.int8_vnni = false;
  EXPECT_TRUE(choose_blocking(bf16).phased);
  BlockingProblem asked = b256;
  asked.block_option = -1;
  EXPECT_TRUE(choose_blocking(asked).phased);
  asked.block_option = 0;
  asked.k_parts_option = 2;
  EXPECT_TRUE(choose_blocking(asked).phased);
}

TEST(WinogradBlocking, AmxBlocksAreWholePassesWhereThreadsGetSeveral) {
  // 8x64x56x56 at F(4,3): 1568 tiles, blocks of 32 rows (the 2x2 tile form) for both precisions.
  for (const Precision prec : {Precision::kBf16, Precision::kInt8}) {
    const Blocking b = choose_blocking(problem(8, 56, 4, 64, 2, true, prec));
    EXPECT_FALSE(b.phased);
    EXPECT_EQ(b.block % 32, 0) << b.block;
  }
}

// Invariants over a sweep of sizes, thread counts and precisions: blocks within [1, tiles], the phased
// order over every tile and image, image groups within the batch, AMX int8 blocks whole 16-row passes
// (or every tile), and AMX bf16 never making a thread run more 16-row passes than whole-pass blocks
// would (counted as the busiest thread's blocks times each block's passes).
TEST(WinogradBlocking, InvariantsOverASweep) {
  int checked = 0;
  for (const int64_t images : {1, 2, 3, 8})
    for (const int64_t hw : {5, 7, 14, 17, 28, 56})
      for (const int m : {2, 4, 6})
        for (const int64_t channels : {16, 64, 256, 512})
          for (const int threads : {1, 2, 3, 4})
            for (const bool amx : {false, true})
              for (const Precision prec : {Precision::kFp32, Precision::kBf16, Precision::kInt8}) {
                if (amx && prec == Precision::kFp32) continue;
                const BlockingProblem p = problem(images, hw, m, channels, threads, amx, prec);
                const Blocking b = choose_blocking(p);
                const int64_t tiles = p.tiles();
                SCOPED_TRACE(::testing::Message()
                             << images << "x" << channels << "x" << hw << " F(" << m << ",3) threads "
                             << threads << " amx " << amx << " " << to_string(prec));
                ASSERT_GE(b.block, 1);
                ASSERT_LE(b.block, tiles);
                ASSERT_GE(b.image_group, 1);
                ASSERT_LE(b.image_group, images);
                ASSERT_GE(b.k_parts, 1);
                ASSERT_LE(b.k_parts, p.panels);
                if (b.k_parts > 1) {
                  EXPECT_TRUE(amx && prec == Precision::kInt8);
                  EXPECT_EQ(b.block, tiles);
                  EXPECT_LE(tiles, 16);
                }
                if (b.phased) {
                  EXPECT_EQ(b.block, tiles);
                  EXPECT_EQ(b.image_group, images);
                  continue;
                }
                if (amx && prec == Precision::kInt8) {
                  EXPECT_TRUE(b.block % 16 == 0 || b.block == tiles) << b.block;
                }
                if (amx && prec == Precision::kBf16 && b.block % 16 != 0 && b.block != tiles) {
                  const int64_t group = b.image_group * p.tiles_per_image;
                  const int64_t whole = (b.block + 15) / 16 * 16;
                  const int64_t passes =
                      ceil_div64(ceil_div64(group, b.block), threads) * ceil_div64(b.block, 16);
                  const int64_t passes_whole = ceil_div64(ceil_div64(group, whole), threads) * (whole / 16);
                  EXPECT_LE(passes, passes_whole) << "block " << b.block;
                }
                ++checked;
              }
  EXPECT_GT(checked, 1000);
}

TEST(WinogradBlocking, OptionsForceTheOrder) {
  BlockingProblem p = problem(2, 28, 4, 64, 2, false, Precision::kFp32);
  p.block_option = 5;
  Blocking b = choose_blocking(p);
  EXPECT_FALSE(b.phased);
  EXPECT_EQ(b.block, 5);
  p.block_option = 1000;  // at most every tile
  EXPECT_EQ(choose_blocking(p).block, p.tiles());
  p.block_option = -1;
  b = choose_blocking(p);
  EXPECT_TRUE(b.phased);
  EXPECT_EQ(b.block, p.tiles());
  EXPECT_EQ(b.image_group, p.images);
}

TEST(WinogradBlocking, FewTilesAndLargeFiltersGoPhasedManyTilesOfLargeChannelsGoFused) {
  // 1x512x7x7 at F(2,3): 16 tiles and 16.8 MB of U: each fused block would stream U again.
  EXPECT_TRUE(choose_blocking(problem(1, 7, 2, 512, 2, false, Precision::kFp32)).phased);
  // The phased order holds V and M of every tile: past 256 MiB of them the plan stays fused, in blocks
  // of at least 8 kernel rows (64 images of 512 channels at 56x56, F(4,3): 12,544 tiles).
  const Blocking big = choose_blocking(problem(64, 56, 4, 512, 2, false, Precision::kFp32));
  EXPECT_FALSE(big.phased);
  EXPECT_GE(big.block, 8 * 6 / 2);  // balancing may shrink it slightly, never below half
}

// AVX2 plans weight the phased order's V and M 6 times (winograd_build.cpp): 8x128x28x28 at F(7,3), 128 tiles
// and 5.3 MB of U, runs fused there (58 MB of U re-read against 5.3 + 6 x 10.6 MB) and phased at the
// AVX-512 weight (against 5.3 + 4 x 10.6); 8x256x14x14 at F(7,3), 32 tiles and 21 MB of U, is phased at both.
TEST(WinogradBlocking, PhasedVmWeightDecidesTheManyTileMidChannelLayer) {
  BlockingProblem mid = problem(8, 28, 7, 128, 2, false, Precision::kFp32);
  EXPECT_TRUE(choose_blocking(mid).phased);
  mid.phased_vm_passes = 6.0;
  const Blocking fused = choose_blocking(mid);
  EXPECT_FALSE(fused.phased);
  EXPECT_GE(fused.block, 6);
  EXPECT_LE(fused.block, 12);
  BlockingProblem wide = problem(8, 14, 7, 256, 2, false, Precision::kFp32);
  EXPECT_TRUE(choose_blocking(wide).phased);
  wide.phased_vm_passes = 6.0;
  EXPECT_TRUE(choose_blocking(wide).phased);
}

}  // namespace
}  // namespace nova::conv
