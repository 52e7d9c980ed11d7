// The convolution engine: plans made once, executed many times on caller-owned buffers (numpy arrays
// or torch tensors through DLPack, without copies).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bindings.hpp"
#include "nova/conv/conv.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/conv/openmp_threads.hpp"
#include "nova/error.hpp"
#include "signed_arrays.hpp"

namespace nb = nanobind;

namespace nova::python {
namespace {

// Every input array type is tagged nb::array_api: nanobind takes numpy arrays, torch tensors and any other
// DLPack or buffer object whatever the tag (the tag only decides what a returned array becomes), and with it
// the generated stubs (_nova.pyi) type these parameters as any array, where nanobind's default tag would
// type them as numpy arrays and make a type checker refuse the torch tensors they take.
// SignedArray / SignedOutput: torch negative views read with their sign, or refused as outputs.
using ConstTensor = SignedArray<nb::ndarray<const float, nb::c_contig, nb::device::cpu, nb::array_api>>;
// Input and output of execute(): any element type, checked against the plan's tensor types. The input may
// be converted to C order (a copy, the same values); the output is taken as it is and must already be C
// order (c_contiguous): a converted output is a temporary copy, and the results went into it, not into
// the caller's array.
// Read only: a read-only array is taken.
using AnyTensor = SignedArray<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu, nb::array_api>>;
using AnyOutput = SignedOutput<nb::ndarray<nb::device::cpu, nb::array_api>>;

// Whether the array's elements are in C order with no gaps (dimensions of extent 1 may have any stride).
bool c_contiguous(const AnyOutput& a) {
  int64_t expected = 1;
  for (std::size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

// The array element types a tensor type accepts: fp32 float32; fp16 float16; bf16 torch.bfloat16 or
// uint16 (numpy has no bfloat16: the raw bits); int8 int8.
bool dtype_matches(nb::dlpack::dtype d, conv::DataType t) {
  using code = nb::dlpack::dtype_code;
  auto is = [&](code c, int bits) { return d.code == static_cast<uint8_t>(c) && d.bits == bits && d.lanes == 1; };
  switch (t) {
    case conv::DataType::kFp32: return is(code::Float, 32);
    case conv::DataType::kFp16: return is(code::Float, 16);
    case conv::DataType::kBf16: return is(code::Bfloat, 16) || is(code::UInt, 16);
    case conv::DataType::kInt8: return is(code::Int, 8);
  }
  return false;
}

const char* dtype_names(conv::DataType t) {
  switch (t) {
    case conv::DataType::kFp32: return "float32";
    case conv::DataType::kFp16: return "float16";
    case conv::DataType::kBf16: return "bfloat16 (torch) or uint16 bf16 bits (numpy)";
    case conv::DataType::kInt8: return "int8";
  }
  return "?";
}

// An array's shape or strides as Python writes a tuple: (1, 8, 6, 6), (5,).
std::string tuple_text(std::size_t n, const auto& at) {
  std::string s = "(";
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(at(i));
  return s + (n == 1 ? ",)" : ")");
}

std::string dims(const auto& a) {
  return tuple_text(a.ndim(), [&](std::size_t i) { return a.shape(i); });
}

std::string strides(const auto& a) {
  return tuple_text(a.ndim(), [&](std::size_t i) { return a.stride(i); });
}

void expect_size(const auto& a, int64_t expected, const char* what) {
  if (static_cast<int64_t>(a.size()) != expected)
    throw Error(std::string(what) + " has " + std::to_string(a.size()) + " elements " + dims(a) + "; the plan needs " +
                std::to_string(expected));
}

// The shape an array of a tensor must have where it has more than one dimension (a flat array of the right
// size is taken as it is): the element count alone let an NHWC array run through an NCHW plan, and (C, K, R,
// S) weights make one, silently.
void expect_dims(const auto& a, const std::vector<int64_t>& want, const char* what, const std::string& form) {
  if (a.ndim() <= 1) return;
  bool same = a.ndim() == want.size();
  for (std::size_t i = 0; same && i < want.size(); ++i) same = static_cast<int64_t>(a.shape(i)) == want[i];
  if (same) return;
  int64_t count = 1;
  for (int64_t d : want) count *= d;
  throw Error(std::string(what) + " has shape " + dims(a) + "; the plan takes " + form + " " +
              tuple_text(want.size(), [&](std::size_t i) { return want[i]; }) + ", or a flat array of " +
              std::to_string(count) + " elements");
}

std::vector<int64_t> tensor_dims(int64_t n, int64_t c, int64_t h, int64_t w, conv::Layout layout) {
  switch (layout) {
    case conv::Layout::kNCHW: return {n, c, h, w};
    case conv::Layout::kNHWC: return {n, h, w, c};
    case conv::Layout::kNCHW16c: return {n, (c + 15) / 16, h, w, 16};
  }
  return {};
}

struct PyPlan {
  conv::Plan plan;
};

// nanobind hands over a numpy view at any byte offset (np.frombuffer(b, np.float32, offset=1)) as it is,
// and the engine refuses misaligned buffers; an input array is copied into aligned storage instead, as a
// non-contiguous one is copied to C order. `copy` keeps the copy for the call.
const void* aligned_input(const void* data, std::size_t bytes, std::size_t element,
                          std::vector<std::uint64_t>& copy) {
  if (reinterpret_cast<std::uintptr_t>(data) % element == 0) return data;
  copy.resize((bytes + 7) / 8);
  std::memcpy(copy.data(), data, bytes);
  return copy.data();
}
const float* aligned_floats(const ConstTensor& a, std::vector<std::uint64_t>& copy) {
  return static_cast<const float*>(aligned_input(a.data(), a.size() * sizeof(float), sizeof(float), copy));
}

PyPlan make_plan(std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> nchwk, std::tuple<int64_t, int64_t> kernel,
                 std::tuple<int64_t, int64_t> padding, int64_t stride, int64_t dilation, int64_t groups, ConstTensor weights,
                 std::optional<ConstTensor> bias, const std::string& layout, bool relu, int threads,
                 const std::string& tile, std::optional<Transform> transform, const std::string& algorithm,
                 const std::string& precision, const std::string& fp16_arithmetic, const std::string& input_type,
                 const std::string& output_type, float input_scale, float output_scale,
                 const std::string& lowp_kernel, const std::string& bf16_arithmetic, bool filters_from_memory) {
  ConvShape s;
  std::tie(s.N, s.C, s.H, s.W, s.K) = nchwk;
  std::tie(s.R, s.S) = kernel;
  std::tie(s.pad_h, s.pad_w) = padding;
  s.stride = stride;
  s.dilation = dilation;
  s.groups = groups;
  s.validate();
  expect_size(weights, s.weight_size(), "weights");
  expect_dims(weights, {s.K, s.C / s.groups, s.R, s.S}, "weights", "(K, C / groups, R, S)");
  if (bias) {
    expect_size(*bias, s.K, "bias");
    if (bias->ndim() != 1) throw Error("bias has shape " + dims(*bias) + "; the plan takes (K,) = (" + std::to_string(s.K) + ",)");
  }
  conv::PlanOptions o;
  o.layout = conv::parse_layout(layout);
  o.relu = relu;
  o.threads = threads;
  if (!tile.empty()) o.tile = parse_tile(tile);
  o.transform = std::move(transform);
  o.precision = conv::parse_precision(precision);
  o.input = {conv::parse_data_type(input_type), input_scale};
  o.output = {conv::parse_data_type(output_type), output_scale};
  o.fp16_arithmetic = conv::parse_fp16_arithmetic(fp16_arithmetic);
  o.lowp_kernel = conv::parse_lowp_kernel(lowp_kernel);
  o.bf16_arithmetic = conv::parse_bf16_arithmetic(bf16_arithmetic);
  o.filters_from_memory = filters_from_memory;
  if (algorithm == "winograd") o.algorithm = conv::AlgorithmChoice::kWinograd;
  else if (algorithm == "direct") o.algorithm = conv::AlgorithmChoice::kDirect;
  else if (algorithm != "auto") throw Error("algorithm must be auto, winograd or direct, not '" + algorithm + "'");
  std::vector<std::uint64_t> weights_copy, bias_copy;
  const float* w = aligned_floats(weights, weights_copy);
  const float* b = bias ? aligned_floats(*bias, bias_copy) : nullptr;
  PyPlan plan = [&] {
    nb::gil_scoped_release release;
    return PyPlan{conv::Plan::create(s, w, b, o)};
  }();
  // A plan's cautions (an ill-conditioned transform, int8 with a large tile) as a Python warning: the
  // reason string is rarely read, and the outputs can be useless.
  const std::string reason = plan.plan.reason();
  if (const auto at = reason.find("caution: "); at != std::string::npos)
    if (PyErr_WarnEx(PyExc_RuntimeWarning, ("nova.ConvPlan: " + reason.substr(at)).c_str(), 1) != 0)
      throw nb::python_error();  // warnings turned into errors
  return plan;
}

void execute(const PyPlan& p, AnyTensor input, AnyOutput output) {
  const ConvShape& s = p.plan.shape();
  if (output.negative_view)
    throw Error(
        "output is a torch negative view (output.is_neg()): the plan would write the values and the view "
        "would read them negated; pass a plain tensor");
  if (!c_contiguous(output))
    throw Error("output must be a C-contiguous array (the plan writes it in place): got strides " +
                strides(output) + " for shape " + dims(output));
  const conv::Layout layout = p.plan.layout();
  const std::string form = conv::to_string(layout);
  expect_size(input, conv::input_elements(s, layout), "input");
  expect_size(output, conv::output_elements(s, layout), "output");
  expect_dims(input, tensor_dims(s.N, s.C, s.H, s.W, layout), "input", form);
  expect_dims(output, tensor_dims(s.N, s.K, s.out_h(), s.out_w(), layout), "output", form);
  const conv::DataType in = p.plan.input_format().type, out = p.plan.output_format().type;
  if (!dtype_matches(input.dtype(), in))
    throw Error(std::string("the plan takes ") + conv::to_string(in) + " input: a " + dtype_names(in) + " array");
  if (!dtype_matches(output.dtype(), out))
    throw Error(std::string("the plan writes ") + conv::to_string(out) + " output: a " + dtype_names(out) + " array");
  std::vector<std::uint64_t> input_copy;
  const std::size_t element = conv::element_size(in);
  const void* x = aligned_input(input.data(), input.size() * element, element, input_copy);
  nb::gil_scoped_release release;
  p.plan.execute(x, output.data());
}

// Samples: float32 arrays of one input each, in the plan's layout (whatever the plan's input type).
void calibrate(PyPlan& p, const std::vector<ConstTensor>& samples) {
  const int64_t size = conv::input_elements(p.plan.shape(), p.plan.layout());
  std::vector<const float*> inputs;
  std::vector<std::vector<std::uint64_t>> copies(samples.size());
  const ConvShape& s = p.plan.shape();
  for (const ConstTensor& t : samples) {
    expect_size(t, size, "calibration sample");
    expect_dims(t, tensor_dims(s.N, s.C, s.H, s.W, p.plan.layout()), "calibration sample",
                conv::to_string(p.plan.layout()));
    inputs.push_back(aligned_floats(t, copies[inputs.size()]));
  }
  nb::gil_scoped_release release;
  p.plan.calibrate(inputs);
}

}  // namespace

void bind_conv(nb::module_& m) {
  nb::class_<PyPlan>(m, "ConvPlan",
                     "A convolution plan: layer shape, weights (filters transformed once), transform and threads.")
      .def(nb::new_(&make_plan), nb::arg("shape"), nb::kw_only(), nb::arg("kernel") = std::make_tuple(3, 3),
           nb::arg("padding") = std::make_tuple(1, 1), nb::arg("stride") = 1, nb::arg("dilation") = 1,
           nb::arg("groups") = 1, nb::arg("weights"), nb::arg("bias") = nb::none(), nb::arg("layout") = "nchw",
           nb::arg("relu") = false, nb::arg("threads") = 0, nb::arg("tile") = "", nb::arg("transform") = nb::none(),
           nb::arg("algorithm") = "auto", nb::arg("precision") = "fp32", nb::arg("fp16_arithmetic") = "auto",
           nb::arg("input_type") = "fp32", nb::arg("output_type") = "fp32", nb::arg("input_scale") = 1.0f,
           nb::arg("output_scale") = 1.0f, nb::arg("lowp_kernel") = "auto",
           nb::arg("bf16_arithmetic") = "auto", nb::arg("filters_from_memory") = false,
           "shape = (N, C, H, W, K); weights: float32 K x C/groups x R x S (C-contiguous); bias: K float32 or None; "
           "precision of the Winograd GEMMs: fp32, bf16, fp16, int8 or int8-spatial; fp16_arithmetic (fp16 plans): "
           "auto (fp16 FMAs where AVX512-FP16 is present), fp32 or fp16; input_type / output_type: the tensors' "
           "element types, fp32, bf16, fp16 or int8 (int8: value = scale * code, scales input_scale / output_scale); "
           "lowp_kernel: auto, portable, simd, avx512 (never AMX: the portable kernel's bits on every machine) or amx "
           "(int8, bf16; an error where this process cannot run it); bf16_arithmetic (bf16 plans): auto (AMX where "
           "admitted, dot on AMD CPUs with AVX512-BF16, else fma), fma (an FP32 FMA per channel) or dot (vdpbf16ps "
           "channel pairs); filters_from_memory: "
           "the automatic choice prices the transformed filters at memory's rate (a layer of a network, whose other "
           "work evicts them between executes; nova.torch's layers set it)")
      .def("calibrate", &calibrate, nb::arg("samples"),
           "INT8 plans: store per-tap scales from sample inputs (float32 arrays, one input each, in the plan's "
           "layout); later executes use them instead of scales from each call's data (faster: one input "
           "transform instead of two; values beyond the range saturate and are counted). All-zero samples are "
           "refused (ValueError): they give no range")
      .def("clear_calibration", [](PyPlan& p) { p.plan.clear_calibration(); },
           "Back to scales from each call's data")
      .def_prop_ro("calibrated", [](const PyPlan& p) { return p.plan.calibrated(); })
      .def("execute", &execute, nb::arg("input"), nb::arg("output").noconvert(),
           "Run on C-contiguous CPU buffers of the plan's tensor types (numpy arrays or torch tensors; no copies): "
           "float32, float16, bfloat16 (numpy: uint16 bits) or int8. A non-contiguous input is copied to C order "
           "first; the output is written in place and must be C-contiguous (ValueError otherwise). A torch "
           "negative view (x.is_neg()) is read with its sign (resolved to a copy first), and refused as the "
           "output")
      .def_prop_ro("input_type", [](const PyPlan& p) { return conv::to_string(p.plan.input_format().type); })
      .def_prop_ro("output_type", [](const PyPlan& p) { return conv::to_string(p.plan.output_format().type); })
      .def_prop_ro("output_saturated", [](const PyPlan& p) { return p.plan.stats().output_saturated; },
                   "int8 output: results clamped to +-127 codes in the last execute")
      .def_prop_ro("output_nonfinite", [](const PyPlan& p) { return p.plan.stats().output_nonfinite; },
                   "NaN/Inf results in the last execute, as stored: int8 outputs (stored as 0 / +-127), bf16 and "
                   "fp16 outputs (fp16 holds inf from 65520 on), and every output of bf16, fp16 and int8 Winograd plans")
      .def_prop_ro("algorithm", [](const PyPlan& p) { return conv::to_string(p.plan.algorithm()); })
      .def_prop_ro("tile", [](const PyPlan& p) { return p.plan.tile() ? p.plan.tile()->to_string() : std::string(); })
      .def_prop_ro("reason", [](const PyPlan& p) { return p.plan.reason(); })
      .def_prop_ro("isa", [](const PyPlan& p) { return conv::to_string(p.plan.isa()); })
      .def_prop_ro("threads", [](const PyPlan& p) { return p.plan.threads(); })
      .def_prop_ro("transform_name", [](const PyPlan& p) { return p.plan.transform_name(); })
      .def_prop_ro("precision", [](const PyPlan& p) { return conv::to_string(p.plan.precision()); },
                   "Precision of the GEMMs actually run (fp32 on the direct path)")
      .def_prop_ro("gemm_path", [](const PyPlan& p) { return p.plan.gemm_path(); },
                   "The GEMM kernel: avx512-fma, avx512-bf16, amx-bf16, avx512-vnni, amx-int8, avx512-f16c, avx512-fp16; "
                   "without AVX-512 avx2-fma (bf16), avx2-f16c (fp16), avx2 (int8, int8-spatial); portable; "
                   "or the FP32 ISA (avx512, avx2, portable)")
      .def_prop_ro("gemm_detail", [](const PyPlan& p) { return p.plan.gemm_detail(); },
                   "The GEMM kernel with its instructions and why no faster one runs")
      .def_prop_ro("saturated", [](const PyPlan& p) { return p.plan.stats().saturated; },
                   "INT8: values clamped in the last execute (beyond the calibrated range)")
      .def_prop_ro("nonfinite_tiles", [](const PyPlan& p) { return p.plan.stats().nonfinite_tiles; },
                   "INT8: tiles whose input held NaN/Inf in the last execute (their outputs are NaN)")
      .def_prop_ro("v_shift", [](const PyPlan& p) { return p.plan.stats().v_shift; },
                   "FP16: V was scaled by 2^-v_shift in the last execute (and the GEMMs' results back, exactly): "
                   "positive where the input would have taken it past 65504 (2^12 with fp16 arithmetic; plans that "
                   "read the input in place, with a fused ReLU only in FP32 arithmetic: because it did, found from "
                   "NaN/Inf results and run again), negative where the input is so small that V would lie in fp16's "
                   "subnormals (brought up to unit-scale data's range); 0 on ordinary data")
      .def_prop_ro(
          "output_shape",
          [](const PyPlan& p) {
            const ConvShape& s = p.plan.shape();
            nb::list dims;
            for (int64_t d : tensor_dims(s.N, s.K, s.out_h(), s.out_w(), p.plan.layout())) dims.append(d);
            return nb::tuple(dims);
          },
          "The output array's shape in the plan's layout: nchw (N, K, OH, OW), nhwc (N, OH, OW, K), nchw16c "
          "(N, ceil(K/16), OH, OW, 16)")
      .def("set_profiling", [](PyPlan& p, bool on) { p.plan.set_profiling(on); }, nb::arg("on"),
           "Time the stages of later executes (off by default; turning it on or off clears what was "
           "gathered). It reads the clock a few times per block of tiles: time executes with it off")
      .def(
          "stage_profile",
          [](const PyPlan& p) {
            const conv::StageProfile s = p.plan.stage_profile();
            nb::dict d;
            d["executes"] = s.executes;
            d["threads"] = s.threads;
            d["wall_ms"] = s.wall_ms;
            for (const auto& [name, ms] : s.stages()) d[(std::string(name) + "_ms").c_str()] = ms;
            d["idle_ms"] = s.idle_ms();
            return d;
          },
          "Since profiling was turned on: executes, threads, wall_ms (summed), and the thread time of each "
          "stage summed over threads and executes (pack_ms, scales_ms, input_ms, convert_ms, gemm_ms, "
          "output_ms, direct_ms; idle_ms = wall_ms * threads minus them)")
      .def("__repr__", [](const PyPlan& p) { return "nova.ConvPlan(" + p.plan.describe() + ")"; });
  m.def("check_lowp_kernel", [](const std::string& name) { conv::parse_lowp_kernel(name); }, nb::arg("name"),
        "Raise ValueError unless name is a low-precision kernel choice (auto, portable, simd, avx512, amx).");
  m.def("default_transform", [](const std::string& tile) { return conv::default_transform(parse_tile(tile)); },
        nb::arg("tile"), "The engine's default transform for a tile");
  m.def("share_openmp_threads", &conv::share_openmp_threads, nb::arg("library") = "",
        "Run the parallel stages of every plan on the threads of the OpenMP runtime already loaded in the "
        "process (`library`, or the only one loaded when empty) instead of nova's own; returns its path. "
        "nova.torch does this for PyTorch's libgomp when it is imported (NOVA_SHARE_OPENMP=0 turns that off)");
  m.def("loaded_openmp_runtimes", &conv::loaded_openmp_runtimes,
        "Paths of the OpenMP runtimes loaded in the process (libgomp*, libiomp*, libomp*), in load order");
  m.def("stop_sharing_openmp_threads", &conv::stop_sharing_openmp_threads,
        "Back to nova's own threads for later parallel stages");
  m.def("shared_openmp_library", &conv::shared_openmp_library,
        "Path of the OpenMP runtime whose threads run nova's parallel stages, or '' (nova's own threads)");
  m.def("best_isa", [] { return conv::to_string(conv::best_isa()); }, "The fastest kernel path this CPU runs");
}

}  // namespace nova::python
