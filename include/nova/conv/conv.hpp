// The FP32 convolution engine: a plan/execute split in the style of oneDNN (descriptor -> primitive
// -> execute) and XNNPACK (create -> setup -> run).
//
//   nova::conv::PlanOptions opt;                 // layout, bias+ReLU, threads, transform, algorithm
//   auto plan = nova::conv::Plan::create(shape, weights, bias, opt);   // transforms the filters once
//   plan.execute(input, output);                 // any number of times
//
// Weights are always KCRS (K x C/groups x R x S), bias is K values or null. Input and output are NCHW,
// NHWC or NCHW16c (all the same; Layout below), dense, FP32 by default or of the element types PlanOptions::input and
// ::output name (bf16, fp16, int8 with a scale; plan.execute(const void*, void*)). A plan never refuses a
// valid convolution: shapes Winograd cannot do (stride, dilation, groups, non-square or unsupported kernels)
// run through a direct path, and the plan says which algorithm it chose and why (Plan::reason()).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nova/conv_shape.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"

namespace nova::conv {

// Tensor layouts of the input and output (both the same):
//   kNCHW      [N][C][H][W]
//   kNHWC      [N][H][W][C]
//   kNCHW16c   [N][ceil(C/16)][H][W][16]: channels in blocks of 16, a pixel's 16 channels contiguous
//              (oneDNN's nChw16c, the engine's own working layout, so it needs no transposes in or
//              out). The last block is padded to 16 lanes: input padding lanes must be zero (as
//              oneDNN requires; they are never read as data) and output padding lanes are written
//              as zero. input_elements / output_elements give the buffer sizes.
enum class Layout { kNCHW, kNHWC, kNCHW16c };
enum class Algorithm { kWinograd, kDirect };
// Instruction-set paths of the micro-kernels. kPortable runs everywhere; the others need the CPU.
enum class Isa { kPortable, kAvx2, kAvx512 };
enum class AlgorithmChoice { kAuto, kWinograd, kDirect };
// Precision of the Winograd GEMMs (docs/engine.md, "Low-precision paths"). The tile transforms, bias
// and ReLU stay FP32 (int8-spatial: the input transform runs on integer codes, exactly); U and V are
// stored in the chosen type:
//   kFp32  the FP32 engine
//   kBf16  U, V in bf16 (round to nearest even), FP32 accumulation of the exact products: the
//          bf16-storage preset; the arithmetic per Bf16Arithmetic below
//   kInt8  U int8 per tap x output channel, V int8 per tap (per-call or calibrated scales), exact int32
//          accumulation (vpdpbusd), dequantized to FP32: the int8-tap-channel preset
//   kFp16  U, V in fp16 (round to nearest even); the arithmetic per Fp16Arithmetic below
//   kInt8Spatial  d int8 per tensor (per-call or calibrated scale) and g int8 per output channel,
//          quantized before the transforms; the transforms scaled to integers and run exactly (U', V'
//          int16), int32 GEMM (vpdpwssd) over channel chunks short enough never to overflow, the chunk
//          sums added in FP32, FP32 output transform: the int8-spatial preset (ncnn's int8 Winograd).
//          Its error is the direct int8 convolution's. 3x3 kernels with F(2,3) or F(4,3), the integer
//          points {0, +-1, +-2} by default (other transforms or tiles whose integer U', V' exceed int16
//          are refused; 5x5 kernels run the direct path)
enum class Precision { kFp32, kBf16, kInt8, kFp16, kInt8Spatial };
// The low-precision GEMM kernel:
//   kAuto      the fastest this process may run: AMX (int8, bf16) where admitted (amx_int8_supported,
//              amx_bf16_supported), else the AVX-512 one, else (plans on the avx2 path) the AVX2 one
//              (bf16 on FMAs, fp16 with FP32 arithmetic, int8, int8-spatial), else the portable one;
//              the plan says why
//   kPortable  always the portable one
//   kSimd      as kAuto, but an error where the plan's path has no SIMD kernel for the precision
//   kAvx512    the AVX-512 kernel, never AMX, or an error: the portable kernel's bits on every machine
//              (the bf16 AMX kernel sums in its own order)
//   kAmx       the AMX kernel or an error that says why not (int8 and bf16 only; bf16 needs a padded
//              channel count that is a multiple of 32)
// The portable, AVX2 and AVX-512 kernels of a precision give bit-identical results.
enum class LowpKernel { kAuto, kPortable, kSimd, kAvx512, kAmx };
// Element type of the input or output tensor. Whatever the types, the engine computes from FP32 values:
// an input is widened exactly (int8: code * scale, one FP32 multiply) while it is copied into the
// engine's blocked layout, and the FP32 result is rounded once as it is stored:
//   kBf16, kFp16  round to nearest even (overflow to inf, NaN stays NaN)
//   kInt8         code = RNE(y * (1 / scale)) clamped to [-127, 127] (symmetric); values beyond are
//                 counted in LowpStats::output_saturated, NaN and Inf in ::output_nonfinite (NaN is
//                 stored as 0, Inf as +-127: int8 has no code for them, so they are counted instead)
enum class DataType { kFp32, kBf16, kFp16, kInt8 };
struct TensorFormat {
  DataType type = DataType::kFp32;
  float scale = 1.0f;  // kInt8 only: value = scale * code; normal, > 0 and below 2^121 (128 x scale finite)
};
// The arithmetic of the kFp16 GEMM:
//   kFp32  products and sums in FP32 (U widened by vcvtph2ps, F16C): the fp16-storage preset
//   kFp16  fp16 FMAs (vfmadd231ph, one rounding each) over chunks of 32 input channels from zero, each
//          chunk sum widened and added into an FP32 sum: the fp16-fma preset (about 3x the error of kFp32)
//   kAuto  kFp16 where this CPU has AVX512-FP16, the plan runs the avx512 path and the tile has at most
//          8 points (F(8,3)'s fp16 sums overflow on real activations), kFp32 otherwise
// The portable kernel (LowpKernel::kPortable) computes the same bits as the SIMD one of the arithmetic.
enum class Fp16Arithmetic { kAuto, kFp32, kFp16 };
// The arithmetic of the kBf16 GEMM (both: exact bf16 products, FP32 sums):
//   kFma   one FP32 FMA per channel, channels in order (U widened from bf16 as it is loaded, V held as
//          fp32 values rounded to bf16): AVX-512F or portable, the same bits on every machine
//   kDot   vdpbf16ps (AVX512-BF16): channel pairs, the odd product added first, bf16 subnormals read
//          as zero and subnormal sums flushed; portable where the CPU lacks it; on AMX, TDPBF16PS
//   kAuto  AMX where this process admitted it (amx_bf16_supported); kDot on the avx512 path of an AMD CPU
//          with AVX512-BF16 (Zen 4: vdpbf16ps at the FMA's rate per instruction, twice the work); else
//          kFma: on the Xeon vdpbf16ps runs at half the FMA's rate per multiply-add (docs/engine.md)
enum class Bf16Arithmetic { kAuto, kFma, kDot };

std::string to_string(Layout layout);
std::string to_string(Algorithm algorithm);
std::string to_string(Isa isa);
Layout parse_layout(const std::string& text);  // "nchw" | "nhwc" | "nchw16c"; throws nova::Error
// Elements of the input and output tensors of a layer in a layout (NCHW16c counts the padding lanes).
// Throws nova::Error for a shape that ConvShape::validate refuses or a layout that is none of Layout's.
int64_t input_elements(const ConvShape& shape, Layout layout);
int64_t output_elements(const ConvShape& shape, Layout layout);
Isa parse_isa(const std::string& text);        // "portable" | "avx2" | "avx512"; throws nova::Error
std::string to_string(Precision precision);
Precision parse_precision(const std::string& text);  // "fp32" | "bf16" | "int8" | "fp16" | "int8-spatial"; throws
// The engine's own element conversions (the same bits as execute()): `count` FP32 values into a tensor
// of type `to` (int8 symmetric with to.scale; returns how many values were clamped or were NaN/Inf),
// and a typed tensor back into FP32 values (exact).
struct ConvertCounts {
  int64_t saturated = 0;
  int64_t nonfinite = 0;
};
ConvertCounts convert_from_fp32(const float* src, int64_t count, TensorFormat to, void* dst);
void convert_to_fp32(const void* src, int64_t count, TensorFormat from, float* dst);
std::string to_string(DataType type);
DataType parse_data_type(const std::string& text);  // "fp32" | "bf16" | "fp16" | "int8"; throws nova::Error
std::size_t element_size(DataType type);            // bytes
// The code that converts typed (bf16, fp16, int8) input and output tensors on a kernel path, for
// plans made on it: "avx512" (", bf16 by vcvtneps2bf16" where the CPU has AVX512-BF16), "avx2-f16c",
// or "portable" (the portable path, and the avx2 path on a CPU without F16C). Every one gives the same
// bits (docs/engine.md, "Typed input and output tensors"). Throws nova::Error where this CPU cannot run
// the path.
std::string tensor_conversion_kernels(Isa isa);
// Whether this CPU can run the dot-product SIMD GEMM of a precision (fp32: always), and its name
// ("avx512-bf16" (vdpbf16ps: Bf16Arithmetic::kDot), "avx512-vnni", "avx512-f16c"; "portable" when it
// cannot). bf16 on FMAs ("avx512-fma") needs only the avx512 path.
bool lowp_simd_supported(Precision precision);
std::string lowp_simd_name(Precision precision);
// Whether this CPU has AVX512-FP16 (and the OS saves the AVX-512 state): the fp16-arithmetic kernel,
// named "avx512-fp16".
bool fp16_arithmetic_supported();
// Whether int8 plans may run their GEMMs on AMX tiles (TDPBUSD): the CPU has AMX-TILE and AMX-INT8
// beside the VNNI path, Linux granted the process the tile state (arch_prctl(ARCH_REQ_XCOMP_PERM,
// XTILEDATA), requested on the first call), and the AMX kernel gave the VNNI kernel's bits on random
// operands in a child of this process (checked once, forked so that a fault cannot take this process
// down). `reason` (optional) says which step failed.
bool amx_int8_supported(std::string* reason = nullptr);
// Whether bf16 plans may run their GEMMs on AMX tiles (TDPBF16PS): the CPU has AMX-TILE and AMX-BF16
// beside the avx512-bf16 path, Linux granted the tile state, and the AMX kernel's sums stayed within
// the error bound of FP32 summation (NaN and Inf propagated) on random operands in a child of this
// process. Its FP32 sums follow the tile unit's order, so its bits are not those of vdpbf16ps (or of
// the portable kernel). Plans whose padded channel count is not a multiple of 32 keep avx512-bf16.
bool amx_bf16_supported(std::string* reason = nullptr);
std::string to_string(LowpKernel kernel);
LowpKernel parse_lowp_kernel(const std::string& text);  // "auto" | "portable" | "simd" | "avx512" | "amx"; throws nova::Error
std::string to_string(Bf16Arithmetic arithmetic);
Bf16Arithmetic parse_bf16_arithmetic(const std::string& text);  // "auto" | "fma" | "dot"; throws nova::Error
std::string to_string(Fp16Arithmetic arithmetic);
Fp16Arithmetic parse_fp16_arithmetic(const std::string& text);  // "auto" | "fp32" | "fp16"; throws nova::Error

// The best path this CPU can run, and whether it can run a given one.
Isa best_isa();
bool isa_supported(Isa isa);

struct PlanOptions {
  Layout layout = Layout::kNCHW;
  bool relu = false;  // fused after the bias
  int threads = 0;    // 0: every hardware thread; otherwise 1..1024
  AlgorithmChoice algorithm = AlgorithmChoice::kAuto;
  // Winograd transform: an explicit verified transform wins over a tile; with neither, the plan picks
  // a tile and uses its default transform (nova::conv::default_transform).
  std::optional<Transform> transform;
  std::optional<TileSize> tile;
  std::optional<Isa> isa;       // force a kernel path; throws if the CPU cannot run it
  bool allow_generated = true;  // false: always use the generic (run-time matrix) tile transforms
  // Winograd execution order, for tuning and tests: 0 chooses; > 0 fused blocks of that many tiles
  // (input transform, GEMMs and output transform of a block while it is in cache); < 0 phased (each
  // stage over all tiles). Results are identical whatever the order.
  int tile_block = 0;
  // Fused order: each block's output channels in this many parts of whole panels, a task each (the
  // block's input transform repeated per part), for tuning and tests: 0 chooses (AMX int8 plans of at
  // most 16 tiles run one block in a part per thread where they would run phased); 1 never splits.
  // Results are identical whatever the split.
  int k_parts = 0;
  // Precision of the Winograd GEMMs (the direct path always runs in FP32 and the plan says so).
  Precision precision = Precision::kFp32;
  LowpKernel lowp_kernel = LowpKernel::kAuto;
  // Element types of the input and output tensors (any combination, any precision, either algorithm).
  TensorFormat input;
  TensorFormat output;
  Fp16Arithmetic fp16_arithmetic = Fp16Arithmetic::kAuto;  // kFp16 plans only
  Bf16Arithmetic bf16_arithmetic = Bf16Arithmetic::kAuto;  // kBf16 plans only
  // The plan runs among other work that evicts its transformed filters from the caches between executes
  // (one layer of a network, as the PyTorch drop-in's plans are): the automatic choice prices reading them
  // at memory's rate rather than the L3's, which favours smaller tiles where the filters are large. Only
  // FP32 plans on AVX2, and on AVX-512 on AMD CPUs, price the two differently (measured on AMD's EPYC with
  // AVX2; docs/engine-log.md, "Session 24"; docs/engine.md on the cost model's cache rules).
  bool filters_from_memory = false;
};

// What the last execute of a low-precision plan met (FP32 plans: only the output counts of bf16, fp16
// and int8 output tensors; the rest stays zero).
struct LowpStats {
  int64_t saturated = 0;        // int8: V values beyond the calibrated range, clamped to +-127
  int64_t nonfinite_tiles = 0;  // int8: tiles whose input transform held NaN/Inf (their outputs are NaN)
  // int8 output tensors: results beyond +-127.5 * scale (clamped; counted for every precision).
  int64_t output_saturated = 0;
  // Results that are NaN or Inf, counted as stored (a result that rounds to inf in a bf16 or fp16 tensor
  // counts: fp16 from 65520 on): by every plan whose output tensor is int8 (which stores them as 0 or
  // +-127), bf16 or fp16, and by low-precision Winograd plans whatever the output type. A NaN or Inf
  // input turns every output of the Winograd tiles that read it into NaN (a superset of a direct
  // convolution's receptive field), so this is how a caller learns of them without a pass over the
  // output. FP32 plans with FP32 output do not count (0).
  int64_t output_nonfinite = 0;
  // fp16: V was multiplied by 2^-v_shift (and the GEMMs' results by 2^v_shift, exactly). Positive where
  // this input's largest finite |value| times the transform's bound on |V| / max |d| passed fp16's 65504
  // (2^12 with fp16 arithmetic, whose fp16 sums of 32 products it keeps finite); negative where that
  // bound was below 1, V then brought up to a bound in [2^4, 2^5), that of unit-scale data, out of
  // fp16's subnormals; 0 in between, on ordinary data (docs/engine.md, "fp16: V's exponent range").
  // Plans that read the input in place (or copy it by image groups) do not take that max before every
  // execute (with a fused ReLU, only those with FP32 arithmetic): they take the shift from a sample of
  // the input (16 values in every 976, at most 128 such pieces) and, only where the output (with a ReLU: the
  // GEMMs' results before it) then holds NaN/Inf, take the exact max and run again if it asks for another
  // shift; so they shift down only where V did overflow or the sample's own bound passed the limit (not
  // where the exact max's bound alone would have).
  int v_shift = 0;
};

// Where a plan's executes spend their time, for tuning (Plan::set_profiling). Each stage is thread
// time: summed over the pool's threads and over the profiled executes, in milliseconds. A stage the
// plan does not run stays 0. Profiling reads the clock a few times per block of tiles on each thread;
// time executes with it off.
struct StageProfile {
  int64_t executes = 0;   // profiled executes
  int threads = 0;        // the plan's thread count
  double wall_ms = 0;     // wall clock of the profiled executes, summed
  double pack_ms = 0;     // input copied into the blocked, padded layout (widened from typed tensors)
  double scales_ms = 0;   // per-call scales: int8's max |V| (the input transforms once more), int8-spatial's
                          // and fp16's max |d| (a pass over the input)
  double input_ms = 0;    // input transforms (and the GEMM operand written by them)
  double convert_ms = 0;  // V converted to the GEMM operand in a pass of its own
  double gemm_ms = 0;     // the n^2 GEMMs (low precision: dequantized)
  double output_ms = 0;   // output transforms, bias, ReLU, stores (narrowed for typed output)
  double direct_ms = 0;   // the direct path's work, all of it
  // Thread time in no stage: waiting for other threads (imbalance, the pool's start and end), and the
  // code between stages. wall_ms * threads minus the stages.
  double idle_ms() const;
  // The stages by name ("pack", "scales", "input", "convert", "gemm", "output", "direct"), in that order.
  std::array<std::pair<const char*, double>, 7> stages() const;
};

class Plan {
 public:
  // Validates everything (shape, null pointers, NaN/Inf in weights or bias, threads, the transform:
  // exact verification, tile matches the kernel) and throws nova::Error with a one-line reason.
  static Plan create(const ConvShape& shape, const float* weights, const float* bias,
                     const PlanOptions& options = {});

