// The host half of a CUDA multi-pass plan, shared by the device plan (cuda_plan.cpp) and the host
// emulation: the checks, the transform, the transformed filters with their scales, the GEMM's arguments.
// Plain C++: built and tested with or without CUDA.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "multipass_math.hpp"
#include "nova/cuda/cuda_conv.hpp"

namespace nova::cuda::detail {

// cublasGemmStridedBatchedEx's arguments, column-major: C[i + j ldc] = sum_l A[i + l lda] B[l + j ldb]
// for each of `batch` problems, A, B, C advancing by their strides. The plan's: A = V (T x C), B = U
// (C x K), C = M (T x K), one problem per Winograd position.
struct GemmCall {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int64_t batch = 0;
};

struct MultipassPlanData {
  ConvShape shape;
  Transform transform;
  InputPassArgs input_pass;
  OutputPassArgs output_pass;
  GemmCall gemm;
  std::vector<uint16_t> u_fp16;  // U[a][k][c] as fp16 bits, each (a, k) column scaled into [1, 2)
  std::vector<float> u_pow2;     // [a][k]: the power of two that undoes that column's scale
  std::vector<float> bias;       // empty or K values
  VShiftRule v_shift;
  MultipassDescription description;
};

// Throws nova::Error as CudaConvPlan::create does (except for the device).
MultipassPlanData prepare_multipass(const ConvShape& shape, std::span<const float> weights,
                                    std::span<const float> bias, const CudaPlanOptions& options);

// Throws nova::Error where a tensor of `got` values is not the `want` that `s` needs.
void check_size(std::size_t got, int64_t want, const char* what, const ConvShape& s);

// The passes on the host (the emulation): amax, then V as fp16 bits, the GEMM in FP32, the output pass.
std::vector<float> run_multipass_on_host(const MultipassPlanData& plan, std::span<const float> input,
                                         CudaRunStats& stats);

// cuBLAS's column-major strided batched GEMM on fp16 operands with FP32 products and sums (in order of
// l), for the emulation and its test.
void gemm_fp16_fp32_host(const GemmCall& call, const uint16_t* A, const uint16_t* B, float* C);

}  // namespace nova::cuda::detail
