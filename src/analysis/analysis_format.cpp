// Text and JSON forms of a TransformAnalysis.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "nova/analysis/analysis.hpp"

namespace nova {

namespace {

// JSON has no infinity; an infinite condition number is written as the string "inf".
nlohmann::json num(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

nlohmann::json to_json(const Conditioning& c) {
  return {{"rows", c.rows},         {"cols", c.cols},           {"sigma_max", num(c.sigma.front())},
          {"sigma_min", num(c.sigma.back())},                   {"norm1", num(c.norm1)},
          {"norm2", num(c.norm2)},  {"norm_inf", num(c.norm_inf)}, {"norm_fro", num(c.norm_fro)},
          {"kappa1", num(c.kappa1)}, {"kappa2", num(c.kappa2)},   {"kappa_inf", num(c.kappa_inf)},
          {"kappa_fro", num(c.kappa_fro)}, {"max_abs", num(c.max_abs)}};
}

nlohmann::json to_json(const MatrixAnalysis& m) {
  nlohmann::json j = {{"1d", to_json(m.one_d)}};
  if (m.two_d) {
    j["2d"] = to_json(*m.two_d);
    j["kron_ratio"] = num(m.kron_ratio);
  }
  return j;
}

nlohmann::json to_json(const MatrixCost& c) {
  return {{"rows", c.rows},
          {"cols", c.cols},
          {"nonzeros", c.nonzeros},
          {"unit_entries", c.unit},
          {"power_of_two_entries", c.power_of_two},
          {"other_entries", c.other},
          {"multiplications", c.multiplications},
          {"additions", c.additions}};
}

nlohmann::json to_json(const EntryStats& s) {
  return {{"total", s.total}, {"exact", s.exact}, {"max_rel_error", num(s.max_rel_error)}};
}

std::string g4(double x) { return std::isfinite(x) ? fmt::format("{:.4g}", x) : "inf"; }

}  // namespace

nlohmann::json to_json(const TransformAnalysis& a) {
  nlohmann::json j;
  j["tile"] = a.tile.to_string();
  j["m"] = a.tile.m;
  j["r"] = a.tile.r;
  j["n"] = a.tile.n();
  j["points"] = to_strings(a.points);
  j["scaling"] = a.scaling;
  j["verified"] = a.verified;
  if (!a.verified) j["verify_reason"] = a.verify_reason;
  nlohmann::json mats;
  if (a.V) mats["V"] = to_json(*a.V);
  mats["AT"] = to_json(a.AT);
  mats["G"] = to_json(a.G);
  mats["BT"] = to_json(a.BT);
  j["matrices"] = mats;
  j["norm_product"] = num(a.norm_product);
  if (a.AT.two_d) j["norm_product_2d"] = num(a.norm_product_2d);
  j["max_abs_entry"] = num(a.max_abs_entry);
  j["cost"] = {{"AT", to_json(a.cost.AT)},
               {"G", to_json(a.cost.G)},
               {"BT", to_json(a.cost.BT)},
               {"tile_2d",
                {{"input", {{"multiplications", a.cost.input_mults_2d}, {"additions", a.cost.input_adds_2d}}},
                 {"filter", {{"multiplications", a.cost.filter_mults_2d}, {"additions", a.cost.filter_adds_2d}}},
                 {"output", {{"multiplications", a.cost.output_mults_2d}, {"additions", a.cost.output_adds_2d}}}}}};
  nlohmann::json rep = nlohmann::json::object();
  for (const auto& r : a.representability) {
    rep[std::string(format_name(r.format))] = {{"points", to_json(r.points)},
                                               {"AT", to_json(r.AT)},
                                               {"G", to_json(r.G)},
                                               {"BT", to_json(r.BT)},
                                               {"all_exact", r.all_exact()}};
  }
  j["representability"] = rep;
  return j;
}

std::string to_text(const TransformAnalysis& a) {
  std::string out;
  out += fmt::format("{} points {{{}}} scaling {}: {}\n", a.tile.to_string(), to_string(a.points), a.scaling,
                     a.verified ? "verified exactly" : "FAILS verification: " + a.verify_reason);
  out += "\nconditioning       kappa1      kappa2      kappa_inf   kappa_F     ||M||_2     max|entry|\n";
  auto row = [&](const std::string& label, const Conditioning& c) {
    out += fmt::format("  {:<15}  {:<10}  {:<10}  {:<10}  {:<10}  {:<10}  {:<10}\n", label, g4(c.kappa1),
                       g4(c.kappa2), g4(c.kappa_inf), g4(c.kappa_fro), g4(c.norm2), g4(c.max_abs));
  };
  std::vector<const MatrixAnalysis*> mats;
  if (a.V) mats.push_back(&*a.V);
  mats.insert(mats.end(), {&a.AT, &a.G, &a.BT});
  for (const auto* m : mats) row(m->name + " (1D)", m->one_d);
  for (const auto* m : mats) {
    if (m->two_d) row(m->name + "(x)" + m->name + " (2D)", *m->two_d);
  }
  if (a.AT.two_d) {
    out += "  kappa2(M(x)M) / kappa2(M)^2:";
    for (const auto* m : mats) out += fmt::format(" {} {:.6f}", m->name, m->kron_ratio);
    out += "\n";
  }
  out += fmt::format("\nnorm product ||A^T||_2 ||B^T||_2 ||G||_2 = {}", g4(a.norm_product));
  if (a.AT.two_d) out += fmt::format(" (2D: {})", g4(a.norm_product_2d));
  out += fmt::format("; largest |entry| = {}\n", g4(a.max_abs_entry));
  out += "\ncost (one matrix-vector product)   nonzeros  +-1  2^k  other  mults  adds\n";
  auto crow = [&](const char* label, const MatrixCost& c) {
    out += fmt::format("  {:<33}{:>8}{:>5}{:>5}{:>7}{:>7}{:>6}\n", label, c.nonzeros, c.unit, c.power_of_two,
                       c.other, c.multiplications, c.additions);
  };
  crow("A^T", a.cost.AT);
  crow("G", a.cost.G);
  crow("B^T", a.cost.BT);
  out += fmt::format("  2D tile: input {} mults {} adds, filter {} mults {} adds, output {} mults {} adds\n",
                     a.cost.input_mults_2d, a.cost.input_adds_2d, a.cost.filter_mults_2d, a.cost.filter_adds_2d,
                     a.cost.output_mults_2d, a.cost.output_adds_2d);
  if (!a.representability.empty()) {
    out += "\nrepresentability (exact/total, worst relative rounding error)\n";
    out += "  format     points              A^T                 G                   B^T\n";
    auto cell = [](const EntryStats& s) {
      return fmt::format("{}/{}{}", s.exact, s.total, s.exact == s.total ? "" : " (" + g4(s.max_rel_error) + ")");
    };
    for (const auto& r : a.representability) {
      out += fmt::format("  {:<10} {:<19} {:<19} {:<19} {:<19}\n", format_name(r.format), cell(r.points),
                         cell(r.AT), cell(r.G), cell(r.BT));
    }
  }
  return out;
}

}  // namespace nova