  // input: shape.input_size() floats, output: shape.output_size() floats, in the plan's layout.
  // Buffers must be 4-byte aligned and must not overlap. Throws nova::Error on null or misaligned
  // pointers. One execute at a time per plan (it owns its scratch memory; concurrent calls on one plan
  // wait for each other). Plans with the same thread count share the process's pool of that size, so
  // executes of different plans from different threads run their parallel stages one at a time.
  // For FP32 input and output only (the default); typed plans use the overload below.
  void execute(const float* input, float* output) const;
  // Input and output in the plan's element types (PlanOptions::input, ::output): shape().input_size()
  // and shape().output_size() elements, aligned to their element size, not overlapping.
  void execute(const void* input, void* output) const;

  // INT8 plans: runs the input transforms of sample inputs (each shape().input_size() floats in the
  // plan's layout) and stores per-tap V scales (max |V| over the samples / 127). Later executes use
  // them instead of per-call scales (the fused order; values beyond the range saturate and are
  // counted in stats()). Calling it again replaces the scales. Throws for other precisions, an empty
  // list, null pointers, non-finite samples or all-zero ones (no range; the plan keeps its former
  // scales). INT8-spatial plans: stores the input scale instead
  // (max |d| over the samples / 127; calibration_scales() then holds that one value).
  void calibrate(std::span<const float* const> inputs);
  void clear_calibration();
  // calibrated(), calibration_scales() and stats() called during an execute on another thread wait for it.
  bool calibrated() const;
  std::vector<float> calibration_scales() const;  // per tap (n*n), empty when not calibrated
  LowpStats stats() const;                        // of the last execute
  // Stage timing of later executes (off by default); turning it on or off clears what was gathered.
  void set_profiling(bool on);
  StageProfile stage_profile() const;  // gathered since profiling was turned on

