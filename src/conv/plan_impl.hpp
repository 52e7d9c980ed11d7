// The inside of a Plan: what create() decided and what execute() needs. Internal to src/conv.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algorithm_choice.hpp"
#include "aligned_buffer.hpp"
#include "kernels/int16_kernels.hpp"
#include "kernels/kernel_table.hpp"
#include "kernels/lowp_kernels.hpp"
#include "nova/conv/conv.hpp"
#include "stage_clock.hpp"
#include "thread_pool.hpp"

namespace nova::conv {

inline int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}
inline int64_t ceil_div(int64_t x, int64_t y) {
  return (x + y - 1) / y;
}

// The rows of a GEMM in ceil(rows / mr) groups of nearly equal size, f(first row, row count) for each:
// 32 rows run as 6,6,5,5,5,5 rather than 6,6,6,6,6,2, because a 2-row micro-kernel is load-bound
// (it cost 8 % of 8x512x7x7->512 for 6 % of the rows). Which micro-kernel computes a row does not
// change its result: each runs the same reduction in the same order.
template <class F>
void for_each_row_group(int64_t rows, int64_t mr, F&& f) {
  const int64_t groups = ceil_div(rows, mr);
  const int64_t base = rows / groups, extra = rows % groups;
  int64_t i0 = 0;
  for (int64_t grp = 0; grp < groups; ++grp) {
    const int64_t count = base + (grp < extra ? 1 : 0);
    f(i0, count);
    i0 += count;
  }
}
// The L2 bytes the plans' blocking counts on: 1.5 MiB of the 2 MiB L2 of the AVX-512 hosts measured.
inline constexpr int64_t kL2BudgetBytes = int64_t{3} << 19;

// Whether a Winograd plan's GEMMs prefetch U's next panel (WinogradPlan::prefetch_u): FP32 plans whose U
// (u_bytes at 4 bytes an element) exceeds the L2 budget. The tile estimate prices those plans with it.
inline bool prefetches_u(Precision precision, double u_bytes) {
  return precision == Precision::kFp32 && u_bytes > static_cast<double>(kL2BudgetBytes);
}

// One packed panel's GEMM, C[rows x width] = A[rows x kc] . B[kc x width], by row groups. Where B streams
// from L3, `next` names the panel the caller computes next (next_lines 64-byte lines, else null): the
// row groups then prefetch it into L2, kc lines each (the kernels' prefetching form, the same
// arithmetic), so that its own first row group does not wait on L3. Measured: docs/engine-log.md,
// "Session 22".
inline void panel_gemm(const GemmTable& g, int64_t rows, int nv, std::size_t kc, const float* a,
                       std::size_t lda, const float* b, std::size_t ldb, float* c, std::size_t ldc,
                       const float* next, int64_t next_lines) {
  int64_t first_line = 0;
  for_each_row_group(rows, g.mr, [&](int64_t i0, int64_t mrows) {
    const float* ai = a + static_cast<std::size_t>(i0) * lda;
    float* ci = c + static_cast<std::size_t>(i0) * ldc;
    if (first_line < next_lines)
      g.prefetching[mrows - 1][nv - 1](kc, ai, lda, b, ldb, ci, ldc, next + first_line * 16);
    else
      g.fn[mrows - 1][nv - 1](kc, ai, lda, b, ldb, ci, ldc);
    first_line += static_cast<int64_t>(kc);
  });
}

