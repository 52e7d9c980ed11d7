// Row and column blocking shared by the low-precision SIMD GEMMs: rows in blocks of kLowpRows (6, so
// that 6 x 4 zmm accumulators fit the register file) with every tail, and panels of 1..4 vectors of 16
// columns. The kernel is a template lambda  [&]<int MR, int NV>(int64_t first_row) { ... }  so each ISA
// file keeps its own micro-kernel and instantiates it with its own flags (include only from
// kernels/<isa>/ files).
#pragma once

#include <cstdint>

namespace nova::conv::lowp_blocks {

inline constexpr int kLowpRows = 6;

template <int NV, class Kernel>
void rows(int64_t count, const Kernel& kernel) {
  int64_t i = 0;
  for (; i + kLowpRows <= count; i += kLowpRows) kernel.template operator()<kLowpRows, NV>(i);
  switch (count - i) {
    case 5:
      kernel.template operator()<5, NV>(i);
      break;
    case 4:
      kernel.template operator()<4, NV>(i);
      break;
    case 3:
      kernel.template operator()<3, NV>(i);
      break;
    case 2:
      kernel.template operator()<2, NV>(i);
      break;
    case 1:
      kernel.template operator()<1, NV>(i);
      break;
    default:
      break;
  }
}

// Runs `kernel` over `count` rows of a panel of `nv` (1..4) vectors.
template <class Kernel>
void for_each_block(int64_t count, int nv, const Kernel& kernel) {
  switch (nv) {
    case 1:
      rows<1>(count, kernel);
      break;
    case 2:
      rows<2>(count, kernel);
      break;
    case 3:
      rows<3>(count, kernel);
      break;
    default:
      rows<4>(count, kernel);
      break;
  }
}

}  // namespace nova::conv::lowp_blocks
