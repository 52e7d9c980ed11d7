// The CUDA multi-pass Winograd convolution (the second seed's design, on NVIDIA GPUs): fp16 storage of the
// transformed tiles, FP32 accumulation, in four passes on one stream:
//   0. the input's largest |value| (a reduction), from which V's power-of-two shift follows (as on the CPU)
//   1. input transform: every (image, channel, tile) gives n^2 values of V = B^T d B, stored as fp16
//   2. n^2 GEMMs M[a] = U[a] V[a] in cuBLAS (fp16 operands, FP32 accumulation and output)
//   3. output transform: Y = A^T M A per tile, the scales undone, bias and ReLU fused, NaN/Inf counted
// The transformed filters U = G g G^T are made once, at plan time, on the host in float64, with a power of
// two per (position, output channel) that puts each column's largest |U| in [1, 2) before rounding to
// fp16, and stay on the device (the seed's cached filter transform).
//
// The same passes run on the host from the same per-thread code (src/cuda/multipass_math.hpp), with a
// column-major GEMM of cuBLAS's semantics: `emulate` gives what the GPU computes up to the GEMM's summation
// order, on any machine; the tests check it against the float64 reference and, where a GPU is present,
// the device against it.
//
// Stride 1, dilation 1, groups 1, square kernels, NCHW tensors of FP32, fp16 or bf16 (CudaPlanOptions::input,
// ::output; the passes compute in FP32 whatever the types); no direct fallback on the GPU: other convolutions
// are refused with a nova::Error that says why.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nova/conv_shape.hpp"
#include "nova/cuda/tensor_type.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"

namespace nova::cuda {

// Whether nova was built with CUDA and a device can be used; otherwise `why` (when given) says which of
// the two is missing, with the CUDA runtime's message.
bool device_available(std::string* why = nullptr);
// "NVIDIA H200 (sm_90, 139.8 GiB)" for `device`, or throws nova::Error when device_available() is false.
std::string device_name(int device = 0);
// Whether this build holds the CUDA kernels (NOVA_CUDA at configure time found nvcc).
bool built_with_cuda();
// Whether cuBLAS (loaded on first use, not linked) can be loaded, with or without a device; otherwise
// `why` says what dlopen said.
bool blas_loadable(std::string* why = nullptr);

// round_to_type (tensor_type.hpp) over every value, in place: the CPU engine's vectorized conversions there
// and back. Here rather than beside it, whose header stays C++17 for the kernels.
void round_to_type(TensorType t, std::span<float> values);

struct CudaPlanOptions {
  // A verified transform; by default the engine's default transform of `tile` with its B^T rows balanced
  // by powers of two (exact), as the CPU engine's fp16 plans use it.
  std::optional<Transform> transform;
  // Default: F(6,3) for 3x3 kernels (the seed's tile), F(4,5) for 5x5, F(m, r) with m = 2 otherwise.
  std::optional<TileSize> tile;
  bool relu = false;
  int device = 0;
  TensorType input = TensorType::kFp32;
  TensorType output = TensorType::kFp32;
};

// What the last execute met.
struct CudaRunStats {
  int64_t output_nonfinite = 0;  // NaN/Inf among the outputs
  float input_amax = 0.0f;       // the input's largest |value| (NaN where it held one)
  int v_shift = 0;               // V stored as V * 2^-v_shift (negative: scaled up, for small inputs)
};

// The per-call figures that do not need a device: the chosen transform, the shift rule, the layout.
struct MultipassDescription {
  TileSize tile;
  std::string points;   // the transform's points, "0, 1, -1, ..."
  std::string reason;   // why this transform
  int64_t tiles = 0;    // N * ceil(out_h / m) * ceil(out_w / m)
  int64_t v_bytes = 0;  // the fp16 V buffer
  int64_t m_bytes = 0;  // the FP32 GEMM results
  int64_t u_bytes = 0;  // the fp16 transformed filters
  double v_gain = 0.0;  // |V| <= v_gain * max|d| (the square of B^T's largest row L1 norm)
  TensorType input = TensorType::kFp32, output = TensorType::kFp32;  // the tensors' element types
};

class CudaConvPlan {
 public:
  // Throws nova::Error for an unsupported convolution, a bad transform, weights with NaN/Inf, wrong sizes,
  // or no usable device (device_available's reason).
  static CudaConvPlan create(const ConvShape& shape, std::span<const float> weights,
                             std::span<const float> bias, const CudaPlanOptions& options = {});
  CudaConvPlan(CudaConvPlan&&) noexcept;
  CudaConvPlan& operator=(CudaConvPlan&&) noexcept;
  ~CudaConvPlan();

  // Device pointers to NCHW tensors of the plan's types (options.input, options.output: FP32, fp16 as
  // __half, bf16 as __nv_bfloat16), shape.input_size() and shape.output_size() elements, on the plan's
  // device (host memory, null or another device's memory is refused with nova::Error); `stream` is a
  // cudaStream_t (null: the legacy default stream). Asynchronous: stats() waits for the stream. A plan's
  // buffers (V, M, the max and the count) serve one execute at a time: executes on other streams must be
  // ordered after it (or use a plan each).
  void execute_device(const void* input, void* output, void* stream = nullptr);
  // Host FP32 values: rounded to the plan's input type (where it is not FP32) and copied in, run, copied
  // out and widened back to FP32 from the output type; waits. The same values as emulate() gives.
  void execute(std::span<const float> input, std::span<float> output);
  std::vector<float> execute(std::span<const float> input);
  // Device time of `repeats` executes on `input` (converted and copied to the device once, one execute
  // first to warm up), each timed by CUDA events on the default stream: milliseconds, one per execute. The
  // output stays on the device; stats() gives the last one's counts.
  std::vector<double> time_executes(std::span<const float> input, int repeats);
  // Synchronizes the plan's last stream, then reads the counts.
  CudaRunStats stats();

  const ConvShape& shape() const;
  const MultipassDescription& description() const;

 private:
  struct Impl;
  explicit CudaConvPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The plan's passes on the host, from the per-thread code the kernels run, with FP32 sums over input
// channels in order (cuBLAS's may be in another order): what the GPU computes, without one. Same checks as
// CudaConvPlan::create; `stats` (when given) receives the run's counts. As CudaConvPlan::execute on host
// values: the input rounded to options.input's type, the output to options.output's, returned as FP32.
std::vector<float> emulate(const ConvShape& shape, std::span<const float> weights,
                           std::span<const float> bias, std::span<const float> input,
                           const CudaPlanOptions& options = {}, CudaRunStats* stats = nullptr,
                           MultipassDescription* description = nullptr);

}  // namespace nova::cuda
