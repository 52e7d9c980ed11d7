// Analysis: conditioning, norms, entry sizes, cost and representability of one transform.
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "nova/analysis/analysis.hpp"

namespace nb = nanobind;

namespace nova::python {

void bind_analysis(nb::module_& m) {
  m.def(
      "analyze",
      [](const Transform& t, bool two_d) {
        AnalysisOptions options;
        options.two_d = two_d;
        return to_python_dict(to_json(analyze(t, options)));
      },
      nb::arg("transform"), nb::arg("two_d") = true,
      "Conditioning (kappa_2 of V, A^T, G, B^T in 1D and, with two_d, of their Kronecker squares), norms, the "
      "largest entry, arithmetic cost and representability in fp16/bf16/fp8/int8, as a dict (the JSON of "
      "`nova analyze`). Non-finite values appear as None.");
}

}  // namespace nova::python
