// The evolution strategy of the seed paper (Algorithm 1, Tables 13 and 35): sample around a mean,
// keep the elite, move the mean to the elite mean, adapt sigma by the 1/5 success rule. It knows
// nothing of points or objectives: it minimizes a function of a parameter vector.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "nova/discover/rng.hpp"

namespace nova {

inline constexpr int kMaxEsPopulation = 1000000;  // validate() refuses more (memory held per generation)

struct EsParams {
  int population = 50;    // 2 .. kMaxEsPopulation
  int generations = 100;  // per restart
  int restarts = 3;
  double elite_fraction = 0.25;
  double sigma0 = 0.5;
  double sigma_min = 0.01;
  double sigma_max = 2.0;
  double sigma_up = 1.1;
  double sigma_down = 0.9;
  // A generation succeeds when more than this fraction of its offspring beat the current mean.
  double success_threshold = 0.2;
  // The initial mean is drawn from N(0, init_variance I) (the seed's "N(0, 0.5 I)").
  double init_variance = 0.5;
  // Dtype-aware discovery: this fraction of the offspring is moved onto the allowed values (the
  // seed's "biased mutation", 30 %), through the `bias` hook of run_es.
  double biased_fraction = 0.0;
};

// Throws nova::Error naming the first parameter out of range.
void validate(const EsParams& p);

struct EsOutcome {
  std::vector<double> best;  // the best parameters seen
  double best_value = 0;
  long evaluations = 0;
  int generations_run = 0;
  bool stopped_by_deadline = false;
};

using ParamFunction = std::function<double(std::span<const double>)>;
using BiasHook = std::function<void(std::span<double>)>;
using GenerationHook = std::function<void(int generation, double best_value)>;

// One restart. Deterministic given the Rng state. Stops early (after a whole generation) when the
// deadline passes.
EsOutcome run_es_restart(int dim, const ParamFunction& f, const EsParams& p, Rng& rng, const BiasHook& bias = {},
                         std::optional<std::chrono::steady_clock::time_point> deadline = {},
                         const GenerationHook& on_generation = {});

}  // namespace nova
