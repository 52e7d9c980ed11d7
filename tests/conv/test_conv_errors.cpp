// Bad input gets a one-line nova::Error, never a crash.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "common/address_space_limit.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/error.hpp"

namespace nova::conv {
namespace {

ConvShape small() {
  ConvShape s;
  s.C = 3;
  s.K = 4;
  s.H = s.W = 8;
  return s;
}

// Runs f, expects nova::Error whose one-line message mentions `needle`.
template <class F>
void expect_error(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(BadInput, ZeroSizedAndImpossibleShapes) {
  const testing::Problem p = testing::random_problem(small(), 1);
  for (int field = 0; field < 4; ++field) {
    ConvShape s = small();
    (field == 0 ? s.N : field == 1 ? s.C : field == 2 ? s.H : s.K) = 0;
    EXPECT_THROW(Plan::create(s, p.weights.data(), nullptr), Error);
  }
  ConvShape s = small();
  s.pad_h = -1;
  EXPECT_THROW(Plan::create(s, p.weights.data(), nullptr), Error);
  s = small();
  s.groups = 2;  // C = 3 not divisible
  EXPECT_THROW(Plan::create(s, p.weights.data(), nullptr), Error);
  s = small();
  s.H = 1;
  s.pad_h = 0;  // kernel taller than the padded input
  EXPECT_THROW(Plan::create(s, p.weights.data(), nullptr), Error);
  // Sizes beyond the limits are refused before anything is allocated: a padding of 2e9 passed validation
  // and the allocation failed with "cannot create std::vector larger than max_size()".
  s = small();
  s.pad_h = s.pad_w = 2000000000;
  expect_error([&] { Plan::create(s, p.weights.data(), nullptr); }, "padding 2000000000 too large");
  s = small();
  s.pad_h = s.pad_w = 1 << 20;  // (2^21)^2 padded pixels per channel: over 2^40 values
  expect_error([&] { Plan::create(s, p.weights.data(), nullptr); },
               "padded input 1x3x2097160x2097160 too large");
  s = small();
  s.dilation = int64_t{1} << 31;
  expect_error([&] { Plan::create(s, p.weights.data(), nullptr); }, "dilation 2147483648 too large");
}

TEST(BadInput, NullBuffers) {
  const testing::Problem p = testing::random_problem(small(), 2);
  expect_error([&] { Plan::create(small(), nullptr, nullptr); }, "weights");
  Plan plan = Plan::create(small(), p.weights.data(), nullptr);
  std::vector<float> out(static_cast<std::size_t>(small().output_size()));
  expect_error([&] { plan.execute(nullptr, out.data()); }, "input");
  expect_error([&] { plan.execute(p.input.data(), nullptr); }, "output");
}

TEST(BadInput, MisalignedAndOverlappingBuffers) {
  const testing::Problem p = testing::random_problem(small(), 3);
  Plan plan = Plan::create(small(), p.weights.data(), nullptr);
  std::vector<float> out(static_cast<std::size_t>(small().output_size()) + 1);
  const float* misaligned = reinterpret_cast<const float*>(reinterpret_cast<const char*>(p.input.data()) + 1);
  expect_error([&] { plan.execute(misaligned, out.data()); }, "aligned");
  std::vector<float> both(static_cast<std::size_t>(small().input_size()));
  expect_error([&] { plan.execute(both.data(), both.data()); }, "overlap");
  // Weights, bias and calibration samples are read as floats too (they were read at any address).
  std::vector<float> shifted(p.weights.size() + 1);
  const float* weights = reinterpret_cast<const float*>(reinterpret_cast<const char*>(shifted.data()) + 2);
  expect_error([&] { Plan::create(small(), weights, nullptr); },
               "weights and bias must be aligned to 4 bytes");
  const float* bias = reinterpret_cast<const float*>(reinterpret_cast<const char*>(shifted.data()) + 1);
  expect_error([&] { Plan::create(small(), p.weights.data(), bias); }, "weights and bias must be aligned");
  PlanOptions int8;
  int8.precision = Precision::kInt8;
  int8.algorithm = AlgorithmChoice::kWinograd;
  Plan q = Plan::create(small(), p.weights.data(), nullptr, int8);
  const float* samples[] = {misaligned};
  expect_error([&] { q.calibrate(samples); }, "calibration sample 0 must be aligned to 4 bytes");
}

TEST(BadInput, NonFiniteWeightsAndBiasAreReported) {
  testing::Problem p = testing::random_problem(small(), 4);
  p.weights[13] = std::numeric_limits<float>::quiet_NaN();
  expect_error([&] { Plan::create(small(), p.weights.data(), p.bias.data()); }, "NaN at index 13");
  p.weights[13] = std::numeric_limits<float>::infinity();
  expect_error([&] { Plan::create(small(), p.weights.data(), p.bias.data()); }, "Inf");
  p.weights[13] = 0.5f;
  p.bias[2] = -std::numeric_limits<float>::infinity();
  expect_error([&] { Plan::create(small(), p.weights.data(), p.bias.data()); }, "bias");
}

TEST(BadInput, ImpossibleThreadCounts) {
  const testing::Problem p = testing::random_problem(small(), 5);
  for (int t : {-1, -100, 1025, 1 << 30}) {
    PlanOptions o;
    o.threads = t;
    expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "thread");
  }
}

TEST(BadInput, WrongTransformOrTile) {
  const testing::Problem p = testing::random_problem(small(), 6);
  PlanOptions o;
  o.tile = TileSize{4, 5};  // 5x5 tile, 3x3 kernel
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "kernel");
  o.tile = TileSize{3, 3};  // no default transform; the message lists every tile that has one
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "default");
  for (const TileSize& t : default_tiles())
    expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, t.to_string());
  // A transform whose matrices are wrong fails verification.
  const Transform good = Transform::construct(TileSize{2, 3}, parse_points("0, 1, -1, inf"));
  RationalMatrix bt = good.BT();
  bt(0, 0) = Rational(3);
  o.tile.reset();
  o.transform = Transform::from_matrices(good.tile(), good.points(), good.scaling(), good.AT(), good.G(), bt);
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "verification");
  // A tile beside a transform of another tile (the tile was ignored); the same tile is fine.
  o.transform = Transform::construct(TileSize{4, 3}, parse_points("0, ±1, ±2, inf"));
  o.tile = TileSize{6, 3};
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); },
               "F(6,3)) and a transform of another");
  o.tile = TileSize{4, 3};
  EXPECT_NO_THROW(Plan::create(small(), p.weights.data(), nullptr, o));
  o.tile.reset();
  // Exact transforms the FP32 engine cannot hold: an entry beyond FP32's range (point 1e30: G has 1e-90,
  // which was 0, another transform); entries within it whose products overflow (point 1e-30: G w G^T is
  // inf, every output NaN, nothing counted). Both ran with exit 0 in `nova bench conv --check`.
  o.transform =
      Transform::construct(TileSize{2, 3}, parse_points("0, 1, -1, 1000000000000000000000000000000"));
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "beyond FP32's range");
  o.transform =
      Transform::construct(TileSize{2, 3}, parse_points("0, 1, -1, 1/1000000000000000000000000000000"));
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "overflow FP32");
  o.transform.reset();
  // Winograd forced on a strided shape.
  ConvShape s = small();
  s.stride = 2;
  PlanOptions w;
  w.algorithm = AlgorithmChoice::kWinograd;
  expect_error([&] { Plan::create(s, p.weights.data(), nullptr, w); }, "stride");
  // A tile or transform beside algorithm direct: dropped without a word before.
  PlanOptions d;
  d.algorithm = AlgorithmChoice::kDirect;
  d.tile = TileSize{4, 3};
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, d); },
               "a tile is a Winograd option; algorithm 'direct' does not use it");
  d.tile.reset();
  d.transform = Transform::construct(TileSize{4, 3}, parse_points("0, ±1, ±2, inf"));
  expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, d); },
               "a transform is a Winograd option");
  d.transform.reset();
  EXPECT_EQ(Plan::create(small(), p.weights.data(), nullptr, d).algorithm(), Algorithm::kDirect);
}

