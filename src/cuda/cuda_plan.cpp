// CudaConvPlan on a device: the plan's buffers, the four passes on a stream, the counts.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "cublas_loader.hpp"
#include "multipass_kernels.hpp"
#include "multipass_prepare.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"
#include "tensor_convert.hpp"

namespace nova::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}
void check_launch(int e, const char* what) {
  check(static_cast<cudaError_t>(e), what);
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS: ") + what + ": " + detail::cublas().status_string(e));
}

// One device allocation, freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
    if (bytes > 0) check(cudaMalloc(&data_, bytes), what);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <class T>
DeviceBuffer upload(const std::vector<T>& values, const char* what) {
  DeviceBuffer b(values.size() * sizeof(T), what);
  if (!values.empty())
    check(cudaMemcpy(b.as<void>(), values.data(), b.bytes(), cudaMemcpyHostToDevice), what);
  return b;
}

// A tensor the plan's kernels may read or write: device (or managed) memory of the plan's own device.
void check_device_pointer(const void* p, const char* name, int device) {
  if (!p) throw Error(std::string(name) + " is null");
  cudaPointerAttributes a{};
  check(cudaPointerGetAttributes(&a, p), name);
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    throw Error(std::string(name) + " is not device memory; execute(span) takes host tensors");
  if (a.type == cudaMemoryTypeDevice && a.device != device)
    throw Error(std::string(name) + " is on CUDA device " + std::to_string(a.device) + ", the plan on device " +
                std::to_string(device));
}

// A CUDA event, destroyed with its owner.
struct Event {
  cudaEvent_t event = nullptr;
  Event() { check(cudaEventCreate(&event), "cudaEventCreate"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event); }
};

}  // namespace

bool built_with_cuda() {
  return true;
}

bool blas_loadable(std::string* why) {
  try {
    detail::cublas();
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

bool device_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why)
      *why = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                              : std::string("no CUDA device");
    cudaGetLastError();  // clear the sticky error of the failed query
    return false;
  }
  return true;
}

