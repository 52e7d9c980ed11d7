// Typed input and output tensors (bf16, fp16, int8 with scales): the element conversions against
// independent definitions (nova::encode_bits, float64 rounding), every conversion path bit for bit,
// and the engine: a typed plan must give exactly the conversions of what the FP32 plan gives on the
// same values, on the Winograd and the direct path, in both layouts and at every precision; int8
// round trips, counts of clamped and non-finite outputs, bad input.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "conv/cpu_supports.hpp"
#include "conv/kernels/kernel_table.hpp"
#include "conv_test_util.hpp"
#include "nova/error.hpp"
#include "nova/numerics/format.hpp"

namespace nova::conv {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Values that reach every case of the roundings: ties, subnormals of fp16 and bf16, fp16 overflow,
// int8 boundaries, signed zeros, inf and NaN, and random ones over many binades.
std::vector<float> special_values() {
  std::vector<float> v = {0.0f,     -0.0f,       1.0f,
                          -1.0f,    65504.0f,    65519.0f,
                          65520.0f, -65520.0f,   1e-5f,
                          -3e-8f,   6.0e-8f,     2.98e-8f,
                          1e-40f,   -1e-39f,     kInf,
                          -kInf,    kNan,        -kNan,
                          127.5f,   -127.5f,     126.5f,
                          127.49f,  128.0f,      -300.0f,
                          0.5f,     1.5f,        2.5f,
                          -2.5f,    1.00390625f, 1.001953125f,
                          3.0e38f,  -3.4e38f,    std::numeric_limits<float>::min()};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-30, 20);
  for (int i = 0; i < 4000; ++i) v.push_back((i % 2 ? -1.0f : 1.0f) * std::ldexp(mant(rng), ex(rng)));
  for (int i = 0; i < 2000; ++i) v.push_back(static_cast<float>(i - 1000) * 0.25f);  // int8 ties
  return v;
}

bool avx2_f16c() {
#if defined(__x86_64__) || defined(__i386__)
  return isa_supported(Isa::kAvx2) && nova::conv::cpu_supports(nova::conv::CpuFeature::kF16c);
#else
  return false;
#endif
}

// The portable, AVX2 (+F16C) and AVX-512F tables, and the avx512 path's table as the registry builds it
// for this CPU (with AVX512-BF16, its bf16 narrows use vcvtneps2bf16:
// kernels/avx512bf16/narrow_bf16_avx512bf16.cpp).
std::vector<ConvertTable> convert_tables() {
  std::vector<ConvertTable> t = {convert_table_portable()};
  if (avx2_f16c()) t.push_back(convert_table_avx2());
  if (isa_supported(Isa::kAvx512)) {
    t.push_back(convert_table_avx512());
    t.push_back(kernels(Isa::kAvx512).convert);
  }
  return t;
}

bool is_nan_bits16(uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu) != 0 : (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0;
}

TEST(TensorConvert, NarrowMatchesTheFormatDefinitionsOnEveryPath) {
  const std::vector<float> v = special_values();
  const auto n = static_cast<int64_t>(v.size());
  for (const ConvertTable& t : convert_tables()) {
    for (DataType type : {DataType::kBf16, DataType::kFp16}) {
      const bool bf16 = type == DataType::kBf16;
      std::vector<uint16_t> out(v.size());
      NarrowCounts counts;
      t.narrow[static_cast<int>(type)](v.data(), out.data(), n, 1.0f, &counts);
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isnan(v[i])) {
          EXPECT_TRUE(is_nan_bits16(out[i], bf16)) << i;
          continue;
        }
        // encode_bits is nova's format module: exact float64 rounding to nearest even, IEEE overflow.
        const auto want = static_cast<uint16_t>(encode_bits(bf16 ? Format::kBf16 : Format::kFp16, v[i]));
        EXPECT_EQ(out[i], want) << to_string(type) << " of " << v[i];
      }
      // widen gives back the exact value of every code
      std::vector<float> back(v.size());
      t.widen[static_cast<int>(type)](out.data(), back.data(), n, 1.0f);
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isnan(v[i])) {
          EXPECT_EQ(back[i], static_cast<float>(decode_bits(bf16 ? Format::kBf16 : Format::kFp16, out[i])));
        }
    }
    // int8: code = RNE(x * (1/scale)) clamped to +-127, NaN -> 0 and Inf -> +-127 counted apart. The
    // second set has every |x| within 127.5, ties at the edges included, so that whole vectors take the
    // AVX-512 fast path (the special values mostly take its full path). The third, at FP32's smallest
    // normal scale (1/scale = 2^126), has finite values whose quotient overflows FP32: they saturate,
    // counted as saturated, not as NaN/Inf (the quotient below is taken in float64, where it is finite).
    const std::vector<float> in_range = {127.5f, -127.5f, 126.5f,  -126.5f, 127.49f, -127.49f, 0.5f,
                                         -0.5f,  1.5f,    -1.5f,   2.5f,    -0.0f,   0.0f,     64.5f,
                                         -64.5f, 100.5f,  -127.5f, 127.5f,  -3.5f};  // a tail of 3
    const float tiny = std::numeric_limits<float>::min();
    const std::vector<float> overflowing = {4.0f,  -4.0f, 1e30f,  -1e30f,  0.0f,    kInf,
                                            -kInf, kNan,  1e-36f, -1e-36f, 2.0f,    100.0f,
                                            -7.0f, 3e38f, 1e-45f, 8.0f,    -1e-37f, 5.0f};  // a tail of 2
    for (const auto& [values, scale] :
         {std::pair{v, 0.5f}, std::pair{in_range, 1.0f}, std::pair{overflowing, tiny}}) {
      const float inv = 1.0f / scale;
      const auto count = static_cast<int64_t>(values.size());
      std::vector<int8_t> out(values.size());
      NarrowCounts counts;
      t.narrow[static_cast<int>(DataType::kInt8)](values.data(), out.data(), count, inv, &counts);
      int64_t saturated = 0, nonfinite = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        const double x = values[i], q = x * static_cast<double>(inv);  // inv is a power of two: exact
        double want;
        if (std::isnan(x)) {
          want = 0.0;
          ++nonfinite;
        } else if (std::isinf(x)) {
          want = x > 0 ? 127.0 : -127.0;
          ++nonfinite;
        } else {
          if (std::fabs(q) > 127.5) ++saturated;
          want = std::clamp(q - std::remainder(q, 1.0), -127.0, 127.0);  // round half to even
        }
        EXPECT_EQ(out[i], static_cast<int8_t>(want)) << "int8 of " << values[i];
      }
      EXPECT_EQ(counts.saturated, saturated) << "scale " << scale;
      EXPECT_EQ(counts.nonfinite, nonfinite) << "scale " << scale;
      std::vector<float> back(values.size());
      t.widen[static_cast<int>(DataType::kInt8)](out.data(), back.data(), count, scale);
      for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back[i], static_cast<float>(out[i]) * scale);
    }
  }
}

