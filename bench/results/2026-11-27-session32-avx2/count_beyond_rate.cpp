// count_beyond (AVX2) on data in L1 with nothing to count: ns per call and per 16-float pixel.
// Built against the release tree (session 32):
//   g++ -O2 -std=c++20 -DPX=6 -DROWS=6 -I include -I src -I src/conv -I src/conv/kernels \
//     bench/results/2026-11-27-session32-avx2/count_beyond_rate.cpp build/src/conv/libnova_conv.a -lgmpxx -lgmp -fopenmp
#include <chrono>
#include <cstdio>
#include <vector>
#include "conv/kernels/kernel_table.hpp"
using namespace nova::conv;
int main() {
  const ConvertTable t = kernels(Isa::kAvx2).convert;
  std::vector<float> tile(64 * 64 * 16 + 64, 0.5f);
  for (size_t i = 0; i < tile.size(); ++i) tile[i] = (i % 7) * 0.25f - 0.7f;
  const int iters = 2000000;
  for (int rep = 0; rep < 3; ++rep) {
    auto a = std::chrono::steady_clock::now();
    int64_t sum = 0;
    for (int i = 0; i < iters; ++i) { sum += t.count_beyond(tile.data(), PX * 16, ROWS, PX, 16, 65520.0f); asm volatile("" ::: "memory"); }
    auto b = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(b - a).count() / iters;
    std::printf("%dx%d pixels of 16 lanes: %.1f ns per call, %.2f ns per pixel (sum %ld)\n", PX, ROWS, ns, ns / (PX*ROWS), (long)sum);
  }
}
