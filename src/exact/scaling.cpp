// Transform: construction under a scaling convention, and the diagonal freedom.
#include <algorithm>

#include "nova/error.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

std::vector<Rational> parse_diagonal(const std::string& text, const char* which) {
  std::vector<Rational> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    try {
      values.push_back(parse_rational(text.substr(start, end - start)));
    } catch (const Error& e) {
      throw Error(std::string("bad ") + which + " entry in scaling '" + text + "': " + e.what());
    }
    start = end + 1;
  }
  return values;
}

std::vector<Rational> resolve_diagonal(const std::vector<Rational>& given, std::size_t n, const char* which) {
  if (given.empty()) return std::vector<Rational>(n, Rational(1));
  if (given.size() != n)
    throw Error(std::string("scaling ") + which + " has " + std::to_string(given.size()) + " entries; the transform has n = " +
                std::to_string(n) + " Winograd positions");
  for (std::size_t i = 0; i < n; ++i)
    if (given[i] == 0) throw Error(std::string("scaling ") + which + "[" + std::to_string(i) + "] is zero; diagonal scalings must be non-zero");
  return given;
}

}  // namespace

ScalingSpec ScalingSpec::parse(const std::string& text) {
  ScalingSpec spec;
  if (text == "wincnn" || text == "lagrange") {
    spec.convention = text;
    return spec;
  }
  spec.convention = "custom";
  std::size_t start = 0;
  bool any = false, seen_d1 = false, seen_d2 = false;
  // A diagonal given twice ("d1=...;d1=..." for "d1=...;d2=...") is refused: the last one silently won.
  auto once = [&](bool& seen, const char* which) {
    if (seen) throw Error("scaling '" + text + "' gives " + which + " twice");
    seen = true;
  };
  while (start < text.size()) {
    std::size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    start = end + 1;
    if (part.rfind("d1=", 0) == 0 || part.rfind("D1=", 0) == 0) {
      once(seen_d1, "D1");
      spec.d1 = parse_diagonal(part.substr(3), "D1");
    } else if (part.rfind("d2=", 0) == 0 || part.rfind("D2=", 0) == 0) {
      once(seen_d2, "D2");
      spec.d2 = parse_diagonal(part.substr(3), "D2");
    } else {
      throw Error("cannot parse scaling '" + text +
                  "' (expected wincnn, lagrange, or d1=a,b,...;d2=c,d,...)");
    }
    any = true;
  }
  if (!any) throw Error("empty scaling (expected wincnn, lagrange, or d1=...;d2=...)");
  return spec;
}

Transform Transform::construct(TileSize tile, PointList points, const ScalingSpec& spec) {
  LagrangeTriple base = lagrange_triple(tile, points);
  const auto n = static_cast<std::size_t>(tile.n());
  Scaling scaling;
  scaling.convention = spec.convention;
  if (spec.convention == "lagrange") {
    scaling.d1 = scaling.d2 = std::vector<Rational>(n, Rational(1));
  } else if (spec.convention == "wincnn") {
    scaling.d1 = std::vector<Rational>(n, Rational(1));
    scaling.d2 = wincnn_d2(points);
  } else if (spec.convention == "custom") {
    scaling.d1 = resolve_diagonal(spec.d1, n, "D1");
    scaling.d2 = resolve_diagonal(spec.d2, n, "D2");
  } else {
    throw Error("unknown scaling convention '" + spec.convention + "' (expected wincnn, lagrange or custom)");
  }
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < base.AT.rows(); ++i) base.AT(i, p) *= scaling.d1[p];
    for (std::size_t k = 0; k < base.G.cols(); ++k) base.G(p, k) *= scaling.d2[p];
    const Rational inverse = 1 / (scaling.d1[p] * scaling.d2[p]);
    for (std::size_t j = 0; j < n; ++j) base.BT(p, j) *= inverse;
  }
  return from_matrices(tile, std::move(points), std::move(scaling), std::move(base.AT), std::move(base.G),
                       std::move(base.BT));
}