std::string device_name(int device) {
  std::string why;
  if (!device_available(&why)) throw Error(why);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  char text[64];
  std::snprintf(text, sizeof text, " (sm_%d%d, %.1f GiB)", prop.major, prop.minor,
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return prop.name + std::string(text);
}

struct CudaConvPlan::Impl {
  detail::MultipassPlanData data;
  int device = 0;
  cublasHandle_t blas = nullptr;
  DeviceBuffer U, u_pow2, bias, V, M, amax, nonfinite;
  DeviceBuffer host_in, host_out;  // execute(span)'s copies, made on first use
  cudaStream_t last_stream = nullptr;

  explicit Impl(detail::MultipassPlanData d) : data(std::move(d)) {}
  // execute(span) and time_executes: the host input, as a tensor of the plan's input type, copied to the
  // plan's own device buffers (made on first use), the output's beside it.
  void stage_input(std::span<const float> input) {
    detail::check_size(input.size(), data.shape.input_size(), "input", data.shape);
    const MultipassDescription& d = data.description;
    const std::vector<unsigned char> tensor = detail::to_tensor(input, d.input);
    check(cudaSetDevice(device), "cudaSetDevice");
    if (!host_in.as<void>()) host_in = DeviceBuffer(tensor.size(), "the input's device copy");
    if (!host_out.as<void>())
      host_out = DeviceBuffer(static_cast<std::size_t>(data.shape.output_size()) *
                                  static_cast<std::size_t>(element_bytes(d.output)),
                              "the output's device copy");
    check(cudaMemcpy(host_in.as<void>(), tensor.data(), tensor.size(), cudaMemcpyHostToDevice), "input copy");
  }
  ~Impl() {
    if (blas) detail::cublas().destroy(blas);
  }
};

CudaConvPlan::CudaConvPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaConvPlan::CudaConvPlan(CudaConvPlan&&) noexcept = default;
CudaConvPlan& CudaConvPlan::operator=(CudaConvPlan&&) noexcept = default;
CudaConvPlan::~CudaConvPlan() = default;

CudaConvPlan CudaConvPlan::create(const ConvShape& shape, std::span<const float> weights,
                                  std::span<const float> bias, const CudaPlanOptions& options) {
  auto impl = std::make_unique<Impl>(detail::prepare_multipass(shape, weights, bias, options));
  std::string why;
  if (!device_available(&why)) throw Error(why);
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (options.device < 0 || options.device >= count)
    throw Error("CUDA device " + std::to_string(options.device) + " does not exist (" +
                std::to_string(count) + " found)");
  Impl& p = *impl;
  p.device = options.device;
  check(cudaSetDevice(p.device), "cudaSetDevice");
  check(detail::cublas().create(&p.blas), "cublasCreate");
  const MultipassDescription& d = p.data.description;
  p.U = upload(p.data.u_fp16, "the transformed filters");
  p.u_pow2 = upload(p.data.u_pow2, "the filter scales");
  p.bias = upload(p.data.bias, "the bias");
  p.V = DeviceBuffer(static_cast<std::size_t>(d.v_bytes), "V (fp16 transformed input)");
  p.M = DeviceBuffer(static_cast<std::size_t>(d.m_bytes), "M (the GEMMs' results)");
  p.amax = DeviceBuffer(sizeof(unsigned int), "amax");
  p.nonfinite = DeviceBuffer(sizeof(unsigned long long), "the NaN/Inf count");
  check(cudaMemset(p.amax.as<void>(), 0, p.amax.bytes()), "amax");  // stats() before an execute: zeros
  check(cudaMemset(p.nonfinite.as<void>(), 0, p.nonfinite.bytes()), "the NaN/Inf count");
  // M starts as NaN (all bits set), so that a GEMM leaving any of it unwritten would put NaN in the first
  // execute's outputs, which pass 3 counts and the device test requires to be 0. compute-sanitizer's
  // initcheck reports the output pass's reads of M as uninitialized behind cuBLAS's sm_90 kernels
  // (session 47, docs/cuda.md): with M poisoned, its values read are seen to be the GEMM's. Once a plan.
  check(cudaMemset(p.M.as<void>(), 0xff, p.M.bytes()), "M");
  return CudaConvPlan(std::move(impl));
}

void CudaConvPlan::execute_device(const void* input, void* output, void* stream) {
  Impl& p = *impl_;
  check_device_pointer(input, "input", p.device);
  check_device_pointer(output, "output", p.device);
  check(cudaSetDevice(p.device), "cudaSetDevice");
  auto s = static_cast<cudaStream_t>(stream);
  const detail::MultipassPlanData& d = p.data;
  const TensorType in_type = d.description.input, out_type = d.description.output;
  check_launch(detail::launch_input_amax(input, in_type, d.shape.input_size(), p.amax.as<unsigned int>(), s),
               "input amax");
  check_launch(detail::launch_input_pass(d.input_pass, input, in_type, p.amax.as<unsigned int>(), d.v_shift,
                                         p.V.as<uint16_t>(), s),
               "input transform");
  check(detail::cublas().set_stream(p.blas, s), "cublasSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  const detail::GemmCall& g = d.gemm;
  check(detail::cublas().gemm_strided_batched_ex(
            p.blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.m), static_cast<int>(g.n),
            static_cast<int>(g.k), &alpha, p.V.as<void>(), CUDA_R_16F, static_cast<int>(g.lda), g.stride_a,
            p.U.as<void>(), CUDA_R_16F, static_cast<int>(g.ldb), g.stride_b, &beta, p.M.as<void>(),
            CUDA_R_32F, static_cast<int>(g.ldc), g.stride_c, static_cast<int>(g.batch), CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT),
        "the n^2 GEMMs (fp16 operands, FP32 accumulation)");
  check_launch(
      detail::launch_output_pass(d.output_pass, p.M.as<float>(), p.u_pow2.as<float>(),
                                 d.bias.empty() ? nullptr : p.bias.as<float>(), p.amax.as<unsigned int>(),
                                 d.v_shift, output, out_type, p.nonfinite.as<unsigned long long>(), s),
      "output transform");
  p.last_stream = s;
}

void CudaConvPlan::execute(std::span<const float> input, std::span<float> output) {
  Impl& p = *impl_;
  detail::check_size(output.size(), p.data.shape.output_size(), "output", p.data.shape);
  p.stage_input(input);
  execute_device(p.host_in.as<void>(), p.host_out.as<void>(), nullptr);
  std::vector<unsigned char> tensor(p.host_out.bytes());
  check(cudaMemcpy(tensor.data(), p.host_out.as<void>(), tensor.size(), cudaMemcpyDeviceToHost),
        "output copy");
  detail::from_tensor(tensor.data(), p.data.description.output, output);
}

std::vector<double> CudaConvPlan::time_executes(std::span<const float> input, int repeats) {
  Impl& p = *impl_;
  if (repeats < 1) throw Error("repeats must be 1 or more, got " + std::to_string(repeats));
  p.stage_input(input);
  const Event start, stop;
  std::vector<double> ms;
  execute_device(p.host_in.as<void>(), p.host_out.as<void>(), nullptr);  // warm-up
  for (int i = 0; i < repeats; ++i) {
    check(cudaEventRecord(start.event, nullptr), "cudaEventRecord");
    execute_device(p.host_in.as<void>(), p.host_out.as<void>(), nullptr);
    check(cudaEventRecord(stop.event, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(stop.event), "cudaEventSynchronize");
    float t = 0.0f;
    check(cudaEventElapsedTime(&t, start.event, stop.event), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  return ms;
}

std::vector<float> CudaConvPlan::execute(std::span<const float> input) {
  std::vector<float> out(static_cast<std::size_t>(impl_->data.shape.output_size()));
  execute(input, out);
  return out;
}

CudaRunStats CudaConvPlan::stats() {
  Impl& p = *impl_;
  check(cudaSetDevice(p.device), "cudaSetDevice");
  check(cudaStreamSynchronize(p.last_stream), "the plan's stream");
  unsigned int bits = 0;
  unsigned long long count = 0;
  check(cudaMemcpy(&bits, p.amax.as<void>(), sizeof bits, cudaMemcpyDeviceToHost), "amax copy");
  check(cudaMemcpy(&count, p.nonfinite.as<void>(), sizeof count, cudaMemcpyDeviceToHost), "count copy");
  CudaRunStats r;
  std::memcpy(&r.input_amax, &bits, sizeof bits);
  r.output_nonfinite = static_cast<int64_t>(count);
  r.v_shift = p.data.v_shift.shift(r.input_amax);
  return r;
}

const ConvShape& CudaConvPlan::shape() const {
  return impl_->data.shape;
}
const MultipassDescription& CudaConvPlan::description() const {
  return impl_->data.description;
}

}  // namespace nova::cuda
