// GEMM micro-kernels for AVX-512F: up to 6 rows x 64 columns (24 zmm accumulators, 4 B loads and one
// embedded broadcast per row per step).
#include "../gemm_template.hpp"
#include "vec_avx512.hpp"

namespace nova::conv {

GemmTable gemm_table_avx512() { return kernels_impl::make_gemm_table<VecAvx512, 6, 4>(); }

}  // namespace nova::conv
