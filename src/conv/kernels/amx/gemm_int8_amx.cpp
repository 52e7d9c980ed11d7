// INT8 GEMM on AMX tiles (TDPBUSD): kernels/amx/gemm_tiles_template.hpp over the AMX instructions
// (amx_tiles.hpp). Run on a borrowed AMX machine only (session 11). The engine uses it only after
// `amx_int8_supported()` (amx_support.cpp) has run it beside the VNNI kernel in a child of the process
// and found the same bits.
#include "amx_tiles.hpp"
#include "gemm_tiles_template.hpp"

namespace nova::conv {

namespace {

template <bool Session>
void gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
          const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  static const Int8GemmFn vnni = int8_gemm_avx512vnni();
  amx_impl::AmxTiles tiles;
  amx_impl::int8_gemm<Session>(tiles, vnni, rows, nv, kc, a, lda, b, comp, scale, c, ldc);
}

}  // namespace

Int8GemmFn int8_gemm_amx() {
  return &gemm<false>;
}

Int8GemmFn int8_gemm_amx_in_session() {
  return &gemm<true>;
}

}  // namespace nova::conv
