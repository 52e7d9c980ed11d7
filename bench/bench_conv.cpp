// Google Benchmark of the FP32 convolution engine on the layer set of issue 5 (3x3, stride 1, pad 1),
// batch 1 and 8, 1 and 2 threads, auto algorithm choice plus every 3x3 tile forced. Counters: GFLOP/s
// direct-equivalent (2*N*K*C*H*W*9 per execute). For the side-by-side comparison with oneDNN, ncnn and
// PyTorch use bench/peer_bench.py, which times the same layers through `nova bench conv`.
// BM_ConvLowp: the low-precision Winograd paths (bf16, int8, fp16; fp32 beside them) on F(4,3) and
// F(6,3), the SIMD GEMM kernels this CPU has (the plan's label names the path).
// BM_PlanCreate: making a plan (filters transformed, rounded or quantized, packed; buffers sized), which
// the PyTorch drop-in pays at a layer's first call, for every new input shape, and at every training step.
// BM_ConvChain: a network's pattern, one plan per layer executed back to back: `plans` plans of one
// batch-1 layer, time per layer. Against one plan it shows what the plans cost each other: their
// threads (one pool for all since 2026-11-22: 8 plans of 1x128x28x28 took 0.59-0.65 ms a layer with a
// pool per plan, 0.49-0.51 with the shared one) and their transformed filters, which no longer share
// the caches (1x256x14x14: about 0.85 ms a layer against 0.53 for one plan).
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

// A layer's tensors on uniform data (fixed seed).
struct LayerData {
  nova::ConvShape s;
  std::vector<float> x, w, b, y;
};

LayerData layer_data(int64_t layer) {
  const Layer& l = kLayers[layer];
  LayerData d{nova::ConvShape{l.N, l.C, l.H, l.W, l.K}, {}, {}, {}, {}};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  d.x.resize(static_cast<std::size_t>(d.s.input_size()));
  d.w.resize(static_cast<std::size_t>(d.s.weight_size()));
  d.b.resize(static_cast<std::size_t>(d.s.K));
  d.y.resize(static_cast<std::size_t>(d.s.output_size()));
  for (auto& v : d.x) v = u(rng);
  for (auto& v : d.w) v = 0.1f * u(rng);
  for (auto& v : d.b) v = u(rng);
  return d;
}

// Plans kLayers[layer] with `o` and times execute(); the label is the plan's own description
// (algorithm, tile, ISA, precision, GEMM path, threads).
void run_layer(benchmark::State& state, int64_t layer, const nova::conv::PlanOptions& o) {
  LayerData d = layer_data(layer);
  const nova::conv::Plan plan = nova::conv::Plan::create(d.s, d.w.data(), d.b.data(), o);
  state.SetLabel(plan.describe());
  for (auto _ : state) {
    plan.execute(d.x.data(), d.y.data());
    benchmark::DoNotOptimize(d.y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] =  // shown as GFLOP per second
      benchmark::Counter(d.s.direct_flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
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

// Args: layer, threads, tile (0: auto; m: F(m,3)), dtype (as BM_ConvLowp's).
void BM_PlanCreate(benchmark::State& state) {
  constexpr nova::conv::Precision kPrec[] = {nova::conv::Precision::kFp32, nova::conv::Precision::kBf16,
                                             nova::conv::Precision::kInt8, nova::conv::Precision::kFp16};
  LayerData d = layer_data(state.range(0));
  nova::conv::PlanOptions o;
  o.threads = static_cast<int>(state.range(1));
  if (state.range(2) > 0) o.tile = nova::TileSize{static_cast<int>(state.range(2)), 3};
  o.precision = kPrec[state.range(3)];
  state.SetLabel(nova::conv::Plan::create(d.s, d.w.data(), d.b.data(), o).describe());
  for (auto _ : state) {
    const nova::conv::Plan plan = nova::conv::Plan::create(d.s, d.w.data(), d.b.data(), o);
    benchmark::DoNotOptimize(&plan);
  }
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

// Args: layer (batch 1 only), threads, plans.
void BM_ConvChain(benchmark::State& state) {
  LayerData d = layer_data(state.range(0));
  nova::conv::PlanOptions o;
  o.threads = static_cast<int>(state.range(1));
  const auto count = static_cast<std::size_t>(state.range(2));
  std::vector<nova::conv::Plan> plans;
  for (std::size_t i = 0; i < count; ++i) plans.push_back(nova::conv::Plan::create(d.s, d.w.data(), d.b.data(), o));
  state.SetLabel(plans.front().describe());
  for (auto _ : state) {
    for (const auto& plan : plans) plan.execute(d.x.data(), d.y.data());
    benchmark::DoNotOptimize(d.y.data());
    benchmark::ClobberMemory();
  }
  state.counters["per_layer"] = benchmark::Counter(  // seconds per layer, printed with an SI prefix
      static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
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

void PlanArgs(benchmark::internal::Benchmark* b) {
  for (int64_t layer : {0, 2, 3, 6})
    for (int64_t threads : {1, 2}) {
      for (int64_t tile : {0, 4, 7}) b->Args({layer, threads, tile, 0});
      for (int64_t dtype : {1, 2, 3}) b->Args({layer, threads, 4, dtype});
    }
}

BENCHMARK(BM_Conv)->Apply(Args)->ArgNames({"layer", "threads", "tile"})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanCreate)
    ->Apply(PlanArgs)
    ->ArgNames({"layer", "threads", "tile", "dtype"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvChain)
    ->ArgsProduct({{0, 1, 2, 3}, {2}, {1, 8}})
    ->ArgNames({"layer", "threads", "plans"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvLowp)
    ->Apply(LowpArgs)
    ->ArgNames({"layer", "threads", "dtype", "tile"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
