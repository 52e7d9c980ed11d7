// Time to build and exactly verify transforms (issue 2's figure; the seed reports 2.1 s for F(8,3)
// verification in SymPy). Run: build/bench/nova_bench_exact
#include <benchmark/benchmark.h>

#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace {

const char* points_for(int m, int r) {
  if (m == 8 && r == 3) return "0,±1,±2,±1/2,±1/4,inf";
  if (m == 6 && r == 5) return "0,±1,±2,±1/2,±1/4,inf";
  return "0,±1,±2,±1/2,inf";
}

void BM_BuildAndVerify(benchmark::State& state) {
  const nova::TileSize tile{static_cast<int>(state.range(0)), static_cast<int>(state.range(1))};
  const nova::PointList points = nova::parse_points(points_for(tile.m, tile.r));
  for (auto _ : state) {
    const nova::Transform t = nova::Transform::construct(tile, points);
    const bool ok = nova::verify_1d(t.AT(), t.G(), t.BT()).ok && nova::verify_2d(t.AT(), t.G(), t.BT(), true).ok;
    if (!ok) state.SkipWithError("verification failed");
    benchmark::DoNotOptimize(ok);
  }
  state.SetLabel(tile.to_string() + " build + 1D + 2D (separable)");
}

void BM_Verify2DDirect(benchmark::State& state) {
  const nova::TileSize tile{static_cast<int>(state.range(0)), static_cast<int>(state.range(1))};
  const nova::Transform t = nova::Transform::construct(tile, nova::parse_points(points_for(tile.m, tile.r)));
  for (auto _ : state) {
    const bool ok = nova::verify_2d(t.AT(), t.G(), t.BT(), false).ok;
    if (!ok) state.SkipWithError("verification failed");
    benchmark::DoNotOptimize(ok);
  }
  state.SetLabel(tile.to_string() + " 2D identity, every Kronecker term summed");
}

}  // namespace

BENCHMARK(BM_BuildAndVerify)->Args({6, 3})->Args({8, 3})->Args({6, 5})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Verify2DDirect)->Args({8, 3})->Args({6, 5})->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_MAIN();
