// cuBLAS, loaded on first use (dlopen) rather than linked: linked, its libraries' start-up cost every
// process that holds the CUDA path 0.1 s and 217 MB of resident memory (the nova CLI: 0.10 s and 222 MB
// against 5 MB without), whether or not it ever makes a plan. Only the functions the plan calls.
#pragma once

#include <cublas_v2.h>

namespace nova::cuda::detail {

// cuBLAS's C signature (C++ sees an overload too, taking a cudaDataType compute type).
using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                                int, int, const void*, const void*, cudaDataType, int,
                                                long long int, const void*, cudaDataType, int, long long int,
                                                const void*, void*, cudaDataType, int, long long int, int,
                                                cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  GemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The loaded library's functions; throws nova::Error naming the library and dlerror()'s reason where it
// cannot be loaded or lacks one of them. Thread-safe; loads once.
const CublasApi& cublas();

}  // namespace nova::cuda::detail
