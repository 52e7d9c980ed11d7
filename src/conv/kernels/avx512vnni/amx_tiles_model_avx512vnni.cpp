// The AMX GEMMs (kernels/amx/gemm_tiles_template.hpp) over a scalar model of the tile instructions, as
// the Intel SDM defines them for palette 1: TILELOADD copies `rows` rows of `colsb` bytes from
// base + r*stride, TILEZERO clears, TILESTORED writes the rows back; TDPBUSD adds to C[m][n] (int32)
// the products of the unsigned bytes A[m][4k+i] and the signed bytes B[k][4n+i] for k < colsb(A)/4,
// i < 4; TDPBF16PS adds to C[m][n] (FP32), for k in order, the bf16 products A[m][2k]*B[k][2n], then
// A[m][2k+1]*B[k][2n+1], each rounded once (RNE), bf16 subnormals read as zero, FP32 subnormal results
// flushed (the SDM's pseudocode; hardware may sum in another order, which is why the bf16 AMX kernel is
// admitted by an error bound, not by bits). Tests run the kernels on this model on machines without
// AMX, which checks everything of them but their mapping onto the instructions. Not used by the engine.
#include <cstring>

#include "../amx/gemm_tiles_template.hpp"

namespace nova::conv {

namespace {

// A tile instruction outside begin()/end() (no configuration loaded: #UD on the hardware) poisons
// every tile, so that the checks comparing these kernels with their references fail.
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
  // C[m][n] = step(m, n, C[m][n]) for every element of tile C (32-bit elements of type T).
  template <class T, int C, class Step>
  void update_c(const Step& step) {
    require_configuration();
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        T acc;
        std::memcpy(&acc, &tmm[C][m][4 * n], 4);
        acc = step(m, n, acc);
        std::memcpy(&tmm[C][m][4 * n], &acc, 4);
      }
  }
  template <int C, int A, int B>
  void dpbusd() {
    update_c<int32_t, C>([&](int m, int n, int32_t acc) {
      for (int k = 0; k < 16; ++k)
        for (int i = 0; i < 4; ++i)
          acc += static_cast<int32_t>(tmm[A][m][4 * k + i]) *
                 static_cast<int32_t>(static_cast<int8_t>(tmm[B][k][4 * n + i]));
      return acc;
    });
  }
  uint16_t bf16_at(int t, int row, int element) const {
    uint16_t h;
    std::memcpy(&h, &tmm[t][row][2 * element], 2);
    return h;
  }
  template <int C, int A, int B>
  void dpbf16ps() {
    update_c<float, C>([&](int m, int n, float acc) {
      for (int k = 0; k < 16; ++k)
        for (int i = 0; i < 2; ++i)
          acc = bf16_dp_step(acc, bf16_daz(bf16_at(A, m, 2 * k + i)), bf16_daz(bf16_at(B, k, 2 * n + i)));
      return acc;
    });
  }
};

// The tiles of the calling thread's tile session (amx_model_session_begin/end), as the hardware keeps
// the tile state per thread: a kernel called in a session without a begin finds them unconfigured.
thread_local ModelTiles session_tiles;

template <bool Session>
void int8_gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
               const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  if constexpr (Session) {
    amx_impl::int8_gemm<true>(session_tiles, int8_gemm_avx512vnni(), rows, nv, kc, a, lda, b, comp, scale, c,
                              ldc);
  } else {
    ModelTiles tiles;
    amx_impl::int8_gemm<false>(tiles, int8_gemm_avx512vnni(), rows, nv, kc, a, lda, b, comp, scale, c, ldc);
  }
}

template <bool Session>
void bf16_gemm(int64_t rows, int nv, std::size_t kc, const uint16_t* a, std::size_t lda, const uint16_t* b,
               float* c, std::size_t ldc) {
  if constexpr (Session) {
    amx_impl::bf16_gemm<true>(session_tiles, bf16_gemm_avx512bf16(), rows, nv, kc, a, lda, b, c, ldc);
  } else {
    ModelTiles tiles;
    amx_impl::bf16_gemm<false>(tiles, bf16_gemm_avx512bf16(), rows, nv, kc, a, lda, b, c, ldc);
  }
}

}  // namespace

Int8GemmFn int8_gemm_amx_model() {
  return &int8_gemm<false>;
}

Bf16GemmFn bf16_gemm_amx_model() {
  return &bf16_gemm<false>;
}

Int8GemmFn int8_gemm_amx_model_in_session() {
  return &int8_gemm<true>;
}

Bf16GemmFn bf16_gemm_amx_model_in_session() {
  return &bf16_gemm<true>;
}

void amx_model_session_begin() {
  session_tiles.begin();
}

void amx_model_session_end() {
  session_tiles.end();
}

}  // namespace nova::conv
