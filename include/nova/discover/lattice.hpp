// The rationals discovery may return: a/b with 1 <= b <= d_max and |a| <= num_ratio * b (the seed's
// snap set, eq. 15), optionally narrowed to a number format's exact values (the seed's Table 15:
// dyadic rationals for fp16 and bf16, integers for int8). Snapping and neighbourhoods live here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "nova/exact/rational.hpp"

namespace nova {

enum class PointDtype { kAny, kFp16, kBf16, kInt8 };
PointDtype parse_point_dtype(std::string_view name);  // any | fp16 | bf16 | int8; throws nova::Error
std::string_view point_dtype_name(PointDtype d);

struct LatticeSpec {
  int max_denominator = 10;  // d_max
  int num_ratio = 5;         // |a| <= num_ratio * b
  PointDtype dtype = PointDtype::kAny;
};

class RationalLattice {
 public:
  // Throws nova::Error on d_max < 1 or num_ratio < 1, or a lattice too large to enumerate.
  explicit RationalLattice(const LatticeSpec& spec);

  const LatticeSpec& spec() const { return spec_; }
  std::size_t size() const { return values_.size(); }
  // Sorted ascending, distinct, in lowest terms.
  const std::vector<Rational>& values() const { return values_; }
  const std::vector<double>& doubles() const { return doubles_; }
  double value(std::size_t i) const { return doubles_[i]; }

  // Index of the nearest value; ties go to the smaller denominator, then the smaller value, which is
  // what the seed's Algorithm 2 (denominators ascending, numerators ascending, strict improvement) gives.
  std::size_t nearest(double x) const;
  Rational snap(double x) const { return values_[nearest(x)]; }

  // The `count` values nearest to x within `radius` (nearest first; ties as in nearest()).
  std::vector<std::size_t> neighbours(double x, std::size_t count, double radius) const;

  std::string describe() const;  // "a/b, b <= 10, |a| <= 5b (160 positive values)"

 private:
  bool better(std::size_t i, std::size_t j, double x) const;  // is i nearer to x than j (with ties)?
  LatticeSpec spec_;
  std::vector<Rational> values_;
  std::vector<double> doubles_;
  std::vector<long> denominators_;
};

}  // namespace nova
