// Plan::set_profiling / stage_profile: the stages a plan runs get time and the others none, the stages
// fit inside the executes' wall time on every thread, counts and clearing work, and profiling does not
// change a result.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "conv_test_util.hpp"

namespace nova::conv {
namespace {

struct Profiled {
  StageProfile profile;
  std::vector<float> output;
};

// `executes` executes of a fresh plan with profiling on; the output of the last.
Profiled profile_of(const testing::Problem& p, const PlanOptions& o, int executes) {
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), o);
  plan.set_profiling(true);
  std::vector<float> out(static_cast<std::size_t>(p.shape.output_size()));
  for (int i = 0; i < executes; ++i) plan.execute(p.input.data(), out.data());
  return {plan.stage_profile(), out};
}

double stage_sum(const StageProfile& s) {
  return s.pack_ms + s.scales_ms + s.input_ms + s.convert_ms + s.gemm_ms + s.output_ms + s.direct_ms;
}

// Every stage's thread time is >= 0 and all of them fit in threads x wall (each thread's laps lie inside
// the execute; 1 us of slack per execute for the clock reads that open and close it).
void expect_consistent(const StageProfile& s, int executes, int threads) {
  EXPECT_EQ(s.executes, executes);
  EXPECT_EQ(s.threads, threads);
  EXPECT_GT(s.wall_ms, 0.0);
  for (double ms : {s.pack_ms, s.scales_ms, s.input_ms, s.convert_ms, s.gemm_ms, s.output_ms, s.direct_ms})
    EXPECT_GE(ms, 0.0);
  EXPECT_LE(stage_sum(s), s.wall_ms * threads + 1e-3 * executes);
  EXPECT_GE(s.idle_ms(), -1e-3 * executes);
}

TEST(StageProfile, OffByDefaultAndClearedWhenTurnedOff) {
  const testing::Problem p = testing::random_problem(ConvShape{1, 16, 12, 12, 16}, 31);
  PlanOptions o;
  o.threads = 2;
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), o);
  std::vector<float> out(static_cast<std::size_t>(p.shape.output_size()));
  plan.execute(p.input.data(), out.data());
  StageProfile s = plan.stage_profile();
  EXPECT_EQ(s.executes, 0);
  EXPECT_EQ(s.wall_ms, 0.0);
  EXPECT_EQ(stage_sum(s), 0.0);
  plan.set_profiling(true);
  plan.execute(p.input.data(), out.data());
  plan.execute(p.input.data(), out.data());
  EXPECT_EQ(plan.stage_profile().executes, 2);
  plan.set_profiling(false);
  plan.execute(p.input.data(), out.data());
  s = plan.stage_profile();
  EXPECT_EQ(s.executes, 0);
  EXPECT_EQ(stage_sum(s), 0.0);
}

TEST(StageProfile, WinogradFp32TimesItsStagesOnEveryPath) {
  const testing::Problem p = testing::random_problem(ConvShape{2, 40, 30, 26, 48}, 32);
  for (Isa isa : testing::runnable_isas()) {
    for (int block : {0, -1}) {  // fused, phased
      PlanOptions o;
      o.isa = isa;
      o.algorithm = AlgorithmChoice::kWinograd;
      o.tile = TileSize{4, 3};
      o.threads = 2;
      o.tile_block = block;
      const Profiled r = profile_of(p, o, 3);
      SCOPED_TRACE(to_string(isa) + (block < 0 ? " phased" : " fused"));
      expect_consistent(r.profile, 3, 2);
      EXPECT_GT(r.profile.pack_ms, 0.0);  // NCHW input: copied into the blocked layout
      EXPECT_GT(r.profile.input_ms, 0.0);
      EXPECT_GT(r.profile.gemm_ms, 0.0);
      EXPECT_GT(r.profile.output_ms, 0.0);
      EXPECT_EQ(r.profile.scales_ms, 0.0);
      EXPECT_EQ(r.profile.convert_ms, 0.0);
      EXPECT_EQ(r.profile.direct_ms, 0.0);
      // The same bits as an unprofiled plan.
      EXPECT_TRUE(testing::same_bits(r.output, testing::run(p, o)));
    }
  }
}

TEST(StageProfile, DirectPathTimesOnlyItsWork) {
  // NCHW: small filters (27 KB here) are packed per panel from the NCHW input inside the direct stage;
  // larger ones (72 channels to 256: 648 KB) go through an NHWC copy first, the pack stage.
  for (const int64_t c : {int64_t{24}, int64_t{72}}) {
    const int64_t k = c == 24 ? 32 : 256;
    const testing::Problem p = testing::random_problem(ConvShape{1, c, 20, 20, k}, 33);
    PlanOptions o;
    o.algorithm = AlgorithmChoice::kDirect;
    o.threads = 3;
    const Profiled r = profile_of(p, o, 2);
    SCOPED_TRACE(c);
    expect_consistent(r.profile, 2, 3);
    EXPECT_GT(r.profile.direct_ms, 0.0);
    if (c == 24)
      EXPECT_EQ(r.profile.pack_ms, 0.0);
    else
      EXPECT_GT(r.profile.pack_ms, 0.0);  // NCHW to NHWC
    EXPECT_EQ(r.profile.input_ms + r.profile.gemm_ms + r.profile.output_ms + r.profile.scales_ms, 0.0);
  }
}

TEST(StageProfile, Int8PerCallScalesAreTheirOwnStage) {
  const testing::Problem p = testing::random_problem(ConvShape{1, 32, 18, 18, 32}, 34);
  PlanOptions o;
  o.precision = Precision::kInt8;
  o.tile = TileSize{2, 3};
  o.threads = 2;
  const Profiled per_call = profile_of(p, o, 2);
  expect_consistent(per_call.profile, 2, 2);
  EXPECT_GT(per_call.profile.scales_ms, 0.0);
  EXPECT_GT(per_call.profile.gemm_ms, 0.0);
  // Calibrated: no per-call pass; the calibration itself (made with profiling on) is not an execute and
  // is not counted.
  Plan plan = Plan::create(p.shape, p.weights.data(), p.bias.data(), o);
  plan.set_profiling(true);
  const float* samples[] = {p.input.data()};
  plan.calibrate(samples);
  EXPECT_EQ(plan.stage_profile().executes, 0);
  EXPECT_EQ(plan.stage_profile().scales_ms, 0.0);
  std::vector<float> out(static_cast<std::size_t>(p.shape.output_size()));
  plan.execute(p.input.data(), out.data());
  const StageProfile cal = plan.stage_profile();
  expect_consistent(cal, 1, 2);
  EXPECT_EQ(cal.scales_ms, 0.0);
  EXPECT_GT(cal.input_ms, 0.0);
}

}  // namespace
}  // namespace nova::conv
