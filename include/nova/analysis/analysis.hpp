// The analysis of one transform: conditioning of V, A^T, B^T, G in 1D and 2D, norms, entry sizes,
// arithmetic cost and representability in low-precision formats. Library call first; `nova analyze`
// only formats it.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nova/analysis/condition.hpp"
#include "nova/analysis/cost.hpp"
#include "nova/analysis/representability.hpp"
#include "nova/exact/transform.hpp"

namespace nova {

struct MatrixAnalysis {
  std::string name;  // "V", "AT", "G", "BT"
  Conditioning one_d;
  std::optional<Conditioning> two_d;  // of M (x) M, computed on the Kronecker matrix itself
  // kappa_2(M (x) M) / kappa_2(M)^2, which is 1 in exact arithmetic: a check, not an assumption.
  double kron_ratio = 0;
};

struct AnalysisOptions {
  bool two_d = true;
  std::vector<Format> formats = analysis_formats();
};

struct TransformAnalysis {
  TileSize tile;
  PointList points;         // as given by the transform (may be empty for imported matrices)
  std::string scaling;      // the scaling convention
  std::optional<MatrixAnalysis> V;  // absent when the points are unknown
  MatrixAnalysis AT, G, BT;
  double norm_product = 0;     // ||A^T||_2 ||B^T||_2 ||G||_2
  double norm_product_2d = 0;  // the same for the Kronecker matrices (= norm_product^2 in exact arithmetic)
  double max_abs_entry = 0;    // over A^T, G, B^T
  TransformCost cost;
  std::vector<Representability> representability;
  bool verified = false;
  std::string verify_reason;
};

TransformAnalysis analyze(const Transform& t, const AnalysisOptions& options = {});

nlohmann::json to_json(const TransformAnalysis& a);
std::string to_text(const TransformAnalysis& a);

}  // namespace nova
