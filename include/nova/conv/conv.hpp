// The FP32 convolution engine: a plan/execute split in the style of oneDNN (descriptor -> primitive
// -> execute) and XNNPACK (create -> setup -> run).
//
//   nova::conv::PlanOptions opt;                 // layout, bias+ReLU, threads, transform, algorithm
//   auto plan = nova::conv::Plan::create(shape, weights, bias, opt);   // transforms the filters once
//   plan.execute(input, output);                 // any number of times
//
// Weights are always KCRS (K x C/groups x R x S), bias is K values or null. Input and output are NCHW
// or NHWC (both the same), dense. A plan never refuses a valid convolution: shapes Winograd cannot do
// (stride, dilation, groups, non-square or unsupported kernels) run through a direct path, and the plan
// says which algorithm it chose and why (Plan::reason()).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "nova/conv_shape.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"

namespace nova::conv {

enum class Layout { kNCHW, kNHWC };
enum class Algorithm { kWinograd, kDirect };
// Instruction-set paths of the micro-kernels. kPortable runs everywhere; the others need the CPU.
enum class Isa { kPortable, kAvx2, kAvx512 };
enum class AlgorithmChoice { kAuto, kWinograd, kDirect };

std::string to_string(Layout layout);
std::string to_string(Algorithm algorithm);
std::string to_string(Isa isa);
Layout parse_layout(const std::string& text);  // "nchw" | "nhwc"; throws nova::Error
Isa parse_isa(const std::string& text);        // "portable" | "avx2" | "avx512"; throws nova::Error

// The best path this CPU can run, and whether it can run a given one.
Isa best_isa();
bool isa_supported(Isa isa);

struct PlanOptions {
  Layout layout = Layout::kNCHW;
  bool relu = false;  // fused after the bias
  int threads = 0;    // 0: every hardware thread; otherwise 1..1024
  AlgorithmChoice algorithm = AlgorithmChoice::kAuto;
  // Winograd transform: an explicit verified transform wins over a tile; with neither, the plan picks
  // a tile and uses its default transform (nova::conv::default_transform).
  std::optional<Transform> transform;
  std::optional<TileSize> tile;
  std::optional<Isa> isa;        // force a kernel path; throws if the CPU cannot run it
  bool allow_generated = true;   // false: always use the generic (run-time matrix) tile transforms
  // Winograd execution order, for tuning and tests: 0 chooses; > 0 fused blocks of that many tiles
  // (input transform, GEMMs and output transform of a block while it is in cache); < 0 phased (each
  // stage over all tiles). Results are identical whatever the order.
  int tile_block = 0;
};

class Plan {
 public:
  // Validates everything (shape, null pointers, NaN/Inf in weights or bias, threads, the transform:
  // exact verification, tile matches the kernel) and throws nova::Error with a one-line reason.
  static Plan create(const ConvShape& shape, const float* weights, const float* bias,
                     const PlanOptions& options = {});

  // input: shape.input_size() floats, output: shape.output_size() floats, in the plan's layout.
  // Buffers must be 4-byte aligned and must not overlap. Throws nova::Error on null or misaligned
  // pointers. One execute at a time per plan (it owns its scratch memory and thread pool).
  void execute(const float* input, float* output) const;

  const ConvShape& shape() const;
  Algorithm algorithm() const;
  std::optional<TileSize> tile() const;  // the Winograd tile, when algorithm() is kWinograd
  std::string reason() const;            // why this algorithm (and tile)
  Isa isa() const;
  int threads() const;
  bool generated_transform() const;      // build-time generated tile code (vs the generic path)
  std::string transform_name() const;    // points of the Winograd transform, or empty
  std::string describe() const;          // one line: algorithm, tile, isa, threads, reason

  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  ~Plan();

  struct Impl;

 private:
  explicit Plan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nova::conv