// Tiles of one tile row whose NCHW output is stored together (winograd_execute.cpp).
inline constexpr int64_t kBandTiles = 8;
// Elements between the n^2 Winograd positions of V or M (rows x cols elements of `bytes` bytes: 4 for
// FP32 V and M, 2 or 1 for the low-precision copies of V, which have strides of their own). Whole
// cache lines, so that every position starts on a line (rows of 64 bytes then load as one line each:
// AMX tile loads of bf16 and int8 V), and an odd number of them, so that the n^2 lines a tile's
// transform stores (V) or loads (M) for one channel block spread over all 64 sets of L1: a stride of
// an even number of lines, 2^k x odd, reaches only 64 / 2^k sets, and the transforms thrash
// L1 (the FP32 strides up to session 49 were multiples of 4 lines: 8 sets at 8x64x56x56's blocks of 29
// tiles; there the F(6,3) output transform took 458 cycles a tile and channel block with them, 296 with
// these, `nova_bench_transforms ... stride:1` against stride:0; 8x64x56x56 FP32 0.93-0.96 of the time).
inline std::size_t position_stride(int64_t rows, int64_t cols, int64_t bytes) {
  const int64_t per_line = 64 / bytes;
  int64_t lines = (rows * cols + per_line - 1) / per_line + 1;
  if (lines % 2 == 0) ++lines;
  return static_cast<std::size_t>(lines * per_line);
}

// The symmetric int8 scale of a range: max |x| / 127, or 1 for an all-zero range (every code is 0).
inline float symmetric_int8_scale(float amax) {
  return amax > 0.0f ? amax / 127.0f : 1.0f;
}

// Copies the `count` (at most kLanes) channels of one pixel. A whole block is a copy of known size,
// which the compiler inlines: per pixel, a call of memcpy cost more than the copy itself.
inline void copy_pixel_lanes(float* dst, const float* src, int64_t count) {
  if (count == kLanes)
    std::memcpy(dst, src, kLanes * sizeof(float));
  else
    std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
}

// Element i of a typed tensor.
inline const void* element_at(const void* base, DataType type, int64_t i) {
  return static_cast<const unsigned char*>(base) + static_cast<std::size_t>(i) * element_size(type);
}
inline void* element_at(void* base, DataType type, int64_t i) {
  return static_cast<unsigned char*>(base) + static_cast<std::size_t>(i) * element_size(type);
}

// The Winograd part of a plan.
struct WinogradPlan {
  Transform transform;
  int m = 0, r = 0, n = 0;
  bool generated = false;
  TileFns fns;
  GenericCoeffs coeffs;  // ctx of the generic fns (stable address: the plan lives on the heap)
  int64_t tiles_y = 0, tiles_x = 0, tiles = 0;
  int64_t Cb = 0, Kb = 0, Cpad = 0, Kpad = 0;  // channel blocks of 16, padded counts
  int64_t Hp = 0, Wp = 0;                      // padded input of the blocked copy
  int64_t panel = 0;                           // GEMM panel width (floats)
  AlignedBuffer U;                             // transformed filters [n*n][panels of Cpad x width]
  // FP32 plans whose U does not fit L2: the GEMMs prefetch the next panel of U while computing one
  // (gemm_stage), where a panel's first row group would otherwise wait on L3.
  bool prefetch_u = false;
  AlignedBuffer bias;  // Kpad values
  // Execution: fused blocks of `block` tiles (input transform, GEMM, output transform in cache), or
  // phased (each stage over all tiles, with the GEMMs split by position and panel).
  bool phased = false;
  int64_t block = 0;
  // Fused order: each block's output channels in k_parts parts of whole panels, a task each (the block's
  // input transform repeated per part), so that each thread streams a part of U (winograd_blocking.cpp).
  int64_t k_parts = 1;
  // Images per pass: the blocked copy is made for this many images at a time and their tiles are
  // computed right after, while the copy is still in cache (all of them in the phased order).
  int64_t image_group = 1;
  // Elements between the n^2 positions of V and M, and of the low-precision copy of V (in its own
  // elements), over the `block` tiles of one pass (every tile in the phased order): position_stride, set
  // once by the build, so that the scratch it allocates and the execute's addressing agree.
  std::size_t pos_v = 0, pos_m = 0, pos_vl = 0;
  // NCHW16c or NHWC plans whose channels are whole blocks of 16 (not int8-spatial): the input transforms
  // read the tensors (the input, calibration samples) themselves, with no blocked copy
  // (winograd_execute.cpp, TileSource). FP32 windows inside the image are read where they are; those that
  // reach into the padding, and every window of a typed (bf16, fp16, int8) tensor, are staged per thread
  // first (widened as the copy would widen them). Set by the build.
  bool reads_input_directly = false;
  // int8-spatial plans on int8 NCHW16c or NHWC tensors of whole channel blocks: a call whose input scale
  // is the plan's (calibrated, or the tensor's largest code is 127) reads the codes in place, staged as
  // the typed tensors are (widened at scale 1: the codes themselves); other calls quantize in the copy.
  bool spatial_codes_directly = false;