// Every bf16 and fp16 code and every int8 code, widened by each path, against the portable widen (bits;
// a signalling fp16 NaN only as a NaN of the same sign, since vcvtph2ps makes it quiet), at offsets and
// counts that put codes in tails.
TEST(TensorConvert, WidenOfEveryCodeEqualsThePortableWiden) {
  const ConvertTable portable = convert_table_portable();
  for (const ConvertTable& t : convert_tables())
    for (DataType type : {DataType::kBf16, DataType::kFp16, DataType::kInt8}) {
      SCOPED_TRACE(to_string(type));
      const std::size_t codes = type == DataType::kInt8 ? 256 : 65536, bytes = element_size(type);
      std::vector<unsigned char> src(codes * bytes);
      for (std::size_t c = 0; c < codes; ++c) {
        const auto code = static_cast<uint16_t>(c);
        std::memcpy(src.data() + c * bytes, &code, bytes);  // little-endian: the low byte for int8
      }
      const float scale = type == DataType::kInt8 ? 0.037f : 1.0f;
      for (const auto& [first, count] : {std::pair<std::size_t, std::size_t>{0, codes}, {3, 13}, {5, 6}}) {
        std::vector<float> got(count + 1, -7.0f), want(count + 1, -7.0f);
        t.widen[static_cast<int>(type)](src.data() + first * bytes, got.data(), static_cast<int64_t>(count),
                                        scale);
        portable.widen[static_cast<int>(type)](src.data() + first * bytes, want.data(),
                                               static_cast<int64_t>(count), scale);
        for (std::size_t i = 0; i <= count; ++i) {
          uint32_t a, b;
          std::memcpy(&a, &got[i], 4);
          std::memcpy(&b, &want[i], 4);
          if (type == DataType::kFp16 && std::isnan(want[i])) {
            ASSERT_TRUE(std::isnan(got[i])) << "code " << first + i;
            ASSERT_EQ(a >> 31, b >> 31) << "code " << first + i;
            continue;
          }
          ASSERT_EQ(a, b) << "code " << first + i;  // i == count: nothing written past the end
        }
      }
    }
}

TEST(TensorConvert, TailsAreNotWrittenPastTheEnd) {
  for (const ConvertTable& t : convert_tables())
    for (int64_t count : {1, 7, 15, 16, 17, 33}) {
      std::vector<float> src(static_cast<std::size_t>(count), 3.0f);
      std::vector<unsigned char> dst(64 * 4, 0xAB);
      NarrowCounts c;
      for (DataType type : {DataType::kBf16, DataType::kFp16, DataType::kInt8}) {
        std::fill(dst.begin(), dst.end(), 0xAB);
        t.narrow[static_cast<int>(type)](src.data(), dst.data(), count, 1.0f, &c);
        for (std::size_t b = static_cast<std::size_t>(count) * element_size(type); b < dst.size(); ++b)
          ASSERT_EQ(dst[b], 0xAB) << to_string(type) << " count " << count;
      }
    }
}

// The strided form converts each run exactly as the one-run form does (bits and counts), in the
// contiguous case too, and writes nothing between the runs.
TEST(TensorConvert, NarrowRowsEqualsOneRunAtATime) {
  const std::vector<float> v = special_values();
  for (const ConvertTable& t : convert_tables())
    for (DataType type : {DataType::kFp32, DataType::kBf16, DataType::kFp16, DataType::kInt8})
      for (const auto& [src_row, dst_row, rows, width] : {std::array<int64_t, 4>{37, 41, 5, 33},
                                                          {16, 64, 7, 13},
                                                          {13, 20, 4, 13},
                                                          {29, 29, 9, 29},
                                                          {20, 23, 1, 1}}) {
        SCOPED_TRACE(to_string(type) + " width " + std::to_string(width));
        const std::size_t bytes = element_size(type);
        const float inv = type == DataType::kInt8 ? 0.75f : 1.0f;
        std::vector<unsigned char> got(static_cast<std::size_t>(rows * dst_row) * bytes, 0xAB),
            want(got.size(), 0xAB);
        NarrowCounts got_counts, want_counts;
        t.narrow_rows[static_cast<int>(type)](v.data() + 3, src_row, got.data(), dst_row, rows, width, inv,
                                              &got_counts);
        for (int64_t r = 0; r < rows; ++r)
          t.narrow[static_cast<int>(type)](v.data() + 3 + r * src_row,
                                           want.data() + static_cast<std::size_t>(r * dst_row) * bytes, width,
                                           inv, &want_counts);
        EXPECT_EQ(got, want);
        EXPECT_EQ(got_counts.saturated, want_counts.saturated);
        EXPECT_EQ(got_counts.nonfinite, want_counts.nonfinite);
      }
}

