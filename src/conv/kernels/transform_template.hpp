// The 2D tile transforms, written once over a 16-lane vector type V and a 1D operator Op (generated
// straight-line code, or the generic run-time matrix), instantiated by each ISA file (see
// gemm_template.hpp for why only there). Z = B^T D B is two passes of the 1D operator: over columns,
// then over rows; Y = A^T M A likewise. Every lane is one channel.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernel_table.hpp"
#include "tile_transforms_generated.hpp"

namespace nova::conv::kernels_impl {

// Makes x opaque to the optimizer from here on. The unrolled tile loops address n^2 elements and n^2
// positions of V: left alone, GCC precomputed every one of those addresses ahead of the loop and, short
// of registers, kept them in vector registers and on the stack (vmovq back before each use).
template <class T>
[[gnu::always_inline]] inline void opaque(T& x) {
  asm("" : "+r"(x));
}

// Position a of channel block cb of V (16 elements of block cb at dst + cb*16 + a*pos_stride) for the
// stores of input_tiles_by, which come in order a = 0, 1, ... for each block: a running pointer, opaque
// at each step, instead of n^2 precomputed addresses.
template <class T>
struct PositionCursor {
  T* dst;
  std::size_t pos_stride;
  T* o = nullptr;
  [[gnu::always_inline]] T* next(int cb, int a) {
    if (a == 0) o = dst + static_cast<std::size_t>(cb) * 16;
    opaque(o);
    T* at = o;
    o += pos_stride;
    return at;
  }
};

// Generic 1D operators over the coefficients of a GenericCoeffs (zeros skipped).
template <class V>
struct GenericOp {
  const GenericCoeffs* c;
  void bt(const V* x, int xs, V* y, int ys) const {
    for (int p = 0; p < c->n; ++p) {
      V acc = V::zero();
      for (int t = 0; t < c->bt_nnz[p]; ++t) {
        const int j = c->bt_idx[p][t];
        acc = V::fmac(x[j * xs], c->bt[p * c->n + j], acc);
      }
      y[p * ys] = acc;
    }
  }
  void at(const V* x, int xs, V* y, int ys) const {
    for (int i = 0; i < c->m; ++i) {
      V acc = V::zero();
      for (int t = 0; t < c->at_nnz[i]; ++t) {
        const int j = c->at_idx[i][t];
        acc = V::fmac(x[j * xs], c->at[i * c->n + j], acc);
      }
      y[i * ys] = acc;
    }
  }
};

// Generated 1D operators: Gen is generated::TileK<V>. Always inlined, as Gen's functions are: with only
// those inlined, GCC 12 called these out of line instead (the F(7,3) output transform took 1.4 times as
// long).
template <class V, class Gen>
struct GeneratedOp {
  [[gnu::always_inline]] static void bt(const V* x, int xs, V* y, int ys) { Gen::bt(x, xs, y, ys); }
  [[gnu::always_inline]] static void at(const V* x, int xs, V* y, int ys) { Gen::at(x, xs, y, ys); }
};

// Z = B^T D B of every channel block of one tile; store(cb, a, z) takes position a of block cb.
// Always inlined into its caller, so that what the store captures by reference (the int8 range, the
// destination) are the caller's own locals: called out of line, every byte store of the int8 form
// (uint8_t aliases everything) made the compiler reload the captures and keep the running range in
// memory, a store-to-load chain through every value of the tile.
// load(p) gives the 16 lanes of an element of the tile: V::load of floats, or int8 codes widened and
// scaled in registers (input_tiles_int8_codes).
// The two passes over element (i, j) of channel block cb given by element(cb, i, j).
template <class V, int N, class Op, class Element, class Store>
[[gnu::always_inline]] inline void input_tiles_by(const Op& op, int n, int cbs, Element&& element,
                                                  Store&& store) {
  // Only t lives across the two passes: each column is transformed as it is loaded and each row of z
  // stored as it is computed (whole n x n arrays of d and z as well went through the stack).
  V t[N * N];
  for (int cb = 0; cb < cbs; ++cb) {
    for (int j = 0; j < n; ++j) {  // columns: t = B^T d
      V column[N];
      for (int i = 0; i < n; ++i) column[i] = element(cb, i, j);
      op.bt(column, 1, t + j, n);
    }
    for (int p = 0; p < n; ++p) {  // rows: z = t B
      V row[N];
      op.bt(t + p * n, 1, row, 1);
      for (int q = 0; q < n; ++q) store(cb, p * n + q, row[q]);
    }
  }
}

template <class V, int N, class Op, class Src, class Load, class Store>
[[gnu::always_inline]] inline void input_tiles_loaded(const Op& op, int n, const Src* src, std::ptrdiff_t sy,
                                                      std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs,
                                                      Load&& load, Store&& store) {
  input_tiles_by<V, N>(
      op, n, cbs,
      [&](int cb, int i, int j) {
        const Src* row = src + cb * scb + i * sy;
        opaque(row);
        return load(row + j * sx);
      },
      std::forward<Store>(store));
}

template <class V, int N, class Op, class Store>
[[gnu::always_inline]] inline void input_tiles_with(const Op& op, int n, const float* src, std::ptrdiff_t sy,
                                                    std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs,
                                                    Store&& store) {
  input_tiles_loaded<V, N>(
      op, n, src, sy, sx, scb, cbs, [](const float* p) { return V::load(p); }, std::forward<Store>(store));
}

// How V is stored: as floats, fp16 bits (V::store_fp16), bf16 bits (V::store_bf16; kBf16Hw:
// V::store_bf16_hw, vcvtneps2bf16, in files compiled with AVX512-BF16), or bf16 or fp16 values kept in
// floats (V::store_bf16_rounded, V::store_fp16_rounded).
enum class VStore { kFloat, kFp16, kBf16, kBf16Rounded, kBf16Hw, kFp16Rounded };
// Whether a store keeps V as floats (the widened GEMMs' operand).
constexpr bool stores_floats(VStore s) {
  return s == VStore::kFloat || s == VStore::kBf16Rounded || s == VStore::kFp16Rounded;
}

template <class V, VStore S, class T>
[[gnu::always_inline]] inline void store_v(T* o, V z) {
  static_assert(std::is_same_v<T, float> == stores_floats(S));
  if constexpr (S == VStore::kFloat)
    V::store(o, z);
  else if constexpr (S == VStore::kFp16)
    V::store_fp16(o, z);
  else if constexpr (S == VStore::kBf16)
    V::store_bf16(o, z);
  else if constexpr (S == VStore::kBf16Hw)
    V::store_bf16_hw(o, z);
  else if constexpr (S == VStore::kFp16Rounded)
    V::store_fp16_rounded(o, z);
  else
    V::store_bf16_rounded(o, z);
}

// The store(cb, a, z) of input_tiles_by that stores each position of V as S at dst, through a
// PositionCursor.
template <class V, VStore S, class T>
[[gnu::always_inline]] inline auto position_stores(T* dst, std::size_t pos_stride) {
  return [cursor = PositionCursor<T>{dst, pos_stride}](int cb, int a, V z) mutable {
    store_v<V, S>(cursor.next(cb, a), z);
  };
}

// A window at the image's edge read from the tensor itself (InputTileEdgeFn): element (i, j) of block
// cb at tensor + origin + cb*scb + i*sy + j*sx where window.r0 <= i < window.r1 and window.c0 <= j <
// window.c1, a zero of the padding elsewhere (not read: its offset may lie outside the tensor). The
// values a staged copy with its zeros would hold, so the same bits.
template <class V, int N, class Op>
inline void input_tiles_edge(const Op& op, int n, const float* tensor, std::ptrdiff_t origin,
                             std::ptrdiff_t sy, std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs,
                             EdgeWindow window, float* dst, std::size_t pos_stride) {
  input_tiles_by<V, N>(
      op, n, cbs,
      [&](int cb, int i, int j) {
        if (i < window.r0 || i >= window.r1 || j < window.c0 || j >= window.c1) return V::zero();
        return V::load(tensor + (origin + cb * scb + i * sy + j * sx));
      },
      position_stores<V, VStore::kFloat>(dst, pos_stride));
}

template <class V, int N, VStore S = VStore::kFloat, class Op, class T>
inline void input_tiles(const Op& op, int n, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                        std::ptrdiff_t scb, int cbs, T* dst, std::size_t pos_stride) {
  input_tiles_with<V, N>(op, n, src, sy, sx, scb, cbs, position_stores<V, S>(dst, pos_stride));
}

// The 16-bit tensor element types a transform can read in place (InputTileFloatsFromWordsFn,
// InputTileWordsFromWordsFn).
enum class WordSource { kBf16, kFp16 };
template <class V, WordSource W>
[[gnu::always_inline]] inline V load_word_source(const uint16_t* p) {
  if constexpr (W == WordSource::kBf16)
    return V::load_bf16(p);
  else
    return V::load_fp16(p);
}

// As input_tiles from a bf16 or fp16 tensor's own elements, widened in registers (the widening's bits).
template <class V, int N, VStore S, WordSource W, class Op, class T>
inline void input_tiles_from_words(const Op& op, int n, const uint16_t* src, std::ptrdiff_t sy,
                                   std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, T* dst,
                                   std::size_t pos_stride) {
  input_tiles_loaded<V, N>(
      op, n, src, sy, sx, scb, cbs, [](const uint16_t* p) { return load_word_source<V, W>(p); },
      position_stores<V, S>(dst, pos_stride));
}

// V quantized in registers to the int8 GEMM's operand (InputTileInt8Fn). Where V has a fast unchecked
// store (V::Int8Range), the tile is quantized with it first and again with the exact store only when
// some value falls outside what the fast one handles (saturation, NaN/Inf): rare, and the same bits.
// In two steps: clang 14 rejects a requires-expression whose parameter names a type V lacks, where the
// standard (and GCC) make it false.
template <class V>
concept HasInt8Range = requires { typename V::Int8Range; };
template <class V>
consteval bool has_int8_fast_store() {
  if constexpr (HasInt8Range<V>)
    return requires(uint8_t* p, V x, typename V::Int8Range& r) { V::store_int8_unchecked(p, x, 1.0f, r); };
  else
    return false;
}
template <class V>
inline constexpr bool kHasInt8FastStore = has_int8_fast_store<V>();

template <class V, int N, class Op, class Src, class Load>
[[gnu::always_inline]] inline int64_t input_tiles_int8_loaded(const Op& op, int n, const Src* src,
                                                              std::ptrdiff_t sy, std::ptrdiff_t sx,
                                                              std::ptrdiff_t scb, int cbs, uint8_t* dst,
                                                              std::size_t pos_stride, const float* inv,
                                                              int* bad, Load&& load) {
  if constexpr (kHasInt8FastStore<V>) {
    typename V::Int8Range range;
    PositionCursor<uint8_t> at{dst, pos_stride};
    input_tiles_loaded<V, N>(op, n, src, sy, sx, scb, cbs, load, [&](int cb, int a, V z) {
      V::store_int8_unchecked(at.next(cb, a), z, inv[a], range);
    });
    if (V::int8_in_range(range)) return 0;
  }
  typename V::Int8Tally tally;
  PositionCursor<uint8_t> at{dst, pos_stride};
  input_tiles_loaded<V, N>(op, n, src, sy, sx, scb, cbs, load,
                           [&](int cb, int a, V z) { V::store_int8(at.next(cb, a), z, inv[a], tally); });
  return V::int8_result(tally, bad);
}

template <class V, int N, class Op>
inline int64_t input_tiles_int8(const Op& op, int n, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                std::ptrdiff_t scb, int cbs, uint8_t* dst, std::size_t pos_stride,
                                const float* inv, int* bad) {
  return input_tiles_int8_loaded<V, N>(op, n, src, sy, sx, scb, cbs, dst, pos_stride, inv, bad,
                                       [](const float* p) { return V::load(p); });
}

// As input_tiles_int8, from an int8 tensor read in place (InputTileInt8CodesFn): each element widened
// and scaled in registers (V::load_int8_scaled, the widening's operations and bits) instead of through
// a staged FP32 copy.
template <class V, int N, class Op>
inline int64_t input_tiles_int8_codes(const Op& op, int n, const int8_t* src, std::ptrdiff_t sy,
                                      std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, uint8_t* dst,
                                      std::size_t pos_stride, const float* inv, float scale, int* bad) {
  const V s = V::broadcast(scale);
  return input_tiles_int8_loaded<V, N>(op, n, src, sy, sx, scb, cbs, dst, pos_stride, inv, bad,
                                       [s](const int8_t* p) { return V::load_int8_scaled(p, s); });
}

// V' of the int8-spatial path as int16 (InputTileInt16Fn).
template <class V, int N, class Op>
inline void input_tiles_int16(const Op& op, int n, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                              std::ptrdiff_t scb, int cbs, int16_t* dst, std::size_t pos_stride, int* bad) {
  unsigned not_ok = 0;
  PositionCursor<int16_t> at{dst, pos_stride};
  input_tiles_with<V, N>(op, n, src, sy, sx, scb, cbs,
                         [&](int cb, int a, V z) { not_ok |= V::store_int16(at.next(cb, a), z); });
  if (not_ok != 0) *bad = 1;
}

// Largest finite |V| per position and lane (InputTileAmaxFn).
template <class V, int N, class Op>
inline void input_tiles_amax(const Op& op, int n, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                             std::ptrdiff_t scb, int cbs, float* lane_max) {
  input_tiles_with<V, N>(op, n, src, sy, sx, scb, cbs, [&](int, int a, V z) {
    V::amax_into(lane_max + static_cast<std::size_t>(a) * 16, z);
  });
}

// As input_tiles_amax from an int8 tensor's codes (InputTileAmaxCodesFn), widened in registers.
template <class V, int N, class Op>
inline void input_tiles_amax_codes(const Op& op, int n, const int8_t* src, std::ptrdiff_t sy,
                                   std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, float scale,
                                   float* lane_max) {
  const V s = V::broadcast(scale);
  input_tiles_loaded<V, N>(
      op, n, src, sy, sx, scb, cbs, [s](const int8_t* p) { return V::load_int8_scaled(p, s); },
      [&](int, int a, V z) { V::amax_into(lane_max + static_cast<std::size_t>(a) * 16, z); });
}

// Output (i, j) of a tile whose 16 channels of a pixel lie together and whose rows are dst_row pixels
// apart (the output transforms' destinations).
template <class T>
[[gnu::always_inline]] inline T* tile_pixel(T* dst, std::size_t dst_row, int i, int j) {
  return dst + (static_cast<std::size_t>(i) * dst_row + static_cast<std::size_t>(j)) * 16;
}

// Y = A^T M A + bias (ReLU) of one tile; store(i, j, y) takes output (i, j).
template <class V, int N, int M, class Op, class Store>
[[gnu::always_inline]] inline void output_tile_with(const Op& op, int n, int m, const float* src,
                                                    std::size_t pos_stride, const float* bias16, bool relu,
                                                    Store&& store) {
  // As the input tiles: only t lives across the passes (columns transformed as loaded, rows stored
  // as computed).
  V t[M * N];
  const std::size_t row_step = static_cast<std::size_t>(n) * pos_stride;
  for (int j = 0; j < n; ++j) {  // t (m x n) = A^T x
    V column[N];
    const float* x = src + static_cast<std::size_t>(j) * pos_stride;  // position (i, j), i in order
    for (int i = 0; i < n; ++i) {
      opaque(x);
      column[i] = V::load(x);
      x += row_step;
    }
    op.at(column, 1, t + j, n);
  }
  const V b = V::load(bias16);
  for (int i = 0; i < m; ++i) {  // y (m x m) = t A
    V row[M];
    op.at(t + i * n, 1, row, 1);
    for (int j = 0; j < m; ++j) {
      V v = V::add(row[j], b);
      if (relu) v = V::relu(v);
      store(i, j, v);
    }
  }
}

template <class V, int N, int M, class Op>
inline void output_tile(const Op& op, int n, int m, const float* src, std::size_t pos_stride,
                        const float* bias16, bool relu, float* dst, std::size_t dst_row) {
  output_tile_with<V, N, M>(op, n, m, src, pos_stride, bias16, relu,
                            [&](int i, int j, V v) { V::store(tile_pixel(dst, dst_row, i, j), v); });
}

// As output_tile, and whether some stored value's |y| reaches `limit` or is NaN (OutputTileReachingFn):
// the largest magnitude tracked in registers (V::AbsBitsMax) instead of a pass over the stored tile.
// In two steps, as has_int8_fast_store (clang 14).
template <class V>
concept HasAbsBitsMaxType = requires {
  typename V::AbsBitsMax;
};
template <class V>
consteval bool has_abs_bits_max() {
  if constexpr (HasAbsBitsMaxType<V>) return requires(V x, typename V::AbsBitsMax & t) {
      V::abs_bits_max(t, x);
      { V::abs_bits_reach(t, 1.0f) } -> std::same_as<bool>;
    };
  else
    return false;
}
template <class V>
inline constexpr bool kHasAbsBitsMax = has_abs_bits_max<V>();

// Output tiles into a bf16 tensor (OutputTileBf16Fn, output_tile_reaching below): each result narrowed by
// V::store_bf16_out, ConvertTable's bf16 narrowing, and whether some |y| reaches `limit` or is NaN (the
// caller then counts the tile's results from an FP32 copy).
template <class V>
inline constexpr bool kHasBf16OutStore = requires(uint16_t* p, V x) {
  V::store_bf16_out(p, x);
};

// As output_tile, the results narrowed to int8 codes as they are stored (OutputTileInt8Fn) by
// V::Int8OutNarrow, ConvertTable's int8 narrowing of the ISA, with its counts.
template <class V>
concept HasInt8OutNarrow = requires {
  typename V::Int8OutNarrow;
};

template <class V, int N, int M, class Op>
inline void output_tile_int8(const Op& op, int n, int m, const float* src, std::size_t pos_stride,
                             const float* bias16, bool relu, int8_t* dst, std::size_t dst_row,
                             float inv_scale, NarrowCounts* counts) {
  typename V::Int8OutNarrow narrow(inv_scale);
  output_tile_with<V, N, M>(op, n, m, src, pos_stride, bias16, relu, [&](int i, int j, V v) {
    V::store_int8_out(tile_pixel(dst, dst_row, i, j), v, narrow);
  });
  counts->saturated += narrow.saturated();
  counts->nonfinite += narrow.nonfinite();
}

// Stored as floats (OutputTileReachingFn) or as bf16 bits (OutputTileBf16Fn).
template <class V, int N, int M, class Op, class T>
inline bool output_tile_reaching(const Op& op, int n, int m, const float* src, std::size_t pos_stride,
                                 const float* bias16, bool relu, T* dst, std::size_t dst_row, float limit) {
  typename V::AbsBitsMax largest;
  output_tile_with<V, N, M>(op, n, m, src, pos_stride, bias16, relu, [&](int i, int j, V v) {
    T* o = tile_pixel(dst, dst_row, i, j);
    if constexpr (std::is_same_v<T, float>)
      V::store(o, v);
    else
      V::store_bf16_out(o, v);
    V::abs_bits_max(largest, v);
  });
  return V::abs_bits_reach(largest, limit);
}

// V's element type for a store: floats (stores_floats) or 16-bit words.
template <VStore S>
using VStoreElement = std::conditional_t<stores_floats(S), float, uint16_t>;

template <class V, class Gen, VStore S = VStore::kFloat>
void generated_input(const void*, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx, std::ptrdiff_t scb,
                     int cbs, VStoreElement<S>* dst, std::size_t pos_stride) {
  input_tiles<V, Gen::n, S>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, dst, pos_stride);
}

