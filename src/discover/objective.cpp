// The objective registry: names, weighted sums, and the default symmetric evaluation.
#include "nova/discover/objective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "nova/discover/objectives.hpp"
#include "nova/error.hpp"

namespace nova {

double Objective::evaluate_symmetric(TileSize tile, std::span<const double> magnitudes, bool with_zero) const {
  const auto points = symmetric_points(magnitudes, with_zero);
  return evaluate(tile, points);
}

std::vector<double> symmetric_points(std::span<const double> magnitudes, bool with_zero) {
  std::vector<double> out;
  out.reserve(2 * magnitudes.size() + 1);
  if (with_zero) out.push_back(0.0);
  for (double p : magnitudes) {
    out.push_back(p);
    out.push_back(-p);
  }
  return out;
}

namespace {

std::unique_ptr<Objective> make_single(const std::string& name) {
  if (name == "kappa-v") return std::make_unique<KappaV>();
  if (name == "kappa-2d") return std::make_unique<Kappa2D>();
  if (name == "norm-product") return std::make_unique<NormProduct>();
  if (name == "error-proxy") return std::make_unique<ErrorProxy>();
  if (name == "seed-fitness") return std::make_unique<SeedFitness>();
  return nullptr;
}

class WeightedSum final : public Objective {
 public:
  WeightedSum(std::string spec, std::vector<std::pair<double, std::unique_ptr<Objective>>> terms)
      : spec_(std::move(spec)), terms_(std::move(terms)) {}
  std::string name() const override { return spec_; }
  double evaluate(TileSize tile, std::span<const double> finite) const override {
    double s = 0;
    for (const auto& [w, o] : terms_) s += w * o->evaluate(tile, finite);
    return s;
  }
  double evaluate_symmetric(TileSize tile, std::span<const double> mags, bool with_zero) const override {
    double s = 0;
    for (const auto& [w, o] : terms_) s += w * o->evaluate_symmetric(tile, mags, with_zero);
    return s;
  }
  std::string value_scaling() const override {  // its terms are built-ins: wincnn, or none for kappa-v alone
    for (const auto& t : terms_) {
      if (!t.second->value_scaling().empty()) return t.second->value_scaling();
    }
    return "";
  }

 private:
  std::string spec_;
  std::vector<std::pair<double, std::unique_ptr<Objective>>> terms_;
};

std::string known() {
  std::string s;
  for (const auto& n : objective_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::vector<std::string> objective_names() {
  return {"kappa-v", "kappa-2d", "norm-product", "error-proxy", "seed-fitness"};
}

std::string objective_help() {
  return "kappa-v (kappa_2 of the finite-point Vandermonde V, the seed's), kappa-2d (product of kappa_2 of "
         "the 2D A^T, G, B^T, wincnn scaling), norm-product (||A^T||_2 ||G||_2 ||B^T||_2), error-proxy "
         "(sum_a ||A^T[:,a]||^2 ||G[a,:]||^2 ||B^T[a,:]||^2), seed-fitness (the seed's eq. 14), or a "
         "weighted sum such as kappa-v:1,norm-product:0.01 (all but kappa-v are of the wincnn-scaled "
         "transform, whatever the output's scaling)";
}

std::unique_ptr<Objective> make_objective(const std::string& spec) {
  if (spec.empty()) throw Error("empty objective (expected " + known() + ")");
  if (spec.find(':') == std::string::npos && spec.find(',') == std::string::npos) {
    if (auto o = make_single(spec)) return o;
    throw Error(fmt::format("unknown objective '{}' (expected {}, or a weighted sum like kappa-v:1,norm-product:0.01)",
                            spec, known()));
  }
  std::vector<std::pair<double, std::unique_ptr<Objective>>> terms;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', start), spec.size());
    const std::string term = spec.substr(start, end - start);
    const std::size_t colon = term.find(':');
    const std::string name = term.substr(0, colon);
    double weight = 1.0;
    if (colon != std::string::npos) {
      const std::string w = term.substr(colon + 1);
      std::size_t used = 0;
      try {
        weight = std::stod(w, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != w.size() || !std::isfinite(weight) || weight < 0) {
        throw Error(fmt::format("bad weight '{}' for objective '{}' (expected a number >= 0)", w, name));
      }
    }
    auto o = make_single(name);
    if (!o) throw Error(fmt::format("unknown objective '{}' in '{}' (expected {})", name, spec, known()));
    // Twice is most likely a typo for another term; a deliberate one is a single term with the summed weight.
    for (const auto& t : terms)
      if (t.second->name() == o->name())
        throw Error(
            fmt::format("objective '{}' appears twice in '{}' (give it once, with one weight)", name, spec));
    terms.emplace_back(weight, std::move(o));
    start = end + 1;
  }
  // A sum that is zero for every point set ranks nothing: the search would return its first candidate.
  if (std::all_of(terms.begin(), terms.end(), [](const auto& t) { return t.first == 0.0; }))
    throw Error(fmt::format("objective '{}' has only zero weights (at least one must be > 0)", spec));
  return std::make_unique<WeightedSum>(spec, std::move(terms));
}

}  // namespace nova