// count_beyond with its type's limit counts exactly the values that the type's narrow stores as NaN or
// Inf (the special values put rows of pixels across fp16's and bf16's overflow edges, ties included),
// among the first `lanes` lanes of each pixel only: every float outside the counted region is NaN.
TEST(TensorConvert, CountBeyondCountsWhatTheNarrowStoresAsNanOrInf) {
  std::vector<float> v = special_values();
  for (float x : {3.3895314e38f, std::bit_cast<float>(0x7F7F7FFFu), std::bit_cast<float>(0x7F7F8000u),
                  -std::bit_cast<float>(0x7F7F8000u), 65519.996f, 65536.0f})
    v.push_back(x);
  const ConvertTable portable = convert_table_portable();
  for (const ConvertTable& t : convert_tables())
    for (DataType type : {DataType::kFp32, DataType::kBf16, DataType::kFp16})
      for (const auto& [rows, pixels, stride] :
           {std::array<int64_t, 3>{3, 5, 96}, {1, 40, 640}, {7, 1, 17}, {2, 3, 48}}) {
        for (int lanes = 1; lanes <= 16; ++lanes) {
          SCOPED_TRACE(to_string(type) + " lanes " + std::to_string(lanes) + " pixels " +
                       std::to_string(pixels));
          std::vector<float> src(static_cast<std::size_t>(rows * stride), kNan);
          int64_t want = 0;
          std::size_t next = static_cast<std::size_t>(lanes * 131 + pixels);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t x = 0; x < pixels; ++x)
              for (int l = 0; l < lanes; ++l) {
                const float value = v[next++ % v.size()];
                src[static_cast<std::size_t>(r * stride + x * 16 + l)] = value;
                // What a store into `type` holds: the portable narrow's bits, widened back.
                unsigned char bits[4];
                float stored;
                NarrowCounts unused;
                portable.narrow[static_cast<int>(type)](&value, bits, 1, 1.0f, &unused);
                portable.widen[static_cast<int>(type)](bits, &stored, 1, 1.0f);
                want += std::isfinite(stored) ? 0 : 1;
              }
          EXPECT_EQ(t.count_beyond(src.data(), stride, rows, pixels, lanes, overflow_limit(type)), want);
        }
      }
}

// The typed input of a problem (its FP32 input rounded to `in`), the FP32 values it stands for, and
// what a typed output must hold given the FP32 plan's output.
struct Typed {
  std::vector<unsigned char> bytes;
  std::vector<float> values;
};

Typed make_input(const std::vector<float>& x, const TensorFormat& f) {
  const ConvertTable t = convert_table_portable();
  Typed out;
  out.bytes.resize(x.size() * element_size(f.type));
  NarrowCounts c;
  t.narrow[static_cast<int>(f.type)](x.data(), out.bytes.data(), static_cast<int64_t>(x.size()),
                                     1.0f / f.scale, &c);
  out.values.resize(x.size());
  t.widen[static_cast<int>(f.type)](out.bytes.data(), out.values.data(), static_cast<int64_t>(x.size()),
                                    f.scale);
  return out;
}

std::vector<unsigned char> narrow_all(const std::vector<float>& y, const TensorFormat& f,
                                      NarrowCounts* counts) {
  std::vector<unsigned char> out(y.size() * element_size(f.type));
  convert_table_portable().narrow[static_cast<int>(f.type)](
      y.data(), out.data(), static_cast<int64_t>(y.size()), 1.0f / f.scale, counts);
  return out;
}

struct Case {
  const char* name;
  PlanOptions options;
};

std::vector<Case> engine_cases() {
  std::vector<Case> cases;
  auto add = [&](const char* name, std::optional<TileSize> tile, AlgorithmChoice algo, Precision prec) {
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC, Layout::kNCHW16c}) {
      PlanOptions o;
      o.layout = layout;
      o.tile = tile;
      o.algorithm = algo;
      o.precision = prec;
      o.relu = true;
      cases.push_back({name, o});
    }
  };
  add("winograd F(4,3) fp32", TileSize{4, 3}, AlgorithmChoice::kWinograd, Precision::kFp32);
  add("winograd F(6,3) fp32", TileSize{6, 3}, AlgorithmChoice::kWinograd, Precision::kFp32);
  add("winograd F(4,3) bf16", TileSize{4, 3}, AlgorithmChoice::kWinograd, Precision::kBf16);
  add("winograd F(4,3) int8", TileSize{4, 3}, AlgorithmChoice::kWinograd, Precision::kInt8);
  add("winograd F(4,3) fp16", TileSize{4, 3}, AlgorithmChoice::kWinograd, Precision::kFp16);
  add("winograd F(4,3) int8-spatial", TileSize{4, 3}, AlgorithmChoice::kWinograd, Precision::kInt8Spatial);
  add("direct", std::nullopt, AlgorithmChoice::kDirect, Precision::kFp32);
  return cases;
}

