#include "nova/numerics/precision_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "nova/error.hpp"
#include "nova/exact/io.hpp"

namespace nova {
namespace {

using json = nlohmann::json;

StageFormat fmt_only(Format f) { return StageFormat{f, Overflow::kIeee, false, QuantScheme::kSymmetric, Granularity::kTensor}; }
StageFormat quant(Format f, Granularity g) { return StageFormat{f, Overflow::kIeee, false, QuantScheme::kSymmetric, g}; }
StageFormat scaled(Format f, Granularity g) { return StageFormat{f, Overflow::kSaturate, true, QuantScheme::kSymmetric, g}; }

// Every stage in one format: the uniform pipelines fp64 and fp32.
PrecisionModel uniform(std::string name, Format f, std::string description) {
  PrecisionModel m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.matrices = m.transform_arith = m.product = m.accumulate = m.output_arith = f;
  m.input = m.filter = m.filter_transform = m.input_transform = m.gemm_output = m.output = fmt_only(f);
  return m;
}

// Tensors stored in `f`, every operation in fp32: a tensor-core / AMX style pipeline.
PrecisionModel storage(std::string name, Format f, std::string description) {
  PrecisionModel m = uniform(std::move(name), Format::kFp32, std::move(description));
  m.input = m.filter = m.filter_transform = m.input_transform = fmt_only(f);
  return m;
}

// Matrices, transforms and stored tensors in `f`; products exact and summed in fp32 (an MFMA /
// tensor-core GEMM), its result written back in `f`: the seed's MI300X kernel.
PrecisionModel all_in(std::string name, Format f, std::string description) {
  PrecisionModel m = uniform(std::move(name), f, std::move(description));
  m.product = m.accumulate = Format::kFp32;
  return m;
}

// fp32 tensors and transforms, U and V quantized to int8 after the transforms, exact integer GEMM.
PrecisionModel int8(std::string name, Granularity u, Granularity v, std::string description) {
  PrecisionModel m = uniform(std::move(name), Format::kFp32, std::move(description));
  m.filter_transform = quant(Format::kInt8, u);
  m.input_transform = quant(Format::kInt8, v);
  m.product = Format::kFp64;  // codes multiply exactly
  m.accumulate = Format::kInt32;
  return m;
}

std::vector<PrecisionModel> make_presets() {
  std::vector<PrecisionModel> p;
  p.push_back(uniform("fp64", Format::kFp64, "every stage in float64: the Winograd algorithm's own float64 error"));
  p.push_back(uniform("fp32", Format::kFp32, "every stage, the matrices included, in fp32"));
  p.push_back(storage("fp16-storage", Format::kFp16,
                      "d, g, U, V stored in fp16; matrices, transforms, products, accumulation and output in fp32 "
                      "(tensor-core / AMX GEMM)"));
  {
    // The engine's fp16-arithmetic GEMM (vfmadd231ph): each FMA rounds once to fp16 (product exact in
    // fp64, then accumulate = fp16), over chunks of 32 channels, whose sums are widened to fp32.
    PrecisionModel m = storage("fp16-fma", Format::kFp16,
                               "d, g, U, V stored in fp16; fp16 FMAs (one rounding each) over chunks of 32 input "
                               "channels, the chunk sums added in fp32; transforms and output in fp32 (the "
                               "engine's fp16 path on AVX512-FP16)");
    m.product = Format::kFp64;
    m.accumulate = Format::kFp16;
    m.accumulate_chunk = 32;
    m.chunk_accumulate = Format::kFp32;
    p.push_back(m);
  }
  {
    // The CPU engine's and the CUDA path's fp16 plans on FP32 tensors: V shifted into fp16's range.
    PrecisionModel m =
        storage("fp16-storage-shifted", Format::kFp16,
                "U, V stored in fp16, V shifted by a power of two into fp16's range and the sums "
                "shifted back (nova's fp16 engines on fp32 tensors); d, g, matrices, transforms, "
                "products, accumulation and output in fp32");
    m.input = m.filter = fmt_only(Format::kFp32);
    m.v_shift = true;
    p.push_back(m);
    m.name = "fp16-fma-shifted";
    m.description =
        "as fp16-storage-shifted with fp16 FMAs over chunks of 32 input channels, the chunk sums "
        "added in fp32 (the engine's fp16 arithmetic on AVX512-FP16, fp32 tensors)";
    m.product = Format::kFp64;
    m.accumulate = Format::kFp16;
    m.accumulate_chunk = 32;
    m.chunk_accumulate = Format::kFp32;
    p.push_back(m);
  }
  p.push_back(all_in("fp16-all", Format::kFp16,
                     "matrices, transforms and every stored tensor in fp16; products summed in fp32, the sums "
                     "written back in fp16 (the seed's MI300X kernel)"));
  p.push_back(storage("bf16-storage", Format::kBf16, "as fp16-storage with bf16 storage"));
  p.push_back(all_in("bf16-all", Format::kBf16, "as fp16-all in bf16"));
  {
    PrecisionModel m = storage("fp8-e4m3-storage", Format::kFp16,
                               "d, g in fp16; U, V in fp8 e4m3 with a per-tensor amax scale (saturating); fp32 "
                               "arithmetic and accumulation");
    m.filter_transform = m.input_transform = scaled(Format::kFp8E4M3, Granularity::kTensor);
    p.push_back(m);
  }
  p.push_back(int8("int8-tensor", Granularity::kTensor, Granularity::kTensor,
                   "fp32 data and transforms; U and V quantized to int8 (symmetric, one scale per tensor); exact "
                   "int32 accumulation"));
  p.push_back(int8("int8-channel", Granularity::kChannel, Granularity::kTensor,
                   "as int8-tensor with one U scale per output channel (V per tensor)"));
  p.push_back(int8("int8-tap", Granularity::kTap, Granularity::kTap,
                   "as int8-tensor with one scale per Winograd position for U and for V (tap-wise quantization)"));
  p.push_back(int8("int8-tap-channel", Granularity::kTapChannel, Granularity::kTap,
                   "as int8-tap with one U scale per Winograd position and output channel (the engine's int8 "
                   "path); V per Winograd position"));
  {
    PrecisionModel m = int8("int8-tile", Granularity::kTile, Granularity::kTile,
                            "LANCE as published: each transformed filter and patch quantized with its own scale; "
                            "products dequantized and summed in fp32");
    m.product = Format::kFp32;
    m.accumulate = Format::kFp32;
    p.push_back(m);
  }
  {
    // ncnn's int8 Winograd (src/layer/x86/convolution_x86.cpp): d and g quantized in the spatial
    // domain, then integer transforms and an integer GEMM, all exact; the result dequantized in fp32.
    PrecisionModel m = uniform("int8-spatial", Format::kFp64,
                               "d int8 per tensor and g int8 per output channel, quantized before the transforms; "
                               "transforms, products and sums exact (integer arithmetic, as ncnn's int8 Winograd); "
                               "fp32 output; compared with the float64 convolution of the original data");
    m.input = quant(Format::kInt8, Granularity::kTensor);
    m.filter = quant(Format::kInt8, Granularity::kChannel);
    // Integer arithmetic is exact; float64 carries it out exactly enough (the transforms' rational
    // coefficients are what an integer kernel scales to integers).
    m.gemm_output = m.output = fmt_only(Format::kFp32);
    m.reference = ReferenceData::kOriginal;
    p.push_back(m);
  }
  {
    PrecisionModel m = storage("seed-fp16", Format::kFp16,
                               "the seed paper's Table 18: matrices in fp16, d and g in fp16, every intermediate in "
                               "fp32; compared with the float64 convolution of the original data");
    m.matrices = Format::kFp16;
    m.filter_transform = m.input_transform = fmt_only(Format::kFp32);
    m.reference = ReferenceData::kOriginal;
    p.push_back(m);
  }
  {
    PrecisionModel m = uniform("seed-int8", Format::kFp32,
                               "the seed paper's Table 20: A, B, G quantized to int8 (symmetric, per matrix); d "
                               "and g int8 per tensor; fp32 intermediates; int8 output; compared with the "
                               "float64 convolution of the original data");
    m.matrices = Format::kInt8;
    m.input = m.filter = m.output = quant(Format::kInt8, Granularity::kTensor);
    m.reference = ReferenceData::kOriginal;
    p.push_back(m);
  }
  for (const auto& m : p) m.validate();
  return p;
}

std::string_view to_string(Overflow o) { return o == Overflow::kIeee ? "ieee" : "saturate"; }

const std::vector<std::string>& stage_keys() {
  static const std::vector<std::string> k = {"input", "filter", "filter_transform", "input_transform", "gemm_output", "output"};
  return k;
}
const std::vector<std::string>& arith_keys() {
  static const std::vector<std::string> k = {"matrices", "transform_arith", "product", "accumulate", "output_arith"};
  return k;
}

// Templates so that one lookup serves the parser (mutable) and the writer (const).
template <class Model>
auto* stage_field(Model& m, const std::string& key) {
  using Ptr = decltype(&m.input);
  if (key == "input") return &m.input;
  if (key == "filter") return &m.filter;
  if (key == "filter_transform") return &m.filter_transform;
  if (key == "input_transform") return &m.input_transform;
  if (key == "gemm_output") return &m.gemm_output;
  if (key == "output") return &m.output;
  return Ptr{nullptr};
}
template <class Model>
auto* arith_field(Model& m, const std::string& key) {
  using Ptr = decltype(&m.matrices);
  if (key == "matrices") return &m.matrices;
  if (key == "transform_arith") return &m.transform_arith;
  if (key == "product") return &m.product;
  if (key == "accumulate") return &m.accumulate;
  if (key == "output_arith") return &m.output_arith;
  return Ptr{nullptr};
}

std::string json_string(const json& j, const std::string& key) {
  if (!j.is_string()) throw Error("precision model: '" + key + "' must be a string");
  return j.get<std::string>();
}

StageFormat stage_from_json(const json& j, const std::string& key) {
  StageFormat s;
  if (j.is_string()) {
    s.format = parse_format_name(j.get<std::string>());
    return s;
  }
  if (!j.is_object()) throw Error("precision model: '" + key + "' must be a format name or an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const std::string where = key + "." + k;
    if (k == "format") s.format = parse_format_name(json_string(it.value(), where));
    else if (k == "scheme") s.scheme = parse_quant_scheme(json_string(it.value(), where));
    else if (k == "granularity") s.granularity = parse_granularity(json_string(it.value(), where));
    else if (k == "overflow") {
      const std::string o = json_string(it.value(), where);
      if (o == "ieee") s.overflow = Overflow::kIeee;
      else if (o == "saturate") s.overflow = Overflow::kSaturate;
      else throw Error("precision model: '" + where + "' must be \"ieee\" or \"saturate\", not '" + o + "'");
    } else if (k == "scaled") {
      if (!it.value().is_boolean()) throw Error("precision model: '" + where + "' must be true or false");
      s.scaled = it.value().get<bool>();
    } else {
      throw Error("precision model: unknown key '" + where + "' (valid: format, scheme, granularity, overflow, scaled)");
    }
  }
  if (!j.contains("format")) throw Error("precision model: '" + key + "' needs a \"format\"");
  return s;
}

json stage_to_json(const StageFormat& s) {
  if (!s.quantized() && s.overflow == Overflow::kIeee) return std::string(format_name(s.format));
  json j = {{"format", format_name(s.format)}, {"overflow", to_string(s.overflow)}};
  if (s.quantized()) {
    j["scheme"] = to_string(s.scheme);
    j["granularity"] = to_string(s.granularity);
    if (!is_integer_format(s.format)) j["scaled"] = true;
  }
  return j;
}

std::string stage_text(const StageFormat& s) {
  std::string t(format_name(s.format));
  if (s.quantized()) t += fmt::format(" ({}, per {}{})", to_string(s.scheme), to_string(s.granularity), s.scaled ? ", scaled" : "");
  if (s.overflow == Overflow::kSaturate && !is_integer_format(s.format)) t += " saturating";
  return t;
}

void check_stage(const StageFormat& s, const char* name, std::initializer_list<Granularity> allowed) {
  if (!s.quantized()) return;
  if (s.scaled && is_integer_format(s.format))
    throw Error(fmt::format("precision model: {}: 'scaled' is for floating formats (integers are always quantized)", name));
  if (s.scheme == QuantScheme::kAffine && !is_integer_format(s.format))
    throw Error(fmt::format("precision model: {}: affine quantization needs an integer format", name));
  if (std::find(allowed.begin(), allowed.end(), s.granularity) == allowed.end())
    throw Error(fmt::format("precision model: {}: granularity '{}' is not defined for this stage", name,
                            to_string(s.granularity)));
}

void check_arith(Format f, const char* name) {
  if (is_integer_format(f)) throw Error(fmt::format("precision model: {} must be a floating format, not {}", name, format_name(f)));
}

}  // namespace

void PrecisionModel::validate() const {
  using G = Granularity;
  check_stage(input, "input", {G::kTensor, G::kChannel});
  check_stage(filter, "filter", {G::kTensor, G::kChannel});
  check_stage(filter_transform, "filter_transform", {G::kTensor, G::kChannel, G::kTap, G::kTile, G::kTapChannel});
  check_stage(input_transform, "input_transform", {G::kTensor, G::kChannel, G::kTap, G::kTile});
  check_stage(gemm_output, "gemm_output", {G::kTensor, G::kChannel});
  check_stage(output, "output", {G::kTensor, G::kChannel});
  check_arith(transform_arith, "transform_arith");
  check_arith(product, "product");
  check_arith(output_arith, "output_arith");
  if (matrices == Format::kInt32 || matrices == Format::kInt4)
    throw Error("precision model: matrices may be a floating format or int8");
  const bool int_u = is_integer_format(filter_transform.format), int_v = is_integer_format(input_transform.format);
  if (int_u != int_v)
    throw Error("precision model: filter_transform and input_transform must both be integer or both floating");
  if (accumulate == Format::kInt32) {
    if (!int_u) throw Error("precision model: int32 accumulation needs integer filter_transform and input_transform");
    if (filter_transform.granularity == G::kTile || input_transform.granularity == G::kTile ||
        input_transform.granularity == G::kChannel || input_transform.granularity == G::kTapChannel)
      throw Error("precision model: int32 accumulation needs scales that do not change along the input channel "
                  "(U: tensor/channel/tap/tap-channel, V: tensor/tap); use a floating accumulate format");
    if (filter_transform.scheme == QuantScheme::kAffine || input_transform.scheme == QuantScheme::kAffine)
      throw Error("precision model: int32 accumulation is modelled for symmetric quantization only");
  } else if (is_integer_format(accumulate)) {
    throw Error("precision model: accumulate must be a floating format or int32");
  }
  if (v_shift && (int_v || input_transform.scaled))
    throw Error(
        "precision model: v_shift is for a floating, unscaled input_transform (it shifts V into that "
        "format's range)");
  if (accumulate_chunk < 0) throw Error("precision model: accumulate_chunk must be 0 (no chunks) or a chunk length");
  if (accumulate_chunk > 0) {
    if (accumulate == Format::kInt32)
      throw Error("precision model: accumulate_chunk needs a floating accumulate format (int32 sums are exact)");
    check_arith(chunk_accumulate, "chunk_accumulate");
  } else if (chunk_accumulate != Format::kFp64) {
    // A chunk format without chunks would be silently ignored.
    throw Error("precision model: chunk_accumulate needs accumulate_chunk > 0");
  }
}

double PrecisionModel::operand_unit_roundoff() const {
  auto u = [](const StageFormat& s) {
    const FormatInfo& i = format_info(s.format);
    return i.is_integer ? 0.5 / i.max_finite : i.unit_roundoff;
  };
  return std::max(u(filter_transform), u(input_transform));
}

AccumulationWeights accumulation_weights(const PrecisionModel& m, double C) {
  if (m.accumulate_chunk <= 0) return {C * (C + 1) / 2 - 1, 0.0};
  AccumulationWeights w;
  const double L = m.accumulate_chunk;
  double done = 0.0;
  for (int64_t q = 0; done < C; ++q) {
    const double l = std::min(L, C - done);
    w.accumulate += l * (l + 1) / 2;
    done += l;
    if (q > 0) w.chunk += done;  // the first chunk sum is added to zero: exact
  }
  return w;
}

const std::vector<PrecisionModel>& precision_presets() {
  static const std::vector<PrecisionModel> p = make_presets();
  return p;
}

std::vector<std::string> precision_preset_names() {
  std::vector<std::string> names;
  for (const auto& m : precision_presets()) names.push_back(m.name);
  return names;
}

PrecisionModel precision_preset(std::string_view name) {
  for (const auto& m : precision_presets())
    if (m.name == name) return m;
  throw Error(fmt::format("unknown precision model '{}' (presets: {}; or a JSON file)", name,
                          fmt::join(precision_preset_names(), ", ")));
}

PrecisionModel precision_model_from_json(const json& j) {
  if (!j.is_object()) throw Error("precision model: expected a JSON object");
  PrecisionModel m;
  m.name = "custom";
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "name") m.name = json_string(it.value(), k);
    else if (k == "description") m.description = json_string(it.value(), k);
    else if (k == "reference") {
      const std::string r = json_string(it.value(), k);
      if (r == "stored") m.reference = ReferenceData::kStored;
      else if (r == "original") m.reference = ReferenceData::kOriginal;
      else throw Error("precision model: 'reference' must be \"stored\" or \"original\", not '" + r + "'");
    } else if (k == "accumulate_chunk") {
      if (!it.value().is_number_integer()) throw Error("precision model: 'accumulate_chunk' must be an integer");
      // get<int>() wrapped: 4294967301 (2^32 + 5) was read as chunks of 5.
      const bool fits =
          it.value().is_number_unsigned()
              ? it.value().get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int>::max())
              : it.value().get<int64_t>() >= std::numeric_limits<int>::min() &&
                    it.value().get<int64_t>() <= std::numeric_limits<int>::max();
      if (!fits)
        throw Error("precision model: 'accumulate_chunk' " + it.value().dump() +
                    " is out of range (at most " + std::to_string(std::numeric_limits<int>::max()) + ")");
      m.accumulate_chunk = it.value().get<int>();
    } else if (k == "v_shift") {
      if (!it.value().is_boolean()) throw Error("precision model: 'v_shift' must be true or false");
      m.v_shift = it.value().get<bool>();
    } else if (k == "chunk_accumulate") {
      m.chunk_accumulate = parse_format_name(json_string(it.value(), k));
    } else if (StageFormat* s = stage_field(m, k)) {
      *s = stage_from_json(it.value(), k);
    } else if (Format* f = arith_field(m, k)) {
      *f = parse_format_name(json_string(it.value(), k));
    } else {
      std::vector<std::string> valid = {
          "name", "description", "reference", "accumulate_chunk", "chunk_accumulate", "v_shift"};
      for (const auto& key : stage_keys()) valid.push_back(key);
      for (const auto& key : arith_keys()) valid.push_back(key);
      throw Error(fmt::format("precision model: unknown key '{}' (valid: {})", k, fmt::join(valid, ", ")));
    }
  }
  m.validate();
  return m;
}

