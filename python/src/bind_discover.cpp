// Point discovery under the kappa-style objectives (`nova discover`).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "nova/discover/discover.hpp"

namespace nb = nanobind;

namespace nova::python {

void bind_discover(nb::module_& m) {
  m.def(
      "discover",
      [](const std::string& tile, const std::string& objective, const nb::int_& seed, int threads,
         double budget_s, const std::string& dtype, int max_denominator, const std::string& scaling) {
        DiscoverOptions o;
        o.tile = parse_tile(tile);
        o.seed = seed_from(seed);
        o.threads = threads;
        o.budget_s = budget_s;
        o.lattice.dtype = parse_point_dtype(dtype);
        o.lattice.max_denominator = max_denominator;
        const auto obj = make_objective(objective);
        const ScalingSpec spec = ScalingSpec::parse(scaling);
        DiscoveryResult r = [&] {
          nb::gil_scoped_release release;
          return nova::discover(o, *obj, spec);
        }();
        return std::make_pair(r.transform, to_python_dict(to_json(r, /*with_analysis=*/false)["discovery"]));
      },
      nb::arg("tile"), nb::arg("objective") = "kappa-v", nb::arg("seed") = 0, nb::arg("threads") = 0,
      nb::arg("budget_s") = 0.0, nb::arg("dtype") = "any", nb::arg("max_denominator") = 10,
      nb::arg("scaling") = "wincnn",
      "Search rational points for `tile` that minimize `objective` (kappa-v, norm-product, ... or a weighted sum "
      "\"kappa-v:1,norm-product:0.01\"): symmetric enumeration, evolution strategy, snap to the rational lattice "
      "(denominators up to max_denominator; dtype any|fp16|bf16|int8 restricts it), polish, exact verification. "
      "Deterministic for a seed. Returns (transform, details dict).");
}

}  // namespace nova::python