// Option fields holding a value that is none of their enum's (an uninitialized or cast integer): a
// layout of 3 ran as one of the others, an input type of 9 or an output type of 9 segfaulted in execute,
// an input type of -1 hung in it, a precision of 9 segfaulted in create.
TEST(BadInput, OptionValuesOutsideTheirEnums) {
  const testing::Problem p = testing::random_problem(small(), 8);
  const auto refused = [&](auto set, const std::string& needle) {
    PlanOptions o;
    o.algorithm = AlgorithmChoice::kWinograd;  // where the values reach the Winograd build
    set(o);
    expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, needle);
  };
  refused([](PlanOptions& o) { o.layout = static_cast<Layout>(3); }, "PlanOptions::layout holds 3");
  refused([](PlanOptions& o) { o.algorithm = static_cast<AlgorithmChoice>(-1); }, "PlanOptions::algorithm");
  refused([](PlanOptions& o) { o.isa = static_cast<Isa>(7); }, "PlanOptions::isa holds 7");
  refused([](PlanOptions& o) { o.precision = static_cast<Precision>(9); }, "PlanOptions::precision holds 9");
  refused([](PlanOptions& o) { o.lowp_kernel = static_cast<LowpKernel>(5); }, "PlanOptions::lowp_kernel");
  refused([](PlanOptions& o) { o.input.type = static_cast<DataType>(9); }, "PlanOptions::input.type holds 9");
  refused([](PlanOptions& o) { o.input.type = static_cast<DataType>(-1); }, "PlanOptions::input.type");
  refused([](PlanOptions& o) { o.output.type = static_cast<DataType>(4); }, "PlanOptions::output.type");
  refused([](PlanOptions& o) { o.fp16_arithmetic = static_cast<Fp16Arithmetic>(3); }, "fp16_arithmetic");
  refused([](PlanOptions& o) { o.bf16_arithmetic = static_cast<Bf16Arithmetic>(3); }, "bf16_arithmetic");
  // The public conversions index the same tables.
  std::vector<float> values(4, 1.0f);
  std::vector<int8_t> bytes(16);
  expect_error([&] { convert_from_fp32(values.data(), 4, {static_cast<DataType>(9)}, bytes.data()); },
               "tensor type 9");
  expect_error([&] { convert_to_fp32(bytes.data(), 4, {static_cast<DataType>(-1)}, values.data()); },
               "tensor type -1");
}