// The blocked input copy widens typed NCHW rows as it transposes them: every element must be the same
// path's widen of its source element (bits compared: NaN payloads of bf16/fp16 included, which
// vcvtph2ps makes quiet), with channel tails zero-filled and nothing written past the count.
TEST(TensorConvert, PackRows16WidensLikeTheConversion) {
  std::vector<std::pair<LayoutTable, ConvertTable>> paths = {
      {layout_table_portable(), convert_table_portable()}};
  if (avx2_f16c()) paths.emplace_back(kernels(Isa::kAvx2).layout, kernels(Isa::kAvx2).convert);
  if (isa_supported(Isa::kAvx512)) paths.emplace_back(layout_table_avx512(), convert_table_avx512());
  std::mt19937 rng(11);
  const std::ptrdiff_t stride = 41;
  for (const std::ptrdiff_t count : {37, 7, 3})  // 37: a tail of 5 after runs of 8 or 16; 7, 3: a tail only
    for (const auto& [t, scalar] : paths)
      for (DataType type : {DataType::kFp32, DataType::kBf16, DataType::kFp16, DataType::kInt8})
        for (int lanes : {16, 13, 1}) {
          SCOPED_TRACE(to_string(type) + " lanes " + std::to_string(lanes) + " count " +
                       std::to_string(count));
          const std::size_t bytes = element_size(type);
          std::vector<unsigned char> src(static_cast<std::size_t>(16 * stride) * bytes);
          for (auto& b : src) b = static_cast<unsigned char>(rng());
          if (type == DataType::kFp32)  // finite values, so that the copy is compared as numbers too
            for (std::size_t i = 0; i < src.size(); i += 4) src[i + 3] &= 0xBF;
          const float scale = type == DataType::kInt8 ? 0.037f : 1.0f;
          std::vector<float> got(static_cast<std::size_t>(16 * (count + 1)), -7.0f);
          t.pack_rows16[static_cast<int>(type)](src.data(), scale, stride, lanes, count, got.data());
          for (std::ptrdiff_t x = 0; x < count; ++x)
            for (int l = 0; l < 16; ++l) {
              float want = 0.0f;
              if (l < lanes)
                scalar.widen[static_cast<int>(type)](src.data() + (l * stride + x) * bytes, &want, 1, scale);
              uint32_t a, b;
              std::memcpy(&a, &got[static_cast<std::size_t>(x * 16 + l)], 4);
              std::memcpy(&b, &want, 4);
              ASSERT_EQ(a, b) << "x " << x << " lane " << l;
            }
          for (int l = 0; l < 16; ++l)
            EXPECT_EQ(got[static_cast<std::size_t>(count * 16 + l)], -7.0f);  // past the end
        }
}

// The FP32 band store (16-channel pixels to NCHW rows) of every runnable path against its definition:
// out[l*plane + i*row + x] = band[(i*width_stride + x)*16 + l] for the stored rows, columns and lanes,
// and nothing else written, on widths with and without a tail of fewer than 8 (or 16) columns.
TEST(TensorConvert, BandStoreNchwMovesEveryValueAndNothingElse) {
  std::vector<LayoutTable> paths = {layout_table_portable()};
  if (isa_supported(Isa::kAvx2)) paths.push_back(kernels(Isa::kAvx2).layout);
  if (isa_supported(Isa::kAvx512)) paths.push_back(layout_table_avx512());
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  const std::ptrdiff_t width_stride = 40, row = 45, plane = 4 * row + 3;
  for (const LayoutTable& t : paths)
    for (const std::ptrdiff_t width : {37, 16, 8, 7, 3, 1})
      for (int lanes : {16, 13, 9, 1})
        for (int rows : {4, 1}) {
          SCOPED_TRACE("width " + std::to_string(width) + " lanes " + std::to_string(lanes) + " rows " +
                       std::to_string(rows));
          std::vector<float> band(static_cast<std::size_t>(rows * width_stride * 16));
          for (auto& b : band) b = value(rng);
          std::vector<float> got(static_cast<std::size_t>(16 * plane), -7.0f), want(got);
          for (int l = 0; l < lanes; ++l)
            for (int i = 0; i < rows; ++i)
              for (std::ptrdiff_t x = 0; x < width; ++x)
                want[static_cast<std::size_t>(l * plane + i * row + x)] =
                    band[static_cast<std::size_t>((i * width_stride + x) * 16 + l)];
          t.store_band_nchw(band.data(), width_stride, rows, width, lanes, got.data(), plane, row);
          ASSERT_EQ(got, want);
        }
}

// The int8 pack with byte transposes (AVX512-VBMI) against pack_rows16 of int8 elements on the same
// path, on full and partial widths and channel blocks.
TEST(TensorConvert, Int8BytePackEqualsTheGeneralForm) {
#if defined(__x86_64__) || defined(__i386__)
  const bool vbmi = isa_supported(Isa::kAvx512) && __builtin_cpu_supports("avx512vbmi");
#else
  const bool vbmi = false;
#endif
  if (!vbmi) GTEST_SKIP() << "this CPU has no AVX512-VBMI";
  const KernelTable& k = kernels(Isa::kAvx512);
  const PackRows16Fn general = layout_table_avx512().pack_rows16[static_cast<int>(DataType::kInt8)];
  const PackRows16Fn bytes = k.layout.pack_rows16[static_cast<int>(DataType::kInt8)];
  ASSERT_NE(bytes, general);  // the byte form is installed
  std::mt19937 rng(5);
  // Scales whose 2^-24 multiple is a normal float (the fast form) and two that are not (1e-38, 1e-40).
  for (const float scale : {0.037f, 1.0f / 127.0f, 3.0e38f, 1e-38f, 1e-40f})
    for (const std::ptrdiff_t count : {37, 16, 5})
      for (int lanes : {16, 13, 1}) {
        SCOPED_TRACE("scale " + std::to_string(scale) + " count " + std::to_string(count) + " lanes " +
                     std::to_string(lanes));
        const std::ptrdiff_t stride = 41;
        std::vector<int8_t> src(static_cast<std::size_t>(16 * stride));
        for (auto& b : src) b = static_cast<int8_t>(rng());
        src[0] = -128;  // the extremes of the codes
        src[1] = 127;
        std::vector<float> got(static_cast<std::size_t>(16 * (count + 1)), -7.0f), want(got);
        bytes(src.data(), scale, stride, lanes, count, got.data());
        general(src.data(), scale, stride, lanes, count, want.data());
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
      }
}

