// How well the stage proxy ranks transforms: Spearman's rank correlation between the proxy and the
// measured error over random point sets (each in the wincnn scaling, as constructed).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

#include "nova/catalogue/error_objectives.hpp"

namespace nova {

// Spearman's rho with average ranks for ties; +inf values rank above every finite value (and tie
// with each other). Throws nova::Error for fewer than 3 pairs or different lengths.
double spearman(std::span<const double> x, std::span<const double> y);

struct CorrelationStudy {
  TileSize tile;
  std::string preset;
  uint64_t seed = 0;
  std::vector<std::vector<double>> points;  // finite points of each random set
  std::vector<double> proxy, measured, p_simple, kappa_v;
  int usable = 0;           // sets whose measured error is below 100 % (and finite)
  double rho_proxy = 0;     // stage proxy vs measured (overflow: +inf, ranked last, tied)
  double rho_p = 0;         // DESIGN.md's P (scale-invariant) vs measured
  double rho_kappa = 0;     // kappa_2(V) vs measured
  // The same sets, each with the power-of-two scaling the proxy's search picks (what discovery ranks).
  std::vector<double> proxy_scaled, measured_scaled;
  double rho_proxy_scaled = 0;
  int usable_scaled = 0;
};

// `count` random sets of n-1 distinct finite points, each uniform in [-spread, spread] with a
// minimum separation of 0.05, deterministic for `seed`; with `around` (n-1 finite points), point i
// uniform in [around_i - spread, around_i + spread] instead (random sets near a good one, where most
// are usable and the ranking among finite errors is what is measured).
CorrelationStudy proxy_correlation(TileSize tile, const std::string& preset, int count, uint64_t seed,
                                   const TrainingData& training = {}, double spread = 2.5,
                                   bool with_scaling = true, std::span<const double> around = {});
nlohmann::json to_json(const CorrelationStudy& s);

}  // namespace nova