// A plan moved from holds nothing: every method dereferenced null (execute, describe, stats: segfault).
// Now each says so; the plan it was moved to runs, and one assigned to it makes it usable again.
TEST(BadInput, MovedFromPlanSaysSo) {
  const testing::Problem p = testing::random_problem(small(), 9);
  Plan plan = Plan::create(small(), p.weights.data(), p.bias.data());
  std::vector<float> out(static_cast<std::size_t>(small().output_size())), want(out.size());
  plan.execute(p.input.data(), want.data());
  Plan moved = std::move(plan);
  const std::string needle = "moved from";
  expect_error([&] { plan.execute(p.input.data(), out.data()); }, needle);  // NOLINT(bugprone-use-after-move)
  expect_error(
      [&] { plan.execute(static_cast<const void*>(p.input.data()), static_cast<void*>(out.data())); },
      needle);
  expect_error([&] { plan.describe(); }, needle);
  expect_error([&] { plan.stats(); }, needle);
  expect_error([&] { plan.shape(); }, needle);
  expect_error([&] { plan.threads(); }, needle);
  expect_error([&] { plan.calibrated(); }, needle);
  expect_error([&] { plan.set_profiling(true); }, needle);
  expect_error([&] { plan.stage_profile(); }, needle);
  const float* samples[] = {p.input.data()};
  expect_error([&] { plan.calibrate(samples); }, needle);
  moved.execute(p.input.data(), out.data());
  EXPECT_TRUE(testing::same_bits(out, want));
  plan = std::move(moved);
  std::fill(out.begin(), out.end(), 0.0f);
  plan.execute(p.input.data(), out.data());
  EXPECT_TRUE(testing::same_bits(out, want));
}

// A valid shape whose plan needs more memory than the process may have: std::bad_alloc escaped
// Plan::create. In a child process whose address space is limited to 1 GiB more than it uses.
TEST(BadInput, PlansBeyondTheMemoryAreAnError) {
#ifdef NOVA_UNDER_ADDRESS_SANITIZER
  GTEST_SKIP() << "AddressSanitizer reserves the address space the limit is taken from";
#endif
  const int status = nova::testing::exit_status_with_address_space_room(rlim_t{1} << 30, [] {
    ConvShape s;  // 2^38 input values: a TiB of blocked copy
    s.H = s.W = 1 << 19;
    const std::vector<float> w(9, 0.5f);
    PlanOptions o;
    o.threads = 1;
    int refused = 0;
    for (AlgorithmChoice a : {AlgorithmChoice::kAuto, AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
      o.algorithm = a;
      try {
        Plan::create(s, w.data(), nullptr, o);
      } catch (const Error& e) {
        refused += std::string(e.what()).find("not enough memory for a plan of 1x1x524288x524288") !=
                   std::string::npos;
      } catch (...) {
      }
    }
    return refused == 3 ? 0 : 1;
  });
  if (status == nova::testing::kAddressSpaceNotLimited)
    GTEST_SKIP() << "could not read or limit the address space";
  EXPECT_EQ(status, 0);
}

// The public element counts of impossible shapes: N = -2 gave -128 input elements, stride 0 a division
// by zero (SIGFPE) in output_elements, a layout of 7 the NCHW count.
TEST(BadInput, ElementCountsOfImpossibleShapes) {
  ConvShape s = small();
  s.N = -2;
  expect_error([&] { input_elements(s, Layout::kNCHW); }, "N must be at least 1");
  s = small();
  s.stride = 0;
  expect_error([&] { output_elements(s, Layout::kNHWC); }, "stride must be at least 1");
  s = small();
  s.H = s.W = 1;
  s.pad_h = s.pad_w = 0;  // kernel larger than the input: out_h() was -1
  expect_error([&] { output_elements(s, Layout::kNCHW16c); }, "exceeds padded input");
  expect_error([&] { input_elements(small(), static_cast<Layout>(7)); }, "layout 7");
  EXPECT_EQ(input_elements(small(), Layout::kNCHW16c), 16 * 8 * 8);
  EXPECT_EQ(output_elements(small(), Layout::kNHWC), 4 * 8 * 8);
}

TEST(BadInput, UnavailableKernelPath) {
  const testing::Problem p = testing::random_problem(small(), 7);
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (isa_supported(isa)) continue;
    PlanOptions o;
    o.isa = isa;
    expect_error([&] { Plan::create(small(), p.weights.data(), nullptr, o); }, "cannot run");
  }
  EXPECT_THROW(parse_isa("sse9"), Error);
  EXPECT_THROW(parse_layout("chwn"), Error);
}

}  // namespace
}  // namespace nova::conv
