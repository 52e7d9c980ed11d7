// Launchers of the CUDA multi-pass kernels (multipass_kernels.cu), callable from plain C++: streams are
// cudaStream_t passed as void*, fp16 buffers as uint16_t, the input and output tensors as void* of their
// TensorType. Each returns the launch's cudaError_t as an int (0: launched).
#pragma once

#include <cstdint>

#include "multipass_math.hpp"
#include "nova/cuda/tensor_type.hpp"

namespace nova::cuda::detail {

// amax_bits (one unsigned int on the device, zeroed by this launch's stream first) receives the bits of the
// input's largest |value|; NaN's bits exceed every other's, so an input with NaN gives NaN.
int launch_input_amax(const void* input, TensorType type, int64_t count, unsigned int* amax_bits,
                      void* stream);
// V[a][c][t] = fp16((B^T d B)[a] * 2^-shift), the shift `rule.shift(*amax_bits)`.
int launch_input_pass(const InputPassArgs& args, const void* input, TensorType type,
                      const unsigned int* amax_bits, VShiftRule rule, uint16_t* V, void* stream);
// Y = A^T (M o u_pow2 2^shift) A + bias, ReLU, stored as `type`; *nonfinite (zeroed by this stream first)
// += NaN/Inf among the stored outputs.
int launch_output_pass(const OutputPassArgs& args, const float* M, const float* u_pow2, const float* bias,
                       const unsigned int* amax_bits, VShiftRule rule, void* output, TensorType type,
                       unsigned long long* nonfinite, void* stream);

}  // namespace nova::cuda::detail
