// The inside of a Plan: what create() decided and what execute() needs. Internal to src/conv.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "aligned_buffer.hpp"
#include "kernels/kernel_table.hpp"
#include "nova/conv/conv.hpp"
#include "thread_pool.hpp"

namespace nova::conv {

inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
inline int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }
// Floats between the n^2 Winograd positions of V or M: one cache line more than the data, so that
// the n^2 loads and stores of one tile do not all fall into the same L1 set (a stride that is a
// multiple of 4 KiB would, and the transforms would thrash).
// Tiles of one tile row whose NCHW output is stored together (winograd_execute.cpp).
inline constexpr int64_t kBandTiles = 8;
inline std::size_t position_stride(int64_t rows, int64_t cols) { return static_cast<std::size_t>(rows * cols + 16); }

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
  AlignedBuffer bias;                          // Kpad values
  // Execution: fused blocks of `block` tiles (input transform, GEMM, output transform in cache), or
  // phased (each stage over all tiles, with the GEMMs split by position and panel).
  bool phased = false;
  int64_t block = 0;
  // Images per pass: the blocked copy is made for this many images at a time and their tiles are
  // computed right after, while the copy is still in cache (all of them in the phased order).
  int64_t image_group = 1;
};

struct DirectPlan {
  int64_t Cg = 0, Kg = 0, Kgpad = 0, crs = 0;  // per group; crs ordered (u, v, c)
  int64_t panel = 0;
  int64_t pixel_block = 0;
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
  const KernelTable* kernels = nullptr;
  int threads = 1;
  std::unique_ptr<ThreadPool> pool;
  std::optional<WinogradPlan> wino;
  std::optional<DirectPlan> direct;

  // Scratch, reused by every execute (guarded by exec_mutex).
  std::mutex exec_mutex;
  AlignedBuffer packed_input;                 // blocked/padded (Winograd) or NHWC (direct) copy
  std::vector<AlignedBuffer> thread_scratch;  // one per worker
  AlignedBuffer shared_v, shared_m;           // phased Winograd
};

// Stages, one file each.
void build_winograd(Plan::Impl& p, const float* weights, const float* bias, const Transform& t, bool allow_generated,
                    int64_t block_option);
void execute_winograd(Plan::Impl& p, const float* input, float* output);
void build_direct(Plan::Impl& p, const float* weights, const float* bias);
void execute_direct(Plan::Impl& p, const float* input, float* output);

// Input copies (input_pack.cpp): NCHW or NHWC into the channel-blocked, zero-padded layout
// [images][Cb][Hp][Wp][16] with the image at offset (pad_h, pad_w); and NCHW into NHWC.
void pack_blocked_input(Plan::Impl& p, const float* input, int64_t images, float* dst, int64_t Cb, int64_t Hp,
                        int64_t Wp);
void pack_nchw_to_nhwc(Plan::Impl& p, const float* input, float* dst);

}  // namespace nova::conv
