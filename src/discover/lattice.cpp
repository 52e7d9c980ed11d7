#include "nova/discover/lattice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nova/error.hpp"
#include "nova/numerics/format.hpp"

namespace nova {

PointDtype parse_point_dtype(std::string_view name) {
  if (name == "any") return PointDtype::kAny;
  if (name == "fp16") return PointDtype::kFp16;
  if (name == "bf16") return PointDtype::kBf16;
  if (name == "int8") return PointDtype::kInt8;
  throw Error(fmt::format("unknown point dtype '{}' (expected any, fp16, bf16 or int8)", name));
}

std::string_view point_dtype_name(PointDtype d) {
  switch (d) {
    case PointDtype::kAny: return "any";
    case PointDtype::kFp16: return "fp16";
    case PointDtype::kBf16: return "bf16";
    case PointDtype::kInt8: return "int8";
  }
  return "any";
}

namespace {

bool allowed_denominator(PointDtype d, long b) {
  switch (d) {
    case PointDtype::kAny: return true;
    case PointDtype::kFp16:
    case PointDtype::kBf16: return (b & (b - 1)) == 0;  // dyadic: the only exact binary fractions
    case PointDtype::kInt8: return b == 1;
  }
  return true;
}

bool allowed_value(PointDtype d, double v) {
  // The format's own rounding decides (mantissa width, exponent range, integer range).
  switch (d) {
    case PointDtype::kAny: return true;
    case PointDtype::kFp16: return is_representable(Format::kFp16, v);
    case PointDtype::kBf16: return is_representable(Format::kBf16, v);
    case PointDtype::kInt8: return is_representable(Format::kInt8, v);
  }
  return true;
}

}  // namespace

RationalLattice::RationalLattice(const LatticeSpec& spec) : spec_(spec) {
  if (spec.max_denominator < 1)
    throw Error(fmt::format("the maximum denominator must be at least 1 (got {})", spec.max_denominator));
  if (spec.num_ratio < 1)
    throw Error(fmt::format("the maximum numerator ratio must be at least 1 (|a| <= ratio * b; got {})",
                            spec.num_ratio));
  double work = 0;
  for (long b = 1; b <= spec.max_denominator; ++b) {
    if (allowed_denominator(spec.dtype, b)) work += 2.0 * spec.num_ratio * static_cast<double>(b) + 1;
  }
  if (work > 2e7) {
    throw Error(fmt::format("snap lattice too large (d_max {}, ratio {}): about {:.0f} candidates; lower them",
                            spec.max_denominator, spec.num_ratio, work));
  }
  std::vector<std::pair<long, long>> frac;  // (a, b) in lowest terms
  for (long b = 1; b <= spec.max_denominator; ++b) {
    if (!allowed_denominator(spec.dtype, b)) continue;
    const long bound = static_cast<long>(spec.num_ratio) * b;
    for (long a = -bound; a <= bound; ++a) {
      if (std::gcd(a < 0 ? -a : a, b) != 1) continue;  // gcd(0, b) = b, so 0 appears only as 0/1
      if (!allowed_value(spec.dtype, static_cast<double>(a) / static_cast<double>(b))) continue;
      frac.emplace_back(a, b);
    }
  }
  // a * b fits in a long: the work bound above keeps ratio * d_max^2 far below 2^63.
  std::sort(frac.begin(), frac.end(), [](const auto& x, const auto& y) {
    return x.first * y.second < y.first * x.second;
  });
  values_.reserve(frac.size());
  for (const auto& [a, b] : frac) {
    values_.emplace_back(a, b);
    doubles_.push_back(static_cast<double>(a) / static_cast<double>(b));
    denominators_.push_back(b);
  }
}

bool RationalLattice::better(std::size_t i, std::size_t j, double x) const {
  const double di = std::abs(x - doubles_[i]), dj = std::abs(x - doubles_[j]);
  if (di != dj) return di < dj;
  if (denominators_[i] != denominators_[j]) return denominators_[i] < denominators_[j];
  return i < j;
}

std::size_t RationalLattice::nearest(double x) const {
  if (values_.empty()) throw Error("empty snap lattice");
  const auto it = std::lower_bound(doubles_.begin(), doubles_.end(), x);
  std::size_t hi = static_cast<std::size_t>(it - doubles_.begin());
  std::size_t best = hi < doubles_.size() ? hi : doubles_.size() - 1;
  if (hi > 0 && better(hi - 1, best, x)) best = hi - 1;
  return best;
}

std::vector<std::size_t> RationalLattice::neighbours(double x, std::size_t count, double radius) const {
  std::vector<std::size_t> out;
  if (values_.empty() || count == 0) return out;
  // Merge outwards from the insertion point, always taking the nearer side.
  const auto it = std::lower_bound(doubles_.begin(), doubles_.end(), x);
  long hi = it - doubles_.begin();
  long lo = hi - 1;
  const long n = static_cast<long>(doubles_.size());
  while (out.size() < count && (lo >= 0 || hi < n)) {
    long pick;
    if (lo < 0) {
      pick = hi++;
    } else if (hi >= n) {
      pick = lo--;
    } else if (better(static_cast<std::size_t>(hi), static_cast<std::size_t>(lo), x)) {
      pick = hi++;
    } else {
      pick = lo--;
    }
    if (std::abs(doubles_[static_cast<std::size_t>(pick)] - x) > radius) break;
    out.push_back(static_cast<std::size_t>(pick));
  }
  return out;
}

std::string RationalLattice::describe() const {
  std::string kind;
  switch (spec_.dtype) {
    case PointDtype::kAny: kind = "a/b"; break;
    case PointDtype::kFp16: kind = "a/2^k exact in fp16"; break;
    case PointDtype::kBf16: kind = "a/2^k exact in bf16"; break;
    case PointDtype::kInt8: kind = "integers exact in int8"; break;
  }
  return fmt::format("{}, b <= {}, |a| <= {}b ({} values)", kind, spec_.max_denominator, spec_.num_ratio,
                     values_.size());
}

}  // namespace nova
