// Moving continuous candidates onto the rational lattice: snapping, the seed's neighbourhood search
// for snaps that break a candidate (repeated points), and a coordinate-wise lattice descent that
// polishes a valid snap. Candidates are sorted lattice indices (every objective is invariant under
// reordering the points), so "valid" means strictly increasing.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "nova/discover/lattice.hpp"
#include "nova/discover/rng.hpp"

namespace nova {

using ValueFunction = std::function<double(std::span<const double>)>;
// Past it, the searches below return the best found so far (a time budget: results then depend on speed).
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

struct LatticePoint {
  std::vector<std::size_t> idx;  // strictly increasing lattice indices
  double value = 0;
};

// Nearest lattice index of each coordinate (at least `lo`), sorted; may repeat.
std::vector<std::size_t> snap_indices(const RationalLattice& lattice, std::span<const double> x, std::size_t lo);
bool strictly_increasing(const std::vector<std::size_t>& idx);
std::vector<double> lattice_values(const RationalLattice& lattice, const std::vector<std::size_t>& idx);

struct NeighbourhoodOptions {
  std::size_t per_point = 3;  // nearest lattice values tried per coordinate
  double radius = 1.2;        // the seed's "within distance 1.2"
  long limit = 100000;        // enumerate the product up to this size, else sample this many
};

// The best candidate with distinct values among the products of each coordinate's neighbours, or
// nothing when none is valid. `evaluations` (if given) is increased by the number of calls to f.
// Past the deadline it stops at the first valid candidate found.
std::optional<LatticePoint> neighbourhood_search(const RationalLattice& lattice, std::span<const double> x,
                                                 std::size_t lo, const NeighbourhoodOptions& options,
                                                 const ValueFunction& f, Rng& rng,
                                                 long* evaluations = nullptr,
                                                 Deadline deadline = std::nullopt);

// Coordinate descent: each point tries every unused index within `window` steps of its own (the list
// is re-sorted after a move); the best improving move is taken; repeated until a pass changes nothing.
// Past the deadline it stops before the next coordinate.
LatticePoint polish(const RationalLattice& lattice, LatticePoint start, std::size_t lo, std::size_t window,
                    const ValueFunction& f, long* evaluations = nullptr, Deadline deadline = std::nullopt);

}  // namespace nova