template <class V, class Gen, VStore S, WordSource W>
void generated_input_from_words(const void*, const uint16_t* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                std::ptrdiff_t scb, int cbs, VStoreElement<S>* dst, std::size_t pos_stride) {
  input_tiles_from_words<V, Gen::n, S, W>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, dst,
                                          pos_stride);
}

template <class V, class Gen>
int64_t generated_input_int8(const void*, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                             std::ptrdiff_t scb, int cbs, uint8_t* dst, std::size_t pos_stride,
                             const float* inv, int* bad) {
  return input_tiles_int8<V, Gen::n>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, dst, pos_stride,
                                     inv, bad);
}

template <class V, class Gen>
void generated_input_edge(const void*, const float* tensor, std::ptrdiff_t origin, std::ptrdiff_t sy,
                          std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, EdgeWindow window, float* dst,
                          std::size_t pos_stride) {
  input_tiles_edge<V, Gen::n>(GeneratedOp<V, Gen>{}, Gen::n, tensor, origin, sy, sx, scb, cbs, window, dst,
                              pos_stride);
}

template <class V, class Gen>
int64_t generated_input_int8_codes(const void*, const int8_t* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                   std::ptrdiff_t scb, int cbs, uint8_t* dst, std::size_t pos_stride,
                                   const float* inv, float scale, int* bad) {
  return input_tiles_int8_codes<V, Gen::n>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, dst,
                                           pos_stride, inv, scale, bad);
}

