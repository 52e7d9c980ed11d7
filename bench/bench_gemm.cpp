// Google Benchmark of the FP32 GEMM micro-kernels alone, as the Winograd engine calls them: one
// position's [rows x C] x [C x K] in panels of the kernel's width, row groups of its height, the V rows
// and the U panel packed as the engine packs them. It gives the ceiling of the engine's GEMM stage on
// this CPU: the GEMM of a Winograd convolution cannot run faster than its micro-kernel does here.
//
// Counters: GFLOP/s, and flop/cycle against the core clock measured on the spot (a chain of dependent
// 64-bit multiplies, 3 cycles each on current x86 cores), so the figure compares with the FMA peak:
// 64 flop/cycle for two 512-bit FMA units, 32 for two 256-bit ones.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "conv/kernels/int16_kernels.hpp"
#include "conv/kernels/kernel_table.hpp"
#include "conv/kernels/lowp_kernels.hpp"
#include "core_clock.hpp"
#include "nova/conv/conv.hpp"

namespace {

using nova::bench::clock_ghz;

// Args: isa (0 portable, 1 avx2, 2 avx512), C (reduction), K, rows (tiles).
void BM_GemmKernel(benchmark::State& state) {
  const auto isa = static_cast<nova::conv::Isa>(state.range(0));
  if (!nova::conv::isa_supported(isa)) {
    state.SkipWithError("this CPU cannot run the path");
    return;
  }
  const nova::conv::GemmTable& g = nova::conv::kernels(isa).gemm;
  const int64_t C = state.range(1), K = state.range(2), rows = state.range(3);
  const int64_t panel = 16 * g.nv, mr = g.mr;
  std::vector<float> v(static_cast<std::size_t>(rows * C), 0.5f), u(static_cast<std::size_t>(C * K), 0.25f),
      m(static_cast<std::size_t>(rows * K));
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int64_t k0 = 0; k0 < K; k0 += panel) {
      const int64_t width = std::min(panel, K - k0);
      const float* b = u.data() + k0 * C;
      for (int64_t i0 = 0; i0 < rows; i0 += mr) {
        const int64_t h = std::min(mr, rows - i0);
        g.fn[h - 1][width / 16 - 1](static_cast<std::size_t>(C), v.data() + i0 * C,
                                    static_cast<std::size_t>(C), b, static_cast<std::size_t>(width),
                                    m.data() + i0 * K + k0, static_cast<std::size_t>(K));
      }
    }
    benchmark::DoNotOptimize(m.data());
    benchmark::ClobberMemory();
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  const double flops = 2.0 * static_cast<double>(rows * C * K);
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  const double ghz = clock_ghz();
  if (ghz > 0.0) {
    state.counters["GHz"] = ghz;
    state.counters["flop_per_cycle"] = flops * static_cast<double>(state.iterations()) / (ns * ghz);
  }
  state.SetLabel(nova::conv::to_string(isa) + " micro-kernel " + std::to_string(mr) + "x" +
                 std::to_string(panel));
}

// The channel counts of the layer set (C = K), with as many rows as a phased batch-8 position or a
// fused block holds.
void Args(benchmark::internal::Benchmark* b) {
  for (int64_t isa : {0, 1, 2})
    for (int64_t c : {64, 128, 256, 512})
      for (int64_t rows : {24, 128}) b->Args({isa, c, c, rows});
}

BENCHMARK(BM_GemmKernel)->Apply(Args)->ArgNames({"isa", "C", "K", "rows"})->Unit(benchmark::kMicrosecond);

// The low-precision GEMM kernels (kernels/lowp_kernels.hpp) as the engine calls them: one position's
// [rows x C] x [C x C], a call per panel of 64 columns. The AMX kernels twice: configuring the tiles in
// every call ("per call"), and in one tile session around the position's calls, as the engine runs them.
// The AVX2 kernels (CPUs without AVX-512) last: int8 (vpmaddwd on widened operands), bf16 on FMAs and
// the int8-spatial int16 kernel (one exact run over all channels).
enum LowpKind {
  kInt8Vnni,
  kInt8Amx,
  kInt8AmxSession,
  kBf16Dot,
  kBf16Amx,
  kBf16AmxSession,
  kBf16Fma,
  kInt8Avx2,
  kBf16FmaAvx2,
  kInt16Avx2
};

