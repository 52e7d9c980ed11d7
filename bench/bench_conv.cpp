// Google Benchmark of the FP32 convolution engine on the layer set of issue 5 (3x3, stride 1, pad 1),
// batch 1 and 8, 1 and 2 threads, auto algorithm choice plus every 3x3 tile forced. Counters: GFLOP/s
// direct-equivalent (2*N*K*C*H*W*9 per execute). For the side-by-side comparison with oneDNN, ncnn and
// PyTorch use bench/peer_bench.py, which times the same layers through `nova bench conv`.
// BM_ConvLowp: the low-precision Winograd paths (bf16, int8, fp16; fp32 beside them) on F(4,3) and
// F(6,3), the SIMD GEMM kernels this CPU has (the plan's label names the path).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "nova/conv/conv.hpp"

namespace {

struct Layer {
  int64_t N, C, H, W, K;
};

constexpr Layer kLayers[] = {{1, 64, 56, 56, 64},  {1, 128, 28, 28, 128}, {1, 256, 14, 14, 256},
                             {1, 512, 7, 7, 512},  {8, 64, 56, 56, 64},   {8, 128, 28, 28, 128},
                             {8, 256, 14, 14, 256}, {8, 512, 7, 7, 512},  {1, 64, 224, 224, 64}};

// Plans kLayers[layer] with `o` on uniform data (fixed seed) and times execute(); the label is the
// plan's own description (algorithm, tile, ISA, precision, GEMM path, threads).
void run_layer(benchmark::State& state, int64_t layer, const nova::conv::PlanOptions& o) {
  const Layer& l = kLayers[layer];
  const nova::ConvShape s{l.N, l.C, l.H, l.W, l.K};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(s.input_size())), w(static_cast<std::size_t>(s.weight_size())),
      b(static_cast<std::size_t>(s.K)), y(static_cast<std::size_t>(s.output_size()));
  for (auto& v : x) v = u(rng);
  for (auto& v : w) v = 0.1f * u(rng);
  for (auto& v : b) v = u(rng);
  const nova::conv::Plan plan = nova::conv::Plan::create(s, w.data(), b.data(), o);
  state.SetLabel(plan.describe());
  for (auto _ : state) {
    plan.execute(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] =  // shown as GFLOP per second
      benchmark::Counter(s.direct_flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Args: layer, threads, tile (0: auto; 2, 4, 6, 8: F(m,3); -1: direct).
void BM_Conv(benchmark::State& state) {
  nova::conv::PlanOptions o;
  o.threads = static_cast<int>(state.range(1));
  const int tile = static_cast<int>(state.range(2));
  if (tile > 0) o.tile = nova::TileSize{tile, 3};
  if (tile < 0) o.algorithm = nova::conv::AlgorithmChoice::kDirect;
  run_layer(state, state.range(0), o);
}

// Args: layer, threads, dtype (0 fp32, 1 bf16, 2 int8, 3 fp16, 4 int8-spatial), tile (4 or 6: F(m,3);
// int8-spatial runs F(4,3) only).
void BM_ConvLowp(benchmark::State& state) {
  constexpr nova::conv::Precision kPrec[] = {nova::conv::Precision::kFp32, nova::conv::Precision::kBf16,
                                             nova::conv::Precision::kInt8, nova::conv::Precision::kFp16,
                                             nova::conv::Precision::kInt8Spatial};
  nova::conv::PlanOptions o;
  o.threads = static_cast<int>(state.range(1));
  o.precision = kPrec[state.range(2)];
  o.tile = nova::TileSize{static_cast<int>(state.range(3)), 3};
  run_layer(state, state.range(0), o);
}

void LowpArgs(benchmark::internal::Benchmark* b) {
  for (int64_t layer = 0; layer < 8; ++layer)
    for (int64_t threads : {1, 2})
      for (int64_t dtype : {0, 1, 2, 3, 4})
        for (int64_t tile : {4, 6})
          if (dtype != 4 || tile == 4) b->Args({layer, threads, dtype, tile});
}

void Args(benchmark::internal::Benchmark* b) {
  for (int64_t layer = 0; layer < static_cast<int64_t>(std::size(kLayers)); ++layer)
    for (int64_t threads : {1, 2})
      for (int64_t tile : {0, -1, 2, 4, 6, 8}) b->Args({layer, threads, tile});
}

BENCHMARK(BM_Conv)->Apply(Args)->ArgNames({"layer", "threads", "tile"})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvLowp)
    ->Apply(LowpArgs)
    ->ArgNames({"layer", "threads", "dtype", "tile"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