// The typed band stores (narrow each pixel, then transpose bytes or 16-bit words) against
// store_band_nchw into floats followed by the path's narrow_rows: bits, counts of clamped and NaN/Inf
// int8 values, and nothing written outside the stored rows, on full and partial widths and channel
// blocks, with values that reach every case of the roundings. Every runnable path that has one.
TEST(TensorConvert, TypedBandStoresEqualStoreThenNarrow) {
  const std::vector<float> v = special_values();
  std::mt19937 rng(5);
  int checked_avx512 = 0, checked_avx2 = 0;  // types with a typed band store on those paths
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    const KernelTable& k = kernels(isa);
    for (DataType type : {DataType::kBf16, DataType::kFp16, DataType::kInt8}) {
      const StoreBandNchwTypedFn store = k.layout.store_band_nchw_typed[static_cast<int>(type)];
      if (store == nullptr) continue;
      ++(isa == Isa::kAvx512 ? checked_avx512 : checked_avx2);
      int64_t counted = 0;
      const std::size_t bytes = element_size(type);
      const std::ptrdiff_t width_stride = 40;
      // Fill 1: only values the int8 narrow's fast tier takes (|x * 0.75| <= 127.5), with its edge
      // cases +-127.5 (x = +-170) and the ties of odd multiples of 1.5 among them; in fill 0 almost
      // every 16-value vector holds some value of the slow tier.
      for (int fill : {0, 1}) {
        for (const std::ptrdiff_t width : {37, 16, 7})
          for (int lanes : {16, 13, 1})
            for (int rows : {4, 1}) {
              SCOPED_TRACE(to_string(isa) + " " + to_string(type) + " fill " + std::to_string(fill) +
                           " width " + std::to_string(width) + " lanes " + std::to_string(lanes) + " rows " +
                           std::to_string(rows));
              const std::ptrdiff_t row = 45,
                                   plane = 4 * row + 3;  // output strides with gaps between the rows
              std::vector<float> band(static_cast<std::size_t>(rows * width_stride * 16));
              std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
              std::uniform_int_distribution<int> fast(-85, 85);
              for (auto& b : band) b = fill == 0 ? v[pick(rng)] : 2.0f * static_cast<float>(fast(rng));
              std::vector<unsigned char> got(static_cast<std::size_t>(16 * plane) * bytes, 0x55), want(got);
              NarrowCounts got_counts, want_counts;
              store(band.data(), width_stride, rows, width, lanes, got.data(), plane, row, 0.75f,
                    &got_counts);
              std::vector<float> staged(static_cast<std::size_t>(16 * plane), 0.0f);
              k.layout.store_band_nchw(band.data(), width_stride, rows, width, lanes, staged.data(), plane,
                                       row);
              for (int l = 0; l < lanes; ++l)
                k.convert.narrow_rows[static_cast<int>(type)](
                    staged.data() + l * plane, row, want.data() + static_cast<std::size_t>(l * plane) * bytes,
                    row, rows, width, 0.75f, &want_counts);
              EXPECT_EQ(got, want);
              EXPECT_EQ(got_counts.saturated, want_counts.saturated);
              EXPECT_EQ(got_counts.nonfinite, want_counts.nonfinite);
              counted += want_counts.saturated + want_counts.nonfinite;
            }
      }
      if (type == DataType::kInt8) {  // the data reaches the counted cases
        EXPECT_GT(counted, 0);
      }
    }
  }
#if defined(__x86_64__) || defined(__i386__)
  // AVX-512 has the 16-bit forms; VBMI adds int8. AVX2 (with F16C) has all three; portable has none.
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_EQ(checked_avx512, __builtin_cpu_supports("avx512vbmi") ? 3 : 2);
  }
  if (isa_supported(Isa::kAvx2)) {
    EXPECT_EQ(checked_avx2, nova::conv::cpu_supports(nova::conv::CpuFeature::kF16c) ? 3 : 0);
  }
#endif
}