  // Low-precision GEMMs (lowp.cpp; kFp32: U above and the FP32 kernels). U is packed in the same panels
  // as the FP32 U, in the element layout of the type (kernels/lowp_kernels.hpp); the FP32 U is freed.
  Precision precision = Precision::kFp32;
  Bf16GemmFn bf16_gemm = nullptr;  // bf16 dot products (vdpbf16ps, AMX): V as bf16 bits
  // FP32 arithmetic on widened 16-bit operands (fp16 with F16C, bf16 on FMAs): V rounded in place to the
  // format's values by round_v, then widened_gemm. Set: these paths; null: the others.
  WidenedGemmFn widened_gemm = nullptr;
  RoundFn round_v = nullptr;
  // The input transform that writes V already rounded as round_v rounds it (fns.input_bf16_round,
  // input_fp16_round: the same bits), so that no rounding pass runs; null: the pass runs. Set with the
  // kernels (lowp.cpp): bf16 wherever the ISA's table has the store, fp16 only on the avx2-f16c path,
  // which checked for F16C.
  InputTileFn rounding_input = nullptr;
  Fp16FmaGemmFn fp16_fma_gemm = nullptr;
  bool fp16_fma = false;  // kFp16 with fp16 arithmetic: V as fp16 bits, fp16_fma_gemm
  Int8GemmFn int8_gemm = nullptr;
  // Set where the int8 kernel converts V's rows itself (avx2): lowp_gemm_stage then hands it a position's
  // panels in one call, and the phased GEMM tasks cover runs of panels (int8_panel_groups).
  Int8PanelsGemmFn int8_panels_gemm = nullptr;
  // Called around each thread's run of GEMM calls (lowp_gemm_stage) when the GEMMs need it: the AMX
  // kernels' tile session (kernels/lowp_kernels.hpp). Null: nothing to do.
  void (*gemm_session_begin)() = nullptr;
  void (*gemm_session_end)() = nullptr;
  LowpConvertFns convert;       // V conversions of the same path as the GEMM
  AlignedBuffer U_lowp;         // raw storage: bf16/fp16 bits or int8 codes, [n*n][panels]
  std::vector<float> u_scale;   // int8: [n*n][Kpad] scale of U (per tap x output channel)
  std::vector<int32_t> u_comp;  // int8: [n*n][Kpad] 128 * sum_c U codes
  // fp16: [n*n][Kpad] 2^-e, where U's column (tap, output channel) was stored as fp16(U * 2^e), its
  // largest |U| brought into [2^-3, 2^-2) (lowp.cpp). The GEMMs multiply their FP32 results by it.
  std::vector<float> u_pow2;
  // fp16: a bound on |V| / max |d| for the plan's transform: the largest L1 norm of a B^T row, squared
  // (|V_ij| <= L1_i L1_j max |d|), with a margin for FP32's rounding inside the transform. An execute whose
  // input would let V pass its limit scales V by a power of two (set_fp16_v_shift, lowp.cpp).
  double fp16_v_gain = 0.0;
  std::vector<float>
      cal_scale;   // int8: calibrated per-tap V scales (int8-spatial: the input scale); empty: per call
  Int16Fns int16;  // int8-spatial kernels (int8_spatial.cpp)
  int64_t int16_chunk = 0;  // int8-spatial: channels per exact int32 partial sum
  // int8 without calibration needs every tile's V before it can quantize any: the phased order takes
  // the scales from its V; the fused order runs the input transforms twice (a first pass for max |V|).
  bool run_phased() const { return phased; }
  // The widened paths round V in place (fp32 values); the others convert V into a copy.
  bool v_in_place() const { return widened_gemm != nullptr; }
  // Bytes per element of the GEMM's V operand (int8 codes, 16-bit bf16/fp16/int16, or floats).
  std::size_t v_operand_size() const {
    if (precision == Precision::kInt8) return 1;
    return precision == Precision::kFp32 || v_in_place() ? 4 : 2;
  }
};

