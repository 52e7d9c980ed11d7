#include "nova/analysis/cost.hpp"

namespace nova {

MatrixCost matrix_cost(const RationalMatrix& m) {
  MatrixCost c;
  c.rows = static_cast<int>(m.rows());
  c.cols = static_cast<int>(m.cols());
  for (std::size_t i = 0; i < m.rows(); ++i) {
    int row_nonzeros = 0;
    for (std::size_t j = 0; j < m.cols(); ++j) {
      const Rational& v = m(i, j);
      if (v == 0) continue;
      ++row_nonzeros;
      if (v == 1 || v == -1) {
        ++c.unit;
      } else if (is_power_of_two(abs(Rational(v)))) {
        ++c.power_of_two;
      } else {
        ++c.other;
      }
    }
    c.nonzeros += row_nonzeros;
    if (row_nonzeros > 0) c.additions += row_nonzeros - 1;
  }
  c.multiplications = c.power_of_two + c.other;
  return c;
}

TransformCost transform_cost(const Transform& t) {
  TransformCost c;
  c.AT = matrix_cost(t.AT());
  c.G = matrix_cost(t.G());
  c.BT = matrix_cost(t.BT());
  const long m = t.m(), r = t.r(), n = t.n();
  c.input_mults_2d = 2 * n * c.BT.multiplications;
  c.input_adds_2d = 2 * n * c.BT.additions;
  c.filter_mults_2d = (r + n) * c.G.multiplications;
  c.filter_adds_2d = (r + n) * c.G.additions;
  c.output_mults_2d = (n + m) * c.AT.multiplications;
  c.output_adds_2d = (n + m) * c.AT.additions;
  return c;
}

}  // namespace nova
