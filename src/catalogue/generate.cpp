#include "nova/catalogue/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "nova/analysis/vandermonde.hpp"
#include "nova/catalogue/reference_points.hpp"
#include "nova/discover/discover.hpp"
#include "nova/discover/neighbourhood.hpp"
#include "nova/discover/objectives.hpp"
#include "nova/error.hpp"
#include "nova/exact/verify.hpp"

namespace nova {

using json = nlohmann::json;

EsParams GenerateOptions::default_es() {
  EsParams p;
  p.population = 30;
  p.generations = 60;
  p.restarts = 2;
  return p;
}

std::vector<TileSize> catalogue_tiles() {
  return {{2, 3}, {4, 3}, {6, 3}, {7, 3}, {8, 3}, {2, 5}, {4, 5}, {6, 5}};
}
std::vector<std::string> catalogue_presets() {
  return {"fp32", "fp16-storage", "fp16-all", "bf16-storage", "int8-tensor", "int8-channel", "int8-tap"};
}

std::vector<HeldOutError> held_out_errors(const TransformF64& t, const PrecisionModel& model,
                                          const std::vector<HeldOutSpec>& sets) {
  std::vector<HeldOutError> out;
  const TileSize tile{t.m, t.r};
  for (const auto& s : sets) {
    const ErrorEvaluator ev(make_held_out(tile, s), model);
    const ErrorMetrics e = ev.evaluate(t);
    out.push_back({s.name, e.rel_l2, e.max_abs, e.nan_count + e.inf_count});
  }
  return out;
}

json to_json(const GenerateOptions& o) {
  json held = json::array();
  for (const auto& h : o.held_out) held.push_back(to_json(h));
  const auto& tr = o.objective.training;
  return {{"seed", o.seed},
          {"training", {{"kind", std::string(to_string(tr.kind))}, {"tiles", tr.tiles}, {"min_outputs", tr.min_outputs}, {"channels", tr.channels}, {"seed", tr.seed}}},
          {"proxy", {{"headroom", o.objective.proxy.headroom}, {"z_overflow", o.objective.proxy.z_overflow},
                     {"z_quant", o.objective.proxy.z_quant}}},
          {"scaling", {{"max_exponent", o.objective.scaling.max_exponent}, {"passes", o.objective.scaling.passes}}},
          {"es", {{"population", o.es.population}, {"generations", o.es.generations}, {"restarts", o.es.restarts}}},
          {"polish", o.polish},
          {"polish_window", o.polish_window},
          {"top_k", o.top_k},
          {"refine_window", o.refine_window},
          {"threads", 1}};
}

namespace {

struct Candidate {
  PointList points;  // canonical order, infinity last
  std::string source;
  ScaledCandidate scaled;
  bool as_published = false;  // keep the wincnn scaling (a published set as shipped)
  double measured = HUGE_VAL;
};

std::vector<double> finite_of(const PointList& p) { return finite_doubles(p); }

PointList canonical(const PointList& p) { return ordered_points(finite_values(p), true); }

bool same_points(const PointList& a, const PointList& b) { return a == b; }

}  // namespace

CatalogueEntry search_entry(TileSize tile, const std::string& preset, const GenerateOptions& o) {
  return search_entry(tile, precision_preset(preset), o, SelectBy::kMeasured);
}

CatalogueEntry search_entry(TileSize tile, const PrecisionModel& model, const GenerateOptions& o, SelectBy select) {
  const auto t0 = std::chrono::steady_clock::now();
  validate_tile(tile);
  // The caller's ES settings: refused here, since a discover() that throws below only skips that
  // discovery (population 1 or sigma0 -5 had searched nothing and exited 0).
  validate(o.es);
  const std::string& preset = model.name;
  ErrorObjectiveOptions oo = o.objective;
  const StageProxyObjective proxy(model, oo);
  ErrorObjectiveOptions flat_o = oo;
  flat_o.search_scaling = false;
  const StageProxyObjective proxy_flat(model, flat_o);
  const MeasuredErrorObjective measured(model, oo);
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(fmt::format("{} {}: {}", tile.to_string(), preset, s));
  };

  std::vector<Candidate> pool;
  auto add = [&](PointList pts, std::string source, bool as_published) {
    pts = canonical(pts);
    for (const auto& c : pool)
      if (same_points(c.points, pts) && c.as_published == as_published) return;
    Candidate c;
    c.points = std::move(pts);
    c.source = std::move(source);
    c.as_published = as_published;
    pool.push_back(std::move(c));
  };

