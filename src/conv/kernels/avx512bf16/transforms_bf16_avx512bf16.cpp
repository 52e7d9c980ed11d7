// The input transforms of the avx512 path with V stored as bf16 bits by vcvtneps2bf16, and its output
// transforms into bf16 tensors with vcvtneps2bf16 (the bf16 narrowing's bits)
// (VecAvx512::store_bf16_hw, compiled here with AVX512-BF16): for the bf16 dot-product and AMX GEMMs,
// which read bf16 subnormals as zero, so flushing FP32 subnormals to zero changes no result. The
// integer rounding of the AVX-512F transforms (store_bf16) takes nine instructions per 16 values, more
// than the F(4,3) transform's own arithmetic.
#include "../avx512/vec_avx512.hpp"
#include "../transform_template.hpp"

namespace nova::conv {

Bf16HwInputFns bf16_hw_input_fns_avx512bf16() {
#define NOVA_GEN_ENTRY(i) \
  &kernels_impl::generated_input<VecAvx512, generated::Tile##i<VecAvx512>, kernels_impl::VStore::kBf16Hw>,
  static const InputTileFp16Fn kGenerated[] = {NOVA_FOR_EACH_GENERATED_TILE(NOVA_GEN_ENTRY)};
#undef NOVA_GEN_ENTRY
#define NOVA_GEN_ENTRY(i)                                                             \
  &kernels_impl::generated_input_from_words<VecAvx512, generated::Tile##i<VecAvx512>, \
                                            kernels_impl::VStore::kBf16Hw, kernels_impl::WordSource::kBf16>,
  static const InputTileWordsFromWordsFn kGeneratedFromBf16[] = {
      NOVA_FOR_EACH_GENERATED_TILE(NOVA_GEN_ENTRY)};
#undef NOVA_GEN_ENTRY
  return {kGenerated, generated::kGeneratedCount,
          &kernels_impl::generic_input<VecAvx512, kernels_impl::VStore::kBf16Hw>, kGeneratedFromBf16,
          &kernels_impl::generic_input_from_words<VecAvx512, kernels_impl::VStore::kBf16Hw,
                                                  kernels_impl::WordSource::kBf16>};
}

Bf16HwOutputFns bf16_hw_output_fns_avx512bf16() {
#define NOVA_GEN_ENTRY(i) \
  &kernels_impl::generated_output_reaching<VecAvx512, generated::Tile##i<VecAvx512>, uint16_t>,
  static const OutputTileBf16Fn kGenerated[] = {NOVA_FOR_EACH_GENERATED_TILE(NOVA_GEN_ENTRY)};
#undef NOVA_GEN_ENTRY
  return {kGenerated, generated::kGeneratedCount,
          &kernels_impl::generic_output_reaching<VecAvx512, uint16_t>};
}

}  // namespace nova::conv
