// Text and JSON forms of a DiscoveryResult. The JSON is the transform's own schema (nova::to_json)
// with "discovery" and "analysis" added, so `nova analyze` and every transform consumer read it.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "nova/analysis/analysis.hpp"
#include "nova/discover/discover.hpp"
#include "nova/exact/io.hpp"

namespace nova {

namespace {

nlohmann::json num(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

}  // namespace

nlohmann::json to_json(const DiscoveryResult& r, bool with_analysis) {
  nlohmann::json j = to_json(r.transform, r.verification);  // verified once, by discover
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages) {
    nlohmann::json js = {{"stage", s.stage},
                         {"points", to_strings(s.points)},
                         {"value", num(s.value)},
                         {"evaluations", s.evaluations},
                         {"seconds", s.seconds}};
    if (!s.continuous.empty()) {
      js["continuous"] = s.continuous;
      js["continuous_value"] = num(s.continuous_value);
      js["snap_broke"] = s.snap_broke;
    }
    if (s.stopped_by_budget) js["stopped_by_budget"] = true;
    stages.push_back(js);
  }
  j["discovery"] = {
      {"objective", r.objective},
      {"value", num(r.value)},
      {"value_scaling", r.value_scaling.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.value_scaling)},
      {"kappa2_v", num(r.kappa_v)},
      {"dtype", std::string(point_dtype_name(r.dtype))},
      {"lattice", r.lattice},
      {"seed", r.seed},
      {"threads", r.threads},
      {"winning_stage", r.winning_stage},
      {"stages", stages},
      {"evaluations", r.evaluations},
      {"seconds", r.seconds},
      {"verified", r.verification.ok}};
  if (with_analysis) j["analysis"] = to_json(analyze(r.transform));
  return j;
}

std::string to_text(const DiscoveryResult& r) {
  std::string out = fmt::format("{} points {{{}}}\n", r.tile.to_string(), to_string(r.points));
  // norm-product and the like were minimized on the wincnn-scaled transform: with --scaling lagrange
  // the value had stood unlabelled beside a transform whose norm product differs (26.5 vs 38.5, F(4,3)).
  const std::string on = r.value_scaling == "wincnn" && r.transform.scaling().convention != "wincnn"
                             ? fmt::format(" (of the wincnn-scaled transform, not the {} output)",
                                           r.transform.scaling().convention)
                             : "";
  out +=
      fmt::format("  objective {} = {:.6g}{}; kappa_2(V) = {:.6g}; exact verification: {}\n", r.objective,
                  r.value, on, r.kappa_v, r.verification.ok ? "passed" : "FAILED " + r.verification.reason);
  out += fmt::format("  lattice {}; dtype {}; seed {}; {} thread(s); {} evaluations in {:.3f} s; won by {}\n",
                     r.lattice, point_dtype_name(r.dtype), r.seed, r.threads, r.evaluations, r.seconds,
                     r.winning_stage);
  for (const auto& s : r.stages) {
    out += fmt::format("  stage {:<22} {:<12.6g} {{{}}}{}{}\n", s.stage, s.value, to_string(s.points),
                       s.snap_broke ? " (snap repeated a point: neighbourhood search)" : "",
                       s.stopped_by_budget ? " (stopped by budget)" : "");
  }
  return out;
}

}  // namespace nova