  // 1. Published sets, and discovery with P and with the preset's proxy on two lattices.
  const auto refs = reference_sets(tile);
  const RationalLattice fine(LatticeSpec{16, 5, PointDtype::kAny});
  for (const auto& r : refs) {
    if (r.points) {
      add(*r.points, "published: " + r.label, false);
      continue;
    }
    // An irrational set (ncnn's) cannot ship; its nearest rationals a/b, b <= 16, can.
    std::vector<Rational> snapped;
    for (double x : r.finite) snapped.push_back(fine.snap(x));
    std::vector<Rational> distinct = snapped;
    std::sort(distinct.begin(), distinct.end());
    if (std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end())
      add(ordered_points(snapped, true), r.label + " snapped to a/b, b <= 16", false);
  }
  const ErrorProxy p_objective;
  long evaluations = 0;
  for (const PointDtype dtype : {PointDtype::kAny, PointDtype::kFp16}) {
    for (const Objective* obj : {static_cast<const Objective*>(&p_objective), static_cast<const Objective*>(&proxy_flat)}) {
      DiscoverOptions d;
      d.tile = tile;
      d.lattice.dtype = dtype;
      d.es = o.es;
      d.seed = o.seed;
      d.threads = 1;
      try {
        const auto r = discover(d, *obj);
        evaluations += r.evaluations;
        add(r.points, fmt::format("discover({}, {} lattice, seed {})", obj->name(), point_dtype_name(dtype), o.seed), false);
      } catch (const Error& e) {
        say(std::string("discovery skipped: ") + e.what());
      }
    }
  }
  say(fmt::format("{} candidates", pool.size()));

  // 2. Best scaling of each under the proxy; polish the best few on the lattice.
  for (auto& c : pool) c.scaled = proxy.scaled(tile, finite_of(c.points));
  auto by_proxy = [](const Candidate& a, const Candidate& b) { return a.scaled.proxy < b.scaled.proxy; };
  std::stable_sort(pool.begin(), pool.end(), by_proxy);
  {
    const RationalLattice lattice(LatticeSpec{16, 5, PointDtype::kAny});
    const ValueFunction f = [&](std::span<const double> x) {
      ++evaluations;
      std::vector<double> v(x.begin(), x.end());
      std::vector<Rational> exact;
      for (double xv : v) exact.push_back(lattice.snap(xv));
      const auto pts = ordered_points(exact, true);
      return proxy.evaluate(tile, finite_doubles(pts));
    };
    const int count = std::min<int>(o.polish, static_cast<int>(pool.size()));
    std::vector<Candidate> polished;
    for (int i = 0; i < count; ++i) {
      const auto fin = finite_values(pool[static_cast<std::size_t>(i)].points);
      LatticePoint lp;
      bool on_lattice = true;
      for (const auto& v : fin) {
        const std::size_t k = lattice.nearest(to_double(v));
        if (lattice.values()[k] != v) on_lattice = false;
        lp.idx.push_back(k);
      }
      std::sort(lp.idx.begin(), lp.idx.end());
      if (!on_lattice || !strictly_increasing(lp.idx)) continue;
      lp.value = f(lattice_values(lattice, lp.idx));
      const auto best = polish(lattice, lp, 0, static_cast<std::size_t>(o.polish_window), f, &evaluations);
      std::vector<Rational> vals;
      for (auto k : best.idx) vals.push_back(lattice.values()[k]);
      Candidate c;
      c.points = ordered_points(vals, true);
      c.source = pool[static_cast<std::size_t>(i)].source + ", polished";
      polished.push_back(std::move(c));
    }
    for (auto& c : polished) {
      bool dup = false;
      for (const auto& q : pool) dup = dup || same_points(q.points, c.points);
      if (dup) continue;
      c.scaled = proxy.scaled(tile, finite_of(c.points));
      pool.push_back(std::move(c));
    }
    std::stable_sort(pool.begin(), pool.end(), by_proxy);
  }

