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
void rows_tail(int64_t count, int64_t i, const Kernel& kernel) {
  switch (count) {
    case 6:
      kernel.template operator()<6, NV>(i);
      break;
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

// Groups of kLowpRows, then the rest. With kEvenTails, a rest of 1 or 2 rows, which loads (and widens)
// each channel of the panel for too few rows, goes with the last full group as two nearly equal groups
// (8 rows: 4 + 4, 7: 4 + 3). Each row's sums do not depend on its group, so the bits are the same. The
// AVX2 widened (bf16, fp16) kernels take it: 0.96-0.98 of the time of bf16 and fp16 plans on the
// 64- and 128-channel batch-1 layers (blocks of 20 tiles: 6+6+4+4 rows for 6+6+6+2); the integer
// kernels measured level to 1.07 with it and do without (docs/engine-log.md, "Session 20").
template <int NV, bool kEvenTails, class Kernel>
void rows(int64_t count, const Kernel& kernel) {
  const int64_t rest = count % kLowpRows;
  const bool even = kEvenTails && count > kLowpRows && (rest == 1 || rest == 2);
  const int64_t full = count / kLowpRows - (even ? 1 : 0);
  int64_t i = 0;
  for (; i < full * kLowpRows; i += kLowpRows) kernel.template operator()<kLowpRows, NV>(i);
  const int64_t left = count - i;  // 0..5, or 7, 8
  if (left > kLowpRows) {
    const int64_t first = (left + 1) / 2;
    rows_tail<NV>(first, i, kernel);
    rows_tail<NV>(left - first, i + first, kernel);
  } else {
    rows_tail<NV>(left, i, kernel);
  }
}

// Runs `kernel` over `count` rows of a panel of `nv` (1..4) vectors (kEvenTails: see rows).
template <bool kEvenTails = false, class Kernel>
void for_each_block(int64_t count, int nv, const Kernel& kernel) {
  switch (nv) {
    case 1:
      rows<1, kEvenTails>(count, kernel);
      break;
    case 2:
      rows<2, kEvenTails>(count, kernel);
      break;
    case 3:
      rows<3, kEvenTails>(count, kernel);
      break;
    default:
      rows<4, kEvenTails>(count, kernel);
      break;
  }
}

}  // namespace nova::conv::lowp_blocks