// Columns of each phase of a zero-padded input plane whose padded columns are split into `stride` phases
// (the depthwise planes form): ceil((W + 2 * pad_w) / stride).
// Columns of each phase row of the DirectPlan::phases copy: output column ox reads phase (v * dilation) %
// stride at ox + (v * dilation) / stride for tap v, and an output row's last panel of 16-float vectors reads
// up to round_up(OW, 16) - 1 + that offset (its lanes past OW are computed and dropped).
inline int64_t nchw_phase_width(const ConvShape& s) {
  return round_up(s.out_w(), int64_t{kLanes}) + (s.S - 1) * s.dilation / s.stride;
}

inline int64_t depthwise_phase_width(const ConvShape& s) {
  return ceil_div(s.W + 2 * s.pad_w, s.stride);
}

// Units of work per thread of the depthwise runs form (DirectPlan::depthwise_runs): rows, row segments or
// bands of rows of a channel range, shared out evenly.
inline constexpr int64_t kDepthwiseUnitsPerThread = 4;

// The direct GEMM form's rows read in place (DirectPlan::rows_in_place): the longest kernel-row segment
// (S * C floats) and the most kernel rows (a segment pointer each, on the stack). 1x3x224x224->64 at 7x7
// stride 2 (segments of 21 floats) ran in 0.90 of the im2col's time and at 3x3 stride 1 (9) in 0.86, on
// NHWC; stride-2 3x3 layers over 64-256 channels (192-768) in 1.09-1.35 of it, where the copy is small
// beside the GEMM and rows spread over the input cost more to read; 1x32x112x112->64 (96) level (AVX2,
// 2 threads, docs/engine-log.md "Session 24").
inline constexpr int64_t kRowsInPlaceMaxSegment = 32;
inline constexpr int64_t kRowsInPlaceMaxKernelRows = 16;

// The GEMM forms' pixel block (DirectPlan::pixel_block): at most `cap` pixels (an im2col block that stays
// in L2) and a multiple of the kernel's `mr` rows, the pixels cut into blocks of nearly one size, as many
// as a multiple of the threads where there are few but more than one. The pool gives each thread a
// contiguous share of the tasks, so blocks of unequal size leave a thread idle: at 1x1024x14x14->512 on
// AVX2 (2 threads) blocks of 126 and 70 pixels, each in two parts of its output channels, gave one thread
// both parts of the larger block, 20 % of the time idle. A single block stays whole: execute_direct
// splits its output channels among the threads, evenly, where blocks of a few pixels rounded to the
// kernel's rows would not be (7x7 layers cut in two: 30 and 19 pixels, 1.1-1.3x the time).
int64_t balanced_pixel_block(int64_t pixels, int64_t cap, int64_t mr, int threads);

