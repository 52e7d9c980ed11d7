// The first lanes of an 8-float step as a vmaskmovps mask (lanes_below), shared by the AVX2 loops that
// load or store the last, partial step of a row: the int8-spatial codes (gemm_lowp_avx2.cpp) and the
// NCHW pack's last columns (layout_avx2.cpp). Include only from kernels/avx2/ files; internal linkage.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace {

// The lanes of an 8-float step that lie below `left` (all when left >= 8, none when left <= 0).
inline __m256i lanes_below(int64_t left) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(left, 0, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace
