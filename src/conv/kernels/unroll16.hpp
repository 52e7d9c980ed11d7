// for_each_of_16 and for_each_run_of_16: the loops of the 16x16 layout kernels
// (kernels/avx512/layout_avx512.cpp, kernels/avx512vbmi/). Their register arrays (16 rows in, 16 columns out)
// are indexed by the loop variable; with a run-time trip count the compiler keeps them in memory and indexes
// them there, which cost these kernels a store and a reload per vector. A loop over all 16 is unrolled, every
// index is a constant and the arrays stay in registers; edges (fewer than 16) keep the plain loop.
#pragma once

#include <cstddef>

namespace nova::conv::kernels_impl {

// f(x0, xs, mask) for each run of 16 columns of [0, count) (the last may be shorter): xs columns from
// x0, `mask` their low xs bits (for masked loads and stores of the run).
template <class F>
[[gnu::always_inline]] inline void for_each_run_of_16(std::ptrdiff_t count, F&& f) {
  for (std::ptrdiff_t x0 = 0; x0 < count; x0 += 16) {
    const int xs = count - x0 < 16 ? static_cast<int>(count - x0) : 16;
    f(x0, xs, static_cast<unsigned short>((1u << xs) - 1u));
  }
}

// f(i) for i in [0, n), n <= 16.
template <class F>
[[gnu::always_inline]] inline void for_each_of_16(int n, F&& f) {
  if (n == 16) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) f(i);
  } else {
    for (int i = 0; i < n; ++i) f(i);
  }
}

}  // namespace nova::conv::kernels_impl
