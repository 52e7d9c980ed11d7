// The shipped catalogue of verified transforms (data/catalogue.json).
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "nova/catalogue/catalogue.hpp"

namespace nb = nanobind;

namespace nova::python {

void bind_catalogue(nb::module_& m) {
  m.def(
      "catalogue_entries",
      [](const std::string& path) {
        const Catalogue c = load_catalogue(path);
        nlohmann::json entries = nlohmann::json::array();
        for (const CatalogueEntry& e : c.entries) entries.push_back(to_json(e));
        return to_python_list(entries);
      },
      nb::arg("path") = "",
      "Every entry of a catalogue file (default: the shipped one) as dicts: tile, preset, exact transform, "
      "points, scaling choice, kappa_v, training and held-out errors, provenance.");
  m.def(
      "catalogue_transform",
      [](const std::string& tile, const std::string& preset, const std::string& path) {
        const Catalogue c = load_catalogue(path);
        return c.best(parse_tile(tile), preset).transform;
      },
      nb::arg("tile"), nb::arg("preset"), nb::arg("path") = "",
      "The catalogue's transform for `tile` and precision preset (default file: the shipped one); ValueError "
      "naming the tiles and presets it has otherwise.");
}

}  // namespace nova::python
