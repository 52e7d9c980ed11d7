// Layout changes of the portable path (and the AVX2 path's for typed tensors): plain loops.
#include "../kernel_table.hpp"

namespace nova::conv {

namespace {

// Columns [x0, x0 + 16) of the 16 channel rows widened into buf (the portable widen), then transposed.
template <DataType T>
void pack_rows16(const void* src, float scale, std::ptrdiff_t channel_stride, int lanes, std::ptrdiff_t count,
                 float* dst) {
  static const ConvertTable kConvert = convert_table_portable();
  const WidenFn widen = kConvert.widen[static_cast<int>(T)];
  const auto* base = static_cast<const unsigned char*>(src);
  const auto bytes = static_cast<std::ptrdiff_t>(element_size(T));
  for (std::ptrdiff_t x0 = 0; x0 < count; x0 += 16) {
    const std::ptrdiff_t xs = count - x0 < 16 ? count - x0 : 16;
    float buf[16][16] = {};
    for (int l = 0; l < lanes; ++l) widen(base + (l * channel_stride + x0) * bytes, buf[l], xs, scale);
    for (std::ptrdiff_t x = 0; x < xs; ++x)
      for (int l = 0; l < 16; ++l) dst[(x0 + x) * 16 + l] = buf[l][x];
  }
}

void store_band_nchw(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width,
                     int lanes, float* out, std::ptrdiff_t plane, std::ptrdiff_t row) {
  for (int l = 0; l < lanes; ++l)
    for (int i = 0; i < rows; ++i)
      for (std::ptrdiff_t x = 0; x < width; ++x)
        out[l * plane + i * row + x] = band[(i * width_stride + x) * 16 + l];
}

}  // namespace

LayoutTable layout_table_portable() {
  LayoutTable t;
  t.pack_rows16[static_cast<int>(DataType::kFp32)] = &pack_rows16<DataType::kFp32>;
  t.pack_rows16[static_cast<int>(DataType::kBf16)] = &pack_rows16<DataType::kBf16>;
  t.pack_rows16[static_cast<int>(DataType::kFp16)] = &pack_rows16<DataType::kFp16>;
  t.pack_rows16[static_cast<int>(DataType::kInt8)] = &pack_rows16<DataType::kInt8>;
  t.store_band_nchw = &store_band_nchw;
  return t;
}

}  // namespace nova::conv
