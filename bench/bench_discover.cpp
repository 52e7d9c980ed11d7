// Discovery time on one thread (the targets: F(6,3) under 0.2 s, F(8,3) under 1 s; the seed
// reports 2 s and 60 s), and the cost of the kappa_2(V) evaluation at its heart.
#include <benchmark/benchmark.h>

#include "nova/analysis/vandermonde.hpp"
#include "nova/discover/discover.hpp"
#include "nova/discover/objectives.hpp"

namespace {

void BM_Discover(benchmark::State& state) {
  nova::DiscoverOptions o;
  o.tile = {static_cast<int>(state.range(0)), static_cast<int>(state.range(1))};
  o.threads = 1;
  const nova::KappaV objective;
  // The result for the label, from a run outside the timed loop (every run gives the same points).
  const double kappa = nova::discover(o, objective).value;
  for (auto _ : state) {
    const auto r = nova::discover(o, objective);
    benchmark::DoNotOptimize(r.value);
  }
  state.SetLabel("F(" + std::to_string(o.tile.m) + "," + std::to_string(o.tile.r) +
                 "), 1 thread, defaults, kappa2(V) = " + std::to_string(kappa));
}
BENCHMARK(BM_Discover)->Args({4, 3})->Args({6, 3})->Args({8, 3})->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_Kappa2Vandermonde(benchmark::State& state) {
  std::vector<double> x = {0, 0.4, -0.4, 5.0 / 6, -5.0 / 6, 1, -1, 7.0 / 6, -7.0 / 6};
  x.resize(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    x[1] += 1e-12;  // a fresh input each time
    benchmark::DoNotOptimize(nova::kappa2_vandermonde(x));
  }
}
BENCHMARK(BM_Kappa2Vandermonde)->Arg(5)->Arg(7)->Arg(9);

}  // namespace

BENCHMARK_MAIN();
