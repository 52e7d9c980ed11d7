// Tile transforms for AVX2+FMA: the generated straight-line code of every default transform, and the
// generic run-time matrix path, each over 16 channels per pair of ymm registers.
#include "../transform_template.hpp"
#include "tile_transforms_generated.hpp"
#include "vec_avx2.hpp"

namespace nova::conv {

namespace {
#define NOVA_GEN_ENTRY(i)                                                                \
  TileFns{&kernels_impl::generated_input<VecAvx2, generated::Tile##i<VecAvx2>>,      \
          &kernels_impl::generated_output<VecAvx2, generated::Tile##i<VecAvx2>>},
const TileFns kGenerated[] = {NOVA_FOR_EACH_GENERATED_TILE(NOVA_GEN_ENTRY)};
#undef NOVA_GEN_ENTRY
}  // namespace

TransformTable transform_table_avx2() {
  TransformTable t;
  t.generated = kGenerated;
  t.generated_count = generated::kGeneratedCount;
  t.generic = TileFns{&kernels_impl::generic_input<VecAvx2>, &kernels_impl::generic_output<VecAvx2>};
  return t;
}

}  // namespace nova::conv