namespace {

// A typed plan computes exactly what the FP32 plan computes on the input's values, rounded once to
// the output type: so its output bits equal the output conversion of the FP32 plan's output.
void expect_typed_plan_equals_conversions(const ConvShape& s) {
  SCOPED_TRACE("W " + std::to_string(s.W));
  const testing::Problem p = testing::random_problem(s, 11);
  const std::vector<TensorFormat> formats = {{DataType::kFp32, 1.0f},
                                             {DataType::kBf16, 1.0f},
                                             {DataType::kFp16, 1.0f},
                                             {DataType::kInt8, 1.0f / 127.0f},
                                             {DataType::kInt8, 0.01f}};  // the last one clamps outputs
  for (const Case& c : engine_cases()) {
    for (std::size_t fi = 0; fi < formats.size(); ++fi) {
      const TensorFormat in = formats[fi], out = formats[(fi + 1) % formats.size()];
      // The same values in the plan's layout.
      std::vector<float> x = p.input;
      if (c.options.layout == Layout::kNHWC) x = nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W);
      if (c.options.layout == Layout::kNCHW16c)
        x = nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
      const Typed typed = make_input(x, in);

      const Plan f32 = Plan::create(s, p.weights.data(), p.bias.data(), c.options);
      std::vector<float> y(static_cast<std::size_t>(output_elements(s, c.options.layout)));
      f32.execute(typed.values.data(), y.data());
      NarrowCounts want_counts;
      const std::vector<unsigned char> want = narrow_all(y, out, &want_counts);

      PlanOptions o = c.options;
      o.input = in;
      o.output = out;
      const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
      std::vector<unsigned char> got(want.size(), 0xCD);
      plan.execute(static_cast<const void*>(typed.bytes.data()), static_cast<void*>(got.data()));
      const std::string what = std::string(c.name) + " " + to_string(c.options.layout) + " " +
                               to_string(in.type) + " -> " + to_string(out.type);
      EXPECT_EQ(got, want) << what;
      EXPECT_EQ(plan.stats().output_saturated, want_counts.saturated) << what;
      EXPECT_EQ(plan.stats().output_nonfinite, 0) << what;
      if (out.type == DataType::kInt8 && out.scale == 0.01f) {
        EXPECT_GT(want_counts.saturated, 0) << what;
      }
      // Whole channel blocks in NCHW16c or NHWC: the input, whatever its type, is read in place (but
      // by int8-spatial, which quantizes it in the copy, and the direct path).
      const bool whole_blocks = s.C % 16 == 0 && c.options.layout != Layout::kNCHW &&
                                c.options.algorithm == AlgorithmChoice::kWinograd &&
                                c.options.precision != Precision::kInt8Spatial;
      EXPECT_EQ(plan.describe().find("input read in place") != std::string::npos, whole_blocks)
          << what << ": " << plan.describe();
      if (in.type != DataType::kFp32 || out.type != DataType::kFp32) {
        EXPECT_NE(plan.describe().find(to_string(in.type)), std::string::npos) << plan.describe();
        EXPECT_NE(plan.describe().find(" out;"), std::string::npos) << plan.describe();
      }
    }
  }
}

}  // namespace

// Two shapes: rows narrow to 11 columns, so a run of tiles covers whole output rows (each channel is
// narrowed in one stretch); 41 columns, so NCHW runs of tiles cover parts of rows (narrowed row by row).
// A third of whole channel blocks (NCHW16c and NHWC tensors are read in place there, typed ones staged
// and widened by runs of tiles, but for the int8 GEMM's int8 codes, which windows inside the image
// widen in registers where the ISA can: AVX-512), with partial tiles at the bottom and windows one
// column past the right edge; a fourth with 144 channels, whose typed tensors are staged in pieces of at most
// 48 KiB (winograd_execute.cpp, kTypedBandBytes): runs of 3 F(4,3) tiles in one piece of 9 channel blocks,
// runs of 2 F(6,3) tiles in pieces of 6 + 3.
TEST(TypedTensors, EqualTheConversionsOfTheFp32Plan) {
  for (const ConvShape& s : {ConvShape{2, 19, 13, 11, 21}, ConvShape{1, 19, 5, 41, 21},
                             ConvShape{2, 32, 9, 12, 24}, ConvShape{1, 144, 7, 10, 8}})
    expect_typed_plan_equals_conversions(s);  // 3x3, padding 1
}

// The int8 GEMM's transform reads the int8 codes of windows inside the image in place, widened in
// registers (AVX-512), and stages the windows at the edges: for the generated and the generic tile
// transforms, with the V scales from the call and calibrated, its outputs are the bits of the same plan
// fed the widened FP32 values (which it transforms in place or from its stage).
TEST(TypedTensors, Int8CodesReadInPlaceEqualTheWidenedValues) {
  const ConvShape s{2, 32, 14, 15, 16};  // 3x3, padding 1: inside and edge windows, partial tiles
  const testing::Problem p = testing::random_problem(s, 5);
  const TensorFormat in{DataType::kInt8, 1.0f / 127.0f};
  for (Layout layout : {Layout::kNHWC, Layout::kNCHW16c})
    for (bool generated : {true, false})
      for (bool calibrated : {false, true}) {
        std::vector<float> x = p.input;
        if (layout == Layout::kNHWC) x = nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W);
        if (layout == Layout::kNCHW16c) x = nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
        const Typed typed = make_input(x, in);
        PlanOptions o;
        o.layout = layout;
        o.tile = TileSize{4, 3};
        o.algorithm = AlgorithmChoice::kWinograd;
        o.precision = Precision::kInt8;
        o.allow_generated = generated;
        Plan values_plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
        o.input = in;
        Plan codes_plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
        if (calibrated) {  // on half the input, so that the execute saturates some of V
          std::vector<float> half = typed.values;
          for (float& v : half) v *= 0.5f;
          const float* sample = half.data();
          values_plan.calibrate(std::span<const float* const>(&sample, 1));
          codes_plan.calibrate(std::span<const float* const>(&sample, 1));
        }
        const std::string what = to_string(layout) + (generated ? " generated" : " generic") +
                                 (calibrated ? ", calibrated" : ", per call");
        ASSERT_NE(codes_plan.describe().find("input read in place"), std::string::npos) << what;
        std::vector<float> want(static_cast<std::size_t>(output_elements(s, layout)));
        std::vector<float> got(want.size(), -1.0f);
        values_plan.execute(typed.values.data(), want.data());
        codes_plan.execute(static_cast<const void*>(typed.bytes.data()), static_cast<void*>(got.data()));
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << what;
        EXPECT_EQ(codes_plan.stats().saturated, values_plan.stats().saturated) << what;
        if (calibrated) {
          EXPECT_GT(codes_plan.stats().saturated, 0) << what;
        }
      }
}

