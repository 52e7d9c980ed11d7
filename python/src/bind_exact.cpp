// Transforms: construction, exact entries (as "p/q" strings), float64 arrays, verification, I/O.
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nb = nanobind;

namespace nova::python {
namespace {

using Array2D = nb::ndarray<nb::numpy, double, nb::ndim<2>>;

// A float64 numpy array that owns a copy of the matrix (the values are derived, small, and immutable).
Array2D to_numpy(const RationalMatrix& x) {
  auto* data = new std::vector<double>(x.to_double());
  nb::capsule owner(data, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return Array2D(data->data(), {x.rows(), x.cols()}, owner);
}

std::vector<std::vector<std::string>> exact_rows(const RationalMatrix& x) {
  std::vector<std::vector<std::string>> rows(x.rows());
  for (std::size_t i = 0; i < x.rows(); ++i)
    for (std::size_t j = 0; j < x.cols(); ++j) rows[i].push_back(to_string(x(i, j)));
  return rows;
}

std::vector<std::string> strings(const std::vector<Rational>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(to_string(x));
  return out;
}

Transform make(const std::string& tile_text, const std::string& points_text, const std::string& scaling) {
  const TileSize tile = parse_tile(tile_text);
  PointList points = points_text.empty() ? standard_points(tile.n() - 1, true) : parse_points(points_text);
  return Transform::construct(tile, std::move(points), ScalingSpec::parse(scaling));
}

}  // namespace

void bind_exact(nb::module_& m) {
  nb::class_<Transform>(m, "Transform", "An exact Winograd transform (A^T, G, B^T) of a tile F(m, r).")
      .def(nb::new_(&make), nb::arg("tile"), nb::arg("points") = "", nb::arg("scaling") = "wincnn",
           "Build the transform of `tile` (\"6,3\" or \"F(6,3)\") from `points` (\"0,±1,±2,±1/2,inf\"; "
           "default: "
           "the standard 0, ±1, ±2, ... with inf) under `scaling` (wincnn, lagrange, or \"d1=...;d2=...\").")
      .def_prop_ro("m", &Transform::m)
      .def_prop_ro("r", &Transform::r)
      .def_prop_ro("n", &Transform::n)
      .def_prop_ro("tile", [](const Transform& t) { return t.tile().to_string(); })
      .def_prop_ro(
          "points", [](const Transform& t) { return to_strings(t.points()); }, "Points as exact strings")
      .def_prop_ro(
          "scaling", [](const Transform& t) { return t.scaling().convention; }, "Scaling convention name")
      .def_prop_ro(
          "D1", [](const Transform& t) { return strings(t.scaling().d1); }, "Column scaling of A^T (exact)")
      .def_prop_ro(
          "D2", [](const Transform& t) { return strings(t.scaling().d2); }, "Row scaling of G (exact)")
      .def_prop_ro(
          "AT", [](const Transform& t) { return to_numpy(t.AT()); }, nb::rv_policy::automatic,
          "A^T (m x n) as float64, nearest to exact")
      .def_prop_ro(
          "G", [](const Transform& t) { return to_numpy(t.G()); }, nb::rv_policy::automatic,
          "G (n x r) as float64")
      .def_prop_ro(
          "BT", [](const Transform& t) { return to_numpy(t.BT()); }, nb::rv_policy::automatic,
          "B^T (n x n) as float64")
      .def(
          "exact",
          [](const Transform& t, const std::string& which) {
            if (which == "AT") return exact_rows(t.AT());
            if (which == "G") return exact_rows(t.G());
            if (which == "BT") return exact_rows(t.BT());
            throw Error("exact() takes 'AT', 'G' or 'BT', not '" + which + "'");
          },
          nb::arg("which"), "Exact entries of 'AT', 'G' or 'BT' as \"p/q\" strings")
      .def(
          "verify",
          [](const Transform& t) {
            const Verification v = verify(t);
            return std::make_pair(v.ok, v.reason);
          },
          "Exact verification of the 1D and 2D identities: (ok, reason)")
      .def(
          "rescaled",
          [](const Transform& t, const std::string& s) { return t.rescaled(ScalingSpec::parse(s)); },
          nb::arg("scaling"), "The same points under another diagonal scaling")
      .def("balance_input_rows", &balance_input_rows,
           "The same transform with each row of B^T multiplied by the power of two that brings its L1 norm "
           "into "
           "[2, 4) and the column of A^T by its inverse (exact): the scaling nova's fp16 engines give their "
           "default transforms, which keeps V = B^T d B within 16 max|d| and none of it far below d")
      .def(
          "to_json", [](const Transform& t) { return to_json(t).dump(2); },
          "The JSON form (schema version 1)")
      .def(
          "to_cpp", [](const Transform& t, const std::string& name) { return to_cpp_header(t, name); },
          nb::arg("name") = "", "A C++ header with constexpr float and double arrays")
      .def("__str__", [](const Transform& t) { return to_text(t); })
      .def("__repr__",
           [](const Transform& t) {
             return "nova.Transform(" + t.tile().to_string() + ", points=[" + to_string(t.points()) +
                    "], scaling=" + t.scaling().convention + ")";
           })
      .def_static(
          "from_json",
          [](const std::string& text) {
            nlohmann::json j;
            try {
              j = nlohmann::json::parse(text);
            } catch (const nlohmann::json::parse_error& e) {
              throw Error(std::string("not valid JSON: ") + e.what());
            }
            return transform_from_json(j);
          },
          nb::arg("text"), "Read a transform from its JSON text (not verified: call verify())");
  m.def("load_transform", [](const std::string& path) { return load_transform(path); }, nb::arg("path"),
        "Read a transform JSON file");
  m.def("max_points", [] { return kMaxPoints; }, "The largest n = m + r - 1 nova builds");
}

}  // namespace nova::python
