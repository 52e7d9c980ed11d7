// INT8 GEMM on AMX tiles (TDPBUSD): kernels/amx/int8_gemm_tiles_template.hpp over the AMX intrinsics.
//
// NOT RUN ON ANY MACHINE OF THIS PROJECT: none has had AMX (docs/engine.md, "AMX"). The blocking,
// addressing and dequantization are shared with a scalar model of the tile instructions that the tests
// run against the VNNI kernel; what only AMX hardware can check is this file's mapping onto the
// intrinsics. The engine uses it only after `amx_int8_supported()` (amx_support.cpp) has run it beside
// the VNNI kernel in a child of the process and found the same bits.
#include "int8_gemm_tiles_template.hpp"

namespace nova::conv {

namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

TileConfig make_config() {
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
    static const TileConfig cfg = make_config();
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
};

void gemm(int64_t rows, int nv, std::size_t kc, const uint8_t* a, std::size_t lda, const int8_t* b,
          const int32_t* comp, const float* scale, float* c, std::size_t ldc) {
  static const Int8GemmFn vnni = int8_gemm_avx512vnni();
  AmxTiles tiles;
  amx_impl::gemm(tiles, vnni, rows, nv, kc, a, lda, b, comp, scale, c, ldc);
}

}  // namespace

Int8GemmFn int8_gemm_amx() {
  return &gemm;
}

}  // namespace nova::conv