// int8 in, int8 out against the float64 convolution of the dequantized input: every output within
// half an output step plus the FP32 engine's own error.
TEST(TypedTensors, Int8RoundTripWithinHalfAStep) {
  const ConvShape s{1, 16, 12, 12, 8};  // 3x3, padding 1 (the ConvShape defaults)
  testing::Problem p = testing::random_problem(s, 5);
  const TensorFormat in{DataType::kInt8, 1.0f / 127.0f};
  const Typed x = make_input(p.input, in);
  p.input = x.values;  // the reference sees the dequantized input
  const std::vector<double> ref = testing::reference(p, Layout::kNCHW, false);
  double amax = 0.0;
  for (double v : ref) amax = std::max(amax, std::fabs(v));
  const TensorFormat out{DataType::kInt8, static_cast<float>(amax / 127.0)};
  for (AlgorithmChoice algo : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
    PlanOptions o;
    o.algorithm = algo;
    o.input = in;
    o.output = out;
    const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
    std::vector<int8_t> y(static_cast<std::size_t>(s.output_size()));
    plan.execute(static_cast<const void*>(x.bytes.data()), static_cast<void*>(y.data()));
    for (std::size_t i = 0; i < y.size(); ++i)
      ASSERT_LE(std::fabs(static_cast<double>(y[i]) * out.scale - ref[i]), 0.5 * out.scale + 1e-4 * amax)
          << to_string(plan.algorithm()) << " element " << i;
    EXPECT_EQ(plan.stats().output_saturated, 0);
  }
}

// NaN in a bf16 input reaches the bf16 output as NaN, counted; with an int8 output (stored as 0) it is
// counted too. FP32 plans, Winograd and direct.
TEST(TypedTensors, NonFiniteOutputsPropagateAndAreCounted) {
  const ConvShape s{1, 4, 8, 8, 4};  // 3x3, padding 1 (the ConvShape defaults)
  testing::Problem p = testing::random_problem(s, 9);
  p.input[static_cast<std::size_t>(3 * 8 + 3)] = kNan;  // channel 0, row 3, column 3
  for (AlgorithmChoice algo : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
    PlanOptions o;
    o.algorithm = algo;
    if (algo == AlgorithmChoice::kWinograd) o.tile = TileSize{2, 3};  // a tile beside direct is refused
    o.input = {DataType::kBf16, 1.0f};
    const Typed x = make_input(p.input, o.input);
    o.output = {DataType::kBf16, 1.0f};
    const Plan bf = Plan::create(s, p.weights.data(), nullptr, o);
    std::vector<uint16_t> yb(static_cast<std::size_t>(s.output_size()));
    bf.execute(static_cast<const void*>(x.bytes.data()), static_cast<void*>(yb.data()));
    int64_t nans = 0;
    for (uint16_t h : yb) nans += is_nan_bits16(h, true) ? 1 : 0;
    EXPECT_GE(nans, 9 * s.K) << to_string(bf.algorithm());  // the 3x3 outputs around it, every k
    EXPECT_EQ(bf.stats().output_nonfinite, nans) << to_string(bf.algorithm());

    o.output = {DataType::kInt8, 0.05f};
    const Plan i8 = Plan::create(s, p.weights.data(), nullptr, o);
    std::vector<int8_t> yi(static_cast<std::size_t>(s.output_size()));
    i8.execute(static_cast<const void*>(x.bytes.data()), static_cast<void*>(yi.data()));
    EXPECT_EQ(i8.stats().output_nonfinite, nans) << to_string(i8.algorithm());
  }
}

// An int8 output scale of FP32's smallest normal puts finite results beyond FP32 once divided by it: they
// saturate to +-127 and are counted as saturated, not as NaN/Inf (none is). Winograd (FP32 and int8
// GEMMs) and direct, every layout and GEMM precision.
TEST(TypedTensors, FiniteResultsOverflowingTheInt8ScaleSaturate) {
  const ConvShape s{1, 8, 9, 9, 8};  // 3x3, padding 1 (the ConvShape defaults)
  const testing::Problem p = testing::random_problem(s, 23);
  for (const Case& c : engine_cases()) {
    PlanOptions o = c.options;
    o.relu = false;
    o.output = {DataType::kInt8, std::numeric_limits<float>::min()};
    std::vector<float> x = p.input;
    if (o.layout == Layout::kNHWC) x = nchw_to_nhwc(std::span<const float>(x), s.N, s.C, s.H, s.W);
    if (o.layout == Layout::kNCHW16c) x = nchw_to_nchw16c(std::span<const float>(x), s.N, s.C, s.H, s.W);
    const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
    std::vector<int8_t> y(static_cast<std::size_t>(output_elements(s, o.layout)), 0);
    plan.execute(static_cast<const void*>(x.data()), static_cast<void*>(y.data()));
    const std::string what = std::string(c.name) + " " + to_string(o.layout);
    int64_t extremes = 0;
    for (int8_t v : y) extremes += v == 127 || v == -127 ? 1 : 0;
    EXPECT_EQ(plan.stats().output_nonfinite, 0) << what;
    EXPECT_GE(extremes, s.output_size() * 9 / 10) << what;  // every result of magnitude above 2^-119
    EXPECT_EQ(plan.stats().output_saturated, extremes) << what;
  }
}

