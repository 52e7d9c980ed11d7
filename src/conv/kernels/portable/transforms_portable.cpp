// Tile transforms for the portable path: the generated straight-line code of every default transform, and the
// generic run-time matrix path, each 16 channels per plain array.
#include "../transform_template.hpp"
#include "vec_portable.hpp"

namespace nova::conv {

TransformTable transform_table_portable() { return kernels_impl::make_transform_table<VecPortable>(); }

}  // namespace nova::conv
