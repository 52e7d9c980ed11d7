#include "nova/analysis/representability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nova {

const std::vector<Format>& analysis_formats() {
  static const std::vector<Format> formats = {Format::kFp16, Format::kBf16, Format::kFp8E4M3, Format::kFp8E5M2,
                                              Format::kInt8};
  return formats;
}

bool exactly_representable(Format f, const Rational& v, double* rel_error) {
  const double x = to_double(v);
  // Every supported format is a subset of float64, so a value that is not a double is not exact.
  const bool is_double = std::isfinite(x) && Rational(x) == v;
  const double rounded = round_to(f, x);
  const bool exact = is_double && rounded == x;
  if (rel_error) {
    if (exact) {
      *rel_error = 0;
    } else if (!std::isfinite(rounded)) {
      *rel_error = std::numeric_limits<double>::infinity();
    } else {
      // The error of x itself (below 2^-53 relative) is far below any format's rounding error.
      *rel_error = std::abs(rounded - x) / std::abs(x);
    }
  }
  return exact;
}

namespace {

void add(EntryStats& s, Format f, const Rational& v) {
  ++s.total;
  double err = 0;
  if (exactly_representable(f, v, &err)) {
    ++s.exact;
  } else {
    s.max_rel_error = std::max(s.max_rel_error, err);
  }
}

}  // namespace

EntryStats entry_stats(Format f, const RationalMatrix& m) {
  EntryStats s;
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) add(s, f, m(i, j));
  }
  return s;
}

EntryStats point_stats(Format f, const PointList& points) {
  EntryStats s;
  for (const auto& p : points) {
    if (!p.infinite) add(s, f, p.value);
  }
  return s;
}

Representability representability(Format f, const Transform& t) {
  Representability r;
  r.format = f;
  r.points = point_stats(f, t.points());
  r.AT = entry_stats(f, t.AT());
  r.G = entry_stats(f, t.G());
  r.BT = entry_stats(f, t.BT());
  return r;
}

}  // namespace nova
