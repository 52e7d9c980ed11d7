// Typed input and output tensors (conv.hpp, DataType): names, sizes, and whole-tensor conversions for
// the paths that do not convert on the fly (the direct path).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>

#include "nova/error.hpp"
#include "plan_impl.hpp"

namespace nova::conv {

std::string to_string(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return "fp32";
    case DataType::kBf16:
      return "bf16";
    case DataType::kFp16:
      return "fp16";
    case DataType::kInt8:
      return "int8";
  }
  return "?";
}

DataType parse_data_type(const std::string& text) {
  if (text == "fp32") return DataType::kFp32;
  if (text == "bf16") return DataType::kBf16;
  if (text == "fp16") return DataType::kFp16;
  if (text == "int8") return DataType::kInt8;
  throw Error("unknown tensor type '" + text + "' (expected fp32, bf16, fp16 or int8)");
}

std::size_t element_size(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return 4;
    case DataType::kBf16:
    case DataType::kFp16:
      return 2;
    case DataType::kInt8:
      return 1;
  }
  return 4;
}

void check_int8_scale(const TensorFormat& format, const std::string& what) {
  if (format.type != DataType::kInt8) return;
  // value = scale * code must be an FP32 number for every code, -128 included: beyond, the codes were
  // widened to +-inf (scale 1e37: the outputs NaN/Inf, and FP32 plans counted none).
  const bool normal = std::isfinite(format.scale) && format.scale >= std::numeric_limits<float>::min();
  if (normal && std::isfinite(format.scale * 128.0f)) return;
  char text[32];  // %g: std::to_string's %f printed 1e-45 as 0.000000
  std::snprintf(text, sizeof text, "%g", static_cast<double>(format.scale));
  throw Error(what + " is int8 but its scale " + text +
              (normal
                   ? " puts codes beyond FP32's range (128 x scale must be finite: scale below 2^121, about "
                     "2.66e36)"
                   : " is not a finite normal number > 0"));
}

namespace {
// A type that is none of DataType's values indexed the conversion tables out of bounds.
void check_type(DataType type, const char* where) {
  const int value = static_cast<int>(type);
  if (value < 0 || value > static_cast<int>(DataType::kInt8))
    throw Error(std::string(where) + ": tensor type " + std::to_string(value) +
                " is none of DataType's values (0 fp32, 1 bf16, 2 fp16, 3 int8)");
}
}  // namespace

ConvertCounts convert_from_fp32(const float* src, int64_t count, TensorFormat to, void* dst) {
  if (count < 0 || (count > 0 && (src == nullptr || dst == nullptr)))
    throw Error("convert_from_fp32: null buffer or negative count");
  check_type(to.type, "convert_from_fp32");
  check_int8_scale(to, "the destination");
  NarrowCounts c;
  kernels(best_isa()).convert.narrow[static_cast<int>(to.type)](src, dst, count, 1.0f / to.scale, &c);
  return {c.saturated, c.nonfinite};
}

void convert_to_fp32(const void* src, int64_t count, TensorFormat from, float* dst) {
  if (count < 0 || (count > 0 && (src == nullptr || dst == nullptr)))
    throw Error("convert_to_fp32: null buffer or negative count");
  check_type(from.type, "convert_to_fp32");
  check_int8_scale(from, "the source");
  kernels(best_isa()).convert.widen[static_cast<int>(from.type)](src, dst, count, from.scale);
}

namespace {
constexpr int64_t kConvertChunk = 16384;  // elements per task
}

void widen_tensor(Plan::Impl& p, const void* src, float* dst, int64_t count) {
  const WidenFn widen = p.kernels->convert.widen[static_cast<int>(p.input_format.type)];
  const float scale = p.input_format.scale;
  const auto widen_chunk = [&](std::size_t task, int) {
    const int64_t i0 = static_cast<int64_t>(task) * kConvertChunk, n = std::min(kConvertChunk, count - i0);
    widen(element_at(src, p.input_format.type, i0), dst + i0, n, scale);
  };
  p.pool->run(static_cast<std::size_t>(ceil_div(count, kConvertChunk)), p.charged(Stage::kPack, widen_chunk));
}

void narrow_tensor(Plan::Impl& p, const float* src, void* dst, int64_t count) {
  const NarrowFn narrow = p.kernels->convert.narrow[static_cast<int>(p.output_format.type)];
  const CountBeyondFn count_beyond = p.kernels->convert.count_beyond;
  const float inv = 1.0f / p.output_format.scale, limit = p.output_count_limit;
  const auto narrow_chunk = [&](std::size_t task, int worker) {
    const int64_t i0 = static_cast<int64_t>(task) * kConvertChunk, n = std::min(kConvertChunk, count - i0);
    NarrowCounts& counts = p.thread_io_counts[static_cast<std::size_t>(worker)];
    if (limit > 0.0f) {  // the results stored as NaN or Inf (Plan::Impl::output_count_limit): 16 at a time
      const int64_t whole = n / 16 * 16;
      counts.nonfinite += count_beyond(src + i0, 0, 1, whole / 16, 16, limit);
      if (whole < n) {  // the last, partial pixel from a copy (the kernel reads whole pixels)
        float tail[16] = {};
        std::copy(src + i0 + whole, src + i0 + n, tail);
        counts.nonfinite += count_beyond(tail, 0, 1, 1, static_cast<int>(n - whole), limit);
      }
    }
    narrow(src + i0, element_at(dst, p.output_format.type, i0), n, inv, &counts);
  };
  p.pool->run(static_cast<std::size_t>(ceil_div(count, kConvertChunk)),
              p.charged(Stage::kOutput, narrow_chunk));
}

void allocate_io_scratch(Plan::Impl& p) {
  p.thread_io_counts.assign(static_cast<std::size_t>(p.threads), NarrowCounts{});
  if (!p.typed_io()) return;
  const ConvShape& s = p.shape;
  if (p.wino) {
    // One NCHW output band (winograd_execute.cpp); the input is widened by the packing copy itself.
    const int64_t m = p.wino->m;
    const auto size = static_cast<std::size_t>(kLanes * m * kBandTiles * m);
    p.thread_io.resize(static_cast<std::size_t>(p.threads));
    for (AlignedBuffer& b : p.thread_io) b.resize(size);
  } else {
    if (p.input_format.type != DataType::kFp32)
      p.io_input.resize(static_cast<std::size_t>(input_elements(s, p.layout)));
    if (p.output_format.type != DataType::kFp32)
      p.io_output.resize(static_cast<std::size_t>(output_elements(s, p.layout)));
  }
}

}  // namespace nova::conv
