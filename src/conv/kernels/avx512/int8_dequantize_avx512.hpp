// The int8 GEMMs' dequantization, one vector of 16 columns: C = float(sum - comp[j]) * scale[j]
// (lowp_kernels.hpp, "int8"). One definition for the VNNI kernel and the AMX kernel (and its tile
// model), whose equal bits rest on it. Include only from files compiled with AVX-512F.
#pragma once

#include <immintrin.h>

namespace {

// The masked conversion computes the same as _mm512_cvtepi32_ps, whose GCC 12 form trips a false
// -Wmaybe-uninitialized (GCC bug 105593).
[[gnu::always_inline]] inline __m512 int8_dequantize(__m512i sum, __m512i comp, __m512 scale) {
  return _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(static_cast<__mmask16>(0xFFFF), _mm512_sub_epi32(sum, comp)),
                       scale);
}

}  // namespace
