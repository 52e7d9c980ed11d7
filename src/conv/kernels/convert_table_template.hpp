// An ISA's ConvertTable from its element conversions, written once for every ISA's convert file
// (include only from kernels/<isa>/ files, whose conversions have internal linkage). The strided
// narrow (ConvertTable::narrow_rows) is a template over the one-run narrow F, so that F is inlined into
// the row loop: output stores convert a few short rows at a time (a tile row, an image row of one
// channel), and one call for all of them keeps the per-call set-up out of the inner loop.
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
    F(src + r * src_row, d + static_cast<std::ptrdiff_t>(kElementBytes) * r * dst_row, width, inv_scale,
      counts);
}

// The table, indexed by DataType: widen and narrow as given, narrow_rows over each narrow.
template <WidenFn WidenFp32, WidenFn WidenBf16, WidenFn WidenFp16, WidenFn WidenInt8, NarrowFn NarrowFp32,
          NarrowFn NarrowBf16, NarrowFn NarrowFp16, NarrowFn NarrowInt8>
ConvertTable make_convert_table() {
  ConvertTable t;
  t.widen[static_cast<int>(DataType::kFp32)] = WidenFp32;
  t.widen[static_cast<int>(DataType::kBf16)] = WidenBf16;
  t.widen[static_cast<int>(DataType::kFp16)] = WidenFp16;
  t.widen[static_cast<int>(DataType::kInt8)] = WidenInt8;
  t.narrow[static_cast<int>(DataType::kFp32)] = NarrowFp32;
  t.narrow[static_cast<int>(DataType::kBf16)] = NarrowBf16;
  t.narrow[static_cast<int>(DataType::kFp16)] = NarrowFp16;
  t.narrow[static_cast<int>(DataType::kInt8)] = NarrowInt8;
  t.narrow_rows[static_cast<int>(DataType::kFp32)] = &narrow_rows<NarrowFp32, 4>;
  t.narrow_rows[static_cast<int>(DataType::kBf16)] = &narrow_rows<NarrowBf16, 2>;
  t.narrow_rows[static_cast<int>(DataType::kFp16)] = &narrow_rows<NarrowFp16, 2>;
  t.narrow_rows[static_cast<int>(DataType::kInt8)] = &narrow_rows<NarrowInt8, 1>;
  return t;
}

}  // namespace nova::conv::kernels_impl
