// Error objectives for discovery (nova::Objective, so discover() and every search strategy can use
// them), each scoring the points *together with* their best power-of-two diagonal scaling:
//
//   stage-proxy:<model>     the model-aware first-order proxy (stage_proxy.hpp); the scaling is the
//                           proxy's coordinate descent. Analytic, microseconds per candidate.
//   measured-error:<model>  the relative L2 error measured by the error harness on a fixed,
//                           deterministic training set (Gaussian tiles, seed below), with the
//                           scaling chosen by the proxy; refine() then polishes the scaling on the
//                           measured error itself.
// <model> is a preset name or the path of a precision model JSON file.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "nova/catalogue/scaling_search.hpp"
#include "nova/catalogue/stage_proxy.hpp"
#include "nova/discover/objective.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova {

struct TrainingData {
  DataKind kind = DataKind::kGaussian;
  int64_t tiles = 256;
  int64_t channels = 16;
  uint64_t seed = 1;
  // Small tiles have few outputs each: use at least min_outputs / m^2 tiles, so that every tile size
  // is measured on about as many outputs.
  int64_t min_outputs = 16384;
  int64_t tiles_for(TileSize t) const { return std::max<int64_t>(tiles, min_outputs / (int64_t{t.m} * t.m)); }
};

struct ErrorObjectiveOptions {
  TrainingData training;
  ProxyOptions proxy;            // proxy.channels is set to training.channels
  ScalingSearchOptions scaling;  // the proxy's scaling search
  bool search_scaling = true;    // false: the wincnn scaling only
};

// A candidate's best scaling under the proxy, and the proxy's value there.
struct ScaledCandidate {
  FloatBase base;
  ScalingChoice scaling;
  TransformF64 transform;
  double proxy = 0;
  bool ok = false;
};

class StageProxyObjective final : public Objective {
 public:
  StageProxyObjective(PrecisionModel model, ErrorObjectiveOptions options = {});
  std::string name() const override { return "stage-proxy:" + model_.name; }
  std::string value_scaling() const override { return "searched"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
  ScaledCandidate scaled(TileSize tile, std::span<const double> finite) const;
  const PrecisionModel& model() const { return model_; }
  const ErrorObjectiveOptions& options() const { return options_; }

 private:
  PrecisionModel model_;
  ErrorObjectiveOptions options_;
};

class MeasuredErrorObjective final : public Objective {
 public:
  MeasuredErrorObjective(PrecisionModel model, ErrorObjectiveOptions options = {});
  std::string name() const override { return "measured-error:" + proxy_.model().name; }
  std::string value_scaling() const override { return "searched"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
  // The measured training error of a float transform of `tile`.
  double measure(const TransformF64& t) const;
  // The proxy's scaling, then a coordinate descent on the measured error within `window` powers of
  // two of it (window 0: no measured polish).
  ScalingSearchResult refine(TileSize tile, std::span<const double> finite, int window, int passes = 2) const;
  const StageProxyObjective& proxy() const { return proxy_; }
  const ErrorEvaluator& evaluator(TileSize tile) const;

 private:
  StageProxyObjective proxy_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int, int>, std::unique_ptr<ErrorEvaluator>> evaluators_;
};

// Objectives by name: the two families above, or anything make_objective() knows.
std::unique_ptr<Objective> make_error_objective(const std::string& spec, const ErrorObjectiveOptions& options = {});
std::string error_objective_help();

}  // namespace nova
