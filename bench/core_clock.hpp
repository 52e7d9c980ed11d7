// The core clock, measured on the spot, for benchmarks that report work per cycle (bench_gemm.cpp,
// bench_transforms.cpp): on a VM neither the nominal frequency nor a boost state can be read.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace nova::bench {

// Core cycles per nanosecond: 3 cycles per dependent imul (x86-64), best of a few runs; 0 elsewhere.
inline double clock_ghz() {
#if defined(__x86_64__)
  static const double ghz = [] {
    double best = 0.0;
    for (int rep = 0; rep < 5; ++rep) {
      uint64_t x = 3;
      constexpr int64_t kSteps = 20'000'000;
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < kSteps; ++i) __asm__ volatile("imul %0, %0" : "+r"(x));
      const double ns =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, 3.0 * static_cast<double>(kSteps) / ns);
    }
    return best;
  }();
  return ghz;
#else
  return 0.0;
#endif
}

}  // namespace nova::bench
