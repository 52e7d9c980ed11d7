#include "nova/catalogue/error_objectives.hpp"

#include <cmath>
#include <limits>

#include "nova/error.hpp"

namespace nova {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

StageProxyObjective::StageProxyObjective(PrecisionModel model, ErrorObjectiveOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  model_.validate();
  options_.proxy.channels = static_cast<int>(options_.training.channels);
}

ScaledCandidate StageProxyObjective::scaled(TileSize tile, std::span<const double> finite) const {
  ScaledCandidate c;
  if (!float_base(tile, finite, c.base)) return c;
  const TransformScore score = [this](const TransformF64& t) { return stage_proxy(t, model_, options_.proxy); };
  const ScalingChoice start = ScalingChoice::wincnn(tile.n());
  if (options_.search_scaling) {
    const auto res = search_scaling(c.base, score, start, options_.scaling);
    c.scaling = res.choice;
    c.proxy = res.value;
  } else {
    c.scaling = start;
    c.proxy = score(apply_scaling(c.base, start));
  }
  c.transform = apply_scaling(c.base, c.scaling);
  c.ok = true;
  return c;
}

double StageProxyObjective::evaluate(TileSize tile, std::span<const double> finite) const {
  const auto c = scaled(tile, finite);
  return c.ok ? c.proxy : kInf;
}

MeasuredErrorObjective::MeasuredErrorObjective(PrecisionModel model, ErrorObjectiveOptions options)
    : proxy_(std::move(model), std::move(options)) {
  const auto& tr = proxy_.options().training;
  if (tr.tiles < 1 || tr.channels < 1) throw Error("measured-error objective: the training set needs tiles and channels");
}

const ErrorEvaluator& MeasuredErrorObjective::evaluator(TileSize tile) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = evaluators_[{tile.m, tile.r}];
  if (!slot) {
    const auto& tr = proxy_.options().training;
    const TileDataset data = make_tile_dataset(tile, tr.kind, tr.tiles_for(tile), tr.channels, tr.seed);
    slot = std::make_unique<ErrorEvaluator>(data, proxy_.model());
  }
  return *slot;
}

double MeasuredErrorObjective::measure(const TransformF64& t) const {
  const double e = evaluator(TileSize{t.m, t.r}).score(t);
  return std::isnan(e) ? kInf : e;
}

double MeasuredErrorObjective::evaluate(TileSize tile, std::span<const double> finite) const {
  const auto c = proxy_.scaled(tile, finite);
  if (!c.ok) return kInf;
  return measure(c.transform);
}

ScalingSearchResult MeasuredErrorObjective::refine(TileSize tile, std::span<const double> finite, int window,
                                                   int passes) const {
  const auto c = proxy_.scaled(tile, finite);
  if (!c.ok) throw Error("measured-error objective: the points are repeated or out of range");
  if (window <= 0) return {c.scaling, measure(c.transform), 1};
  ScalingSearchOptions o = proxy_.options().scaling;
  o.window = window;
  o.passes = passes;
  o.normalizers = false;
  o.min_gain = 0.02;  // below this, training-set noise
  return search_scaling(c.base, [this](const TransformF64& t) { return measure(t); }, c.scaling, o);
}

std::unique_ptr<Objective> make_error_objective(const std::string& spec, const ErrorObjectiveOptions& options) {
  const auto colon = spec.find(':');
  std::string family = spec.substr(0, colon);
  if (family == "proxy") family = "stage-proxy";  // nova discover's shorter spelling
  if (family == "stage-proxy" || family == "measured-error") {
    if (colon == std::string::npos || colon + 1 >= spec.size())
      throw Error("objective '" + spec + "' needs a precision model: " + family + ":<preset or model.json>");
    PrecisionModel model = load_precision_model(spec.substr(colon + 1));
    if (family == "stage-proxy") return std::make_unique<StageProxyObjective>(std::move(model), options);
    return std::make_unique<MeasuredErrorObjective>(std::move(model), options);
  }
  return make_objective(spec);
}

std::string error_objective_help() {
  return "stage-proxy:<precision> or proxy:<precision> (the model-aware first-order error proxy, with its "
         "best "
         "power-of-two scaling), "
         "measured-error:<precision> (relative L2 error measured on a fixed Gaussian training set, scaling "
         "chosen by the proxy), or " +
         objective_help();
}

}  // namespace nova
