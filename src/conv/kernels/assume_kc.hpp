// The reduction length of a GEMM micro-kernel is never below a known minimum: 1 for the FP32 kernel (the
// direct path's C*R*S), 16 for the low-precision ones (whole 16-channel blocks). Said to the compiler:
// without it GCC 12 keeps a zeroed copy of the accumulators in memory for the path on which the
// reduction loop does not run, stores all of them to the stack after the loop and reloads them for the
// stores to C (24 stores, 24 loads and 20 zeroing stores per call of the FP32 6x64 kernel: 5 % of its
// rate at 64 channels).
#pragma once

#include <cstddef>

namespace nova::conv::kernels_impl {

template <std::size_t Min>
[[gnu::always_inline]] inline void assume_reduction_at_least(std::size_t kc) {
  if (kc < Min) __builtin_unreachable();
}

}  // namespace nova::conv::kernels_impl