struct DirectPlan {
  int64_t Cg = 0, Kg = 0, Kgpad = 0, crs = 0;  // per group; crs ordered (u, v, c)
  int64_t panel = 0;
  int64_t pixel_block = 0;
  // One input channel per group (depthwise, any channel multiplier Kg): no im2col and no GEMM, each
  // output channel a sum over the taps (direct_execute.cpp); W is then [tap (u, v)][K], bias [K].
  bool depthwise = false;
  // NCHW tensors with small filters (nchw_rows): C^T = W . im2col^T, a group's output channels as GEMM rows
  // against panels of `panel` output pixels of one image packed straight from the NCHW input, stored as
  // runs of pixels of one output channel; W is then [group][Kg rows of crs] (direct_execute.cpp).
  bool nchw_rows = false;
  // Small filters over few input channels per group (a network's first layer, grouped layers): output
  // channels as GEMM rows (W as for nchw_rows) against each row of im2col^T read where it lies in a copy
  // of the input planes with their columns split into `stride` zero-padded phases (p.packed_input, laid
  // out by nchw_phase_width), through the kernels' B-rows form, without packing panels
  // (direct_execute.cpp). NCHW tensors (with nchw_rows), and NHWC and NCHW16c ones with groups of few
  // output channels (each output row's groups transposed through the layout table's pack_rows16); the
  // rule is in direct_build.cpp.
  bool phases = false;
  // Depthwise with a channel multiplier on NCHW tensors with long output rows (direct_build.cpp: 32 pixels
  // at stride 1, 96 above): each channel's plane, zero-padded per thread (its columns split into `stride`
  // phases), through the ISA's depthwise_row kernel, a run of an output row per call (direct_execute.cpp).
  bool depthwise_planes = false;
  // Depthwise without a channel multiplier (Kg 1): runs of output pixels of a row through the ISA's
  // depthwise_pixels kernel, bias and ReLU fused, NHWC and NCHW16c tensors in place, NCHW ones through
  // bands of `band` output rows packed 16 channels at a time (direct_execute.cpp).
  bool depthwise_runs = false;
  // The GEMM form with one group, dilation 1 and short kernel rows (S * C <= kRowsInPlaceMaxSegment floats, a
  // first layer's few channels): the NHWC rows of pixels whose taps all lie inside the input are read in
  // place, one segment per kernel row (gemm_ukernel_segments), and only the other pixels go through the
  // im2col (direct_execute.cpp). Beside the other flags: placed after `band` (moving W by 8 bytes), the
  // stride-2 im2col plans over 128-256 channels, which do not read rows in place, ran 2 % slower in three
  // interleaved runs (AVX2); not explained.
  bool rows_in_place = false;
  // 1x1 kernels at stride 1 without padding (and not rows_in_place): a block's im2col rows are the NHWC
  // input's own pixels (NCHW and NCHW16c: those of its NHWC copy), consecutive, C floats apart, so the
  // GEMM reads them where they lie (lda C, the group's channels at an offset) instead of a copy: the
  // same values in the same order, the same bits. The thread scratch keeps its im2col area, unused:
  // the GEMM's rows at the scratch's start instead made 1x1 layers on 7x7 images 1.12-1.14x slower (AVX2,
  // 2 threads, 9 alternated reps; a placement effect, not explained).
  bool pixels_in_place = false;
  // Grouped convolutions with Cg == Kg of 2, 4 or 8 on NHWC and NCHW16c tensors: output channels in lanes,
  // each group's input channel shuffled out of the loaded vector by the ISA's grouped_lanes kernel
  // (direct_grouped_lanes.cpp); W is then [chunk of 16 output channels][u][v][c][16], bias padded to whole
  // chunks; tasks are an image's band of `band` output rows and `piece` channels, their input rows staged.
  bool grouped_lanes = false;
  int64_t piece = 0;
  int64_t band = 1;    // output rows per unit of the runs form on NCHW and of grouped_lanes (else 1)
  AlignedBuffer W;     // [group][panels of crs x width]
  AlignedBuffer bias;  // [group][Kgpad]
};

