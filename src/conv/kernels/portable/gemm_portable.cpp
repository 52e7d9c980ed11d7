// GEMM micro-kernels of the portable path: up to 4 rows x 16 columns in plain C++.
#include "../gemm_template.hpp"
#include "vec_portable.hpp"

namespace nova::conv {

GemmTable gemm_table_portable() { return kernels_impl::make_gemm_table<VecPortable, 4, 1>(); }

}  // namespace nova::conv