template <class V, class Gen>
void generated_input_int16(const void*, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                           std::ptrdiff_t scb, int cbs, int16_t* dst, std::size_t pos_stride, int* bad) {
  input_tiles_int16<V, Gen::n>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, dst, pos_stride, bad);
}

template <class V, class Gen>
void generated_input_amax(const void*, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                          std::ptrdiff_t scb, int cbs, float* lane_max) {
  input_tiles_amax<V, Gen::n>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, lane_max);
}

template <class V, class Gen>
void generated_input_amax_codes(const void*, const int8_t* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                std::ptrdiff_t scb, int cbs, float scale, float* lane_max) {
  input_tiles_amax_codes<V, Gen::n>(GeneratedOp<V, Gen>{}, Gen::n, src, sy, sx, scb, cbs, scale, lane_max);
}

template <class V, class Gen>
void generated_output(const void*, const float* src, std::size_t pos_stride, const float* bias16, bool relu,
                      float* dst, std::size_t dst_row) {
  output_tile<V, Gen::n, Gen::m>(GeneratedOp<V, Gen>{}, Gen::n, Gen::m, src, pos_stride, bias16, relu, dst,
                                 dst_row);
}

// T = float: OutputTileReachingFn; uint16_t: OutputTileBf16Fn.
template <class V, class Gen, class T>
bool generated_output_reaching(const void*, const float* src, std::size_t pos_stride, const float* bias16,
                               bool relu, T* dst, std::size_t dst_row, float limit) {
  return output_tile_reaching<V, Gen::n, Gen::m>(GeneratedOp<V, Gen>{}, Gen::n, Gen::m, src, pos_stride,
                                                 bias16, relu, dst, dst_row, limit);
}

