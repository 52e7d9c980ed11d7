#include "nova/discover/discover.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <thread>

#include "nova/analysis/vandermonde.hpp"
#include "nova/error.hpp"

namespace nova {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Binomial coefficient as a double (only compared against a limit).
double choose(std::size_t n, std::size_t k) {
  if (k > n) return 0;
  double c = 1;
  for (std::size_t i = 0; i < k; ++i) c = c * static_cast<double>(n - i) / static_cast<double>(i + 1);
  return c;
}

struct Context {
  const DiscoverOptions& o;
  const Objective& objective;
  const RationalLattice& lattice;
  std::size_t first_positive;  // lattice index of the smallest positive value
  int q;                       // finite points
  std::optional<Clock::time_point> deadline;
  std::mutex* progress_mutex;

  void report(const std::string& line) const {
    if (!o.progress) return;
    std::lock_guard<std::mutex> lock(*progress_mutex);
    o.progress(line);
  }
  // Distance of each coordinate to the lattice, averaged: the seed's R(p) (eq. 20).
  double repr_distance(std::span<const double> x, bool magnitudes) const {
    double s = 0;
    for (double v : x) {
      const double a = magnitudes ? std::abs(v) : v;
      s += std::abs(a - lattice.value(lattice.nearest(a)));
    }
    return x.empty() ? 0 : s / static_cast<double>(x.size());
  }
  bool dtype_aware() const { return o.lattice.dtype != PointDtype::kAny; }
};

PointList to_point_list(const RationalLattice& lattice, const std::vector<std::size_t>& idx, bool symmetric,
                        bool with_zero) {
  std::vector<Rational> values;
  if (symmetric && with_zero) values.emplace_back(0);
  for (auto i : idx) {
    values.push_back(lattice.values()[i]);
    if (symmetric) values.push_back(-lattice.values()[i]);
  }
  PointList out;
  for (auto& v : values) out.push_back(Point::finite(v));
  return out;
}

// Finish a continuous candidate: snap, repair with the neighbourhood search if the snap repeated a
// point, polish. `lo` restricts the lattice (the positive values for symmetric magnitudes).
void finish(const Context& c, StageResult& s, std::span<const double> x, std::size_t lo, const ValueFunction& f,
            Rng& rng) {
  std::vector<double> target(x.begin(), x.end());
  if (lo > 0) {
    for (auto& v : target) v = std::abs(v);
  }
  LatticePoint lp;
  lp.idx = snap_indices(c.lattice, target, lo);
  if (strictly_increasing(lp.idx)) {
    lp.value = f(lattice_values(c.lattice, lp.idx));
    ++s.evaluations;
  } else {
    s.snap_broke = true;
    auto repaired =
        neighbourhood_search(c.lattice, target, lo, c.o.neighbourhood, f, rng, &s.evaluations, c.deadline);
    if (!repaired) {
      // No distinct combination near the candidate: take the lowest distinct indices as a last resort.
      lp.idx.clear();
      for (std::size_t i = 0; i < target.size(); ++i) lp.idx.push_back(lo + i);
      lp.value = f(lattice_values(c.lattice, lp.idx));
      ++s.evaluations;
    } else {
      lp = std::move(*repaired);
    }
  }
  if (c.o.polish) lp = polish(c.lattice, std::move(lp), lo, c.o.polish_window, f, &s.evaluations, c.deadline);
  s.points = to_point_list(c.lattice, lp.idx, lo > 0, lo > 0 && c.q % 2 == 1);
  s.value = lp.value;
  if (c.deadline && Clock::now() > *c.deadline)
    s.stopped_by_budget = true;  // the repair or polish was cut short
}

StageResult symmetric_stage(const Context& c) {
  const auto t0 = Clock::now();
  StageResult s;
  const bool with_zero = c.q % 2 == 1;
  const std::size_t k = static_cast<std::size_t>(c.q / 2);
  const std::size_t lo = c.first_positive;
  const std::size_t positives = c.lattice.size() - lo;
  const ValueFunction f = [&](std::span<const double> mags) {
    return c.objective.evaluate_symmetric(c.o.tile, mags, with_zero);
  };
  if (k == 0) {
    s.stage = "symmetric-enumeration";
    s.points = {Point::finite(0)};
    const double zero = 0.0;
    s.value = c.objective.evaluate(c.o.tile, std::span<const double>(&zero, 1));
    s.evaluations = 1;
  } else if (choose(positives, k) <= static_cast<double>(c.o.symmetric_enumeration_limit)) {
    // Every set {0?, +-p_1, ..., +-p_k} with p_1 < ... < p_k on the lattice.
    s.stage = "symmetric-enumeration";
    std::vector<std::size_t> idx(k);
    for (std::size_t i = 0; i < k; ++i) idx[i] = lo + i;
    std::optional<LatticePoint> best;
    while (true) {
      const double v = f(lattice_values(c.lattice, idx));
      ++s.evaluations;
      if (!best || v < best->value) best = LatticePoint{idx, v};
      if (c.deadline && Clock::now() > *c.deadline) {
        s.stopped_by_budget = true;
        break;
      }
      // Next combination in lexicographic order.
      std::size_t i = k;
      while (i > 0 && idx[i - 1] == c.lattice.size() - (k - i + 1)) --i;
      if (i == 0) break;
      ++idx[i - 1];
      for (std::size_t j = i; j < k; ++j) idx[j] = idx[j - 1] + 1;
    }
    s.points = to_point_list(c.lattice, best->idx, true, with_zero);
    s.value = best->value;
  } else {
    // Too many to enumerate: the ES over the k magnitudes, then the lattice.
    s.stage = "symmetric-es";
    Rng rng(c.o.seed, 1);
    const ParamFunction pf = [&](std::span<const double> th) {
      std::vector<double> mags(th.begin(), th.end());
      for (auto& m : mags) m = std::abs(m);
      double v = f(mags);
      if (c.dtype_aware()) v *= 1.0 + c.o.repr_weight * c.repr_distance(th, true);
      return v;
    };
    const BiasHook bias = [&](std::span<double> th) {
      for (auto& v : th) v = c.lattice.value(std::max(c.lattice.nearest(std::abs(v)), lo));
    };
    EsParams p = c.o.es;
    p.restarts = std::max(1, p.restarts);
    std::optional<EsOutcome> best;
    for (int r = 0; r < p.restarts; ++r) {
      auto out = run_es_restart(static_cast<int>(k), pf, p, rng, bias, c.deadline, [&](int gen, double v) {
        if ((gen + 1) % 20 == 0) c.report(fmt::format("symmetric ES {}/{}: generation {}/{}, best {:.4g}", r + 1,
                                                      p.restarts, gen + 1, p.generations, v));
      });
      s.evaluations += out.evaluations;
      s.stopped_by_budget = s.stopped_by_budget || out.stopped_by_deadline;
      if (!best || out.best_value < best->best_value) best = std::move(out);
    }
    s.continuous = best->best;
    for (auto& v : s.continuous) v = std::abs(v);
    std::sort(s.continuous.begin(), s.continuous.end());
    s.continuous_value = f(s.continuous);
    finish(c, s, s.continuous, lo, f, rng);
  }
  s.seconds = seconds_since(t0);
  return s;
}

StageResult es_stage(const Context& c, int restart) {
  const auto t0 = Clock::now();
  StageResult s;
  s.stage = fmt::format("es-restart-{}", restart + 1);
  Rng rng(c.o.seed, 100 + static_cast<uint64_t>(restart));
  const ValueFunction f = [&](std::span<const double> x) { return c.objective.evaluate(c.o.tile, x); };
  const ParamFunction pf = [&](std::span<const double> x) {
    double v = f(x);
    if (c.dtype_aware()) v *= 1.0 + c.o.repr_weight * c.repr_distance(x, false);
    return v;
  };
  const BiasHook bias = [&](std::span<double> x) {
    for (auto& v : x) v = c.lattice.value(c.lattice.nearest(v));
  };
  auto out = run_es_restart(c.q, pf, c.o.es, rng, bias, c.deadline, [&](int gen, double v) {
    if ((gen + 1) % 20 == 0) c.report(fmt::format("{}: generation {}/{}, best {:.4g}", s.stage, gen + 1,
                                                  c.o.es.generations, v));
  });
  s.evaluations = out.evaluations;
  s.stopped_by_budget = out.stopped_by_deadline;
  s.continuous = out.best;
  std::sort(s.continuous.begin(), s.continuous.end());
  s.continuous_value = f(s.continuous);
  finish(c, s, s.continuous, 0, f, rng);
  s.seconds = seconds_since(t0);
  return s;
}

}  // namespace

