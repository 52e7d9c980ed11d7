// Kernels of the int8-spatial path (docs/engine.md, "int8-spatial"): the input quantized to int8 codes
// in the spatial domain, exact integer transforms, and an int16 x int16 GEMM with exact int32 sums.
//
// Layouts (kc channels, a multiple of 16; w = 16*nv columns):
//   A: V' rows of int16, channel c at a[i*lda + c]
//   B: U' panel of int16 with channel pairs interleaved, B[(c/2)*(2w) + 2j + (c&1)] (vpdpwssd operand)
// C[i][j] = float(S_1) + float(S_2) + ... (left to right, FP32) times scale[j], where S_q is the exact
// int32 sum over the q-th run of `chunk` channels: the plan picks `chunk` so that no run can overflow
// int32 whatever the input (|V'| and |U'| are bounded at plan time). Every path computes the same
// sums in the same order, so the portable and the SIMD kernels give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nova::conv {

using Int16GemmFn = void (*)(int64_t rows, int nv, std::size_t kc, std::size_t chunk, const int16_t* a,
                             std::size_t lda, const int16_t* b, const float* scale, float* c,
                             std::size_t ldc);
// V' (integer-valued floats from the exact transform) to int16; a NaN, an Inf or |v| > 32767 (which
// only a non-finite input can produce) stores 0 and sets *bad.
using Int16ConvertFn = void (*)(const float* src, int16_t* dst, int64_t count, int* bad);
// The input's int8 codes, in place and as floats: finite x -> clamp(RNE(x * inv), -127, 127); NaN and
// Inf are left as they are (the tiles they reach are marked and give NaN). Returns how many finite
// values had |x * inv| > 127.5 (clamped).
using Int8CodesFn = int64_t (*)(float* x, int64_t count, float inv);

struct Int16Fns {
  Int16GemmFn gemm = nullptr;
  Int16ConvertFn convert = nullptr;
  Int8CodesFn codes = nullptr;
};
Int16Fns int16_fns_portable();
Int16Fns int16_fns_avx512vnni();  // call only when lowp_simd_supported(Precision::kInt8Spatial)
Int16Fns int16_fns_avx2();        // call only where the avx2 path runs (kernels/avx2/gemm_lowp_avx2.cpp)

}  // namespace nova::conv
