// The strided form of a narrow conversion (ConvertTable::narrow_rows), written once over an ISA's
// one-run narrow F and instantiated by each ISA's convert file, so that F is inlined into the row loop
// (include only from kernels/<isa>/ files, inside their anonymous namespace). Output stores convert a
// few short rows at a time (a tile row, an image row of one channel); one call for all of them keeps
// the per-call set-up out of the inner loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_table.hpp"

namespace nova::conv::kernels_impl {

template <NarrowFn F, std::size_t kElementBytes>
void narrow_rows(const float* src, std::ptrdiff_t src_row, void* dst, std::ptrdiff_t dst_row, int64_t rows,
                 int64_t width, float inv_scale, NarrowCounts* counts) {
  auto* d = static_cast<unsigned char*>(dst);
  if (src_row == width && dst_row == width) {  // one contiguous run
    F(src, d, rows * width, inv_scale, counts);
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    F(src + r * src_row, d + static_cast<std::ptrdiff_t>(kElementBytes) * r * dst_row, width, inv_scale, counts);
}

template <NarrowFn Fp32, NarrowFn Bf16, NarrowFn Fp16, NarrowFn Int8>
void fill_narrow_rows(ConvertTable& t) {
  t.narrow_rows[static_cast<int>(DataType::kFp32)] = &narrow_rows<Fp32, 4>;
  t.narrow_rows[static_cast<int>(DataType::kBf16)] = &narrow_rows<Bf16, 2>;
  t.narrow_rows[static_cast<int>(DataType::kFp16)] = &narrow_rows<Fp16, 2>;
  t.narrow_rows[static_cast<int>(DataType::kInt8)] = &narrow_rows<Int8, 1>;
}

}  // namespace nova::conv::kernels_impl