// fp16 outputs hold inf from 65520 on: FP32 plans (Winograd and direct) count the infinities they store,
// as many as the output holds, and none where every result fits.
TEST(TypedTensors, Fp16OutputOverflowIsCounted) {
  const ConvShape s{1, 16, 9, 9, 8};  // 3x3, padding 1 (the ConvShape defaults)
  const testing::Problem p = testing::random_problem(s, 17);
  for (AlgorithmChoice algo : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect})
    for (float input_scale : {1.0f, 3e4f}) {
      std::vector<float> x = p.input;
      for (float& v : x) v *= input_scale;
      PlanOptions o;
      o.algorithm = algo;
      o.output = {DataType::kFp16, 1.0f};
      const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
      std::vector<uint16_t> y(static_cast<std::size_t>(s.output_size()));
      plan.execute(static_cast<const void*>(x.data()), static_cast<void*>(y.data()));
      int64_t infs = 0;
      for (uint16_t h : y) infs += (h & 0x7FFFu) == 0x7C00u ? 1 : 0;
      EXPECT_EQ(plan.stats().output_nonfinite, infs) << to_string(plan.algorithm()) << " x" << input_scale;
      if (input_scale > 1.0f) {
        EXPECT_GT(infs, 0) << to_string(plan.algorithm());
      } else {
        EXPECT_EQ(infs, 0) << to_string(plan.algorithm());
      }
    }
}

TEST(TypedTensors, SameBitsAtEveryThreadCount) {
  const ConvShape s{3, 24, 17, 17, 40};  // 3x3, padding 1 (the ConvShape defaults)
  const testing::Problem p = testing::random_problem(s, 13);
  const Typed x = make_input(p.input, {DataType::kFp16, 1.0f});
  std::vector<uint16_t> first;
  for (int threads : {1, 2, 3}) {
    PlanOptions o;
    o.threads = threads;
    o.tile = TileSize{6, 3};  // the automatic choice may depend on the thread count
    o.input = {DataType::kFp16, 1.0f};
    o.output = {DataType::kFp16, 1.0f};
    const Plan plan = Plan::create(s, p.weights.data(), p.bias.data(), o);
    std::vector<uint16_t> y(static_cast<std::size_t>(s.output_size()));
    plan.execute(static_cast<const void*>(x.bytes.data()), static_cast<void*>(y.data()));
    if (first.empty())
      first = y;
    else
      EXPECT_EQ(y, first) << threads << " threads";
  }
}

TEST(TypedTensors, BadInputGetsAClearError) {
  const ConvShape s{1, 3, 8, 8, 4};  // 3x3, padding 1 (the ConvShape defaults)
  const testing::Problem p = testing::random_problem(s, 3);
  auto expect_error = [](auto f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  // Scales below 2^121 only: code 127 at a scale of 1e37 was widened to inf (2.7e36 x 127 is inf too),
  // and an FP32 plan returned 72 NaN/Inf outputs of 1x8x10x10 -> 8 from one such code, counting none.
  for (float bad : {0.0f, -1.0f, kNan, kInf, 1e-40f, 1e37f, 2.7e36f, std::ldexp(1.0f, 121)}) {
    PlanOptions o;
    o.output = {DataType::kInt8, bad};
    expect_error([&] { Plan::create(s, p.weights.data(), nullptr, o); }, "scale");
    o.output = {};
    o.input = {DataType::kInt8, bad};
    expect_error([&] { Plan::create(s, p.weights.data(), nullptr, o); }, "scale");
    const int8_t codes[2] = {127, -128};
    float values[2];
    expect_error([&] { convert_to_fp32(codes, 2, {DataType::kInt8, bad}, values); }, "scale");
    expect_error([&] { convert_from_fp32(values, 2, {DataType::kInt8, bad}, values); }, "scale");
  }
  {  // the largest scale taken: every code's value finite
    const float largest = std::nextafter(std::ldexp(1.0f, 121), 0.0f);
    PlanOptions o;
    o.input = {DataType::kInt8, largest};
    EXPECT_NO_THROW(Plan::create(s, p.weights.data(), nullptr, o));
    const int8_t codes[2] = {127, -128};
    float values[2];
    convert_to_fp32(codes, 2, o.input, values);
    EXPECT_TRUE(std::isfinite(values[0]) && std::isfinite(values[1]));
  }
  PlanOptions o;
  o.input = {DataType::kBf16, 1.0f};
  const Plan plan = Plan::create(s, p.weights.data(), nullptr, o);
  std::vector<float> y(static_cast<std::size_t>(s.output_size()));
  expect_error([&] { plan.execute(p.input.data(), y.data()); }, "bf16 input");
  std::vector<uint16_t> x(static_cast<std::size_t>(s.input_size()) + 1);
  const void* odd = reinterpret_cast<const unsigned char*>(x.data()) + 1;
  expect_error([&] { plan.execute(odd, static_cast<void*>(y.data())); }, "aligned");
  expect_error([&] { plan.execute(static_cast<const void*>(x.data()), static_cast<void*>(x.data())); },
               "overlap");
  EXPECT_EQ(parse_data_type("int8"), DataType::kInt8);
  expect_error([] { parse_data_type("fp64"); }, "fp64");
}

}  // namespace
}  // namespace nova::conv