template <class V, class Gen>
void generated_output_int8(const void*, const float* src, std::size_t pos_stride, const float* bias16,
                           bool relu, int8_t* dst, std::size_t dst_row, float inv_scale,
                           NarrowCounts* counts) {
  output_tile_int8<V, Gen::n, Gen::m>(GeneratedOp<V, Gen>{}, Gen::n, Gen::m, src, pos_stride, bias16, relu,
                                      dst, dst_row, inv_scale, counts);
}

// The generated FP32 transforms over a half-width vector type H (8 lanes): each channel block's two
// halves in turn, for ISAs whose 16-lane type takes two registers per value (make_transform_table<V, H>).
template <class H, class Gen>
void generated_input_halves(const void*, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                            std::ptrdiff_t scb, int cbs, float* dst, std::size_t pos_stride) {
  for (int cb = 0; cb < cbs; ++cb)
    for (int h = 0; h < 2; ++h)
      input_tiles<H, Gen::n>(GeneratedOp<H, Gen>{}, Gen::n, src + cb * scb + 8 * h, sy, sx, scb, 1,
                             dst + static_cast<std::size_t>(cb) * 16 + 8 * h, pos_stride);
}

template <class H, class Gen>
void generated_output_halves(const void*, const float* src, std::size_t pos_stride, const float* bias16,
                             bool relu, float* dst, std::size_t dst_row) {
  for (int h = 0; h < 2; ++h)
    output_tile<H, Gen::n, Gen::m>(GeneratedOp<H, Gen>{}, Gen::n, Gen::m, src + 8 * h, pos_stride,
                                   bias16 + 8 * h, relu, dst + 8 * h, dst_row);
}

