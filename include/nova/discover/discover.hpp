// Point discovery, the seed's pipeline (section B.8): symmetric enumeration, evolution strategy over
// R^(n-1), snap-to-rational, neighbourhood search when snapping breaks a candidate, a lattice polish,
// and exact verification of the result. Deterministic for a seed whatever the thread count: the
// stages are independent tasks with their own random streams, reduced in a fixed order.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "nova/discover/es.hpp"
#include "nova/discover/lattice.hpp"
#include "nova/discover/neighbourhood.hpp"
#include "nova/discover/objective.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace nova {

struct DiscoverOptions {
  TileSize tile{4, 3};
  LatticeSpec lattice;
  EsParams es;
  uint64_t seed = 0;
  int threads = 0;        // 0: every hardware thread
  // > 0: stop after this many seconds (results then depend on speed). Checked between objective
  // evaluations in every stage (each ES candidate, the symmetric enumeration, the snap's repair and the
  // polish, which keep the best found so far); the run overruns it by about one evaluation per
  // thread plus the exact construction and verification of the result (0.3 s for F(30,3)).
  double budget_s = 0;
  bool symmetric = true;  // the symmetric stage
  bool es_stage = true;   // the ES stage over R^(n-1)
  bool polish = true;     // lattice descent after snapping (off: the seed's snap-only pipeline)
  long symmetric_enumeration_limit = 20000;  // enumerate every symmetric set up to this many
  std::size_t polish_window = 6;
  NeighbourhoodOptions neighbourhood;
  double repr_weight = 0.1;  // dtype-aware: the seed's representability penalty weight (Table 14)
  // Called (serialized) with a short status line; for a progress display.
  std::function<void(const std::string&)> progress;
};

struct StageResult {
  std::string stage;           // "symmetric-enumeration", "symmetric-es", "es-restart-1", ...
  std::vector<double> continuous;  // the best continuous candidate (empty for enumeration)
  double continuous_value = 0;
  bool snap_broke = false;     // snapping gave repeated points and neighbourhood search repaired it
  PointList points;            // finite points after snapping (and polishing)
  double value = 0;            // objective at those points
  long evaluations = 0;
  double seconds = 0;
  bool stopped_by_budget = false;
};

struct DiscoveryResult {
  TileSize tile;
  std::string objective;
  std::string lattice;  // description
  PointDtype dtype = PointDtype::kAny;
  uint64_t seed = 0;
  int threads = 1;
  PointList points;     // the best set, with infinity last
  double value = 0;     // objective value
  // The scaling of the transform `value` was computed on (Objective::value_scaling(): "wincnn" for
  // norm-product, kappa-2d, ..., whatever `transform`'s scaling; "" for kappa-v).
  std::string value_scaling;
  double kappa_v = 0;   // kappa_2(V) of the result, whatever the objective
  Transform transform;  // exact, in the requested scaling
  Verification verification;
  std::string winning_stage;
  std::vector<StageResult> stages;
  long evaluations = 0;
  double seconds = 0;
};

// Throws nova::Error on bad options (tile, lattice, impossible constraints, a negative or non-finite
// budget, negative threads).
DiscoveryResult discover(const DiscoverOptions& options, const Objective& objective,
                         const ScalingSpec& scaling = {});

// The transform's JSON (same schema as `nova transform`) plus "discovery" and "analysis" objects.
nlohmann::json to_json(const DiscoveryResult& r, bool with_analysis = true);
std::string to_text(const DiscoveryResult& r);

// Points in nova's display order: 0, then by magnitude with +x before -x; infinity last.
PointList ordered_points(std::vector<Rational> finite, bool with_infinity = true);

}  // namespace nova
