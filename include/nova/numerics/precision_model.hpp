// A precision model: the number formats of every stage of a 2D Winograd convolution
//   Y = A^T [ sum_c (G g_c G^T) .* (B^T d_c B) ] A
// as data, so that the error harness can emulate it exactly and the engine can implement it fast.
//
// Stages, in pipeline order:
//   matrices          A^T, G, B^T themselves (float: rounded; integer: symmetric per-matrix quantization)
//   input, filter     d and g as stored before their transforms
//   transform_arith   every multiply and add inside U = G g G^T and V = B^T d B
//   filter_transform  U as stored for the element-wise products
//   input_transform   V as stored
//   product           each product U[a] * V[a] (float operands; integer codes multiply exactly)
//   accumulate        the running sum over input channels (int32 for integer operands: exact); with
//                     accumulate_chunk = L > 0, the sum of each chunk of L consecutive channels,
//                     started from zero, the chunk sums added in channel order in chunk_accumulate
//                     (an fp16 FMA GEMM that widens its partial sums into FP32 accumulators)
//   gemm_output       M = the accumulated sums, as stored before the output transform
//   output_arith      every multiply and add inside Y = A^T M A
//   output            Y as stored
// An "arith" format rounds each operand to it first and then each operation's result (float64
// arithmetic followed by one rounding is the correctly rounded operation for every format up to
// fp32). A stage's "storage" rounds or quantizes the stage's result once.
//
// Quantization granularity per stage (what one scale covers):
//   input:  tensor | channel (input channel c)     filter: tensor | channel (output channel k)
//   U:      tensor | channel (output channel k) | tap (Winograd position) | tile (one (k, c) filter)
//           | tap-channel (one (tap, k) pair: the engine's int8 filters)
//   V:      tensor | channel (input channel c)  | tap | tile (one (tile, c) patch: LANCE)
//   gemm_output, output: tensor | channel (output channel k)
// int32 accumulation needs scales that do not change along c (U: tensor/channel/tap/tap-channel;
// V: tensor/tap),
// since an integer GEMM can only apply them after the sum; otherwise accumulate in a float format.
//
// The reference the harness compares with is the float64 direct convolution of the data either as
// stored ("stored": d and g after the input/filter stages; the error of the algorithm itself, the
// same data every algorithm sees) or as given ("original": includes the rounding of d and g, as the
// seed paper's tables do).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "nova/numerics/format.hpp"
#include "nova/numerics/quantization.hpp"

namespace nova {

struct StageFormat {
  Format format = Format::kFp64;
  Overflow overflow = Overflow::kIeee;
  // Integer formats are always quantized; floating formats only when `scaled` (FP8 recipes: a
  // symmetric scale maps the group's amax to the format's largest finite value).
  bool scaled = false;
  QuantScheme scheme = QuantScheme::kSymmetric;
  Granularity granularity = Granularity::kTensor;

  bool quantized() const { return scaled || is_integer_format(format); }
  friend bool operator==(const StageFormat&, const StageFormat&) = default;
};

enum class ReferenceData { kStored, kOriginal };

struct PrecisionModel {
  std::string name;
  std::string description;
  Format matrices = Format::kFp64;
  StageFormat input, filter;
  Format transform_arith = Format::kFp64;
  StageFormat filter_transform, input_transform;
  Format product = Format::kFp64;
  Format accumulate = Format::kFp64;  // kInt32 for exact integer accumulation
  // 0: one running sum over all input channels in `accumulate`. L > 0: channels 0..L-1, L..2L-1, ...
  // each summed in `accumulate` from zero, and the chunk sums added in order into a running sum
  // rounded to `chunk_accumulate` (product fp64 + accumulate fp16 is an fp16 FMA: one rounding).
  int accumulate_chunk = 0;
  Format chunk_accumulate = Format::kFp64;
  StageFormat gemm_output;
  Format output_arith = Format::kFp64;
  StageFormat output;
  ReferenceData reference = ReferenceData::kStored;
  // V shifted by a power of two into the input_transform format's range before it is stored, and the
  // GEMM's sums shifted back, exactly, by the rule of nova's fp16 engines (nova/numerics/fp16_v_shift.hpp:
  // down where gain * max|d| passes the format's largest value, 4096 with chunked 16-bit float sums; up
  // where it lies below 1). For floating, unscaled V. JSON: "v_shift": true (left out when false).
  bool v_shift = false;

  // Throws nova::Error naming the first inconsistent field (see the rules at the top).
  void validate() const;
  // The unit roundoff of the Winograd-domain operands U and V (the larger of the two): the u of
  // the first-order prediction. Integer formats report 0.5 / qmax.
  double operand_unit_roundoff() const;
};

// The roundings of the GEMM's sums over C channels, each weighted by the number of products the
// rounded sum holds (a sum of j products of variance v each has variance j v): the factor of the
// format's relative rounding variance in the first-order accumulation error. `accumulate`: the
// running sum (C(C+1)/2 - 1) or, with chunks, every step inside them (the first one included: it
// rounds the exact product); `chunk`: the sums of the chunk sums (zero without chunks).
struct AccumulationWeights {
  double accumulate = 0.0, chunk = 0.0;
};
AccumulationWeights accumulation_weights(const PrecisionModel& m, double channels);

// The built-in presets, documented in docs/precision-models.md.
const std::vector<PrecisionModel>& precision_presets();
std::vector<std::string> precision_preset_names();
// A preset by name; throws nova::Error listing the presets for an unknown name.
PrecisionModel precision_preset(std::string_view name);

// JSON form: {"name": ..., "description": ..., "matrices": "fp16", "input": "fp16" or
// {"format": "int8", "scheme": "symmetric", "granularity": "tap", "overflow": "saturate",
// "scaled": true}, ..., "reference": "stored"}. Keys left out are fp64 (exact); unknown keys are
// errors (a typo must not silently mean fp64). Throws nova::Error naming the key.
PrecisionModel precision_model_from_json(const nlohmann::json& j);
nlohmann::json to_json(const PrecisionModel& m);
// A preset name, or the path of a JSON file holding a model.
PrecisionModel load_precision_model(const std::string& name_or_path);
// One line per stage, for text output.
std::string describe(const PrecisionModel& m);

}  // namespace nova