template <class V, VStore S = VStore::kFloat>
void generic_input(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                   std::ptrdiff_t scb, int cbs, VStoreElement<S>* dst, std::size_t pos_stride) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  input_tiles<V, kMaxGenericN, S>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, dst, pos_stride);
}

template <class V, VStore S, WordSource W>
void generic_input_from_words(const void* ctx, const uint16_t* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                              std::ptrdiff_t scb, int cbs, VStoreElement<S>* dst, std::size_t pos_stride) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  input_tiles_from_words<V, kMaxGenericN, S, W>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, dst,
                                                pos_stride);
}

template <class V>
int64_t generic_input_int8(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                           std::ptrdiff_t scb, int cbs, uint8_t* dst, std::size_t pos_stride,
                           const float* inv, int* bad) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  return input_tiles_int8<V, kMaxGenericN>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, dst, pos_stride, inv,
                                           bad);
}

// T = float: OutputTileReachingFn; uint16_t: OutputTileBf16Fn.
template <class V, class T>
bool generic_output_reaching(const void* ctx, const float* src, std::size_t pos_stride, const float* bias16,
                             bool relu, T* dst, std::size_t dst_row, float limit) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  return output_tile_reaching<V, kMaxGenericN, kMaxGenericN>(GenericOp<V>{c}, c->n, c->m, src, pos_stride,
                                                             bias16, relu, dst, dst_row, limit);
}

