// The built-in objectives (see objective.hpp for the interface and make_objective for their names).
#pragma once

#include "nova/discover/objective.hpp"

namespace nova {

// kappa_2(V) of the finite-point Vandermonde matrix: the seed paper's objective.
class KappaV final : public Objective {
 public:
  std::string name() const override { return "kappa-v"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
  double evaluate_symmetric(TileSize tile, std::span<const double> magnitudes, bool with_zero) const override;
  std::string value_scaling() const override { return ""; }
};

// kappa_2(A^T (x) A^T) kappa_2(G (x) G) kappa_2(B^T (x) B^T) of the wincnn-scaled transforms.
class Kappa2D final : public Objective {
 public:
  std::string name() const override { return "kappa-2d"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
};

// ||A^T||_2 ||G||_2 ||B^T||_2 of the wincnn-scaled transforms (the seed's forward error bound).
class NormProduct final : public Objective {
 public:
  std::string name() const override { return "norm-product"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
};

// P = sum_a ||A^T[:,a]||^2 ||G[a,:]||^2 ||B^T[a,:]||^2: the first-order error proxy of DESIGN.md,
// invariant under diagonal rescaling.
class ErrorProxy final : public Objective {
 public:
  std::string name() const override { return "error-proxy"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
};

// The seed's printed fitness (eq. 5 / 14): float tensor error + 0.001 ||p||^2/(n-1) + 0.0001 log10(kappa+1).
class SeedFitness final : public Objective {
 public:
  std::string name() const override { return "seed-fitness"; }
  double evaluate(TileSize tile, std::span<const double> finite) const override;
};

}  // namespace nova
