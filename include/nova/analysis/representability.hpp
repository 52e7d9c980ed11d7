// Whether points and transform entries survive storage in a number format exactly, and if not, by how
// much they move. Rounding is nova::round_to (numerics), never a second implementation.
#pragma once

#include <vector>

#include "nova/exact/transform.hpp"
#include "nova/numerics/format.hpp"

namespace nova {

// The formats the analysis reports by default.
const std::vector<Format>& analysis_formats();

// True when the exact value is stored without error in `f`. When not, *rel_error (if given) gets
// |round(v) - v| / |v| (+inf on overflow; for integer formats rounding is to the nearest code).
bool exactly_representable(Format f, const Rational& v, double* rel_error = nullptr);

struct EntryStats {
  int total = 0;
  int exact = 0;
  double max_rel_error = 0;  // over the entries that are not exact
};

struct Representability {
  Format format = Format::kFp16;
  EntryStats points;  // finite points only
  EntryStats AT, G, BT;
  bool all_exact() const {
    return points.exact == points.total && AT.exact == AT.total && G.exact == G.total && BT.exact == BT.total;
  }
};

EntryStats entry_stats(Format f, const RationalMatrix& m);
EntryStats point_stats(Format f, const PointList& points);
Representability representability(Format f, const Transform& t);

}  // namespace nova
