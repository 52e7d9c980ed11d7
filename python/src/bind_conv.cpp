// The convolution engine: plans made once, executed many times on caller-owned buffers (numpy arrays
// or torch tensors through DLPack, without copies).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "bindings.hpp"
#include "nova/conv/conv.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/error.hpp"

namespace nb = nanobind;

namespace nova::python {
namespace {

using ConstTensor = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using Tensor = nb::ndarray<float, nb::c_contig, nb::device::cpu>;

std::string dims(const auto& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

void expect_size(const auto& a, int64_t expected, const char* what) {
  if (static_cast<int64_t>(a.size()) != expected)
    throw Error(std::string(what) + " has " + std::to_string(a.size()) + " elements " + dims(a) + "; the plan needs " +
                std::to_string(expected));
}

struct PyPlan {
  conv::Plan plan;
};

PyPlan make_plan(std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> nchwk, std::tuple<int64_t, int64_t> kernel,
                 std::tuple<int64_t, int64_t> padding, int64_t stride, int64_t dilation, int64_t groups, ConstTensor weights,
                 std::optional<ConstTensor> bias, const std::string& layout, bool relu, int threads,
                 const std::string& tile, std::optional<Transform> transform, const std::string& algorithm,
                 const std::string& precision, const std::string& fp16_arithmetic) {
  ConvShape s;
  std::tie(s.N, s.C, s.H, s.W, s.K) = nchwk;
  std::tie(s.R, s.S) = kernel;
  std::tie(s.pad_h, s.pad_w) = padding;
  s.stride = stride;
  s.dilation = dilation;
  s.groups = groups;
  s.validate();
  expect_size(weights, s.weight_size(), "weights");
  if (bias) expect_size(*bias, s.K, "bias");
  conv::PlanOptions o;
  o.layout = conv::parse_layout(layout);
  o.relu = relu;
  o.threads = threads;
  if (!tile.empty()) o.tile = parse_tile(tile);
  o.transform = std::move(transform);
  o.precision = conv::parse_precision(precision);
  o.fp16_arithmetic = conv::parse_fp16_arithmetic(fp16_arithmetic);
  if (algorithm == "winograd") o.algorithm = conv::AlgorithmChoice::kWinograd;
  else if (algorithm == "direct") o.algorithm = conv::AlgorithmChoice::kDirect;
  else if (algorithm != "auto") throw Error("algorithm must be auto, winograd or direct, not '" + algorithm + "'");
  nb::gil_scoped_release release;
  return PyPlan{conv::Plan::create(s, weights.data(), bias ? bias->data() : nullptr, o)};
}

void execute(const PyPlan& p, ConstTensor input, Tensor output) {
  const ConvShape& s = p.plan.shape();
  expect_size(input, s.input_size(), "input");
  expect_size(output, s.output_size(), "output");
  nb::gil_scoped_release release;
  p.plan.execute(input.data(), output.data());
}

}  // namespace

void bind_conv(nb::module_& m) {
  nb::class_<PyPlan>(m, "ConvPlan",
                     "A convolution plan: layer shape, weights (filters transformed once), transform and threads.")
      .def(nb::new_(&make_plan), nb::arg("shape"), nb::arg("kernel") = std::make_tuple(3, 3),
           nb::arg("padding") = std::make_tuple(1, 1), nb::arg("stride") = 1, nb::arg("dilation") = 1,
           nb::arg("groups") = 1, nb::arg("weights"), nb::arg("bias") = nb::none(), nb::arg("layout") = "nchw",
           nb::arg("relu") = false, nb::arg("threads") = 0, nb::arg("tile") = "", nb::arg("transform") = nb::none(),
           nb::arg("algorithm") = "auto", nb::arg("precision") = "fp32", nb::arg("fp16_arithmetic") = "auto",
           "shape = (N, C, H, W, K); weights: float32 K x C/groups x R x S (C-contiguous); bias: K float32 or None; "
           "precision of the Winograd GEMMs: fp32, bf16, fp16 or int8 (input and output stay float32); "
           "fp16_arithmetic (fp16 plans): auto (fp16 FMAs where AVX512-FP16 is present), fp32 or fp16")
      .def("execute", &execute, nb::arg("input"), nb::arg("output"),
           "Run on float32 C-contiguous CPU buffers (numpy arrays or torch tensors; no copies)")
      .def_prop_ro("algorithm", [](const PyPlan& p) { return conv::to_string(p.plan.algorithm()); })
      .def_prop_ro("tile", [](const PyPlan& p) { return p.plan.tile() ? p.plan.tile()->to_string() : std::string(); })
      .def_prop_ro("reason", [](const PyPlan& p) { return p.plan.reason(); })
      .def_prop_ro("isa", [](const PyPlan& p) { return conv::to_string(p.plan.isa()); })
      .def_prop_ro("threads", [](const PyPlan& p) { return p.plan.threads(); })
      .def_prop_ro("transform_name", [](const PyPlan& p) { return p.plan.transform_name(); })
      .def_prop_ro("precision", [](const PyPlan& p) { return conv::to_string(p.plan.precision()); },
                   "Precision of the GEMMs actually run (fp32 on the direct path)")
      .def_prop_ro("gemm_path", [](const PyPlan& p) { return p.plan.gemm_path(); },
                   "The GEMM kernel: avx512-bf16, avx512-vnni, avx512-f16c, portable, or the FP32 ISA")
      .def_prop_ro("saturated", [](const PyPlan& p) { return p.plan.stats().saturated; },
                   "INT8: values clamped in the last execute (beyond the calibrated range)")
      .def_prop_ro("nonfinite_tiles", [](const PyPlan& p) { return p.plan.stats().nonfinite_tiles; },
                   "INT8: tiles whose input held NaN/Inf in the last execute (their outputs are NaN)")
      .def_prop_ro("output_shape", [](const PyPlan& p) {
        const ConvShape& s = p.plan.shape();
        return std::make_tuple(s.N, s.K, s.out_h(), s.out_w());
      })
      .def("__repr__", [](const PyPlan& p) { return "nova.ConvPlan(" + p.plan.describe() + ")"; });
  m.def("default_transform", [](const std::string& tile) { return conv::default_transform(parse_tile(tile)); },
        nb::arg("tile"), "The engine's default transform for a tile");
  m.def("best_isa", [] { return conv::to_string(conv::best_isa()); }, "The fastest kernel path this CPU runs");
}

}  // namespace nova::python
