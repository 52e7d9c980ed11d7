// The CUDA multi-pass kernels: input amax, input transform (to fp16 V), output transform. The per-thread
// work is multipass_math.hpp's, shared with the host emulation; here are only the grids, the tensors' loads
// and stores, the fp16 stores of V and the reductions. Grid-stride loops, 256 threads a block.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "multipass_kernels.hpp"

namespace nova::cuda::detail {
namespace {

constexpr int kBlock = 256;
constexpr int64_t kMaxBlocks = 1 << 20;

int blocks_for(int64_t count) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((count + kBlock - 1) / kBlock, kMaxBlocks)));
}

// The input tensor, of the plan's type: element j widened to FP32 (exactly). The type is the same for every
// thread (a uniform branch at each load; a kernel per type would triple what nvcc builds for each GPU).
struct InputTensor {
  const void* data;
  TensorType type;
  __device__ float operator()(int64_t j) const {
    switch (type) {
      case TensorType::kFp16:
        return __half2float(static_cast<const __half*>(data)[j]);
      case TensorType::kBf16:
        return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[j]);
      default:
        return static_cast<const float*>(data)[j];
    }
  }
};

// The output tensor, of the plan's type: stores y as element j, rounded to nearest even to the type, and
// returns the stored value. A uniform branch at each store, as the input's loads.
struct OutputTensor {
  void* data;
  TensorType type;
  __device__ float operator()(int64_t j, float y) const {
    switch (type) {
      case TensorType::kFp16: {
        const __half h = __float2half_rn(y);
        static_cast<__half*>(data)[j] = h;
        return __half2float(h);
      }
      case TensorType::kBf16: {
        const __nv_bfloat16 h = __float2bfloat16_rn(y);
        static_cast<__nv_bfloat16*>(data)[j] = h;
        return __bfloat162float(h);
      }
      default:
        static_cast<float*>(data)[j] = y;
        return y;
    }
  }
};

// Pass 0 reduces within each block (warps, then the block's warps through shared memory) and makes one
// atomicMax a block, on a grid of at most kAmaxBlocks blocks (grid-stride). Its first version, one thread per
// element and an atomic a warp, serialized 50,000 atomics on one address for an 8x64x56x56 input: 40 us of
// the plan's 84 (Nsight Compute on an H200, session 47), more than the input and output passes together.
constexpr int64_t kAmaxBlocks = 1024;

__global__ void input_amax_kernel(InputTensor input, int64_t count, unsigned int* amax_bits) {
  unsigned int local = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    local = max(local, __float_as_uint(input(i)) & 0x7fffffffu);  // |x|'s bits order as |x|; NaN's above all
  local = __reduce_max_sync(0xffffffffu, local);
  __shared__ unsigned int warp_max[kBlock / 32];
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = local;
  __syncthreads();
  if (threadIdx.x < 32) {
    local = threadIdx.x < kBlock / 32 ? warp_max[threadIdx.x] : 0u;
    local = __reduce_max_sync(0xffffffffu, local);
    if (threadIdx.x == 0) atomicMax(amax_bits, local);
  }
}

// One V shift per block, from the pass-0 amax (the host's rule: VShiftRule).
__device__ int block_shift(const unsigned int* amax_bits, VShiftRule rule) {
  __shared__ int shift;
  if (threadIdx.x == 0) shift = rule.shift(__uint_as_float(*amax_bits));
  __syncthreads();
  return shift;
}

template <int NP>
__global__ void input_pass_kernel(InputPassArgs args, InputTensor input, const unsigned int* amax_bits,
                                  VShiftRule rule, __half* V) {
  const int shift = block_shift(amax_bits, rule);
  const TileGeometry& g = args.g;
  const int nn = (NP > 0 ? NP : g.n) * (NP > 0 ? NP : g.n);
  constexpr int cap = NP > 0 ? NP : kMaxTilePoints;
  const int64_t total = g.threads(g.C);
  float v[cap * cap];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const TileIndex x = input_pass_tile<NP>(args, input, i, shift, v);
    for (int a = 0; a < nn; ++a) V[g.v_index(a, x.channel, x.tile)] = __float2half_rn(v[a]);
  }
}

