// bf16 output conversions with vcvtneps2bf16 (AVX512-BF16): the one-run and strided narrows of
// ConvertTable and the NCHW band store of LayoutTable, as the AVX-512F ones (kernels/avx512/) but with
// bf16_bits_hw, one instruction where the integer rounding takes nine, and the same bits (a vector
// holding an FP32 subnormal takes the integer rounding). Installed over the avx512 path's entries where
// the CPU has AVX512-BF16 (kernel_registry.cpp).
#include <immintrin.h>

#include "../avx512/narrow_vectors_avx512.hpp"
#include "../avx512/word_transpose_avx512.hpp"
#include "../convert_table_template.hpp"
#include "../kernel_table.hpp"

namespace nova::conv {

namespace {

constexpr __mmask16 kAll = static_cast<__mmask16>(0xFFFF);

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? kAll : static_cast<__mmask16>((1u << left) - 1u);
}

[[gnu::always_inline]] inline void narrow_bf16(const float* src, void* dst, int64_t count, float,
                                               NarrowCounts*) {
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = tail_mask(count - i);
    _mm256_mask_storeu_epi16(d + i, m, bf16_bits_hw(_mm512_maskz_loadu_ps(m, src + i)));
  }
}

// store_band_nchw_words<kBf16> of layout_avx512.cpp with bf16_bits_hw.
void store_band_nchw_bf16(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                          int lanes, void* out_any, std::ptrdiff_t plane, std::ptrdiff_t row, float,
                          NarrowCounts*) {
  store_band_nchw_words_with([](__m512 v) { return bf16_bits_hw(v); }, band, width_stride, rows, width, lanes,
                             static_cast<uint16_t*>(out_any), plane, row);
}

}  // namespace

void add_bf16_narrow_avx512bf16(LayoutTable& layout, ConvertTable& convert) {
  const int bf16 = static_cast<int>(DataType::kBf16);
  convert.narrow[bf16] = &narrow_bf16;
  convert.narrow_rows[bf16] = &kernels_impl::narrow_rows<&narrow_bf16, 2>;
  layout.store_band_nchw_typed[bf16] = &store_band_nchw_bf16;
}

}  // namespace nova::conv
