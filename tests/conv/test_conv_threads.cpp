// Results do not depend on the thread count nor on the execution order (fused blocks of any size,
// or phased): bit-for-bit identical outputs.
#include <gtest/gtest.h>

#include "conv_test_util.hpp"

namespace nova::conv {
namespace {

ConvShape shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K) { return ConvShape{N, C, H, W, K}; }

TEST(Determinism, IdenticalAcrossThreadCountsAndBlockings) {
  const testing::Problem p = testing::random_problem(shape(2, 21, 23, 19, 35), 11);
  for (Isa isa : testing::runnable_isas()) {
    for (AlgorithmChoice alg : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
      for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
        PlanOptions o;
        o.isa = isa;
        o.algorithm = alg;
        o.layout = layout;
        o.relu = true;
        o.tile = alg == AlgorithmChoice::kWinograd ? std::optional<TileSize>(TileSize{4, 3}) : std::nullopt;
        o.threads = 1;
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

TEST(Determinism, RepeatedExecuteIsStable) {
  const testing::Problem p = testing::random_problem(shape(1, 17, 15, 15, 20), 12);
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), PlanOptions{});
  std::vector<float> a(static_cast<std::size_t>(p.shape.output_size())), b(a.size());
  plan.execute(p.input.data(), a.data());
  plan.execute(p.input.data(), b.data());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace nova::conv