template <int NP, int MP>
__global__ void output_pass_kernel(OutputPassArgs args, const float* M, const float* u_pow2,
                                   const float* bias, const unsigned int* amax_bits, VShiftRule rule,
                                   OutputTensor output, unsigned long long* nonfinite) {
  const int shift = block_shift(amax_bits, rule);
  const TileGeometry& g = args.g;
  const int64_t total = g.threads(g.K);
  unsigned int count = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    count += static_cast<unsigned int>(output_pass_tile<NP, MP>(args, M, u_pow2, bias, i, shift, output));
  count = __reduce_add_sync(0xffffffffu, count);
  if ((threadIdx.x & 31) == 0 && count > 0) atomicAdd(nonfinite, static_cast<unsigned long long>(count));
}

template <int NP>
void input_pass(const InputPassArgs& args, InputTensor input, const unsigned int* amax_bits, VShiftRule rule,
                __half* V, cudaStream_t s) {
  input_pass_kernel<NP>
      <<<blocks_for(args.g.threads(args.g.C)), kBlock, 0, s>>>(args, input, amax_bits, rule, V);
}

template <int NP, int MP>
void output_pass(const OutputPassArgs& args, const float* M, const float* u_pow2, const float* bias,
                 const unsigned int* amax_bits, VShiftRule rule, OutputTensor output,
                 unsigned long long* nonfinite, cudaStream_t s) {
  output_pass_kernel<NP, MP><<<blocks_for(args.g.threads(args.g.K)), kBlock, 0, s>>>(
      args, M, u_pow2, bias, amax_bits, rule, output, nonfinite);
}

}  // namespace

int launch_input_amax(const void* input, TensorType type, int64_t count, unsigned int* amax_bits,
                      void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (cudaError_t e = cudaMemsetAsync(amax_bits, 0, sizeof(unsigned int), s); e != cudaSuccess) return e;
  input_amax_kernel<<<std::min<int64_t>(blocks_for(count), kAmaxBlocks), kBlock, 0, s>>>(
      InputTensor{input, type}, count, amax_bits);
  return cudaGetLastError();
}

// The tiles' n (and, in the output pass, m) at compile time for the default tiles (F(2,3), F(4,3), F(6,3),
// F(8,3), F(2,5), F(4,5)) and F(6,5): the tile stays in registers (ptxas, sm_90: no stack frame but
// at n = 10, whose three n x n arrays pass the register file); other tiles run the run-time loops.
int launch_input_pass(const InputPassArgs& args, const void* input, TensorType type,
                      const unsigned int* amax_bits, VShiftRule rule, uint16_t* V, void* stream) {
  auto run = [&](auto launch) {
    launch(args, InputTensor{input, type}, amax_bits, rule, reinterpret_cast<__half*>(V),
           static_cast<cudaStream_t>(stream));
  };
  switch (args.g.n) {
    case 4:
      run(input_pass<4>);
      break;
    case 6:
      run(input_pass<6>);
      break;
    case 8:
      run(input_pass<8>);
      break;
    case 10:
      run(input_pass<10>);
      break;
    default:
      run(input_pass<0>);
      break;
  }
  return cudaGetLastError();
}

int launch_output_pass(const OutputPassArgs& args, const float* M, const float* u_pow2, const float* bias,
                       const unsigned int* amax_bits, VShiftRule rule, void* output, TensorType type,
                       unsigned long long* nonfinite, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (cudaError_t e = cudaMemsetAsync(nonfinite, 0, sizeof(unsigned long long), s); e != cudaSuccess)
    return e;
  // The output pass's loops run over m too: both fixed for the default tiles.
  const int n = args.g.n, m = args.g.m;
  auto run = [&](auto launch) {
    launch(args, M, u_pow2, bias, amax_bits, rule, OutputTensor{output, type}, nonfinite, s);
  };
  if (n == 4 && m == 2)
    run(output_pass<4, 2>);
  else if (n == 6 && m == 4)
    run(output_pass<6, 4>);
  else if (n == 8 && m == 6)
    run(output_pass<8, 6>);
  else if (n == 10 && m == 8)
    run(output_pass<10, 8>);
  else if (n == 6 && m == 2)
    run(output_pass<6, 2>);
  else if (n == 8 && m == 4)
    run(output_pass<8, 4>);
  else if (n == 10 && m == 6)
    run(output_pass<10, 6>);
  else
    run(output_pass<0, 0>);
  return cudaGetLastError();
}

}  // namespace nova::cuda::detail