template <class V>
void generic_input_edge(const void* ctx, const float* tensor, std::ptrdiff_t origin, std::ptrdiff_t sy,
                        std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, EdgeWindow window, float* dst,
                        std::size_t pos_stride) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  input_tiles_edge<V, kMaxGenericN>(GenericOp<V>{c}, c->n, tensor, origin, sy, sx, scb, cbs, window, dst,
                                    pos_stride);
}

template <class V>
void generic_output_int8(const void* ctx, const float* src, std::size_t pos_stride, const float* bias16,
                         bool relu, int8_t* dst, std::size_t dst_row, float inv_scale, NarrowCounts* counts) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  output_tile_int8<V, kMaxGenericN, kMaxGenericN>(GenericOp<V>{c}, c->n, c->m, src, pos_stride, bias16, relu,
                                                  dst, dst_row, inv_scale, counts);
}

template <class V>
int64_t generic_input_int8_codes(const void* ctx, const int8_t* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                 std::ptrdiff_t scb, int cbs, uint8_t* dst, std::size_t pos_stride,
                                 const float* inv, float scale, int* bad) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  return input_tiles_int8_codes<V, kMaxGenericN>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, dst,
                                                 pos_stride, inv, scale, bad);
}

template <class V>
void generic_input_int16(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                         std::ptrdiff_t scb, int cbs, int16_t* dst, std::size_t pos_stride, int* bad) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  input_tiles_int16<V, kMaxGenericN>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, dst, pos_stride, bad);
}

