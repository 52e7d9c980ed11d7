// What each instruction-set path provides: GEMM micro-kernels and tile transforms, as function
// pointers, gathered per ISA by kernel_registry.cpp. The ISA files (kernels/<isa>/*_<isa>.cpp) are the
// only ones compiled with ISA flags; everything else calls through these tables after a cpuid check.
//
// Data layouts shared by all paths (16 channels per block on every ISA, so the layouts do not depend
// on the path):
//   GEMM:  C[i][j] = sum_k A[i*lda + k] * B[k*ldb + j], i < mr, j < 16*nv; B is a packed panel, ldb=16*nv.
//   Input tile: element (i, j) of channel block cb is 16 floats at src + cb*scb + i*sy + j*sx; position
//          a = p*n + q of the transformed tile goes to dst + a*pos_stride + cb*16.
//   Output tile: position a of 16 output channels at src + a*pos_stride; the m*m outputs (+bias, ReLU)
//          go to dst[(i*dst_row + j)*16 + lane] (dst_row >= m).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "nova/conv/conv.hpp"

namespace nova::conv {

inline constexpr int kLanes = 16;        // channels per block
inline constexpr int kMaxMR = 8;         // rows of the largest GEMM micro-kernel
inline constexpr int kMaxNV = 4;         // 16-float vectors per row of the widest micro-kernel
inline constexpr int kMaxGenericN = 16;  // largest n the generic tile path handles

using GemmFn = void (*)(std::size_t kc, const float* a, std::size_t lda, const float* b, std::size_t ldb,
                        float* c, std::size_t ldc);
// As GemmFn over rows of A given in nseg segments of seg_len values (row i of segment s at seg[s] + i*lda),
// the reduction k = s*seg_len + j in that order: the bits of GemmFn on a copy of the concatenated rows. Then,
// where col_bias is not null, C[i][j] = C[i][j] + col_bias[j] and max(C[i][j], 0) with relu (NaN and -0
// kept).
using GemmSegmentsFn = void (*)(std::size_t nseg, std::size_t seg_len, const float* const* seg,
                                std::size_t lda, const float* b, std::size_t ldb, const float* col_bias,
                                bool relu, float* c, std::size_t ldc);
// As GemmFn with row k of B at b_rows[k] + b_offset (16*nv floats, any alignment) instead of b + k*ldb,
// then C[i][j] = C[i][j] + row_bias[i], and max(C[i][j], 0) with relu (NaN and -0 kept).
using GemmBRowsFn = void (*)(std::size_t kc, const float* a, std::size_t lda, const float* const* b_rows,
                             std::ptrdiff_t b_offset, const float* row_bias, bool relu, float* c,
                             std::size_t ldc);
// As GemmFn, and step k of the reduction prefetches the 64-byte line at pf + 16*k into L2 (kc lines).
using GemmPrefetchFn = void (*)(std::size_t kc, const float* a, std::size_t lda, const float* b,
                                std::size_t ldb, float* c, std::size_t ldc, const float* pf);
using InputTileFn = void (*)(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                             std::ptrdiff_t scb, int cbs, float* dst, std::size_t pos_stride);
// The rows [r0, r1) and columns [c0, c1) of a tile's n x n window that lie inside the image.
struct EdgeWindow {
  int r0 = 0, r1 = 0, c0 = 0, c1 = 0;
};
// As InputTileFn on a window at the image's edge, read from the tensor itself: element (i, j) of
// channel block cb at tensor + origin + cb*scb + i*sy + j*sx inside `window`, zero outside it (never
// read there). The bits of InputTileFn on a staged copy of the window with its zeros.
using InputTileEdgeFn = void (*)(const void* ctx, const float* tensor, std::ptrdiff_t origin,
                                 std::ptrdiff_t sy, std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs,
                                 EdgeWindow window, float* dst, std::size_t pos_stride);
// As InputTileFn, V stored as fp16 bits (round to nearest even): the fp16-arithmetic GEMM's operand
// written by the transform itself, without a conversion pass over V.
using InputTileFp16Fn = void (*)(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                 std::ptrdiff_t scb, int cbs, uint16_t* dst, std::size_t pos_stride);
// As InputTileFn, V stored as bf16 bits (bf16_bits_rne, lowp_kernels.hpp): the bf16 dot-product and
// AMX GEMMs' operand written by the transform itself (the conversion pass's bits). Type:
// InputTileFp16Fn. And V rounded to bf16 values kept as floats (round_bf16), the bf16 FMA GEMM's
// operand (the in-place rounding pass's bits). Type: InputTileFn.
// As InputTileFn and InputTileFp16Fn on a tile of a bf16 or fp16 tensor's own elements (strides in
// elements), widened in registers with the widening's bits (the values of a staged FP32 copy).
using InputTileFloatsFromWordsFn = void (*)(const void* ctx, const uint16_t* src, std::ptrdiff_t sy,
                                            std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, float* dst,
                                            std::size_t pos_stride);
using InputTileWordsFromWordsFn = void (*)(const void* ctx, const uint16_t* src, std::ptrdiff_t sy,
                                           std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, uint16_t* dst,
                                           std::size_t pos_stride);
// As InputTileFn, V' of the int8-spatial path (exact integer-valued floats) stored as int16 by the
// transform itself, as Int16ConvertFn converts it (kernels/int16_kernels.hpp): a NaN, an Inf or
// |v| > 32767 stores 0 and sets *bad.
using InputTileInt16Fn = void (*)(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                  std::ptrdiff_t scb, int cbs, int16_t* dst, std::size_t pos_stride,
                                  int* bad);
// As InputTileFn, V quantized to the int8 GEMM's operand as it is computed (LANCE, the int8 conversion
// of lowp_kernels.hpp: code = RNE(clamp(v * inv[a], -127, 127)) + 128 at position a, NaN/Inf give 128),
// without an FP32 V or a conversion pass over it. Returns the number of saturated values
// (|v * inv[a]| > 127.5); sets *bad when the tile holds NaN/Inf.
using InputTileInt8Fn = int64_t (*)(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                    std::ptrdiff_t scb, int cbs, uint8_t* dst, std::size_t pos_stride,
                                    const float* inv, int* bad);
// As InputTileInt8Fn on a tile of an int8 tensor read in place: element (i, j) of block cb is 16 codes
// at src + cb*scb + i*sy + j*sx (strides in codes), each value code * scale, widened in registers with
// the bits of ConvertTable's widening (so the same codes as the staged FP32 copy give).
using InputTileInt8CodesFn = int64_t (*)(const void* ctx, const int8_t* src, std::ptrdiff_t sy,
                                         std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, uint8_t* dst,
                                         std::size_t pos_stride, const float* inv, float scale, int* bad);
// The input transform for the int8 per-call scales: no V is stored; lane_max[a*16 + l] (position a,
// lane l) becomes the largest finite |v| it has seen, so that a block of tiles is reduced once.
using InputTileAmaxFn = void (*)(const void* ctx, const float* src, std::ptrdiff_t sy, std::ptrdiff_t sx,
                                 std::ptrdiff_t scb, int cbs, float* lane_max);
// As InputTileAmaxFn on a tile of an int8 tensor's codes (strides in codes), widened in registers as
// InputTileInt8CodesFn widens them.
using InputTileAmaxCodesFn = void (*)(const void* ctx, const int8_t* src, std::ptrdiff_t sy,
                                      std::ptrdiff_t sx, std::ptrdiff_t scb, int cbs, float scale,
                                      float* lane_max);
using OutputTileFn = void (*)(const void* ctx, const float* src, std::size_t pos_stride, const float* bias16,
                              bool relu, float* dst, std::size_t dst_row);
struct NarrowCounts;
// As OutputTileFn into an int8 tensor: each result narrowed to its code as ConvertTable's int8 narrow
// narrows it (the same bits, saturated and NaN/Inf values added to *counts).
using OutputTileInt8Fn = void (*)(const void* ctx, const float* src, std::size_t pos_stride,
                                  const float* bias16, bool relu, int8_t* dst, std::size_t dst_row,
                                  float inv_scale, NarrowCounts* counts);
// As OutputTileFn into a bf16 tensor: each result narrowed to bf16 bits as ConvertTable's bf16 narrow
// narrows it; returns as OutputTileReachingFn whether some result has |y| >= limit or is NaN (the
// caller counts the tile's results then).
using OutputTileBf16Fn = bool (*)(const void* ctx, const float* src, std::size_t pos_stride,
                                  const float* bias16, bool relu, uint16_t* dst, std::size_t dst_row,
                                  float limit);
// As OutputTileFn, and returns whether some stored value (padding lanes and rows past the output
// included) has |y| >= limit or is NaN: where it returns false, no result of the tile needs counting
// (ConvertTable::count_beyond), where true the caller counts them.
using OutputTileReachingFn = bool (*)(const void* ctx, const float* src, std::size_t pos_stride,
                                      const float* bias16, bool relu, float* dst, std::size_t dst_row,
                                      float limit);

struct TileFns {
  InputTileFn input = nullptr;
  OutputTileFn output = nullptr;
  InputTileEdgeFn input_edge = nullptr;    // the same arithmetic as input, where it has one vector type
  InputTileFp16Fn input_fp16 = nullptr;    // where the ISA converts to fp16 (AVX-512F), else null
  InputTileFp16Fn input_bf16 = nullptr;    // bf16 bits, where the ISA has it (AVX-512F), else null
  InputTileFn input_bf16_round = nullptr;  // bf16 values as floats, where the ISA has it, else null
  InputTileFn input_fp16_round = nullptr;  // fp16 values as floats, where the ISA file has F16C, else null
  InputTileInt16Fn input_int16 = nullptr;  // where the ISA converts to int16 (AVX-512F), else null
  InputTileInt8Fn input_int8 = nullptr;    // every ISA (AVX-512: a fast and an exact store; others scalar)
  InputTileInt8CodesFn input_int8_codes = nullptr;  // where the ISA widens int8 in registers (AVX-512F)
  InputTileAmaxFn input_amax = nullptr;    // every ISA
  InputTileAmaxCodesFn input_amax_codes = nullptr;  // with input_int8_codes
  OutputTileReachingFn output_reaching = nullptr;  // where the ISA tracks |y| in registers (AVX-512F)
  OutputTileInt8Fn output_int8 = nullptr;          // where the ISA narrows in registers (AVX-512F)
  OutputTileBf16Fn output_bf16 = nullptr;          // likewise (vcvtneps2bf16 where the CPU has it)
  // From bf16 / fp16 tensors' elements (AVX-512F), V stored as input, input_bf16 / input_fp16 and
  // input_bf16_round / input_fp16_round store it.
  InputTileFloatsFromWordsFn floats_from_bf16 = nullptr, floats_from_fp16 = nullptr;
  InputTileWordsFromWordsFn words_from_bf16 = nullptr, words_from_fp16 = nullptr;
  InputTileFloatsFromWordsFn rounded_from_bf16 = nullptr, rounded_from_fp16 = nullptr;
};

// The float coefficients of the generic (run-time matrix) tile path; ctx of its TileFns.
struct GenericCoeffs {
  int m = 0, n = 0;
  float bt[kMaxGenericN * kMaxGenericN] = {};
  float at[kMaxGenericN * kMaxGenericN] = {};
  unsigned char bt_idx[kMaxGenericN][kMaxGenericN] = {};  // non-zero columns of each row
  int bt_nnz[kMaxGenericN] = {};
  unsigned char at_idx[kMaxGenericN][kMaxGenericN] = {};
  int at_nnz[kMaxGenericN] = {};
};

// One output pixel of a depthwise convolution (kernels/depthwise_template.hpp): out[k] = sum over the
// taps t of x[t][k] * w[t][k], k in [0, channels).
using DepthwiseFn = void (*)(const float* const* x, const float* const* w, std::size_t taps,
                             std::size_t channels, float* out);

// A run of one output row of one channel of a depthwise convolution on NCHW planes
// (kernels/depthwise_template.hpp): out[i] = sum over the taps t of x[t][i] * w[t], i in [0, count), in the
// order of the taps, one fused multiply-add each: for each pixel the operations of DepthwiseFn.
using DepthwiseRowFn = void (*)(const float* const* x, const float* w, std::size_t taps, std::size_t count,
                                float* out);

// A run of output pixels of a depthwise convolution on NHWC or one NCHW16c channel block, bias and ReLU
// fused (kernels/depthwise_template.hpp, depthwise_pixels): per pixel and channel the operations of
// DepthwiseFn and the direct path's scalar epilogue.
using DepthwisePixelsFn = void (*)(const float* const* x, const float* const* w, std::size_t taps,
                                   std::ptrdiff_t x_step, std::size_t count, std::size_t channels,
                                   const float* bias, bool relu, bool pad_lanes, float* out,
                                   std::ptrdiff_t out_step);
// A run of output pixels of a grouped convolution with CG (2, 4, 8: grouped_lanes[0..2]) input and output
// channels per group, output channels in lanes, NHWC or one NCHW16c block, bias and ReLU fused, from R
// staged input rows (chunks of 16 channels row_chunk floats apart, 16 floats a pixel, every tap inside)
// and weights as [chunk][u][v][c][16] (kernels/grouped_lanes_template.hpp): the sums in the direct path's
// (u, v, c) order.
using GroupedLanesFn = void (*)(const float* const* rows, std::size_t R, std::size_t S, std::size_t stride,
                                std::size_t dilation, std::size_t row_chunk, const float* w,
                                std::size_t count, std::size_t channels, const float* bias, bool relu,
                                bool pad_lanes, float* out, std::ptrdiff_t out_step);

struct GemmTable {
  int mr = 0;                                       // largest rows
  int nv = 0;                                       // widest panel, in 16-float vectors
  GemmFn fn[kMaxMR][kMaxNV] = {};                   // fn[rows-1][vectors-1]
  GemmPrefetchFn prefetching[kMaxMR][kMaxNV] = {};  // the same kernels, prefetching a panel to come
  GemmSegmentsFn segments[kMaxMR][kMaxNV] = {};     // the same kernels, A's rows read in segments
  GemmBRowsFn b_rows[kMaxMR][kMaxNV] = {};          // the same kernels, B's rows by address
  DepthwiseFn depthwise = nullptr;         // the direct path's depthwise form (one input channel per group)
  DepthwiseRowFn depthwise_row = nullptr;  // its NCHW form at stride 1
  DepthwisePixelsFn depthwise_pixels = nullptr;  // its NHWC and NCHW16c form, runs of pixels
  GroupedLanesFn grouped_lanes[3] = {};          // grouped, 2, 4 or 8 channels per group in and out
};

// The input transforms' bf16-bits stores by vcvtneps2bf16 (kernels/avx512bf16/, AVX512-BF16 CPUs):
// the same bits as TileFns::input_bf16 but FP32 subnormals stored as zeros, which the bf16 dot-product
// and AMX GEMMs read as zero anyway. generated[i] parallels TransformTable::generated of the avx512 path.
struct Bf16HwInputFns {
  const InputTileFp16Fn* generated = nullptr;
  int generated_count = 0;
  InputTileFp16Fn generic = nullptr;
  const InputTileWordsFromWordsFn* generated_from_bf16 = nullptr;  // from bf16 tensors' elements
  InputTileWordsFromWordsFn generic_from_bf16 = nullptr;
};
Bf16HwInputFns bf16_hw_input_fns_avx512bf16();
// The bf16 output tiles with vcvtneps2bf16 (TileFns::output_bf16 of the avx512 path on AVX512-BF16 CPUs;
// the same bits as the AVX-512F ones), generated[i] parallel to TransformTable::generated.
struct Bf16HwOutputFns {
  const OutputTileBf16Fn* generated = nullptr;
  int generated_count = 0;
  OutputTileBf16Fn generic = nullptr;
};
Bf16HwOutputFns bf16_hw_output_fns_avx512bf16();

struct TransformTable {
  const TileFns* generated = nullptr;  // one per generated transform (generated::kGeneratedInfo order)
  int generated_count = 0;
  TileFns generic;
};

// Layout changes around the transforms (NCHW <-> 16-channel blocks).
//   pack_rows16[type]: dst[x*16 + l] = value of src[l*channel_stride + x] for x < count, l < lanes (elements
//                of `type`, widened as ConvertTable's widen does: int8 code * scale); lanes >= `lanes` are 0.
//   store_band_nchw: band[(i*width_stride + x)*16 + l] -> out[l*plane + i*row + x] for i < rows, x < width,
//                    l < lanes: a run of tiles of one tile row at once, in whole rows of 16 floats.
using PackRows16Fn = void (*)(const void* src, float scale, std::ptrdiff_t channel_stride, int lanes,
                              std::ptrdiff_t count, float* dst);
using StoreBandNchwFn = void (*)(const float* band, std::ptrdiff_t width_stride, int rows,
                                 std::ptrdiff_t width, int lanes, float* out, std::ptrdiff_t plane,
                                 std::ptrdiff_t row);
// Optional typed stores (null where the path has none; the caller then stages floats and narrows them):
//   store_band_nchw_typed[type]: store_band_nchw into elements of `type`, each rounded as ConvertTable's
//                         narrow rounds it (inv_scale, counts): the same bits and counts as
//                         store_band_nchw into floats followed by narrow_rows.
struct NarrowCounts;
using StoreBandNchwTypedFn = void (*)(const float* band, std::ptrdiff_t width_stride, int rows,
                                      std::ptrdiff_t width, int lanes, void* out, std::ptrdiff_t plane,
                                      std::ptrdiff_t row, float inv_scale, NarrowCounts* counts);
struct LayoutTable {
  PackRows16Fn pack_rows16[4] = {};  // indexed by DataType
  StoreBandNchwFn store_band_nchw = nullptr;
  StoreBandNchwTypedFn store_band_nchw_typed[4] = {};  // indexed by DataType
};

// Element conversions of typed input and output tensors (nova::conv::DataType), the same bits on every
// path (conv.hpp, DataType, says what each rounding is):
//   widen:  dst[i] = value of src[i] (int8: code * scale)
//   narrow: dst[i] = src[i] rounded to the type (int8: with inv_scale = 1 / scale); int8 adds the
//           clamped and the NaN/Inf values to *counts
//   narrow_rows: narrow of `rows` runs of `width` values, run r from src + r*src_row to element
//           r*dst_row of dst (strides in elements)
//   count_beyond: how many values are NaN or have |x| >= limit among the first `lanes` floats of each
//           16-float pixel, `pixels` contiguous pixels a row, `rows` rows `row_stride` floats apart: the
//           results that a store into a type whose values round to inf from `limit` on holds as NaN or
//           Inf (limit +inf: the non-finite values). Plans count their outputs with it (low-precision
//           Winograd plans, and bf16 / fp16 output tensors: Plan::Impl::output_count_limit).
struct NarrowCounts {
  int64_t saturated = 0;
  int64_t nonfinite = 0;
};
using WidenFn = void (*)(const void* src, float* dst, int64_t count, float scale);
using NarrowFn = void (*)(const float* src, void* dst, int64_t count, float inv_scale, NarrowCounts* counts);
using NarrowRowsFn = void (*)(const float* src, std::ptrdiff_t src_row, void* dst, std::ptrdiff_t dst_row,
                              int64_t rows, int64_t width, float inv_scale, NarrowCounts* counts);
using CountBeyondFn = int64_t (*)(const float* src, std::ptrdiff_t row_stride, int64_t rows, int64_t pixels,
                                  int lanes, float limit);
// count_beyond's limit for a store into `type` (round to nearest even): FP32 +inf; bf16's largest finite
// value plus half its last place, 0x7F7F8000 (a tie, which goes to the even 0x7F80: inf); fp16's 65504
// + 16. int8 clamps instead (its narrow counts NaN and Inf): +inf, the non-finite values.
inline float overflow_limit(DataType type) {
  switch (type) {
    case DataType::kBf16:
      return std::bit_cast<float>(0x7F7F8000u);
    case DataType::kFp16:
      return 65520.0f;
    default:
      return std::numeric_limits<float>::infinity();
  }
}
struct ConvertTable {
  WidenFn widen[4] = {};  // indexed by DataType
  NarrowFn narrow[4] = {};
  NarrowRowsFn narrow_rows[4] = {};
  CountBeyondFn count_beyond = nullptr;
};

struct KernelTable {
  Isa isa = Isa::kPortable;
  const char* conversions = "portable";  // which code converts typed tensors (tensor_conversion_kernels)
  GemmTable gemm;
  TransformTable transforms;
  LayoutTable layout;
  ConvertTable convert;
};

// Provided by the ISA files.
GemmTable gemm_table_portable();
TransformTable transform_table_portable();
GemmTable gemm_table_avx2();
TransformTable transform_table_avx2();
GemmTable gemm_table_avx512();
TransformTable transform_table_avx512();
LayoutTable layout_table_portable();
LayoutTable layout_table_avx512();
// FP32 pack and NCHW band store with 8x8 register transposes (AVX2), over the portable table's entries.
void add_layout_fp32_avx2(LayoutTable& table);
// Typed (bf16, fp16, int8) packs and NCHW band stores that widen and narrow as convert_table_avx2 does
// (AVX2 + F16C CPUs, over the portable table's entries).
void add_layout_typed_avx2_f16c(LayoutTable& table);
void add_layout_int8_avx512vbmi(
    LayoutTable& table);  // int8 pack and store with byte transposes (AVX512-VBMI)
ConvertTable convert_table_portable();
ConvertTable convert_table_avx2();  // AVX2 + F16C
// bf16 narrows and NCHW band stores with vcvtneps2bf16, the same bits (AVX512-BF16 CPUs, over the
// avx512 path's entries).
void add_bf16_narrow_avx512bf16(LayoutTable& layout, ConvertTable& convert);
ConvertTable convert_table_avx512();

// The table of a path; throws nova::Error when this CPU cannot run it.
const KernelTable& kernels(Isa isa);

}  // namespace nova::conv
