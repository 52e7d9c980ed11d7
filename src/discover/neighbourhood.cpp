#include "nova/discover/neighbourhood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nova {

std::vector<std::size_t> snap_indices(const RationalLattice& lattice, std::span<const double> x, std::size_t lo) {
  std::vector<std::size_t> idx;
  idx.reserve(x.size());
  for (double v : x) idx.push_back(std::max(lattice.nearest(v), lo));
  std::sort(idx.begin(), idx.end());
  return idx;
}

bool strictly_increasing(const std::vector<std::size_t>& idx) {
  return std::adjacent_find(idx.begin(), idx.end(), std::greater_equal<std::size_t>()) == idx.end();
}

std::vector<double> lattice_values(const RationalLattice& lattice, const std::vector<std::size_t>& idx) {
  std::vector<double> v;
  v.reserve(idx.size());
  for (auto i : idx) v.push_back(lattice.value(i));
  return v;
}

std::optional<LatticePoint> neighbourhood_search(const RationalLattice& lattice, std::span<const double> x,
                                                 std::size_t lo, const NeighbourhoodOptions& options,
                                                 const ValueFunction& f, Rng& rng, long* evaluations,
                                                 Deadline deadline) {
  std::vector<std::vector<std::size_t>> choices;
  double product = 1;
  for (double v : x) {
    std::vector<std::size_t> c;
    for (auto i : lattice.neighbours(v, options.per_point + lo, options.radius)) {
      if (i >= lo && c.size() < options.per_point) c.push_back(i);
    }
    if (c.empty()) c.push_back(std::max(lattice.nearest(v), lo));
    product *= static_cast<double>(c.size());
    choices.push_back(std::move(c));
  }
  std::optional<LatticePoint> best;
  // Up to `limit` evaluations (seconds for a large tile): checked after each once a repair is found.
  auto expired = [&] { return best && deadline && std::chrono::steady_clock::now() > *deadline; };
  std::vector<std::size_t> pick(x.size()), counter(x.size(), 0);
  auto consider = [&] {
    std::vector<std::size_t> sorted = pick;
    std::sort(sorted.begin(), sorted.end());
    if (!strictly_increasing(sorted)) return;
    const double value = f(lattice_values(lattice, sorted));
    if (evaluations) ++*evaluations;
    if (!best || value < best->value) best = LatticePoint{std::move(sorted), value};
  };
  if (product <= static_cast<double>(options.limit)) {
    // Odometer over the full product.
    while (true) {
      for (std::size_t d = 0; d < x.size(); ++d) pick[d] = choices[d][counter[d]];
      consider();
      if (expired()) break;
      std::size_t d = 0;
      while (d < x.size() && ++counter[d] == choices[d].size()) counter[d++] = 0;
      if (d == x.size()) break;
    }
  } else {
    for (long s = 0; s < options.limit; ++s) {
      for (std::size_t d = 0; d < x.size(); ++d) pick[d] = choices[d][rng.below(choices[d].size())];
      consider();
      if (expired()) break;
    }
  }
  return best;
}

LatticePoint polish(const RationalLattice& lattice, LatticePoint start, std::size_t lo, std::size_t window,
                    const ValueFunction& f, long* evaluations, Deadline deadline) {
  LatticePoint cur = std::move(start);
  const std::size_t n = cur.idx.size();
  const std::size_t size = lattice.size();
  for (int pass = 0; pass < 1000; ++pass) {
    bool moved = false;
    for (std::size_t d = 0; d < n; ++d) {
      if (deadline && std::chrono::steady_clock::now() > *deadline) return cur;
      // Any unused index within the window, even past a neighbour (the list is re-sorted), so that a
      // point can leave a crowded end of a small lattice such as int8's eleven integers.
      const std::size_t from = std::max(lo, cur.idx[d] >= window ? cur.idx[d] - window : 0);
      const std::size_t to = std::min(size - 1, cur.idx[d] + window);
      std::vector<std::size_t> best_idx;
      double best_v = cur.value;
      for (std::size_t i = from; i <= to; ++i) {
        if (std::find(cur.idx.begin(), cur.idx.end(), i) != cur.idx.end()) continue;
        auto trial = cur.idx;
        trial[d] = i;
        std::sort(trial.begin(), trial.end());
        const double v = f(lattice_values(lattice, trial));
        if (evaluations) ++*evaluations;
        if (v < best_v) {
          best_v = v;
          best_idx = std::move(trial);
        }
      }
      if (!best_idx.empty()) {
        cur.idx = std::move(best_idx);
        cur.value = best_v;
        moved = true;
      }
    }
    if (!moved) break;
  }
  return cur;
}

}  // namespace nova