json to_json(const PrecisionModel& m) {
  json j;
  j["name"] = m.name;
  j["description"] = m.description;
  for (const auto& k : arith_keys()) j[k] = format_name(*arith_field(m, k));
  if (m.accumulate_chunk > 0) {  // left out otherwise: the models without chunks keep their JSON
    j["accumulate_chunk"] = m.accumulate_chunk;
    j["chunk_accumulate"] = format_name(m.chunk_accumulate);
  }
  for (const auto& k : stage_keys()) j[k] = stage_to_json(*stage_field(m, k));
  j["reference"] = m.reference == ReferenceData::kStored ? "stored" : "original";
  if (m.v_shift) j["v_shift"] = true;  // left out otherwise: the other models keep their JSON
  return j;
}

PrecisionModel load_precision_model(const std::string& name_or_path) {
  for (const auto& m : precision_presets())
    if (m.name == name_or_path) return m;
  const bool looks_like_file = name_or_path.find(".json") != std::string::npos ||
                               name_or_path.find('/') != std::string::npos;
  if (!looks_like_file || !std::filesystem::exists(name_or_path)) {
    if (looks_like_file) throw Error("precision model file '" + name_or_path + "' does not exist");
    precision_preset(name_or_path);  // throws the list of presets
  }
  const std::string text = read_text_file(name_or_path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error("'" + name_or_path + "' is not valid JSON: " + std::string(e.what()));
  }
  try {
    return precision_model_from_json(j);
  } catch (const Error& e) {
    throw Error("'" + name_or_path + "': " + e.what());
  }
}

std::string describe(const PrecisionModel& m) {
  std::string s = fmt::format("precision model {}: {}\n", m.name, m.description);
  s += fmt::format("  matrices {}; input {}; filter {}\n", format_name(m.matrices), stage_text(m.input), stage_text(m.filter));
  s += fmt::format("  transforms in {}; U {}; V {}\n", format_name(m.transform_arith), stage_text(m.filter_transform),
                   stage_text(m.input_transform));
  const std::string acc =
      m.accumulate_chunk > 0 ? fmt::format("{} over chunks of {} channels, chunk sums added in {}", format_name(m.accumulate),
                                           m.accumulate_chunk, format_name(m.chunk_accumulate))
                             : std::string(format_name(m.accumulate));
  s += fmt::format("  products {}; accumulation {}; sums stored {}\n", format_name(m.product), acc,
                   stage_text(m.gemm_output));
  s += fmt::format("  output transform in {}; output {}; reference: {} data\n", format_name(m.output_arith),
                   stage_text(m.output), m.reference == ReferenceData::kStored ? "stored" : "original");
  if (m.v_shift) s += "  V shifted by a power of two into its format's range, the sums shifted back\n";
  return s;
}

}  // namespace nova
