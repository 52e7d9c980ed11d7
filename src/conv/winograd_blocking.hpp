// How a Winograd plan orders its work: fused blocks of tiles (input transform, GEMMs and output transform
// of a block while its V and M are in L2) or the phased order (each stage over all tiles, the GEMMs split
// by position and panel), and how many images each blocked input copy holds. A pure function of the
// plan's sizes, so that every rule, the AMX ones included, is tested on any machine
// (tests/conv/test_winograd_blocking.cpp); winograd_build.cpp applies it.
#pragma once

#include <cstdint>

#include "nova/conv/conv.hpp"

namespace nova::conv {

struct BlockingProblem {
  int64_t images = 1;              // N
  int64_t tiles_per_image = 1;     // tiles_y x tiles_x
  int64_t positions = 16;          // n^2
  int64_t Cpad = 16, Kpad = 16;    // channels padded to whole blocks of 16
  int64_t packed_image_bytes = 0;  // one image of the blocked input copy (FP32)
  int64_t mr = 6;                  // rows of the FP32 GEMM micro-kernel
  int threads = 1;
  bool amx_rows = false;  // AMX runs the GEMMs: blocks are made of 16-row tile passes
  bool int8_vnni = false;  // int8 GEMMs on the AVX512-VNNI kernel (where AMX does not run them)
  Precision precision = Precision::kFp32;
  // PlanOptions::tile_block: 0 automatic, > 0 fused blocks of that size, < 0 phased.
  int64_t block_option = 0;
  int64_t panels = 1;          // GEMM panels of output channels (Kpad / panel, rounded up)
  int64_t k_parts_option = 0;  // PlanOptions::k_parts: 0 automatic, > 0 that many parts (at most panels)
  // How many times the phased order's V and M count against U's re-reads by fused blocks: 4 (written out
  // and read back, counted twice over) as measured on the AVX-512 Xeon, 6 for AVX2 plans
  // (winograd_build.cpp).
  double phased_vm_passes = 4.0;

  int64_t tiles() const { return images * tiles_per_image; }
};

struct Blocking {
  bool phased = false;
  int64_t block = 1;        // tiles per fused block (all tiles in the phased order)
  int64_t image_group = 1;  // images per blocked input copy (all of them in the phased order)
  int64_t k_parts = 1;      // fused order: parts of each block's output channels, a task each
};

Blocking choose_blocking(const BlockingProblem& b);

}  // namespace nova::conv
