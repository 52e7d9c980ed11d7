// The arithmetic cost of applying a transform matrix in the straightforward way (one multiply per
// entry that is not 0 or +-1, one addition per extra non-zero in a row), and the entry structure that
// decides it: zeros, +-1, powers of two.
#pragma once

#include "nova/exact/matrix.hpp"
#include "nova/exact/transform.hpp"

namespace nova {

struct MatrixCost {
  int rows = 0, cols = 0;
  int nonzeros = 0;
  int unit = 0;          // entries equal to +-1
  int power_of_two = 0;  // entries +-2^k with k != 0 (a shift in fixed point, an exponent add in float)
  int other = 0;         // every other non-zero entry
  // One matrix-vector product: multiplications by entries not in {0, +-1} (powers of two included)
  // and additions (non-zeros minus one, per row with a non-zero).
  int multiplications = 0;
  int additions = 0;
};

MatrixCost matrix_cost(const RationalMatrix& m);

struct TransformCost {
  MatrixCost AT, G, BT;
  // A 2D tile transform M X M^T applies M to the columns of X and then to the rows of M X:
  // input B^T d B is 2n applications of B^T, filter G g G^T is r + n of G, output A^T Y A is n + m of A^T.
  long input_mults_2d = 0, input_adds_2d = 0;
  long filter_mults_2d = 0, filter_adds_2d = 0;
  long output_mults_2d = 0, output_adds_2d = 0;
};

TransformCost transform_cost(const Transform& t);

}  // namespace nova
