// What discovery minimizes. The search strategies see only this interface, so a new objective
// (a measured error under a precision model, say) plugs in without touching them.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nova/exact/tile.hpp"

namespace nova {

class Objective {
 public:
  virtual ~Objective() = default;
  // The name as given to --objective.
  virtual std::string name() const = 0;
  // Lower is better. `finite` holds the n - 1 finite points of a candidate for `tile`; the point at
  // infinity is always part of it. Returns +inf for unusable candidates (repeated points, overflow).
  // Called from several threads at once: implementations must be const and thread-safe.
  virtual double evaluate(TileSize tile, std::span<const double> finite) const = 0;
  // The same value for the symmetric set {0 (when with_zero), +-p_1, ..., +-p_k}. Objectives that can
  // exploit the symmetry (kappa-v splits V into even and odd blocks) override it; the default builds
  // the full point list.
  virtual double evaluate_symmetric(TileSize tile, std::span<const double> magnitudes, bool with_zero) const;
  // The scaling of the transform the value is computed on: the built-in objectives build theirs in the
  // wincnn scaling whatever scaling discovery outputs; "" for kappa_2(V), which has none; the error
  // objectives search a power-of-two scaling per candidate ("searched").
  virtual std::string value_scaling() const { return "wincnn"; }
};

// Parses an objective: one of objective_names(), or a weighted sum "kappa-v:1,norm-product:0.01"
// (sum of weight * value). Throws nova::Error on an unknown name or a bad weight.
std::unique_ptr<Objective> make_objective(const std::string& spec);
std::vector<std::string> objective_names();
std::string objective_help();

// The finite points of the symmetric set, in the order {0?, p_1, -p_1, p_2, -p_2, ...}.
std::vector<double> symmetric_points(std::span<const double> magnitudes, bool with_zero);

}  // namespace nova
