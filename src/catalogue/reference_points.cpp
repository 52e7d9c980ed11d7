#include "nova/catalogue/reference_points.hpp"

#include <cmath>

#include "nova/discover/discover.hpp"
#include "nova/discover/float_cook_toom.hpp"
#include "nova/error.hpp"

namespace nova {
namespace {

ReferenceSet exact_set(TileSize tile, std::string id, std::string label, std::string source, const std::string& finite) {
  ReferenceSet s;
  s.id = std::move(id);
  s.label = std::move(label);
  s.source = std::move(source);
  s.tile = tile;
  std::vector<Rational> values;
  for (const auto& p : parse_points(finite)) values.push_back(p.value);
  s.points = ordered_points(values, true);
  for (const auto& p : *s.points)
    if (!p.infinite) s.finite.push_back(to_double(p.value));
  return s;
}

}  // namespace

std::vector<ReferenceSet> reference_sets(TileSize tile) {
  validate_tile(tile);
  const int n = tile.n();
  std::vector<ReferenceSet> out;
  // The 'standard' points: 0, ±1, ±2, ... (n - 1 finite).
  {
    ReferenceSet s;
    s.id = "standard";
    s.tile = tile;
    s.points = standard_points(n - 1, true);
    std::vector<Rational> values = finite_values(*s.points);
    s.points = ordered_points(values, true);
    for (const auto& p : *s.points)
      if (!p.infinite) s.finite.push_back(to_double(p.value));
    s.label = "standard {" + to_string(*s.points) + "}";
    s.source = "the seed paper's 'standard' integer points (Table 1)";
    out.push_back(std::move(s));
  }
  const std::string same_n = tile.r == 3 ? "" : " (the " + std::to_string(n) + "-point set of F(" + std::to_string(n - 2) + ",3))";
  if (n == 6) {
    out.push_back(exact_set(tile, "lavin", "Lavin {0,±1,±2}" + same_n, "Lavin & Gray 2016, wincnn", "0, ±1, ±2"));
    out.push_back(exact_set(tile, "onednn", "oneDNN {0,±5/8,±3/2}" + same_n, "oneDNN's former F(4,3)", "0, ±5/8, ±3/2"));
    if (tile.r == 3) {
      out.push_back(exact_set(tile, "seed-nova", "seed NOVA {0,±5/6,±7/6}", "seed Tables 2 and 16", "0, ±5/6, ±7/6"));
      out.push_back(exact_set(tile, "seed-dyadic", "seed dyadic {0,±3/4,±5/4}", "seed Tables 4 and 19", "0, ±3/4, ±5/4"));
    }
    ReferenceSet s;
    s.id = "ncnn";
    s.label = "ncnn {0,±√2/2,±√2} (float64)" + same_n;
    s.source = "ncnn's F(4,3) points, irrational: float64 Cook-Toom matrices";
    s.tile = tile;
    const double h = std::sqrt(2.0) / 2, t = std::sqrt(2.0);
    s.finite = {0.0, h, -h, t, -t};
    out.push_back(std::move(s));
  }
  if (n == 8) {
    out.push_back(exact_set(tile, "nnpack", "NNPACK/ncnn/TVM {0,±1,±2,±1/2}" + same_n, "NNPACK, ncnn and TVM F(6,3)",
                            "0, ±1, ±2, ±1/2"));
    if (tile.r == 3)
      out.push_back(exact_set(tile, "seed-nova", "seed NOVA {0,±3/5,±1,±7/6}", "seed Tables 2 and 16", "0, ±3/5, ±1, ±7/6"));
  }
  if (n == 10) {
    out.push_back(exact_set(tile, "tvm", "TVM {0,±1,±2,±1/2,-1/4,4}" + same_n, "TVM's F(8,3)",
                            "0, ±1, ±2, ±1/2, -1/4, 4"));
    if (tile.r == 3)
      out.push_back(exact_set(tile, "seed-nova", "seed NOVA {0,±2/5,±5/6,±1,±7/6}", "seed Tables 2 and 16",
                              "0, ±2/5, ±5/6, ±1, ±7/6"));
  }
  return out;
}

std::optional<Transform> reference_exact(const ReferenceSet& s) {
  if (!s.points) return std::nullopt;
  return Transform::construct(s.tile, *s.points, ScalingSpec{});
}

TransformF64 reference_transform(const ReferenceSet& s) {
  if (s.points) return reference_exact(s)->to_f64();
  TransformF64 t;
  if (!float_cook_toom(s.tile, s.finite, t)) throw Error("reference set " + s.id + ": repeated points");
  return t;
}

}  // namespace nova