template <class V>
void generic_input_amax(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                        std::ptrdiff_t scb, int cbs, float* lane_max) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  input_tiles_amax<V, kMaxGenericN>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, lane_max);
}

template <class V>
void generic_input_amax_codes(const void* ctx, const int8_t* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                              std::ptrdiff_t scb, int cbs, float scale, float* lane_max) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  input_tiles_amax_codes<V, kMaxGenericN>(GenericOp<V>{c}, c->n, src, sy, sx, scb, cbs, scale, lane_max);
}

template <class V>
void generic_output(const void* ctx, const float* src, std::size_t pos_stride, const float* bias16, bool relu,
                    float* dst, std::size_t dst_row) {
  const auto* c = static_cast<const GenericCoeffs*>(ctx);
  output_tile<V, kMaxGenericN, kMaxGenericN>(GenericOp<V>{c}, c->n, c->m, src, pos_stride, bias16, relu, dst,
                                             dst_row);
}

// The transform table of one ISA: the generated code of every default transform and the generic path,
// all over the ISA's vector type V (called once per ISA file, which keeps its own flags).
template <class V>
inline constexpr bool kHasFp16Store = requires(uint16_t* p, V x) {
  V::store_fp16(p, x);
};
template <class V>
inline constexpr bool kHasBf16Store = requires(uint16_t* p, float* f, V x) {
  V::store_bf16(p, x);
  V::store_bf16_rounded(f, x);
};
template <class V>
inline constexpr bool kHasFp16RoundedStore = requires(float* f, V x) {
  V::store_fp16_rounded(f, x);
};
template <class V>
inline constexpr bool kHasInt16Store = requires(int16_t* p, V x) {
  V::store_int16(p, x);
};
template <class V>
inline constexpr bool kHasInt8Store = requires(uint8_t* p, V x, typename V::Int8Tally& t) {
  V::store_int8(p, x, 1.0f, t);
};
template <class V>
inline constexpr bool kHasWordLoads = requires(const uint16_t* p) {
  { V::load_bf16(p) } -> std::same_as<V>;
  { V::load_fp16(p) } -> std::same_as<V>;
};

// The transforms from bf16 and fp16 tensors' own elements into each V store the plans use (TileFns).
template <class V, class Ops>
void set_word_source_fns(TileFns& f) {
  if constexpr (kHasWordLoads<V>) {
    using W = WordSource;
    f.floats_from_bf16 = Ops::template fn<VStore::kFloat, W::kBf16>();
    f.floats_from_fp16 = Ops::template fn<VStore::kFloat, W::kFp16>();
    if constexpr (kHasBf16Store<V>) {
      f.words_from_bf16 = Ops::template fn<VStore::kBf16, W::kBf16>();
      f.rounded_from_bf16 = Ops::template fn<VStore::kBf16Rounded, W::kBf16>();
    }
    if constexpr (kHasFp16Store<V>) f.words_from_fp16 = Ops::template fn<VStore::kFp16, W::kFp16>();
    if constexpr (kHasFp16RoundedStore<V>)
      f.rounded_from_fp16 = Ops::template fn<VStore::kFp16Rounded, W::kFp16>();
  }
}
template <class V, class Gen>
struct GeneratedFromWords {
  template <VStore S, WordSource W>
  static constexpr auto fn() {
    return &generated_input_from_words<V, Gen, S, W>;
  }
};
template <class V>
struct GenericFromWords {
  template <VStore S, WordSource W>
  static constexpr auto fn() {
    return &generic_input_from_words<V, S, W>;
  }
};

template <class V>
inline constexpr bool kHasInt8CodesLoad = kHasInt8Store<V>&& requires(const int8_t* p, V s) {
  { V::load_int8_scaled(p, s) } -> std::same_as<V>;
};

