// cuBLAS loaded on first use: see cublas_loader.hpp.
#include "cublas_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nova/error.hpp"

namespace nova::cuda::detail {
namespace {

// $NOVA_CUBLAS where set (a path to the library: for example the copy a PyTorch wheel installs, under
// site-packages/nvidia/), and only it: a path the user named that fails is an error, not a reason to load
// another. Otherwise the soname of the cuBLAS the headers are from, then the toolkit's own copy (the build's
// CUDAToolkit_LIBRARY_DIR), where the loader's search path does not hold it.
void* open_cublas(std::string& tried) {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> names{soname, std::string(NOVA_CUDA_LIBRARY_DIR) + "/" + soname};
  if (const char* given = std::getenv("NOVA_CUBLAS"); given && *given) names = {given};
  for (const std::string& name : names) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : name);
  }
  return nullptr;
}

template <class F>
void bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out)
    throw Error(std::string("cuBLAS has no ") + name +
                " (a cuBLAS older than the headers nova was built with?)");
}

CublasApi load() {
  std::string tried;
  void* lib = open_cublas(tried);
  if (!lib)
    throw Error("cannot load cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + ": " + tried +
                " (NOVA_CUBLAS=/path/to/libcublas.so." + std::to_string(CUBLAS_VER_MAJOR) + " names it)");
  CublasApi api;  // the library stays loaded for the process's life
  bind(lib, "cublasCreate_v2", api.create);
  bind(lib, "cublasDestroy_v2", api.destroy);
  bind(lib, "cublasSetStream_v2", api.set_stream);
  bind(lib, "cublasGemmStridedBatchedEx", api.gemm_strided_batched_ex);
  bind(lib, "cublasGetStatusString", api.status_string);
  return api;
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = load();  // a failed load throws, and the next call tries again
  return api;
}

}  // namespace nova::cuda::detail
