// Tile transforms for the portable path: the generated straight-line code of every default transform, and the
// generic run-time matrix path, each 16 channels per plain array.
#include "../transform_template.hpp"
#include "tile_transforms_generated.hpp"
#include "vec_portable.hpp"

namespace nova::conv {

namespace {
#define NOVA_GEN_ENTRY(i)                                                                \
  TileFns{&kernels_impl::generated_input<VecPortable, generated::Tile##i<VecPortable>>,      \
          &kernels_impl::generated_output<VecPortable, generated::Tile##i<VecPortable>>},
const TileFns kGenerated[] = {NOVA_FOR_EACH_GENERATED_TILE(NOVA_GEN_ENTRY)};
#undef NOVA_GEN_ENTRY
}  // namespace

TransformTable transform_table_portable() {
  TransformTable t;
  t.generated = kGenerated;
  t.generated_count = generated::kGeneratedCount;
  t.generic = TileFns{&kernels_impl::generic_input<VecPortable>, &kernels_impl::generic_output<VecPortable>};
  return t;
}

}  // namespace nova::conv
