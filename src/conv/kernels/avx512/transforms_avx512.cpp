// Tile transforms for AVX-512F: the generated straight-line code of every default transform, and the
// generic run-time matrix path, each over 16 channels per zmm register.
#include "../transform_template.hpp"
#include "vec_avx512.hpp"

namespace nova::conv {

TransformTable transform_table_avx512() { return kernels_impl::make_transform_table<VecAvx512>(); }

}  // namespace nova::conv
