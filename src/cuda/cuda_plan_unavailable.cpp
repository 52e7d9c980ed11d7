// CudaConvPlan in a build without CUDA (NOVA_CUDA off, or no nvcc at configure time): every device call
// says so; the host emulation (multipass_emulation.cpp) is there either way.
#include "multipass_prepare.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"

namespace nova::cuda {
namespace {
constexpr const char* kNoCuda =
    "nova was built without CUDA (NOVA_CUDA off, or no nvcc found when it was configured); "
    "nova::cuda::emulate "
    "runs the same passes on the host";
}

bool built_with_cuda() {
  return false;
}

bool blas_loadable(std::string* why) {
  if (why) *why = kNoCuda;
  return false;
}

bool device_available(std::string* why) {
  if (why) *why = kNoCuda;
  return false;
}

std::string device_name(int) {
  throw Error(kNoCuda);
}

struct CudaConvPlan::Impl {};

CudaConvPlan::CudaConvPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaConvPlan::CudaConvPlan(CudaConvPlan&&) noexcept = default;
CudaConvPlan& CudaConvPlan::operator=(CudaConvPlan&&) noexcept = default;
CudaConvPlan::~CudaConvPlan() = default;

CudaConvPlan CudaConvPlan::create(const ConvShape& shape, std::span<const float> weights,
                                  std::span<const float> bias, const CudaPlanOptions& options) {
  detail::prepare_multipass(shape, weights, bias, options);  // bad input is reported as such first
  throw Error(kNoCuda);
}

// No plan can exist in this build: create() always throws.
void CudaConvPlan::execute_device(const void*, void*, void*) {
  throw Error(kNoCuda);
}
void CudaConvPlan::execute(std::span<const float>, std::span<float>) {
  throw Error(kNoCuda);
}
std::vector<float> CudaConvPlan::execute(std::span<const float>) {
  throw Error(kNoCuda);
}
std::vector<double> CudaConvPlan::time_executes(std::span<const float>, int) {
  throw Error(kNoCuda);
}
CudaRunStats CudaConvPlan::stats() {
  throw Error(kNoCuda);
}
const ConvShape& CudaConvPlan::shape() const {
  throw Error(kNoCuda);
}
const MultipassDescription& CudaConvPlan::description() const {
  throw Error(kNoCuda);
}

}  // namespace nova::cuda