  const ConvShape& shape() const;
  Layout layout() const;
  Algorithm algorithm() const;
  std::optional<TileSize> tile() const;  // the Winograd tile, when algorithm() is kWinograd
  std::string reason() const;            // why this algorithm (and tile)
  Isa isa() const;
  int threads() const;
  bool generated_transform() const;      // build-time generated tile code (vs the generic path)
  std::string transform_name() const;    // points of the Winograd transform, or empty
  std::string describe() const;          // one line: algorithm, tile, isa, precision, GEMM path, threads, reason
  Precision precision() const;           // of the GEMMs actually run (kFp32 on the direct path)
  // The GEMM kernel path: "avx512-fma" (bf16 on FMAs), "avx512-bf16", "amx-bf16", "avx512-vnni", "amx-int8",
  // "avx512-f16c", "avx512-fp16" or "portable" for the low-precision paths; to_string(isa()) for FP32.
  std::string gemm_path() const;
  // The same with its instructions and why no faster one runs ("int8 GEMM: avx512-vnni (vpdpbusd; amx:
  // no AMX-INT8 on this CPU)"), as describe() gives it.
  std::string gemm_detail() const;
  TensorFormat input_format() const;
  TensorFormat output_format() const;

  // Plans move but do not copy. A plan moved from holds nothing: its methods throw nova::Error until a
  // plan is assigned to it.
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  ~Plan();

  struct Impl;

 private:
  explicit Plan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nova::conv
