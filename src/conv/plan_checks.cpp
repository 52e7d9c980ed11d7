// Checks of a convolution's parameters shared by the CPU engine and the CUDA path.
#include "plan_checks.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "nova/error.hpp"

namespace nova::conv {

void check_finite(const float* data, int64_t count, const char* what, const ConvShape& s) {
  for (int64_t i = 0; i < count; ++i) {
    if (std::isfinite(data[i])) continue;
    const bool weights = std::string(what) == "weights";  // a plural, with (k, c, r, s) to name the element
    std::string where;
    if (weights) {
      const int64_t cg = s.C / s.groups;
      const int64_t k = i / (cg * s.R * s.S), c = i / (s.R * s.S) % cg, u = i / s.S % s.R, v = i % s.S;
      where = " (k=" + std::to_string(k) + ", c=" + std::to_string(c) + ", r=" + std::to_string(u) +
              ", s=" + std::to_string(v) + ")";
    }
    throw Error(std::string(what) + (weights ? " contain " : " contains ") +
                (std::isnan(data[i]) ? "NaN" : "Inf") + " at index " + std::to_string(i) + where);
  }
}

// The engines compute with the transform's entries rounded to FP32: one beyond its range became inf (the
// outputs NaN, and FP32 plans count none), one below it 0 (another transform, silently).
void check_fp32_range(const Transform& t) {
  const TransformF64 f = t.to_f64();
  for (const auto& [name, values] : {std::pair{"AT", &f.AT}, {"G", &f.G}, {"BT", &f.BT}})
    for (double v : *values) {
      const float rounded = static_cast<float>(v);
      if (std::isfinite(rounded) && (rounded != 0.0f || v == 0.0)) continue;
      char text[32];
      std::snprintf(text, sizeof text, "%.6g", v);
      throw Error(
          "the transform's " + std::string(name) + " has an entry (" + text +
          ") beyond FP32's range, in which the engine computes; choose points that keep every entry " +
          "within it");
    }
}

}  // namespace nova::conv
