// Tile transforms for AVX2+FMA: the generated straight-line code of every default transform, and the
// generic run-time matrix path, each over 16 channels per pair of ymm registers.
#include "../transform_template.hpp"
#include "vec_avx2.hpp"

namespace nova::conv {

// The int8 input transform's fast store (transform_template.hpp): decided by a trait that compilers have
// read differently (clang 14), so a change that lost it would lose speed silently.
static_assert(kernels_impl::kHasInt8FastStore<VecAvx2>);

TransformTable transform_table_avx2() { return kernels_impl::make_transform_table<VecAvx2, VecAvx2Half>(); }

}  // namespace nova::conv
