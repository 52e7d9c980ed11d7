// GEMM micro-kernels for AVX2+FMA: up to 6 rows x 16 columns (12 ymm accumulators).
#include "../gemm_template.hpp"
#include "vec_avx2.hpp"

namespace nova::conv {

GemmTable gemm_table_avx2() { return kernels_impl::make_gemm_table<VecAvx2, 6, 1>(); }

}  // namespace nova::conv