void BM_LowpGemm(benchmark::State& state) {
  const auto kind = static_cast<LowpKind>(state.range(0));
  const int64_t C = state.range(1), rows = state.range(2), K = C;
  const bool avx2 = kind >= kInt8Avx2;
  const bool int16 = kind == kInt16Avx2;
  const bool int8 = kind <= kInt8AmxSession || kind == kInt8Avx2,
             amx = kind == kInt8Amx || kind == kInt8AmxSession || kind == kBf16Amx || kind == kBf16AmxSession;
  const bool session = kind == kInt8AmxSession || kind == kBf16AmxSession;
  std::string why;
  if (avx2 ? !nova::conv::isa_supported(nova::conv::Isa::kAvx2)
           : !nova::conv::lowp_simd_supported(int8 ? nova::conv::Precision::kInt8
                                                   : nova::conv::Precision::kBf16) ||
                 (amx &&
                  !(int8 ? nova::conv::amx_int8_supported(&why) : nova::conv::amx_bf16_supported(&why)))) {
    state.SkipWithError(("this CPU cannot run the kernel" + (why.empty() ? "" : ": " + why)).c_str());
    return;
  }
  constexpr int64_t kPanel = 64;
  const auto kc = static_cast<std::size_t>(C);
  std::vector<uint8_t> a8(static_cast<std::size_t>(rows * C), 130), b8(static_cast<std::size_t>(C * K), 3);
  std::vector<uint16_t> a16(static_cast<std::size_t>(rows * C), 0x3F00),
      b16(static_cast<std::size_t>(C * K), 0x3E80);
  std::vector<float> af(static_cast<std::size_t>(rows * C), 0.5f), m(static_cast<std::size_t>(rows * K));
  std::vector<int16_t> a_i16(static_cast<std::size_t>(rows * C), 1000),
      b_i16(static_cast<std::size_t>(C * K), -300);
  std::vector<int32_t> comp(static_cast<std::size_t>(K), 384);
  std::vector<float> scale(static_cast<std::size_t>(K), 1e-3f);
  using namespace nova::conv;
  const Int8GemmFn i8 = kind == kInt8Vnni   ? int8_gemm_avx512vnni()
                        : kind == kInt8Avx2 ? int8_gemm_avx2()
                        : session           ? int8_gemm_amx_in_session()
                        : int8              ? int8_gemm_amx()
                                            : nullptr;
  const Bf16GemmFn bf16 = kind == kBf16Dot          ? bf16_gemm_avx512bf16()
                          : kind == kBf16Amx        ? bf16_gemm_amx()
                          : kind == kBf16AmxSession ? bf16_gemm_amx_in_session()
                                                    : nullptr;
  const WidenedGemmFn fma = kind == kBf16Fma       ? bf16_fma_gemm_avx512()
                            : kind == kBf16FmaAvx2 ? bf16_fma_gemm_avx2()
                                                   : nullptr;
  const Int16GemmFn i16 = int16 ? int16_fns_avx2().gemm : nullptr;
  for (auto _ : state) {
    if (session) amx_session_begin();
    for (int64_t k0 = 0; k0 < K; k0 += kPanel) {
      const int nv = static_cast<int>(std::min(kPanel, K - k0) / 16);
      float* c = m.data() + k0;
      if (i16) {  // one exact int32 run over all channels (|1000 * 300| * 512 < 2^31)
        i16(rows, nv, kc, kc, a_i16.data(), kc, b_i16.data() + k0 * C, scale.data() + k0, c,
            static_cast<std::size_t>(K));
      } else if (i8) {
        i8(rows, nv, kc, a8.data(), kc, reinterpret_cast<const int8_t*>(b8.data()) + k0 * C, comp.data() + k0,
           scale.data() + k0, c, static_cast<std::size_t>(K));
      } else if (bf16) {
        bf16(rows, nv, kc, a16.data(), kc, b16.data() + k0 * C, c, static_cast<std::size_t>(K));
      } else {
        fma(rows, nv, kc, af.data(), kc, b16.data() + k0 * C, nullptr, c, static_cast<std::size_t>(K));
      }
    }
    if (session) amx_session_end();
    benchmark::DoNotOptimize(m.data());
    benchmark::ClobberMemory();
  }
  state.counters["GOP"] = benchmark::Counter(2.0 * static_cast<double>(rows * C * K) * 1e-9,
                                             benchmark::Counter::kIsIterationInvariantRate);
  static const char* const kNames[] = {"int8 avx512-vnni",          "int8 amx (per call)",
                                       "int8 amx (session)",        "bf16 avx512-bf16",
                                       "bf16 amx (per call)",       "bf16 amx (session)",
                                       "bf16 avx512-fma (widened)", "int8 avx2 (vpmaddwd)",
                                       "bf16 avx2-fma (widened)",   "int16 avx2 (vpmaddwd, int8-spatial)"};
  state.SetLabel(kNames[kind]);
}

void LowpArgs(benchmark::internal::Benchmark* b) {
  for (int64_t kind = kInt8Vnni; kind <= kInt16Avx2; ++kind)
    for (int64_t c : {64, 128, 256, 512})
      for (int64_t rows : {32, 128, 512}) b->Args({kind, c, rows});
}

BENCHMARK(BM_LowpGemm)->Apply(LowpArgs)->ArgNames({"kind", "C", "rows"})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
