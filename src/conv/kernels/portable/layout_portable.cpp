// Layout changes of the portable path (also used by the AVX2 path): plain loops.
#include "../kernel_table.hpp"

namespace nova::conv {

namespace {

// Columns [x0, x0 + 16) of the 16 channel rows widened into buf (the portable widen), then transposed.
void pack_rows16(const void* src, DataType type, float scale, std::ptrdiff_t channel_stride, int lanes,
                 std::ptrdiff_t count, float* dst) {
  static const ConvertTable kConvert = convert_table_portable();
  const WidenFn widen = kConvert.widen[static_cast<int>(type)];
  const auto* base = static_cast<const unsigned char*>(src);
  const auto bytes = static_cast<std::ptrdiff_t>(element_size(type));
  for (std::ptrdiff_t x0 = 0; x0 < count; x0 += 16) {
    const std::ptrdiff_t xs = count - x0 < 16 ? count - x0 : 16;
    float buf[16][16] = {};
    for (int l = 0; l < lanes; ++l) widen(base + (l * channel_stride + x0) * bytes, buf[l], xs, scale);
    for (std::ptrdiff_t x = 0; x < xs; ++x)
      for (int l = 0; l < 16; ++l) dst[(x0 + x) * 16 + l] = buf[l][x];
  }
}

void store_band_nchw(const float* band, std::ptrdiff_t width_stride, int rows, std::ptrdiff_t width, int lanes,
                     float* out, std::ptrdiff_t plane, std::ptrdiff_t row) {
  for (int l = 0; l < lanes; ++l)
    for (int i = 0; i < rows; ++i)
      for (std::ptrdiff_t x = 0; x < width; ++x) out[l * plane + i * row + x] = band[(i * width_stride + x) * 16 + l];
}

}  // namespace

LayoutTable layout_table_portable() { return LayoutTable{&pack_rows16, &store_band_nchw}; }

}  // namespace nova::conv
