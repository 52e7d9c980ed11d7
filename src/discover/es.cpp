#include "nova/discover/es.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "nova/error.hpp"

namespace nova {

void validate(const EsParams& p) {
  if (p.population < 2) throw Error("ES population must be at least 2");
  // A generation's candidates are held at once (population x points doubles per thread): 10^8 asked for
  // 4 GB per thread before the first evaluation. A million is far beyond any useful ES population.
  if (p.population > kMaxEsPopulation)
    throw Error(fmt::format("ES population must be at most {} (got {})", kMaxEsPopulation, p.population));
  if (p.generations < 1) throw Error("ES generations must be at least 1");
  if (p.restarts < 0) throw Error("ES restarts must be at least 0");
  if (!(p.elite_fraction > 0 && p.elite_fraction <= 1)) throw Error("ES elite fraction must be in (0, 1]");
  if (!(p.sigma_min > 0 && p.sigma_min <= p.sigma_max)) throw Error("ES sigma bounds must satisfy 0 < min <= max");
  // The step size is clamped to [sigma_min, sigma_max] at every step: an initial one outside was
  // silently replaced by the nearer bound (--sigma0 100 and inf ran as 2, 0.001 as 0.01).
  if (!(p.sigma0 >= p.sigma_min && p.sigma0 <= p.sigma_max))
    throw Error(fmt::format("ES initial sigma must be in [{}, {}], the step-size bounds (got {})",
                            p.sigma_min, p.sigma_max, p.sigma0));
  if (!(p.biased_fraction >= 0 && p.biased_fraction <= 1)) throw Error("ES biased fraction must be in [0, 1]");
}

namespace {

double clean(double v) { return std::isnan(v) ? std::numeric_limits<double>::infinity() : v; }

}  // namespace

EsOutcome run_es_restart(int dim, const ParamFunction& f, const EsParams& p, Rng& rng, const BiasHook& bias,
                         std::optional<std::chrono::steady_clock::time_point> deadline,
                         const GenerationHook& on_generation) {
  EsOutcome out;
  const auto udim = static_cast<std::size_t>(dim);
  std::vector<double> mu(udim);
  const double init_std = std::sqrt(p.init_variance);
  for (auto& x : mu) x = init_std * rng.normal();
  double sigma = std::clamp(p.sigma0, p.sigma_min, p.sigma_max);
  const auto pop = static_cast<std::size_t>(p.population);
  const std::size_t elite = std::max<std::size_t>(1, static_cast<std::size_t>(p.elite_fraction * p.population));
  std::vector<double> cand(pop * udim), value(pop);
  std::vector<std::size_t> order(pop);
  out.best = mu;
  out.best_value = clean(f(mu));
  out.evaluations = 1;
  for (int gen = 0; gen < p.generations; ++gen) {
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      out.stopped_by_deadline = true;
      break;
    }
    const double mu_value = gen == 0 ? out.best_value : clean(f(mu));
    if (gen > 0) ++out.evaluations;
    if (mu_value < out.best_value) {
      out.best_value = mu_value;
      out.best = mu;
    }
    std::size_t evaluated = pop;
    for (std::size_t i = 0; i < pop; ++i) {
      std::span<double> c(cand.data() + i * udim, udim);
      for (std::size_t d = 0; d < udim; ++d) c[d] = mu[d] + sigma * rng.normal();
      // The draw happens for every candidate so that the random stream does not depend on bias.
      const bool biased = rng.uniform() < p.biased_fraction;
      if (biased && bias) bias(c);
      value[i] = clean(f(c));
      // Checked per candidate, not only per generation: one generation of a large population (3e6
      // candidates for F(4,3)) had run 10 s past a 1 s budget.
      if (deadline && i + 1 < pop && std::chrono::steady_clock::now() > *deadline) {
        evaluated = i + 1;
        break;
      }
    }
    out.evaluations += static_cast<long>(evaluated);
    if (evaluated < pop) {
      // Out of time mid-generation: keep the best candidate evaluated, leave the mean as it is.
      for (std::size_t i = 0; i < evaluated; ++i) {
        if (value[i] < out.best_value) {
          out.best_value = value[i];
          out.best.assign(cand.begin() + static_cast<long>(i * udim),
                          cand.begin() + static_cast<long>((i + 1) * udim));
        }
      }
      out.stopped_by_deadline = true;
      break;
    }
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return value[a] < value[b]; });
    std::size_t successes = 0;
    for (double v : value) successes += v < mu_value ? 1 : 0;
    if (value[order[0]] < out.best_value) {
      out.best_value = value[order[0]];
      out.best.assign(cand.begin() + static_cast<long>(order[0] * udim),
                      cand.begin() + static_cast<long>((order[0] + 1) * udim));
    }
    std::fill(mu.begin(), mu.end(), 0.0);
    for (std::size_t e = 0; e < elite; ++e) {
      for (std::size_t d = 0; d < udim; ++d) mu[d] += cand[order[e] * udim + d];
    }
    for (auto& x : mu) x /= static_cast<double>(elite);
    const double rate = static_cast<double>(successes) / static_cast<double>(pop);
    sigma = std::clamp(sigma * (rate > p.success_threshold ? p.sigma_up : p.sigma_down), p.sigma_min, p.sigma_max);
    out.generations_run = gen + 1;
    if (on_generation) on_generation(gen, out.best_value);
  }
  return out;
}

}  // namespace nova
