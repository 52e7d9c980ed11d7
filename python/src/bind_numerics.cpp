// Precision models and the error harness: what a transform costs in accuracy under a model, against
// a float64 direct convolution.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <variant>

#include "bindings.hpp"
#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/precision_model.hpp"
#include "signed_arrays.hpp"

namespace nb = nanobind;

namespace nova::python {
namespace {

// Any framework's float64 arrays; nb::array_api only types them so in the stubs (see bind_conv.cpp).
// SignedArray: torch negative views read with their sign (signed_arrays.hpp).
using Array4D =
    SignedArray<nb::ndarray<const double, nb::ndim<4>, nb::c_contig, nb::device::cpu, nb::array_api>>;

// A preset name, a model file path, or a dict in the model JSON form (typed as such, so that the stubs say
// str | dict and nanobind names both in its TypeError for anything else).
using PrecisionArg = std::variant<std::string, nb::dict>;

PrecisionModel model_from(const PrecisionArg& precision) {
  if (const auto* name = std::get_if<std::string>(&precision)) return load_precision_model(*name);
  return precision_model_from_json(from_python(std::get<nb::dict>(precision)));
}

nlohmann::json metrics_json(const ErrorMetrics& e) {
  auto number = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"count", e.count},         {"rel_l2", number(e.rel_l2)},       {"max_abs", number(e.max_abs)},
          {"elementwise", number(e.elementwise)}, {"nan_count", e.nan_count}, {"inf_count", e.inf_count},
          {"reference_rms", number(e.reference_rms)}};
}

nb::dict result(const ErrorEvaluator& eval, const Transform& t, const std::string& data) {
  return to_python_dict({{"tile", t.tile().to_string()},
                         {"precision", eval.model().name},
                         {"data", data},
                         {"winograd", metrics_json(eval.evaluate(t.to_f64()))},
                         {"direct", metrics_json(eval.evaluate_direct())}});
}

std::vector<double> copy(const Array4D& a) { return std::vector<double>(a.data(), a.data() + a.size()); }

}  // namespace

void bind_numerics(nb::module_& m) {
  m.def("precision_presets", &precision_preset_names, "Names of the built-in precision models");
  m.def(
      "precision_model",
      [](const PrecisionArg& precision) { return to_python_dict(to_json(model_from(precision))); },
      nb::arg("precision"),
      "A precision model as a dict (number format of every stage): from a preset name, a JSON file path, or "
      "a dict (validated). See docs/precision-models.md.");
  m.def(
      "error",
      [](const Transform& t, const PrecisionArg& precision, const std::string& data, int64_t tiles,
         int64_t channels, const nb::int_& seed) {
        if (tiles < 1 || channels < 1) throw Error("tiles and channels must be at least 1");
        const PrecisionModel model = model_from(precision);
        DataKind kind;
        try {
          kind = parse_data_kind(data);
        } catch (const Error& e) {
          // What `nova error --data` reads from files, this function takes as arrays.
          throw Error(std::string(e.what()) +
                      "; a layer's own arrays: nova.error_layer(transform, input, weights)");
        }
        const TileDataset set = make_tile_dataset(t.tile(), kind, tiles, channels, seed_from(seed));
        nb::gil_scoped_release release;
        const ErrorEvaluator eval(set, model);
        nb::gil_scoped_acquire acquire;
        return result(eval, t, set.source);
      },
      nb::arg("transform"), nb::arg("precision") = "fp16-storage", nb::arg("data") = "gaussian",
      nb::arg("tiles") = 10000, nb::arg("channels") = 64, nb::arg("seed") = 1,
      "Error of `transform` under a precision model on generated tiles (data: gaussian, relu, uniform), each "
      "output a sum over `channels` input channels, against a float64 direct convolution. Returns a dict "
      "with 'winograd' and 'direct' metrics (rel_l2, max_abs, elementwise, nan_count, inf_count); the direct "
      "one is a direct convolution under the same model's product and accumulation formats. rel_l2, max_abs "
      "and elementwise are None where not finite (any output NaN or Inf). Requests over 2^29 float64 values "
      "(4 GiB) are refused.");
  m.def(
      "error_layer",
      [](const Transform& t, const Array4D& input, const Array4D& weights, const PrecisionArg& precision) {
        const PrecisionModel model = model_from(precision);
        LayerDataset layer;
        const int64_t r = t.r();
        if (weights.shape(2) != static_cast<std::size_t>(r) || weights.shape(3) != static_cast<std::size_t>(r))
          throw Error("weights are " + std::to_string(weights.shape(2)) + "x" + std::to_string(weights.shape(3)) +
                      " but the transform's filter is " + std::to_string(r) + "x" + std::to_string(r));
        if (weights.shape(1) != input.shape(1))
          throw Error("input has " + std::to_string(input.shape(1)) + " channels but weights have " +
                      std::to_string(weights.shape(1)));
        if (r % 2 == 0) throw Error("error_layer needs an odd filter size (same padding)");
        const auto dim = [](const Array4D& a, std::size_t i) { return static_cast<int64_t>(a.shape(i)); };
        layer.shape = ConvShape{dim(input, 0), dim(input, 1), dim(input, 2), dim(input, 3), dim(weights, 0), r, r,
                                (r - 1) / 2, (r - 1) / 2};
        layer.shape.validate();
        layer.input = copy(input);
        layer.weights = copy(weights);
        for (double v : layer.weights)
          if (!std::isfinite(v)) throw Error("weights contain NaN or Inf");
        layer.source = "arrays";
        nb::gil_scoped_release release;
        const ErrorEvaluator eval(layer, model, t.tile());
        nb::gil_scoped_acquire acquire;
        return result(eval, t, layer.source);
      },
      nb::arg("transform"), nb::arg("input"), nb::arg("weights"), nb::arg("precision") = "fp16-storage",
      "Error of `transform` on a real layer: input [N, C, H, W] and weights [K, C, r, r] as C-contiguous "
      "float64 arrays (e.g. a network's activations), stride 1, same padding, cut into tiles as an engine "
      "does. Same result dict as error().");
}

}  // namespace nova::python
