// Google Benchmark of the memory a layer's data lands in on this machine: the latency of dependent loads
// over a random cyclic permutation of 64-byte lines (4 KiB pages), and the rate of a sequential read, in
// buffers of 1 to 64 MiB. Where the latency jumps, data of that size no longer stays in the caches this
// machine gives one core, and the tensors of a layer that size stream from memory each execute.
//
// Why it is here: on the shared VMs nova is developed on, the cache a core effectively gets changes with
// the neighbours. On the Zen 4 VM of session 49 (32 MiB L3 reported), dependent loads reached memory's
// latency from 6 MiB in one run and from 16 MiB in another, and the FP32 and int8 layers whose input and
// output tensors total 12.8-25.6 MB (8x64x56x56, 1x64x224x224) varied most between runs. Run it next to
// a timing to say which machine the timing had.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kPerLine = kLine / sizeof(std::size_t);

// Arg: MiB. Counter ns_per_load: the time of one dependent load.
void BM_DependentLoad(benchmark::State& state) {
  const std::size_t lines = static_cast<std::size_t>(state.range(0)) * (std::size_t{1} << 20) / kLine;
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  std::vector<std::size_t> next(lines * kPerLine, 0);
  for (std::size_t i = 0; i < lines; ++i) next[order[i] * kPerLine] = order[(i + 1) % lines] * kPerLine;
  std::size_t p = 0;
  for (std::size_t i = 0; i < lines; ++i) p = next[p];  // warm: every line once
  constexpr std::size_t kSteps = 1 << 20;
  for (auto _ : state) {
    for (std::size_t i = 0; i < kSteps; ++i) p = next[p];
    benchmark::DoNotOptimize(p);
  }
  // time / (iterations x value): with value kSteps * 1e-9, nanoseconds per load
  state.counters["ns_per_load"] =
      benchmark::Counter(static_cast<double>(kSteps) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Arg: MiB. Counter bytes_per_second of a sequential read (eight independent sums, so that the adds do not
// bound it).
void BM_SequentialRead(benchmark::State& state) {
  const std::size_t count =
      static_cast<std::size_t>(state.range(0)) * (std::size_t{1} << 20) / sizeof(uint64_t);
  std::vector<uint64_t> data(count, 1);
  for (auto _ : state) {
    uint64_t s[8] = {};
    for (std::size_t i = 0; i + 8 <= count; i += 8)
      for (int k = 0; k < 8; ++k) s[k] += data[i + static_cast<std::size_t>(k)];
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(count * sizeof(uint64_t)));
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t mib : {1, 2, 4, 6, 8, 12, 16, 24, 32, 64}) b->Arg(mib);
}

BENCHMARK(BM_DependentLoad)->Apply(Sizes)->ArgName("MiB")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SequentialRead)->Apply(Sizes)->ArgName("MiB")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
