// The AMX back end of kernels/amx/gemm_tiles_template.hpp: the tile instructions themselves. Include
// only from kernels/amx/ files (compiled with -mamx-tile -mamx-int8 -mamx-bf16).
//
// The development and CI machines have no AMX; this mapping onto the instructions was checked on a
// borrowed Xeon with AMX (session 11: admitted, every conv test passed; docs/engine.md, "AMX"). The
// kernels built on it are still used only after amx_support.cpp has run them in a child of the
// process and found them right.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace nova::conv::amx_impl {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

inline TileConfig every_tile_full() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {  // every tile used: 16 rows x 64 bytes
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  return cfg;
}

// GCC's _tile_* macros paste their tile argument into the instruction text, so a template parameter
// cannot be passed to them: the instructions are written here with the tile number as an immediate
// operand (%c: printed bare), in the macros' AT&T operand order.
struct AmxTiles {
  void begin() {
    static const TileConfig cfg = every_tile_full();
    _tile_loadconfig(&cfg);  // per thread: the configuration is thread state
  }
  void end() { _tile_release(); }
  template <int T>
  void zero() {
    __asm__ volatile("tilezero %%tmm%c0" ::"i"(T));
  }
  template <int T>
  void load(const void* base, long stride) {
    __asm__ volatile("tileloadd (%0,%1,1), %%tmm%c2" ::"r"(base), "r"(stride), "i"(T) : "memory");
  }
  template <int T>
  void store(void* base, long stride) {
    __asm__ volatile("tilestored %%tmm%c2, (%0,%1,1)" ::"r"(base), "r"(stride), "i"(T) : "memory");
  }
  // C += A (unsigned bytes, the V codes) . B (signed bytes, U): TDPBUSD tmm(C), tmm(A), tmm(B).
  template <int C, int A, int B>
  void dpbusd() {
    __asm__ volatile("tdpbusd %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
  // C += A . B on bf16 pairs, FP32 sums: TDPBF16PS tmm(C), tmm(A), tmm(B).
  template <int C, int A, int B>
  void dpbf16ps() {
    __asm__ volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
};

}  // namespace nova::conv::amx_impl