struct Plan::Impl {
  ConvShape shape;
  Layout layout = Layout::kNCHW;
  bool relu = false;
  Algorithm algorithm = Algorithm::kDirect;
  std::string reason;
  Isa isa = Isa::kPortable;
  MemoryRules memory_rules = MemoryRules::kXeon;  // memory_rules(isa, cpu_is_amd()): cost model and blocking
  const KernelTable* kernels = nullptr;
  int threads = 1;
  std::shared_ptr<ThreadPool> pool;  // the process's pool of this size (ThreadPool::shared)
  std::optional<WinogradPlan> wino;
  std::optional<DirectPlan> direct;
  Precision precision = Precision::kFp32;  // requested (the direct path runs FP32 and says so)
  LowpKernel lowp_kernel = LowpKernel::kAuto;
  Fp16Arithmetic fp16_arithmetic = Fp16Arithmetic::kAuto;
  Bf16Arithmetic bf16_arithmetic = Bf16Arithmetic::kAuto;
  std::string gemm_path;                     // "avx512-bf16", "portable", ... (FP32: the isa)
  std::string gemm_path_detail;              // "bf16 GEMM: avx512-bf16 (vdpbf16ps)"
  LowpStats stats;                           // of the last execute
  // Low-precision Winograd plans, and plans with bf16 or fp16 output, count the results that their output
  // tensor holds as NaN or Inf (LowpStats::output_nonfinite): the FP32 results that are NaN or have
  // |y| >= this limit, from which the output type rounds to inf (FP32: +inf; bf16: 0x7F7F8000; fp16:
  // 65520). 0 where the plan does not count them this way: FP32 plans with FP32 output, and int8
  // outputs, whose narrowing counts them.
  float output_count_limit = 0.0f;
  float d_scale = 1.0f;                      // int8-spatial: the input scale of the current execute
  TensorFormat input_format, output_format;  // element types of the tensors execute() takes
  bool typed_io() const {
    return input_format.type != DataType::kFp32 || output_format.type != DataType::kFp32;
  }

  // Scratch, reused by every execute (guarded by exec_mutex).
  std::mutex exec_mutex;
  AlignedBuffer packed_input;                 // blocked/padded (Winograd) or NHWC (direct) copy
  std::vector<AlignedBuffer> thread_scratch;  // one per worker
  std::vector<AlignedBuffer> thread_stage;    // per worker, in-place reads: staged windows or bands
  AlignedBuffer shared_v, shared_m;           // phased Winograd
  // Low-precision V (raw storage, one per worker for the fused order, one shared for the phased one),
  // tiles with non-finite V (int8), per-worker counters, the V scales of the current call.
  std::vector<AlignedBuffer> thread_lowp;
  AlignedBuffer shared_lowp;
  std::vector<std::vector<uint8_t>> thread_flags;
  std::vector<uint8_t> shared_flags;
  std::vector<int64_t> thread_saturated, thread_nonfinite;
  // fp16 plans with a fused ReLU that scan the input only after an overflow (execute_winograd): per
  // worker, the NaN/Inf values found in M's first 16 output channels, before the ReLU can hide them.
  std::vector<int64_t> thread_m_nonfinite;
  std::vector<float> v_scale;
  // fp16: this execute's V scaled by 2^-v_shift (0: as is; < 0: up), and u_pow2 times 2^v_shift, the column
  // scales its GEMMs multiply by instead (lowp.cpp, set_fp16_v_shift).
  int v_shift = 0;
  std::vector<float> call_pow2;
  std::vector<std::vector<float>> thread_amax;  // per worker: max |V| per tap and lane (tap*16 + lane)
  // Typed tensors (tensor_io.cpp): per worker, FP32 rows being converted and the int8 output counts;
  // the direct path's whole-tensor FP32 copies.
  std::vector<AlignedBuffer> thread_io;
  std::vector<NarrowCounts> thread_io_counts;
  AlignedBuffer io_input, io_output;
  // Stage timing (Plan::set_profiling): one accumulator per worker while on, none while off.
  std::vector<StageNs> thread_stage_ns;
  int64_t profiled_executes = 0, profiled_wall_ns = 0;
  // The clock of a task on `worker`: charges nothing unless profiling is on.
  StageLaps laps(int worker) {
    return StageLaps(thread_stage_ns.empty() ? nullptr : &thread_stage_ns[static_cast<std::size_t>(worker)]);
  }
  // A pool task (task, worker) whose whole time goes to one stage: pool->run(n, charged(stage, task)).
  // It holds `task` by reference, so `task` must outlive the pool job.
  template <class Task>
  auto charged(Stage stage, const Task& task) {
    return [this, stage, &task](std::size_t t, int worker) {
      StageLaps clock = laps(worker);
      task(t, worker);
      clock.lap(stage);
    };
  }
};

