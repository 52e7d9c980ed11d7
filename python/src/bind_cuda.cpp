// The CUDA multi-pass path from Python: what this build and machine have, the host emulation of the passes
// on numpy arrays (the error and counts a GPU would give), and device plans on host arrays (copied in and
// out).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <vector>

#include "bindings.hpp"
#include "nova/cuda/cuda_conv.hpp"
#include "nova/error.hpp"
#include "signed_arrays.hpp"

namespace nb = nanobind;

namespace nova::python {
namespace {

// Input arrays of any framework (numpy, torch, DLPack); nb::array_api only types them so in the stubs (see
// bind_conv.cpp).
// SignedArray: torch negative views read with their sign (signed_arrays.hpp).
using Tensor4D =
    SignedArray<nb::ndarray<const float, nb::ndim<4>, nb::c_contig, nb::device::cpu, nb::array_api>>;
using Vector =
    SignedArray<nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu, nb::array_api>>;
using Output4D = nb::ndarray<nb::numpy, float, nb::ndim<4>>;

// The layer of input [N, C, H, W] and weights [K, C, r, r] with `padding` (default r / 2); validate()
// names an impossible size.
ConvShape layer_of(int64_t N, int64_t C, int64_t H, int64_t W, const Tensor4D& w,
                   std::optional<int64_t> padding) {
  ConvShape s;
  s.N = N, s.C = C, s.H = H, s.W = W;
  s.K = static_cast<int64_t>(w.shape(0));
  s.R = static_cast<int64_t>(w.shape(2)), s.S = static_cast<int64_t>(w.shape(3));
  if (static_cast<int64_t>(w.shape(1)) != s.C)
    throw Error("weights have " + std::to_string(w.shape(1)) + " input channels; the input has " +
                std::to_string(s.C));
  s.pad_h = s.pad_w = padding ? *padding : s.R / 2;
  s.validate();
  return s;
}

cuda::CudaPlanOptions options_of(std::optional<std::pair<int, int>> tile, std::optional<Transform> transform,
                                 bool relu, int device, const std::string& input_type,
                                 const std::string& output_type) {
  cuda::CudaPlanOptions o;
  if (tile) o.tile = TileSize{tile->first, tile->second};
  o.transform = std::move(transform);
  o.relu = relu;
  o.device = device;
  o.input = cuda::parse_tensor_type(input_type);
  o.output = cuda::parse_tensor_type(output_type);
  return o;
}

std::span<const float> span_of(const std::optional<Vector>& v) {
  return v ? std::span<const float>(v->data(), v->size()) : std::span<const float>();
}

Output4D to_numpy(std::vector<float> values, const ConvShape& s) {
  auto* data = new std::vector<float>(std::move(values));
  nb::capsule owner(data, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return Output4D(data->data(),
                  {static_cast<std::size_t>(s.N), static_cast<std::size_t>(s.K),
                   static_cast<std::size_t>(s.out_h()), static_cast<std::size_t>(s.out_w())},
                  owner);
}

nb::dict stats_dict(const cuda::CudaRunStats& r) {
  nb::dict d;
  d["output_nonfinite"] = r.output_nonfinite;
  d["input_amax"] = r.input_amax;
  d["v_shift"] = r.v_shift;
  return d;
}

nb::dict description_dict(const cuda::MultipassDescription& m) {
  nb::dict d;
  d["tile"] = m.tile.to_string();
  d["points"] = m.points;
  d["reason"] = m.reason;
  d["tiles"] = m.tiles;
  d["v_bytes"] = m.v_bytes;
  d["m_bytes"] = m.m_bytes;
  d["u_bytes"] = m.u_bytes;
  d["input_type"] = cuda::to_string(m.input);
  d["output_type"] = cuda::to_string(m.output);
  return d;
}

}  // namespace

void bind_cuda(nb::module_& m) {
  m.def(
      "cuda_info",
      [] {
        nb::dict d;
        std::string why, blas_why;
        const bool available = cuda::device_available(&why);
        d["built_with_cuda"] = cuda::built_with_cuda();
        d["device_available"] = available;
        d["why"] = available ? std::string() : why;
        d["device"] = available ? cuda::device_name(0) : std::string();
        d["cublas_loadable"] = cuda::blas_loadable(&blas_why);
        return d;
      },
      "Whether this build holds the CUDA kernels, whether a device and cuBLAS can be used, and why not.");

  m.def(
      "cuda_emulate",
      [](const Tensor4D& x, const Tensor4D& w, std::optional<Vector> bias, std::optional<int64_t> padding,
         std::optional<std::pair<int, int>> tile, std::optional<Transform> transform, bool relu,
         const std::string& input_type, const std::string& output_type) {
        const ConvShape s =
            layer_of(static_cast<int64_t>(x.shape(0)), static_cast<int64_t>(x.shape(1)),
                     static_cast<int64_t>(x.shape(2)), static_cast<int64_t>(x.shape(3)), w, padding);
        cuda::CudaRunStats stats;
        cuda::MultipassDescription d;
        std::vector<float> y = cuda::emulate(
            s, std::span<const float>(w.data(), w.size()), span_of(bias),
            std::span<const float>(x.data(), x.size()),
            options_of(tile, std::move(transform), relu, 0, input_type, output_type), &stats, &d);
        nb::dict info = stats_dict(stats);
        for (auto [k, v] : description_dict(d)) info[k] = v;
        return std::make_pair(to_numpy(std::move(y), s), info);
      },
      nb::arg("input"), nb::arg("weights"), nb::arg("bias") = nb::none(), nb::arg("padding") = nb::none(),
      nb::arg("tile") = nb::none(), nb::arg("transform") = nb::none(), nb::arg("relu") = false,
      nb::arg("input_type") = "fp32", nb::arg("output_type") = "fp32",
      "The CUDA multi-pass path's passes on the host (the kernels' own per-thread code; FP32 sums in channel "
      "order): (output [N, K, H', W'] float32, info dict with output_nonfinite, input_amax, v_shift, tile, "
      "points, ...). Input float32 [N, C, H, W], weights [K, C, r, r]; stride 1; padding default r // 2. "
      "input_type / output_type 'fp16' or 'bf16': the input's values rounded to that type first, the "
      "outputs rounded to it (returned as float32), as a plan with those tensor types computes.");

  nb::class_<cuda::CudaConvPlan>(
      m, "CudaConvPlan", "A CUDA multi-pass Winograd plan (fp16 storage, FP32 accumulation) on a GPU.")
      .def(
          "__init__",
          [](cuda::CudaConvPlan* self, std::tuple<int64_t, int64_t, int64_t, int64_t> input_shape,
             const Tensor4D& w, std::optional<Vector> bias, std::optional<int64_t> padding,
             std::optional<std::pair<int, int>> tile, std::optional<Transform> transform, bool relu,
             int device, const std::string& input_type, const std::string& output_type) {
            const auto [N, C, H, W] = input_shape;
            const ConvShape s = layer_of(N, C, H, W, w, padding);
            new (self) cuda::CudaConvPlan(cuda::CudaConvPlan::create(
                s, std::span<const float>(w.data(), w.size()), span_of(bias),
                options_of(tile, std::move(transform), relu, device, input_type, output_type)));
          },
          nb::arg("input_shape"), nb::arg("weights"), nb::arg("bias") = nb::none(),
          nb::arg("padding") = nb::none(), nb::arg("tile") = nb::none(), nb::arg("transform") = nb::none(),
          nb::arg("relu") = false, nb::arg("device") = 0, nb::arg("input_type") = "fp32",
          nb::arg("output_type") = "fp32")
      .def(
          "execute",
          [](cuda::CudaConvPlan& p, const Tensor4D& x) {
            std::vector<float> y = p.execute(std::span<const float>(x.data(), x.size()));
            return to_numpy(std::move(y), p.shape());
          },
          nb::arg("input"),
          "Runs on a host float32 array [N, C, H, W] (copied to the device and back; rounded to the plan's "
          "input type, the output widened from its output type).")
      .def(
          "time_executes",
          [](cuda::CudaConvPlan& p, const Tensor4D& x, int repeats) {
            return p.time_executes(std::span<const float>(x.data(), x.size()), repeats);
          },
          nb::arg("input"), nb::arg("repeats") = 20,
          "Device milliseconds of each of `repeats` executes (CUDA events).")
      .def_prop_ro("stats", [](cuda::CudaConvPlan& p) { return stats_dict(p.stats()); })
      .def_prop_ro("description",
                   [](const cuda::CudaConvPlan& p) { return description_dict(p.description()); });
}

}  // namespace nova::python