  // 3. Measure: the top_k by proxy, and every published set rescaled and as published (selection by
  // the proxy: its best candidate only).
  std::vector<Candidate> finalists;
  // A proxy that sees every candidate overflow (+inf at the search's headroom: F(8,3) and F(6,5) in
  // fp16-all) cannot choose: the measurement does, as for SelectBy::kMeasured.
  const bool proxy_blind = pool.empty() || !std::isfinite(pool.front().scaled.proxy);
  const bool proxy_chooses = select == SelectBy::kProxy && !proxy_blind;
  if (select == SelectBy::kProxy && proxy_blind) say("the proxy is +inf for every candidate: measuring instead");
  if (proxy_chooses) finalists.push_back(pool.front());
  for (std::size_t i = 0; i < pool.size() && !proxy_chooses; ++i) {
    const bool published = pool[i].source.rfind("published: ", 0) == 0;
    if (static_cast<int>(i) < o.top_k || published) finalists.push_back(pool[i]);
    if (published) {
      Candidate c = pool[i];
      c.as_published = true;
      c.source += " (wincnn scaling)";
      c.scaled.scaling = ScalingChoice::wincnn(tile.n());
      c.scaled.transform = apply_scaling(c.scaled.base, c.scaled.scaling);
      c.scaled.proxy = stage_proxy(c.scaled.transform, model, proxy.options().proxy);
      finalists.push_back(std::move(c));
    }
  }
  if (finalists.empty()) throw Error("no candidate transform found for " + tile.to_string());
  for (auto& c : finalists) c.measured = c.scaled.ok ? measured.measure(c.scaled.transform) : HUGE_VAL;
  std::size_t best = 0;
  for (std::size_t i = 1; i < finalists.size(); ++i)
    if (finalists[i].measured < finalists[best].measured) best = i;
  Candidate win = finalists[best];
  say(fmt::format("best of {} measured: {} ({:.4g})", finalists.size(), win.source, win.measured));

  // Measured polish of the scaling.
  ScalingChoice choice = win.scaled.scaling;
  double train = win.measured;
  long measured_evals = static_cast<long>(finalists.size());
  if (o.refine_window > 0 && std::isfinite(train) && !proxy_chooses) {
    ScalingSearchOptions so = oo.scaling;
    so.window = o.refine_window;
    so.passes = 2;
    so.normalizers = false;
    so.min_gain = 0.02;  // below this, training-set noise
    const auto res = search_scaling(win.scaled.base, [&](const TransformF64& t) { return measured.measure(t); }, choice, so);
    measured_evals += res.evaluations;
    if (res.value < train * (1 - so.min_gain)) {
      choice = res.choice;
      train = res.value;
    }
  }

  // 4. Exact construction, verification, held-out scores.
  CatalogueEntry e;
  e.tile = tile;
  e.preset = preset;
  e.transform = Transform::construct(tile, win.points, exact_scaling(win.points, choice));
  const Verification v = verify(e.transform);
  if (!v) throw Error("internal: catalogue candidate failed exact verification: " + v.reason);
  const TransformF64 f64 = e.transform.to_f64();
  e.scaling_choice = choice;
  e.kappa_v = kappa2_vandermonde(finite_doubles(win.points));
  e.proxy = stage_proxy(f64, model, proxy.options().proxy);
  e.train_error = measured.measure(f64);
  e.held_out = held_out_errors(f64, model, o.held_out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  e.found = {{"candidate", win.source},
             {"objective", !proxy_chooses ? "measured-error:" + preset + " (scaling: stage-proxy:" + preset +
                                              ", then measured polish" +
                                              (select == SelectBy::kProxy ? "; the proxy was +inf everywhere)" : ")")
                                        : "stage-proxy:" + preset + " (points and scaling chosen on the proxy alone)"},
             {"seed", o.seed},
             {"candidates", pool.size()},
             {"measured_candidates", finalists.size()},
             {"proxy_evaluations", evaluations},
             {"measured_evaluations", measured_evals},
             {"seconds", std::round(seconds * 100) / 100},
             {"verified", true},
             {"nova_version", nova_version()}};
  say(fmt::format("done in {:.1f} s: {} train {:.4g}", seconds, to_string(win.points), e.train_error));
  return e;
}

Catalogue generate_catalogue(const GenerateOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  Catalogue c;
  c.nova_version = nova_version();
  c.held_out = o.held_out;
  const auto tiles = o.tiles.empty() ? catalogue_tiles() : o.tiles;
  const auto presets = o.presets.empty() ? catalogue_presets() : o.presets;
  for (const auto& p : presets) (void)precision_preset(p);  // fail early on an unknown name
  for (const auto& t : tiles) validate_tile(t);
  // A catalogue holds one entry per (tile, preset): a repeated one would be searched twice and written
  // into a file that load_catalogue then refuses.
  for (std::size_t i = 0; i < tiles.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (tiles[i] == tiles[j])
        throw Error("catalogue generate: tile " + tiles[i].to_string() + " is listed twice");
  for (std::size_t i = 0; i < presets.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (presets[i] == presets[j])
        throw Error("catalogue generate: preset '" + presets[i] + "' is listed twice");
  for (const auto& t : tiles)
    for (const auto& p : presets) c.entries.push_back(search_entry(t, p, o));
  c.generator = to_json(o);
  c.generator["seconds"] = std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 10) / 10;
  c.generator["command"] = "nova catalogue generate --seed " + std::to_string(o.seed);
  return c;
}

}  // namespace nova