PointList ordered_points(std::vector<Rational> finite, bool with_infinity) {
  std::sort(finite.begin(), finite.end(), [](const Rational& a, const Rational& b) {
    const Rational aa = abs(a), ab = abs(b);
    if (aa != ab) return aa < ab;
    return a > b;  // +x before -x
  });
  PointList out;
  for (auto& v : finite) out.push_back(Point::finite(v));
  if (with_infinity) out.push_back(Point::infinity());
  return out;
}

DiscoveryResult discover(const DiscoverOptions& o, const Objective& objective, const ScalingSpec& scaling) {
  validate_tile(o.tile);
  validate(o.es);
  if (o.tile.n() < 2) throw Error(fmt::format("{} has no finite point to discover (n = 1)", o.tile.to_string()));
  if (o.budget_s < 0 || !std::isfinite(o.budget_s))
    throw Error(fmt::format(
        "the time budget must be a finite, non-negative number of seconds (0: none; got {})", o.budget_s));
  if (o.threads < 0)
    throw Error(fmt::format("threads must be at least 1, or 0 for all cores (got {})", o.threads));
  if (!o.symmetric && !o.es_stage) throw Error("both the symmetric and the ES stage are disabled: nothing to run");
  const auto t0 = Clock::now();
  const RationalLattice lattice(o.lattice);
  const int q = o.tile.n() - 1;
  if (lattice.size() < static_cast<std::size_t>(q)) {
    throw Error(fmt::format("impossible constraint: {} needs {} distinct finite points but {} allows only {} ({})",
                            o.tile.to_string(), q, std::string(point_dtype_name(o.lattice.dtype)), lattice.size(),
                            lattice.describe()));
  }
  const auto zero_it = std::upper_bound(lattice.doubles().begin(), lattice.doubles().end(), 0.0);
  const auto first_positive = static_cast<std::size_t>(zero_it - lattice.doubles().begin());
  std::mutex progress_mutex;
  EsParams es = o.es;
  DiscoverOptions opts = o;
  if (o.lattice.dtype != PointDtype::kAny && es.biased_fraction == 0.0) es.biased_fraction = 0.3;
  opts.es = es;
  Context c{opts, objective, lattice, first_positive, q, std::nullopt, &progress_mutex};
  if (o.budget_s > 0) {
    c.deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.budget_s));
  }

  // The tasks: the symmetric stage (when the lattice has enough positive values), then each restart.
  std::vector<std::function<StageResult()>> tasks;
  const bool symmetric_feasible = lattice.size() - first_positive >= static_cast<std::size_t>(q / 2);
  if (o.symmetric && symmetric_feasible) tasks.emplace_back([&c] { return symmetric_stage(c); });
  if (o.es_stage) {
    for (int r = 0; r < es.restarts; ++r) tasks.emplace_back([&c, r] { return es_stage(c, r); });
  }
  if (tasks.empty()) throw Error("no stage can run: the symmetric stage is infeasible and the ES stage is off");
  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(tasks.size()));
  std::vector<StageResult> results(tasks.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < tasks.size();) results[i] = tasks[i]();
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  }

  // Fixed-order reduction: the lowest value, the earliest task on ties.
  std::size_t best = 0;
  for (std::size_t i = 1; i < results.size(); ++i) {
    if (results[i].value < results[best].value) best = i;
  }
  DiscoveryResult r;
  r.tile = o.tile;
  r.objective = objective.name();
  r.lattice = lattice.describe();
  r.dtype = o.lattice.dtype;
  r.seed = o.seed;
  r.threads = threads;
  r.winning_stage = results[best].stage;
  r.points = ordered_points(finite_values(results[best].points));
  const auto finite = finite_doubles(r.points);
  r.value = objective.evaluate(o.tile, finite);
  r.kappa_v = kappa2_vandermonde(finite);
  r.transform = Transform::construct(o.tile, r.points, scaling);
  r.value_scaling = objective.value_scaling();
  r.verification = verify(r.transform);
  if (!r.verification) {
    throw Error("internal: discovered transform failed exact verification: " + r.verification.reason);
  }
  for (const auto& s : results) r.evaluations += s.evaluations;
  r.stages = std::move(results);
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace nova