// Stages, one file each.
void build_winograd(Plan::Impl& p, const float* weights, const float* bias, const Transform& t,
                    bool allow_generated, int64_t block_option, int64_t k_parts_option);
// input and output in the plan's tensor types (p.input_format / p.output_format).
void execute_winograd(Plan::Impl& p, const void* input, void* output);
void calibrate_winograd(Plan::Impl& p, std::span<const float* const> inputs);  // int8: stores cal_scale
// Low-precision parts (lowp.cpp).
void build_lowp(Plan::Impl& p, WinogradPlan& w, const float* weights);  // packs U, picks the kernels
// How many times the FP32 rate the plan's Winograd GEMMs will run, for the automatic tile choice
// (algorithm_choice.hpp): above 1 where build_lowp will pick an AMX kernel for a layer of `channels`
// input channels, 1 otherwise.
double lowp_gemm_speedup(const Plan::Impl& p, int64_t channels);
// int8-spatial (int8_spatial.cpp): the default transform of a tile (points 0, +-1, +-2, ..., inf); the
// integer transforms, quantized filters and packed U' (throws when they do not fit int16); max |d| of
// an input (finite values). The input's codes are made by pack_blocked_input (spatial_codes).
Transform int8_spatial_transform(TileSize tile);
void build_int8_spatial(Plan::Impl& p, WinogradPlan& w, const float* weights);
// max |d| over the finite values of an input tensor of type `format` (int8-spatial's input scale, fp16's V
// shift).
float input_tensor_amax(Plan::Impl& p, const void* input, TensorFormat format);
// max |d| over a sample of the input (1.6 %, at most 128 pieces of 16 values; one thread): fp16's V shift for
// plans that do not take the exact max before they transform (execute_winograd); never above
// input_tensor_amax.
float input_tensor_amax_sample(Plan::Impl& p, const void* input, TensorFormat format);

// Which elements of an input tensor are NCHW16c padding lanes (the last channel block's lanes from C on):
// never data, whatever users leave there; the scans and checks that read the tensor whole skip them.
struct InputPaddingLanes {
  int64_t blocks = 1, plane = 16,
          last_lanes = 16;  // last_lanes 16: no padding (another layout, or C % 16 == 0)
  InputPaddingLanes(const ConvShape& s, Layout layout)
      : blocks(ceil_div(s.C, 16)),
        plane(s.H * s.W * 16),
        last_lanes(layout == Layout::kNCHW16c ? s.C - 16 * (blocks - 1) : 16) {}
  bool any() const { return last_lanes < 16; }
  bool last_block(int64_t element) const { return (element / plane) % blocks == blocks - 1; }
  bool padding(int64_t element) const { return element % 16 >= last_lanes && last_block(element); }
};
// fp16: the least s >= 0 for which V of an input whose largest finite |d| is `amax` stays within its limit
// (65504; 2^12 with fp16 arithmetic) after V is multiplied by 2^-s; where V's bound is below 1, the s < 0
// that brings it to [2^4, 2^5) instead (V scaled up, out of fp16's subnormals). Sets p.v_shift and, when
// s != 0, p.call_pow2.
void set_fp16_v_shift(Plan::Impl& p, float amax);
void allocate_lowp_scratch(Plan::Impl& p);  // after the Winograd scratch
void lowp_tap_amax(Plan::Impl& p, const float* v, std::size_t pos_v, int64_t rows,
                   float* amax);  // max into amax
// input of type `format` (calibration samples are FP32 whatever the plan's input type)
void tap_amax_pass(Plan::Impl& p, const void* input, TensorFormat format,
                   float* amax);                         // winograd_execute.cpp
