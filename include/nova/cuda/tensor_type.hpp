// Element types of the CUDA path's input and output tensors (CudaPlanOptions::input, ::output). Its own
// header, free of C++20, so that the kernels (built as C++17 by nvcc) name the same enumerators.
#pragma once

#include <string>

namespace nova::cuda {

// The input pass widens each value to FP32 as it reads it (exactly); the output pass rounds its FP32
// result once as it stores it (to nearest even; beyond the type's range to +-Inf, which the NaN/Inf count
// then counts). fp16 is IEEE binary16 (__half), bf16 the upper half of an FP32 (__nv_bfloat16).
enum class TensorType { kFp32, kFp16, kBf16 };

// "fp32", "fp16", "bf16"; parse_tensor_type throws nova::Error for another name.
const char* to_string(TensorType t);
TensorType parse_tensor_type(const std::string& name);
// Bytes per element: 4 or 2.
int element_bytes(TensorType t);
// `value` as a tensor of type `t` holds it, widened back to FP32 (fp16 and bf16: rounded to nearest even,
// beyond the range +-Inf, NaN kept): what the path reads of an input, and what it stores of an output.
float round_to_type(TensorType t, float value);

}  // namespace nova::cuda
