// BF16 GEMM on AMX tiles (TDPBF16PS): kernels/amx/gemm_tiles_template.hpp over the AMX instructions
// (amx_tiles.hpp). Run on a borrowed AMX machine only (session 11). TDPBF16PS sums in an order of its own
// (the SDM's pseudocode and emulators disagree on it), so its bits are not vdpbf16ps's: the engine uses it
// only after `amx_bf16_supported()` (amx_support.cpp) has found its sums within the error bound of
// FP32 summation on random operands, NaN and Inf propagated, in a child of the process.
#include "amx_tiles.hpp"
#include "gemm_tiles_template.hpp"

namespace nova::conv {

namespace {

template <bool Session>
void gemm(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
          float* c, std::size_t ldc) {
  static const Bf16GemmFn rest = bf16_gemm_avx512bf16();
  amx_impl::AmxTiles tiles;
  amx_impl::bf16_gemm<Session>(tiles, rest, rows, nv, kc, a, lda, b, c, ldc);
}

}  // namespace

Bf16GemmFn bf16_gemm_amx() {
  return &gemm<false>;
}

Bf16GemmFn bf16_gemm_amx_in_session() {
  return &gemm<true>;
}

}  // namespace nova::conv
