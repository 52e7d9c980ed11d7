// 64 ones: the column scale of a GEMM store that has none. Multiplying by 1 is exact, so a kernel can
// run one store sequence whether or not it scales, instead of two that GCC 12 merges through a copy of
// the accumulators in memory.
#pragma once

namespace nova::conv::kernels_impl {

alignas(64) inline constexpr float kUnitScale[64] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

}  // namespace nova::conv::kernels_impl
