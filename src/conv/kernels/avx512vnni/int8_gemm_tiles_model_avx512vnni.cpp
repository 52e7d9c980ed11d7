// The AMX int8 GEMM (kernels/amx/int8_gemm_tiles_template.hpp) over a scalar model of the tile
// instructions, as the Intel SDM defines them for palette 1: TILELOADD copies `rows` rows of `colsb`
// bytes from base + r*stride, TILEZERO clears, TDPBUSD adds to C[m][n] (int32) the products of the
// unsigned bytes A[m][4k+i] and the signed bytes B[k][4n+i] for k < colsb(A)/4, i < 4, and TILESTORED
// writes the rows back. Tests run it against the VNNI kernel on machines without AMX, which checks
// everything of the AMX kernel but its mapping onto the intrinsics. Not used by the engine.
#include <cstring>

#include "../amx/int8_gemm_tiles_template.hpp"

namespace nova::conv {

namespace {

// A tile instruction outside begin()/end() (no configuration loaded: #UD on the hardware) poisons
// every tile, so that the check comparing this kernel with the VNNI one fails.
struct ModelTiles {
  alignas(64) unsigned char tmm[8][16][64] = {};
  bool configured = false;

  void begin() { configured = true; }
  void end() {
    std::memset(tmm, 0, sizeof(tmm));  // TILERELEASE returns the tiles to their initial state
    configured = false;
  }
  void require_configuration() {
    if (!configured) std::memset(tmm, 0xA5, sizeof(tmm));
  }
  template <int T>
  void zero() {
    require_configuration();
    std::memset(tmm[T], 0, sizeof(tmm[T]));
  }
  template <int T>
  void load(const void* base, long stride) {
    require_configuration();
    for (int r = 0; r < 16; ++r)
      std::memcpy(tmm[T][r], static_cast<const unsigned char*>(base) + r * stride, 64);
  }
  template <int T>
  void store(void* base, long stride) {
    require_configuration();
    for (int r = 0; r < 16; ++r) std::memcpy(static_cast<unsigned char*>(base) + r * stride, tmm[T][r], 64);
  }
  template <int C, int A, int B>
  void dpbusd() {
    require_configuration();
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        int32_t acc;
        std::memcpy(&acc, &tmm[C][m][4 * n], 4);
        for (int k = 0; k < 16; ++k)
          for (int i = 0; i < 4; ++i)
            acc += static_cast<int32_t>(tmm[A][m][4 * k + i]) *
                   static_cast<int32_t>(static_cast<int8_t>(tmm[B][k][4 * n + i]));
        std::memcpy(&tmm[C][m][4 * n], &acc, 4);
      }
  }
};

void gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
          const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  ModelTiles tiles;
  amx_impl::gemm(tiles, int8_gemm_avx512vnni(), rows, nv, kc, a, lda, b, comp, scale, c, ldc);
}

}  // namespace

Int8GemmFn int8_gemm_amx_model() {
  return &gemm;
}

}  // namespace nova::conv
