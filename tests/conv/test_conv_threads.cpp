// Results do not depend on the thread count nor on the execution order (fused blocks of any size,
// or phased): bit-for-bit identical outputs.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "conv_test_util.hpp"

namespace nova::conv {
namespace {

ConvShape shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K) {
  return ConvShape{N, C, H, W, K};
}

TEST(Determinism, IdenticalAcrossThreadCountsAndBlockings) {
  const testing::Problem p = testing::random_problem(shape(2, 21, 23, 19, 35), 11);
  for (Isa isa : testing::runnable_isas()) {
    for (AlgorithmChoice alg : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
      for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
        PlanOptions o = testing::determinism_options(isa, alg, layout);
        const std::vector<float> base = testing::run(p, o);
        for (int threads : {2, 3, 5}) {
          for (int block : {0, 1, 7, -1}) {
            o.threads = threads;
            o.tile_block = block;
            const std::vector<float> got = testing::run(p, o);
            ASSERT_EQ(got, base) << to_string(isa) << " threads=" << threads << " block=" << block;
          }
        }
      }
    }
  }
}

// FP32 plans whose U is larger than L2 prefetch the next panel of U in the GEMMs (4.7 MB at F(6,3) with
// 120 -> 136 channels, padded to 128 and 144): the float64 reference's values, and the same bits for every
// thread count and order (the phased GEMM tasks are runs of panels there).
TEST(Determinism, PlansPrefetchingLargeFiltersAreIdenticalAcrossThreadsAndOrders) {
  const testing::Problem p = testing::random_problem(shape(2, 120, 13, 11, 136), 13);
  for (Isa isa : testing::runnable_isas()) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      PlanOptions o;
      o.isa = isa;
      o.layout = layout;
      o.tile = TileSize{6, 3};
      o.threads = 1;
      Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), o);
      EXPECT_NE(plan.describe().find("next panel prefetched"), std::string::npos) << plan.describe();
      const std::vector<float> base = testing::run(p, o);
      EXPECT_LT(testing::rel_l2(base, testing::reference(p, layout, o.relu)), 1e-5)
          << to_string(isa);  // n = 8
      for (int threads : {2, 3}) {
        for (int block : {0, 5, -1}) {
          o.threads = threads;
          o.tile_block = block;
          ASSERT_EQ(testing::run(p, o), base)
              << to_string(isa) << " threads=" << threads << " block=" << block;
        }
      }
    }
  }
  // A small U (F(4,3), 21 -> 35 channels) is read from L2: no prefetch.
  const testing::Problem small = testing::random_problem(shape(1, 21, 9, 9, 35), 14);
  PlanOptions o;
  o.tile = TileSize{4, 3};
  EXPECT_EQ(
      Plan::create(small.shape, small.weights.data(), small.bias.data(), o).describe().find("prefetched"),
      std::string::npos);
}

TEST(Determinism, RepeatedExecuteIsStable) {
  const testing::Problem p = testing::random_problem(shape(1, 17, 15, 15, 20), 12);
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), PlanOptions{});
  std::vector<float> a(static_cast<std::size_t>(p.shape.output_size())), b(a.size());
  plan.execute(p.input.data(), a.data());
  plan.execute(p.input.data(), b.data());
  EXPECT_EQ(a, b);
}

// stats() read from another thread while executes run waits for the execute in progress (conv.hpp: one
// execute at a time per plan) and sees a whole execute's counts: here every execute saturates the same
// number of int8 outputs, so once the first has finished every read must give that number (an execute
// clears its counts when it starts, which an unguarded read saw as 0).
TEST(Concurrency, StatsReadDuringExecutesSeeWholeCounts) {
  const ConvShape s = shape(1, 32, 28, 28, 32);
  const testing::Problem p = testing::random_problem(s, 3);
  PlanOptions o;
  o.output = {DataType::kInt8, std::numeric_limits<float>::min()};  // every nonzero result saturates
  const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
  std::vector<int8_t> y(static_cast<std::size_t>(s.output_size()));
  plan.execute(static_cast<const void*>(p.input.data()), static_cast<void*>(y.data()));
  const int64_t want = plan.stats().output_saturated;
  ASSERT_GT(want, 0);
  std::atomic<bool> done{false};
  std::atomic<int64_t> reads{0}, wrong{0}, last_wrong{want};
  std::thread reader([&] {
    while (!done.load()) {
      const int64_t got = plan.stats().output_saturated;
      reads.fetch_add(1);
      if (got != want) {
        wrong.fetch_add(1);
        last_wrong.store(got);
      }
    }
  });
  // The executes start once the reader is reading, and run until it has read during them: on 2 cores
  // the 100 executes of this small layer could all finish before the reader thread was first scheduled.
  while (reads.load() == 0) std::this_thread::yield();
  const int64_t reads_before = reads.load();
  for (int i = 0; i < 100 || (reads.load() - reads_before < 100 && i < 100000); ++i)
    plan.execute(static_cast<const void*>(p.input.data()), static_cast<void*>(y.data()));
  done.store(true);
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "of " << reads.load() << " reads; one gave " << last_wrong.load() << ", not "
                             << want;
}

}  // namespace
}  // namespace nova::conv
