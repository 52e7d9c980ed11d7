// Parameterized point families the seed compares against: the reciprocal-symmetric family of Alam et
// al. ({0, +-c, +-1/c, ...}) and affinely scaled Chebyshev nodes, each with its best parameters for
// kappa_2(V). Small, deterministic 1D/2D minimizations (grid, then golden section).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nova {

// argmin of f on [lo, hi]: the best of `grid` equispaced samples, refined by golden section to ~1e-10.
double minimize_1d(const std::function<double(double)>& f, double lo, double hi, int grid = 400);

struct FamilyResult {
  std::string description;     // "{0, +-c, +-1/c}"
  std::vector<double> params;  // the best parameters
  std::vector<double> points;  // the finite points they give
  double kappa = 0;            // kappa_2(V)
};

// {0 if the count is odd} u {+-1 if the pair count is odd} u {+-c_i, +-1/c_i}, c_i in (0, 1).
std::vector<double> reciprocal_points(int finite_count, const std::vector<double>& c);
FamilyResult best_reciprocal(int finite_count);
// The two-parameter form {0, +-c1, +-1/c1, +-c2} the seed's text uses for F(6,3) (c1 = 1.14, c2 = 0.58).
std::vector<double> alam_two_parameter_points(double c1, double c2);
FamilyResult best_alam_two_parameter();

// Chebyshev nodes of the first kind, x_k = cos((2k - 1) pi / (2 count)), k = 1..count (the seed's eq. 21).
std::vector<double> chebyshev_nodes(int count);
// The best a x + b over a in [0.5, 5], b in [-2, 2], with one node exactly at 0 (b = -a x_j): the
// seed's Table 25 search.
FamilyResult best_chebyshev_affine(int count);

}  // namespace nova
