#include "nova/catalogue/rank_correlation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "nova/analysis/vandermonde.hpp"
#include "nova/discover/float_cook_toom.hpp"
#include "nova/discover/rng.hpp"
#include "nova/error.hpp"
#include "nova/numerics/first_order.hpp"

namespace nova {
namespace {

std::vector<double> ranks(std::span<const double> x) {
  const std::size_t n = x.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](std::size_t i) { return std::isnan(x[i]) ? HUGE_VAL : x[i]; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<double> r(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && key(order[j + 1]) == key(order[i])) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw Error("spearman: the two samples differ in length");
  if (x.size() < 3) throw Error("spearman: needs at least 3 pairs");
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mean = (n + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return 0;
  return sxy / std::sqrt(sxx * syy);
}

CorrelationStudy proxy_correlation(TileSize tile, const std::string& preset, int count, uint64_t seed,
                                   const TrainingData& training, double spread, bool with_scaling,
                                   std::span<const double> around) {
  if (count < 3) throw Error("the correlation study needs at least 3 point sets");
  if (!around.empty() && static_cast<int>(around.size()) != tile.n() - 1)
    throw Error("the correlation study's centre set needs n - 1 = " + std::to_string(tile.n() - 1) + " finite points");
  // The points are drawn on a 1/64 grid: below one step every set is its centre (each rho read 0), and
  // an infinite spread draws no number at all.
  if (!(spread >= 1.0 / 64 && std::isfinite(spread)))
    throw Error(
        fmt::format("the correlation study's spread must be finite and at least 1/64, the grid of its "
                    "points (got {})",
                    spread));
  const PrecisionModel model = precision_preset(preset);
  ErrorObjectiveOptions o;
  o.training = training;
  o.proxy.headroom = 1;  // predict the error on this data, not a margin for other data
  const MeasuredErrorObjective measured(model, o);
  const ProxyOptions po = measured.proxy().options().proxy;
  ErrorObjectiveOptions so;
  so.training = training;
  const StageProxyObjective search_proxy(model, so);
  CorrelationStudy s;
  s.tile = tile;
  s.preset = preset;
  s.seed = seed;
  Rng rng(seed, 7);
  const int q = tile.n() - 1;
  int failed_sets = 0;
  while (static_cast<int>(s.points.size()) < count) {
    std::vector<double> pts;
    int guard = 0;
    while (static_cast<int>(pts.size()) < q && guard++ < 10000) {
      const double centre = around.empty() ? 0.0 : around[pts.size()];
      const double v = std::round((centre + (2 * rng.uniform() - 1) * spread) * 64) / 64;  // dyadic: fp formats hold it
      bool ok = true;
      for (double p : pts) ok = ok && std::fabs(p - v) >= 0.05;
      if (ok) pts.push_back(v);
    }
    // No room for q points 0.05 apart (a small spread, or centres closer than that): retrying the
    // whole set forever had hung (--spread 1e-300, --spread inf). A tight but feasible spread gets
    // 100 tries of 10000 draws.
    if (static_cast<int>(pts.size()) < q) {
      if (++failed_sets < 100) continue;
      throw Error(
          fmt::format("the correlation study cannot draw {} points at least 0.05 apart within +-{} of {}; "
                      "widen the spread",
                      q, spread, around.empty() ? "0" : "the centre set"));
    }
    TransformF64 t;
    if (!float_cook_toom(tile, pts, t)) continue;
    s.points.push_back(pts);
    s.proxy.push_back(stage_proxy(t, model, po));
    s.measured.push_back(measured.measure(t));
    s.p_simple.push_back(winograd_p(t));
    s.kappa_v.push_back(kappa2_vandermonde(pts));
    if (with_scaling) {
      // The transform the search would consider: the proxy's scaling (chosen with the search's headroom).
      const auto c = search_proxy.scaled(tile, pts);
      s.proxy_scaled.push_back(stage_proxy(c.transform, model, po));
      s.measured_scaled.push_back(measured.measure(c.transform));
    }
  }
  for (double x : s.measured) s.usable += x < 1.0 ? 1 : 0;
  s.rho_proxy = spearman(s.proxy, s.measured);
  s.rho_p = spearman(s.p_simple, s.measured);
  s.rho_kappa = spearman(s.kappa_v, s.measured);
  if (with_scaling) {
    for (double x : s.measured_scaled) s.usable_scaled += x < 1.0 ? 1 : 0;
    s.rho_proxy_scaled = spearman(s.proxy_scaled, s.measured_scaled);
  }
  return s;
}

nlohmann::json to_json(const CorrelationStudy& s) {
  auto fin = [](const std::vector<double>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (double x : v) a.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr));
    return a;
  };
  return {{"tile", s.tile.to_string()}, {"preset", s.preset},     {"seed", s.seed},
          {"count", s.points.size()}, {"usable", s.usable}, {"rho_proxy_scaled", s.rho_proxy_scaled},
          {"usable_scaled", s.usable_scaled}, {"proxy_scaled", fin(s.proxy_scaled)}, {"measured_scaled", fin(s.measured_scaled)},   {"rho_proxy", s.rho_proxy}, {"rho_p", s.rho_p},
          {"rho_kappa_v", s.rho_kappa}, {"points", s.points},     {"proxy", fin(s.proxy)},
          {"measured", fin(s.measured)}, {"p", fin(s.p_simple)},  {"kappa_v", fin(s.kappa_v)}};
}

}  // namespace nova