namespace {

// Points given beside matrices (a JSON file's "points") must be the matrices' own: AT and G equal the
// Lagrange construction's at those points up to diagonal scalings (B^T is left to verification), a scaling
// given with them must be those diagonals, and a named convention must fix them as they are. Without this
// check a file could name other points than its matrices have (analysis, rescaling and exports then described
// those), or label wincnn's scaling lagrange (reported, and measured, as lagrange).
void check_points_match(TileSize tile, const PointList& points, const Scaling& scaling,
                        const RationalMatrix& AT, const RationalMatrix& G) {
  const LagrangeTriple base = lagrange_triple(tile, points);
  std::vector<Rational> d1, d2;
  const Verification v = at_g_up_to_scaling(base.AT, base.G, AT, G, &d1, &d2);
  if (!v) throw Error("the points {" + to_string(points) + "} do not match the matrices: " + v.reason);
  const std::string& convention = scaling.convention;
  if (convention != "wincnn" && convention != "lagrange" && convention != "custom" && convention != "unknown")
    throw Error("unknown scaling convention '" + convention +
                "' (expected wincnn, lagrange, custom or unknown)");
  const auto n = static_cast<std::size_t>(tile.n());
  const bool scaled = scaling.d1.size() == n && scaling.d2.size() == n;
  const std::vector<Rational> wincnn = convention == "wincnn" ? wincnn_d2(points) : std::vector<Rational>{};
  for (std::size_t p = 0; p < n; ++p) {
    const std::string where = "point " + std::to_string(p) + " (" + to_string(points[p]) + ")";
    if (scaled && (d1[p] != scaling.d1[p] || d2[p] != scaling.d2[p]))
      throw Error("the scaling does not match the matrices at " + where +
                  ": its D1 = " + to_string(scaling.d1[p]) + ", D2 = " + to_string(scaling.d2[p]) +
                  " (1 where not given), the matrices have " + to_string(d1[p]) + " and " + to_string(d2[p]));
    const bool named_fits = convention == "lagrange" ? d1[p] == 1 && d2[p] == 1
                            : convention == "wincnn" ? d1[p] == 1 && d2[p] == wincnn[p]
                                                     : true;
    if (!named_fits)
      throw Error("the matrices are not scaled as the convention '" + convention + "' says, at " + where +
                  ": D1 = " + to_string(d1[p]) + ", D2 = " + to_string(d2[p]) + " (label it custom)");
  }
}

}  // namespace

Transform Transform::from_matrices(TileSize tile, PointList points, Scaling scaling, RationalMatrix AT,
                                   RationalMatrix G, RationalMatrix BT) {
  validate_tile(tile);
  const auto n = static_cast<std::size_t>(tile.n());
  const auto m = static_cast<std::size_t>(tile.m), r = static_cast<std::size_t>(tile.r);
  auto shape = [](const RationalMatrix& x) { return std::to_string(x.rows()) + "x" + std::to_string(x.cols()); };
  if (AT.rows() != m || AT.cols() != n)
    throw Error("AT is " + shape(AT) + "; " + tile.to_string() + " needs " + std::to_string(m) + "x" + std::to_string(n));
  if (G.rows() != n || G.cols() != r)
    throw Error("G is " + shape(G) + "; " + tile.to_string() + " needs " + std::to_string(n) + "x" + std::to_string(r));
  if (BT.rows() != n || BT.cols() != n)
    throw Error("BT is " + shape(BT) + "; " + tile.to_string() + " needs " + std::to_string(n) + "x" + std::to_string(n));
  if (!points.empty()) {
    validate_points(points);
    if (points.size() != n)
      throw Error(tile.to_string() + " needs " + std::to_string(n) + " points; got " + std::to_string(points.size()));
    check_points_match(tile, points, scaling, AT, G);
  }
  Transform t;
  t.tile_ = tile;
  t.points_ = std::move(points);
  t.scaling_ = std::move(scaling);
  t.at_ = std::move(AT);
  t.g_ = std::move(G);
  t.bt_ = std::move(BT);
  return t;
}

Transform Transform::rescaled(const ScalingSpec& spec) const {
  if (points_.empty()) throw Error("cannot rescale a transform whose points are unknown");
  return construct(tile_, points_, spec);
}

Transform balance_input_rows(const Transform& t) {
  const auto n = static_cast<std::size_t>(t.n());
  if (t.scaling().d1.size() != n || t.scaling().d2.size() != n || t.points().empty())
    throw Error("cannot balance a transform whose points or scaling are unknown");
  ScalingSpec spec;
  spec.convention = "custom";
  spec.d1 = t.scaling().d1;
  spec.d2 = t.scaling().d2;
  for (std::size_t p = 0; p < n; ++p) {
    Rational l1 = 0;
    for (std::size_t j = 0; j < n; ++j) l1 += abs(t.BT()(p, j));
    if (l1 == 0) continue;  // not a transform that verifies; left as it is
    Rational factor = 1;    // 2^k_p
    while (l1 * factor < 2) factor *= 2;
    while (l1 * factor >= 4) factor /= 2;
    spec.d1[p] /= factor;  // B^T's row p is divided by d1[p] d2[p]
  }
  return t.rescaled(spec);
}

TransformF64 Transform::to_f64() const {
  TransformF64 f;
  f.m = m();
  f.r = r();
  f.n = n();
  f.AT = at_.to_double();
  f.G = g_.to_double();
  f.BT = bt_.to_double();
  return f;
}

}  // namespace nova
