// Google Benchmark of the FP32 tile transforms alone, as the fused Winograd order calls them: the input
// transform of one tile (n x n elements of `cbs` 16-channel blocks, read from an NCHW16c-like window)
// into V with the engine's position stride, and the output transform of one tile from M. Everything
// lies in L1 or L2, so the figure is the transform's own cost (cycles per tile and 16 channels), the
// floor of the engine's input and output stages: `nova bench conv --profile` divided by tiles x channel
// blocks gives the cost the stage pays in the engine, and the difference is memory.
//
// The positions of V and M lie position_stride apart (plan_impl.hpp: an odd number of cache lines);
// stride:1 runs the transforms with the stride the engine had before session 49 (a multiple of 4 lines,
// whose n^2 positions share 16 of L1's 64 sets), to show what that cost.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "conv/kernels/kernel_table.hpp"
#include "conv/plan_impl.hpp"
#include "core_clock.hpp"
#include "nova/conv/conv.hpp"
#include "tile_transforms_generated.hpp"

namespace {

using nova::bench::clock_ghz;

constexpr int64_t kTiles = 29;  // tiles of a fused block (8x64x56x56 at F(7,3)), each transformed in turn
constexpr int64_t kBlocks = 4;  // 16-channel blocks (64 channels)

// What is timed: the FP32 input transform, the output transform, or the int8 plans' input transform of
// an int8 tensor's codes into int8 V (InputTileInt8CodesFn: codes widened in registers, V quantized as
// stored; the AVX-512 path has it).
enum Kind { kInput, kOutput, kInt8Codes };

// Args: isa, generated transform index (generated::kGeneratedInfo), Kind, 0 the engine's position stride
// / 1 the stride before session 49.
void BM_TileTransform(benchmark::State& state) {
  using namespace nova::conv;
  const auto isa = static_cast<Isa>(state.range(0));
  if (!isa_supported(isa)) {
    state.SkipWithError("this CPU cannot run the path");
    return;
  }
  const int index = static_cast<int>(state.range(1));
  const auto kind = static_cast<Kind>(state.range(2));
  const bool output = kind == kOutput;
  const bool old_stride = state.range(3) != 0;
  const TransformTable& table = kernels(isa).transforms;
  if (index >= table.generated_count) {
    state.SkipWithError("no such generated transform");
    return;
  }
  const TileFns& fns = table.generated[index];
  if (kind == kInt8Codes && fns.input_int8_codes == nullptr) {
    state.SkipWithError("no int8 codes input transform on this path");
    return;
  }
  const generated::GeneratedInfo& info = generated::kGeneratedInfo[index];
  const int64_t n = info.n, m = info.m;
  // Input: the tiles of a row of the image, m columns apart, rows of (kTiles*m + n) pixels.
  const int64_t width = kTiles * m + n;
  const std::ptrdiff_t sx = 16, sy = width * 16, scb = n * sy;
  const int64_t v_bytes = kind == kInt8Codes ? 1 : static_cast<int64_t>(sizeof(float));
  const std::size_t pos_stride = old_stride
                                     ? static_cast<std::size_t>(round_up(kTiles * kBlocks * 16, 64) + 64)
                                     : position_stride(kTiles, kBlocks * 16, v_bytes);
  std::vector<float> image(static_cast<std::size_t>(kBlocks * scb), 0.5f);
  std::vector<int8_t> codes(static_cast<std::size_t>(kBlocks * scb), 64);
  std::vector<uint8_t> v8(static_cast<std::size_t>(n * n) * pos_stride, 0);
  const std::vector<float> inv(static_cast<std::size_t>(n * n), 20.0f);
  int bad = 0;
  std::vector<float> v(static_cast<std::size_t>(n * n) * pos_stride, 0.25f);
  std::vector<float> out(static_cast<std::size_t>(kTiles * m * m * 16), 0.0f), bias(16, 0.125f);
  for (auto _ : state) {
    for (int64_t t = 0; t < kTiles; ++t) {
      if (kind == kInput) {
        fns.input(nullptr, image.data() + t * m * sx, sy, sx, scb, static_cast<int>(kBlocks),
                  v.data() + t * kBlocks * 16, pos_stride);
      } else if (kind == kInt8Codes) {
        benchmark::DoNotOptimize(fns.input_int8_codes(nullptr, codes.data() + t * m * sx, sy, sx, scb,
                                                      static_cast<int>(kBlocks), v8.data() + t * kBlocks * 16,
                                                      pos_stride, inv.data(), 1.0f / 127.0f, &bad));
      } else {
        for (int64_t cb = 0; cb < kBlocks; ++cb)
          fns.output(nullptr, v.data() + (t * kBlocks + cb) * 16, pos_stride, bias.data(), false,
                     out.data() + t * m * m * 16, static_cast<std::size_t>(m));
      }
    }
    benchmark::DoNotOptimize(v.data());
    benchmark::DoNotOptimize(v8.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double per_iteration = static_cast<double>(kTiles * kBlocks);  // tiles x 16-channel blocks
  state.counters["tile_blocks"] =
      benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
  const double ghz = clock_ghz();
  if (ghz > 0.0) {
    // time / (iterations x value): cycles per tile and 16 channels
    state.counters["cycles_per_tile_block"] =
        benchmark::Counter(per_iteration / (ghz * 1e9),
                           benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  }
  state.SetLabel(to_string(isa) + " F(" + std::to_string(m) + "," + std::to_string(info.r) + ") {" +
                 info.points + "} " +
                 (kind == kInput    ? "input"
                  : kind == kOutput ? "output"
                                    : "input, int8 codes to int8 V") +
                 ", " + std::to_string(output ? info.output_ops : info.input_ops) + " ops per 1D transform" +
                 (old_stride ? ", stride of session 48" : ""));
}

void Args(benchmark::internal::Benchmark* b) {
  for (int64_t isa : {1, 2})
    for (int64_t index = 0; index < nova::conv::generated::kGeneratedCount; ++index)
      for (int64_t kind : {kInput, kOutput, kInt8Codes})
        for (int64_t stride : {0, 1}) b->Args({isa, index, kind, stride});
}

BENCHMARK(BM_TileTransform)->Apply(Args)->ArgNames({"isa", "transform", "kind", "stride"});

}  // namespace

BENCHMARK_MAIN();