template <class V, class Gen, class H = void, class GenH = void>
TileFns generated_fns() {
  TileFns f{&generated_input<V, Gen>, &generated_output<V, Gen>};
  if constexpr (!std::is_void_v<H>) {
    f.input = &generated_input_halves<H, GenH>;
    f.output = &generated_output_halves<H, GenH>;
  } else {
    f.input_edge = &generated_input_edge<V, Gen>;  // the same arithmetic as input (no halves)
  }
  if constexpr (kHasFp16Store<V>) f.input_fp16 = &generated_input<V, Gen, VStore::kFp16>;
  if constexpr (kHasBf16Store<V>) {
    f.input_bf16 = &generated_input<V, Gen, VStore::kBf16>;
    f.input_bf16_round = &generated_input<V, Gen, VStore::kBf16Rounded>;
  }
  if constexpr (kHasFp16RoundedStore<V>) f.input_fp16_round = &generated_input<V, Gen, VStore::kFp16Rounded>;
  if constexpr (kHasInt8Store<V>) f.input_int8 = &generated_input_int8<V, Gen>;
  if constexpr (kHasInt8CodesLoad<V>) {
    f.input_int8_codes = &generated_input_int8_codes<V, Gen>;
    f.input_amax_codes = &generated_input_amax_codes<V, Gen>;
  }
  if constexpr (kHasAbsBitsMax<V>) f.output_reaching = &generated_output_reaching<V, Gen, float>;
  if constexpr (HasInt8OutNarrow<V>) f.output_int8 = &generated_output_int8<V, Gen>;
  if constexpr (kHasBf16OutStore<V> && kHasAbsBitsMax<V>)
    f.output_bf16 = &generated_output_reaching<V, Gen, uint16_t>;
  set_word_source_fns<V, GeneratedFromWords<V, Gen>>(f);
  if constexpr (kHasInt16Store<V>) f.input_int16 = &generated_input_int16<V, Gen>;
  f.input_amax = &generated_input_amax<V, Gen>;
  return f;
}

template <class V, class H = void>
TransformTable make_transform_table() {
  // H = void: no half type (GenH is then Tile<V>, unused).
  using HV = std::conditional_t<std::is_void_v<H>, V, H>;
#define NOVA_GEN_ENTRY(i) generated_fns<V, generated::Tile##i<V>, H, generated::Tile##i<HV>>(),
  static const TileFns kGenerated[] = {NOVA_FOR_EACH_GENERATED_TILE(NOVA_GEN_ENTRY)};
#undef NOVA_GEN_ENTRY
  TransformTable t;
  t.generated = kGenerated;
  t.generated_count = generated::kGeneratedCount;
  // The generic path keeps V: its operators loop over coefficient tables, whose loads and indices the
  // halves would repeat (F(7,3) on 1x128x28x28, one thread: input 0.17 -> 0.25 ms, output 0.13 -> 0.19).
  t.generic = TileFns{&generic_input<V>, &generic_output<V>};
  t.generic.input_edge = &generic_input_edge<V>;
  if constexpr (kHasFp16Store<V>) t.generic.input_fp16 = &generic_input<V, VStore::kFp16>;
  if constexpr (kHasBf16Store<V>) {
    t.generic.input_bf16 = &generic_input<V, VStore::kBf16>;
    t.generic.input_bf16_round = &generic_input<V, VStore::kBf16Rounded>;
  }
  if constexpr (kHasFp16RoundedStore<V>) t.generic.input_fp16_round = &generic_input<V, VStore::kFp16Rounded>;
  if constexpr (kHasInt8Store<V>) t.generic.input_int8 = &generic_input_int8<V>;
  if constexpr (kHasInt8CodesLoad<V>) {
    t.generic.input_int8_codes = &generic_input_int8_codes<V>;
    t.generic.input_amax_codes = &generic_input_amax_codes<V>;
  }
  if constexpr (kHasAbsBitsMax<V>) t.generic.output_reaching = &generic_output_reaching<V, float>;
  if constexpr (HasInt8OutNarrow<V>) t.generic.output_int8 = &generic_output_int8<V>;
  if constexpr (kHasBf16OutStore<V> && kHasAbsBitsMax<V>)
    t.generic.output_bf16 = &generic_output_reaching<V, uint16_t>;
  set_word_source_fns<V, GenericFromWords<V>>(t.generic);
  if constexpr (kHasInt16Store<V>) t.generic.input_int16 = &generic_input_int16<V>;
  t.generic.input_amax = &generic_input_amax<V>;
  return t;
}

}  // namespace nova::conv::kernels_impl
