#include "nova/catalogue/scaling_search.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "nova/discover/float_cook_toom.hpp"
#include "nova/error.hpp"

namespace nova {

ScalingChoice ScalingChoice::wincnn(int n) {
  ScalingChoice s;
  s.e1.assign(static_cast<std::size_t>(n), 0);
  s.e2.assign(static_cast<std::size_t>(n), 0);
  s.place.assign(static_cast<std::size_t>(n), Normalizer::kG);
  return s;
}

bool float_base(TileSize tile, std::span<const double> finite, FloatBase& out) {
  TransformF64 w;
  if (!float_cook_toom(tile, finite, w)) return false;
  const int n = tile.n(), r = tile.r;
  out.tile = tile;
  out.normalizer.assign(static_cast<std::size_t>(n), 1.0);
  for (std::size_t p = 0; p < finite.size(); ++p) {
    double np = 1.0;
    for (std::size_t j = 0; j < finite.size(); ++j)
      if (j != p) np *= finite[p] - finite[j];
    if (np == 0 || !std::isfinite(np)) return false;
    out.normalizer[p] = np;
  }
  // wincnn: G = G_l / N_p, B^T = N_p B^T_l.
  for (int p = 0; p < n; ++p) {
    const double np = out.normalizer[static_cast<std::size_t>(p)];
    for (int k = 0; k < r; ++k) w.G[static_cast<std::size_t>(p * r + k)] *= np;
    for (int j = 0; j < n; ++j) w.BT[static_cast<std::size_t>(p * n + j)] /= np;
  }
  // The exact wincnn convention makes the first row's factor positive (wincnn_d2 in the exact core);
  // the normalizer follows it so that exact_scaling() gives the very transform searched here.
  if (out.normalizer[0] < 0) out.normalizer[0] = -out.normalizer[0];
  for (double v : w.AT) if (!std::isfinite(v)) return false;
  for (double v : w.G) if (!std::isfinite(v)) return false;
  for (double v : w.BT) if (!std::isfinite(v)) return false;
  out.lagrange = std::move(w);
  return true;
}

TransformF64 apply_scaling(const FloatBase& base, const ScalingChoice& s) {
  TransformF64 t = base.lagrange;
  const int m = t.m, r = t.r, n = t.n;
  for (int p = 0; p < n; ++p) {
    const auto P = static_cast<std::size_t>(p);
    const double np = base.normalizer[P];
    double d1 = std::ldexp(1.0, s.e1[P]), d2 = std::ldexp(1.0, s.e2[P]);
    if (s.place[P] == Normalizer::kG) d2 /= np;
    if (s.place[P] == Normalizer::kAT) d1 /= np;
    const double inv = 1.0 / (d1 * d2);
    for (int i = 0; i < m; ++i) t.AT[static_cast<std::size_t>(i * n + p)] *= d1;
    for (int k = 0; k < r; ++k) t.G[static_cast<std::size_t>(p * r + k)] *= d2;
    for (int j = 0; j < n; ++j) t.BT[static_cast<std::size_t>(p * n + j)] *= inv;
  }
  return t;
}

ScalingSpec exact_scaling(const PointList& points, const ScalingChoice& s) {
  const std::size_t n = points.size();
  if (s.e1.size() != n || s.e2.size() != n || s.place.size() != n)
    throw Error("scaling choice has " + std::to_string(s.e1.size()) + " positions; the points have " +
                std::to_string(n));
  const std::vector<Rational> inv_np = wincnn_d2(points);  // 1/N_p, 1 for infinity
  ScalingSpec spec;
  spec.convention = "custom";
  for (std::size_t p = 0; p < n; ++p) {
    Rational d1 = power_of_two(s.e1[p]), d2 = power_of_two(s.e2[p]);
    if (s.place[p] == Normalizer::kG) d2 *= inv_np[p];
    if (s.place[p] == Normalizer::kAT) d1 *= inv_np[p];
    spec.d1.push_back(d1);
    spec.d2.push_back(d2);
  }
  return spec;
}

nlohmann::json to_json(const ScalingChoice& s) {
  nlohmann::json place = nlohmann::json::array();
  for (auto p : s.place) place.push_back(p == Normalizer::kG ? "G" : p == Normalizer::kBT ? "BT" : "AT");
  return {{"e1", s.e1}, {"e2", s.e2}, {"normalizer", place}};
}

ScalingSearchResult search_scaling(const FloatBase& base, const TransformScore& score, const ScalingChoice& start,
                                   const ScalingSearchOptions& o) {
  ScalingSearchResult res;
  res.choice = start;
  res.value = score(apply_scaling(base, start));
  ++res.evaluations;
  const int n = base.lagrange.n;
  auto better = [&o](double v, double best) {
    return v < best * (1 - o.min_gain) || (std::isinf(best) && std::isfinite(v));
  };
  for (int pass = 0; pass < o.passes; ++pass) {
    bool moved = false;
    for (int p = 0; p < n; ++p) {
      const auto P = static_cast<std::size_t>(p);
      for (int coord = 0; coord < 3; ++coord) {
        if (coord == 2 && !o.normalizers) continue;
        ScalingChoice trial = res.choice;
        std::vector<int> values;
        if (coord == 2) {
          values = {0, 1, 2};
        } else {
          const int centre = coord == 0 ? start.e1[P] : start.e2[P];
          const int lo = o.window > 0 ? std::max(-o.max_exponent, centre - o.window) : -o.max_exponent;
          const int hi = o.window > 0 ? std::min(o.max_exponent, centre + o.window) : o.max_exponent;
          for (int e = lo; e <= hi; ++e) values.push_back(e);
        }
        for (int v : values) {
          if (coord == 0) { if (v == res.choice.e1[P]) continue; trial.e1[P] = v; }
          if (coord == 1) { if (v == res.choice.e2[P]) continue; trial.e2[P] = v; }
          if (coord == 2) { if (static_cast<int>(res.choice.place[P]) == v) continue; trial.place[P] = static_cast<Normalizer>(v); }
          const double value = score(apply_scaling(base, trial));
          ++res.evaluations;
          if (better(value, res.value)) {
            res.value = value;
            res.choice = trial;
            moved = true;
          } else {
            trial = res.choice;
          }
        }
      }
    }
    if (!moved) break;
  }
  return res;
}

}  // namespace nova