void lowp_set_scales(Plan::Impl& p, const float* amax);  // v_scale from amax (calibrated: stored)
// V block (rows tiles at v, position stride pos_v) into the GEMM operand at vl (position stride pos_vl,
// in its elements); flags[i] = 1 for tiles with non-finite V (int8). Returns the count of saturated values
// (int8).
int64_t lowp_convert(const Plan::Impl& p, float* v, std::size_t pos_v, int64_t rows, float* vl,
                     std::size_t pos_vl, uint8_t* flags);
void lowp_gemm_stage(const Plan::Impl& p, int64_t rows, int64_t a0, int64_t a1, int64_t q0, int64_t q1,
                     const float* vl, std::size_t pos_vl, float* mo, std::size_t pos_m);
// NaN into columns [k0, k1) of every position of the flagged tiles' M; returns how many tiles.
int64_t lowp_poison(const Plan::Impl& p, int64_t rows, const uint8_t* flags, float* mo, std::size_t pos_m,
                    int64_t k0, int64_t k1);

// Typed tensors (tensor_io.cpp): whole-tensor conversions in the plan's input / output type (the int8
// output counts go to thread_io_counts), and the scratch both paths need.
void widen_tensor(Plan::Impl& p, const void* src, float* dst, int64_t count);
void narrow_tensor(Plan::Impl& p, const float* src, void* dst, int64_t count);
void allocate_io_scratch(Plan::Impl& p);
// Throws nova::Error unless an int8 tensor's scale is a finite normal number > 0 (so 1 / scale is
// finite too); `what` names the tensor. Other types have no scale to check.
void check_int8_scale(const TensorFormat& format, const std::string& what);

void build_direct(Plan::Impl& p, const float* weights, const float* bias);
void execute_direct(Plan::Impl& p, const float* input, float* output);
// The grouped-lanes form (DirectPlan::grouped_lanes, direct_grouped_lanes.cpp): whether a layer can take it,
// its build (d as build_direct made it: Cg, Kg) and its execute.
bool grouped_lanes_applies(const ConvShape& s, Layout layout);
void build_grouped_lanes(Plan::Impl& p, DirectPlan& d, const float* weights, const float* bias);
void execute_grouped_lanes(Plan::Impl& p, const float* input, float* output);

// Floats of a worker's input stage (thread_stage) for the in-place reads (winograd_execute.cpp).
std::size_t input_stage_floats(const WinogradPlan& w);

// Input copies (input_pack.cpp): NCHW or NHWC into the channel-blocked, zero-padded layout
// [images][Cb][Hp][Wp][16] with the image at offset (pad_h, pad_w), widened to FP32 from the input's
// type on the way; and NCHW into NHWC (FP32). spatial_codes (int8-spatial): each row is quantized to the
// input's int8 codes as soon as it is copied, while it is in cache (Int16Fns::codes at 1 / d_scale,
// saturation counted per thread), instead of in a pass of its own over the copy. amax (low-precision
// plans): the largest finite |value| copied is max-ed into *amax.
void pack_blocked_input(Plan::Impl& p, const void* input, TensorFormat format, int64_t images, float* dst,
                        int64_t Cb, int64_t Hp, int64_t Wp, bool spatial_codes = false,
                        float* amax = nullptr);
// The first `count` floats of a blocked copy multiplied by `factor` (fp16's V shift: a power of two).
void scale_blocked_input(Plan::Impl& p, float* xb, int64_t count, float factor);
// Elements of one image of the input tensor in the plan's layout (NCHW16c: padding lanes included).
inline int64_t input_elements_per_image(const Plan::Impl& p) {
  return input_elements(p.shape, p.layout) / p.shape.N;
}
void pack_nchw_to_nhwc(Plan::Impl& p, const float* input, float* dst);
void pack_nchw16c_to_nhwc(Plan::Impl& p, const float* input, float* dst);

}  // namespace nova::conv
