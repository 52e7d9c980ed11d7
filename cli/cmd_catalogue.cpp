// nova catalogue: the shipped catalogue of best transforms (list, show, export), error-driven search
// (search), regeneration (generate), the error tables (report) and the proxy's rank correlation
// (correlation).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/analysis/vandermonde.hpp"
#include "nova/catalogue/catalogue.hpp"
#include "nova/catalogue/error_objectives.hpp"
#include "nova/catalogue/error_tables.hpp"
#include "nova/catalogue/generate.hpp"
#include "nova/catalogue/rank_correlation.hpp"
#include "nova/conv/default_transforms.hpp"
#include "nova/discover/discover.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"

namespace nova::cli {
namespace {

using json = nlohmann::json;

struct CatalogueOptions {
  std::string catalogue;  // path; empty: default
  std::string format = "text";
  std::string tile, preset, output;
  // search
  std::string objective;
  std::string dtype = "any";
  uint64_t seed = 0;
  int max_den = 10;
  int refine_window = 1;
  int64_t train_tiles = 256, train_channels = 16;
  // search: the first of --train-tiles, --train-channels, --refine-window given, or "": only a
  // measured-error objective measures (the stage proxy and the kappa objectives ignored them).
  std::string measured_option_given;
  // generate
  std::string tiles, presets;
  bool tiles_given = false, presets_given = false;  // an empty list must not mean the default one
  // correlation
  int count = 40;
  double spread = 2.5;
  std::string around;
};

std::vector<std::string> split_nonempty(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = std::min(s.find(sep, start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Training sizes below 1 were accepted wherever the objective did not measure, and named no option where
// it did.
void check_training_size(const CatalogueOptions& o) {
  if (o.train_tiles < 1 || o.train_channels < 1)
    throw Error(fmt::format("--train-tiles and --train-channels must be positive, got {} and {}",
                            o.train_tiles, o.train_channels));
}

// --tiles or --presets as given: refused when it names nothing ("", ";"), which would mean the default set,
// or an item twice.
std::vector<std::string> given_list(const std::string& text, char sep, const char* option) {
  std::vector<std::string> items = split_nonempty(text, sep);
  if (items.empty())
    throw Error(fmt::format("{} '{}' names nothing (leave it out for the default set)", option, text));
  if (const std::string* twice = first_repeated(items))
    throw Error(fmt::format("{} lists '{}' twice", option, *twice));
  return items;
}

void run_list(const CatalogueOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  const Catalogue c = load_catalogue(o.catalogue);
  if (format == OutputFormat::kJson) {
    json a = json::array();
    for (const auto& e : c.entries) {
      json j = {{"tile", e.tile.to_string()}, {"preset", e.preset}, {"points", to_strings(e.transform.points())},
                {"kappa_v", e.kappa_v}, {"train_error", e.train_error}};
      for (const auto& h : e.held_out) j["held_out"][h.data] = std::isfinite(h.rel_l2) ? json(h.rel_l2) : json(nullptr);
      a.push_back(j);
    }
    emit(o.output, json_text(a, 2) + "\n");
    return;
  }
  std::string t = fmt::format("{:<7} {:<13} {:>9} {:>10} {:>10}  points\n", "tile", "preset", "kappa_V", "train",
                              c.held_out.empty() ? "held-out" : c.held_out.front().name);
  for (const auto& e : c.entries) {
    const auto* h = c.held_out.empty() ? nullptr : e.error(c.held_out.front().name);
    t += fmt::format("{:<7} {:<13} {:>9.4g} {:>10} {:>10}  {{{}}}\n", e.tile.to_string(), e.preset, e.kappa_v,
                     format_error_value(e.train_error), h ? format_error_value(h->rel_l2) : "-",
                     to_string(e.transform.points()));
  }
  emit(o.output, t);
}

const CatalogueEntry& entry_of(const Catalogue& c, const CatalogueOptions& o) {
  if (o.tile.empty() || o.preset.empty()) throw Error("give --tile and --precision");
  const CatalogueEntry& e = c.best(parse_tile(o.tile), o.preset);
  // A catalogue edited by hand or by another tool: its JSON says "verified" but that is not proof.
  require_verified(e.transform, fmt::format("catalogue entry {} {} in '{}'", e.tile.to_string(), e.preset,
                                            o.catalogue.empty() ? default_catalogue_path() : o.catalogue));
  return e;
}

void run_show(const CatalogueOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  const Catalogue c = load_catalogue(o.catalogue);
  const auto& e = entry_of(c, o);
  if (format == OutputFormat::kJson) {
    emit(o.output, json_text(to_json(e), 2) + "\n");
    return;
  }
  std::string t = fmt::format("{} {}: points {{{}}}, kappa_2(V) = {:.4g}\n", e.tile.to_string(), e.preset,
                              to_string(e.transform.points()), e.kappa_v);
  t += fmt::format("training error {} (proxy {})\n", format_error_value(e.train_error),
                   format_error_value(e.proxy));
  for (const auto& h : e.held_out)
    t += fmt::format("held-out {:<9} rel L2 {}  max abs {:.3e}  non-finite {}\n", h.data,
                     format_error_value(h.rel_l2), h.max_abs, h.nonfinite);
  t += "found: " + json_text(e.found, -1) + "\n\n" + to_text(e.transform);
  emit(o.output, t);
}

void run_export(const CatalogueOptions& o) {
  const OutputFormat format = parse_format(o.format, true);
  const Catalogue c = load_catalogue(o.catalogue);
  const auto& e = entry_of(c, o);
  if (format == OutputFormat::kCpp) emit(o.output, to_cpp_header(e.transform));
  else if (format == OutputFormat::kJson)
    emit(o.output, json_text(to_json(e.transform), 2) + "\n");
  else emit(o.output, to_text(e.transform));
}

void run_search(const CatalogueOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  if (o.tile.empty()) throw Error("give --tile");
  if (o.preset.empty() && o.objective.empty()) throw Error("give --precision or --objective");
  // --objective names its own model (stage-proxy:<preset>); a --precision beside it would be ignored.
  if (!o.preset.empty() && !o.objective.empty())
    throw Error("give --precision or --objective, not both (--precision " + o.preset +
                " is --objective stage-proxy:" + o.preset + ")");
  // The lattice's own check names `nova discover`'s --max-denominator.
  if (o.max_den < 1) throw Error(fmt::format("--max-den must be at least 1, got {}", o.max_den));
  // As nova discover's error objectives check them: a negative window had run as 0.
  if (o.refine_window < 0)
    throw Error(fmt::format("--refine-window must be 0 or more, got {}", o.refine_window));
  check_training_size(o);
  ErrorObjectiveOptions eo;
  eo.training.tiles = o.train_tiles;
  eo.training.channels = o.train_channels;
  const std::string spec = o.objective.empty() ? "stage-proxy:" + o.preset : o.objective;
  if (!o.measured_option_given.empty() && spec.rfind("measured-error:", 0) != 0)
    throw Error(o.measured_option_given + " applies to measured-error objectives only, not to " + spec);
  const auto objective = make_error_objective(spec, eo);
  DiscoverOptions d;
  d.tile = parse_tile(o.tile);
  d.lattice.max_denominator = o.max_den;
  d.lattice.dtype = parse_point_dtype(o.dtype);
  d.seed = o.seed;
  d.threads = 1;
  // Every evaluation runs its own scaling search: a lighter search than `nova discover`'s default.
  d.es.population = 20;
  d.es.generations = 30;
  d.es.restarts = 2;
  d.symmetric_enumeration_limit = 3000;
  const auto r = discover(d, *objective);
  // The scaling the objective chose for the winner, made exact.
  json j = to_json(r, false);
  std::string text = to_text(r);
  if (const auto* proxy = dynamic_cast<const StageProxyObjective*>(objective.get())) {
    const auto c = proxy->scaled(d.tile, finite_doubles(r.points));
    const Transform t = Transform::construct(d.tile, r.points, exact_scaling(r.points, c.scaling));
    j = to_json(t);
    j["discovery"] = to_json(r, false)["discovery"];
    j["scaling_choice"] = to_json(c.scaling);
    j["proxy"] = c.proxy;
    text += fmt::format("\nbest power-of-two scaling under {}: proxy {}\n{}", spec,
                        format_error_value(c.proxy), to_text(t));
  } else if (const auto* measured = dynamic_cast<const MeasuredErrorObjective*>(objective.get())) {
    const auto fin = finite_doubles(r.points);
    const auto res = measured->refine(d.tile, fin, o.refine_window);
    const Transform t = Transform::construct(d.tile, r.points, exact_scaling(r.points, res.choice));
    j = to_json(t);
    j["discovery"] = to_json(r, false)["discovery"];
    j["scaling_choice"] = to_json(res.choice);
    j["train_error"] = res.value;
    text += fmt::format("\nmeasured scaling polish: training error {}\n{}", format_error_value(res.value),
                        to_text(t));
  }
  emit(o.output, format == OutputFormat::kJson ? json_text(j, 2) + "\n" : text);
}

void run_generate(const CatalogueOptions& o) {
  check_training_size(o);
  GenerateOptions g;
  g.seed = o.seed;
  g.objective.training.tiles = o.train_tiles;
  g.objective.training.channels = o.train_channels;
  if (o.tiles_given)
    for (const auto& t : given_list(o.tiles, ';', "--tiles")) g.tiles.push_back(parse_tile(t));
  if (o.presets_given) g.presets = given_list(o.presets, ',', "--presets");
  g.progress = [](const std::string& s) { std::cerr << s << '\n'; };
  if (o.output.empty()) throw Error("give --output FILE (for example data/catalogue.json)");
  const Catalogue c = generate_catalogue(g);
  write_text_file(o.output, json_text(to_json(c), 1) + "\n");
  std::cerr << fmt::format("wrote {} entries to {} in {} s\n", c.entries.size(), o.output, c.generator["seconds"].dump());
}

void run_catalogue_report(const CatalogueOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  ErrorTablesOptions eo;
  std::optional<Catalogue> c;
  if (!o.catalogue.empty()) {
    c = load_catalogue(o.catalogue);
    eo.catalogue = &*c;
  }
  if (o.presets_given) eo.presets = given_list(o.presets, ',', "--presets");
  const ErrorTables t = error_tables(eo);
  emit(o.output, format == OutputFormat::kJson ? json_text(t.json, 2) + "\n" : t.markdown);
}

// src/conv/default_points_table.hpp: the catalogue's fp32 entry (points, exact scaling relative to
// lagrange) for each tile the engine has a default for.
void run_engine_defaults(const CatalogueOptions& o) {
  const Catalogue c = load_catalogue(o.catalogue);
  std::string rows;
  for (const TileSize& tile : conv::default_tiles()) {
    const Transform& t = c.best(tile, "fp32").transform;
    // The engine rebuilds each entry from these points and scaling: an entry that fails is not written out.
    require_verified(t, fmt::format("catalogue entry {} fp32 in '{}'", tile.to_string(), o.catalogue));
    std::vector<Rational> d1 = t.scaling().d1, d2 = t.scaling().d2;
    if (d1.size() != static_cast<std::size_t>(tile.n()) || d2.size() != d1.size())
      throw Error("catalogue entry " + tile.to_string() + " fp32 has no explicit scaling (D1, D2 relative to lagrange)");
    auto join = [](const std::vector<Rational>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ",") + nova::to_string(x);
      return s;
    };
    std::string points;
    for (const auto& p : to_strings(t.points())) points += (points.empty() ? "" : ", ") + p;
    rows += fmt::format("    {{{}, {}, \"{}\",\n     \"d1={};d2={}\"}},\n", tile.m, tile.r, points, join(d1), join(d2));
  }
  const std::string text =
      "// The engine's default transforms: the catalogue's fp32 entry for each tile (data/catalogue.json,\n"
      "// preset fp32), points and exact diagonal scaling (D1, D2 relative to the lagrange triple, as\n"
      "// ScalingSpec::parse reads them). Shared by the library and the build-time generator\n"
      "// (codegen/gen_tile_transforms.cpp), so the generated code and the run-time defaults cannot drift apart.\n"
      "//\n"
      "// GENERATED from data/catalogue.json by `nova catalogue engine-defaults` (tools/regenerate_catalogue.sh\n"
      "// rewrites this file); tests/catalogue checks that every entry equals the catalogue's exactly.\n"
      "#pragma once\n\nnamespace nova::conv {\n\nstruct DefaultPointsEntry {\n  int m;\n  int r;\n"
      "  const char* points;\n  const char* scaling;\n};\n\ninline constexpr DefaultPointsEntry kDefaultPoints[] = {\n" +
      rows + "};\n\n}  // namespace nova::conv\n";
  emit(o.output, text);
}

void run_correlation(const CatalogueOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  const TileSize tile = parse_tile(o.tile.empty() ? "6,3" : o.tile);
  if (o.presets_given && !o.preset.empty()) throw Error("give --precision or --presets, not both");
  const auto presets = !o.presets_given
                           ? std::vector<std::string>{o.preset.empty() ? "fp16-storage" : o.preset}
                           : given_list(o.presets, ',', "--presets");
  check_training_size(o);
  TrainingData tr;
  tr.tiles = o.train_tiles;
  tr.channels = o.train_channels;
  std::vector<double> around;
  if (!o.around.empty()) around = finite_doubles(parse_points(o.around));
  json a = json::array();
  std::string text = fmt::format("Spearman rank correlation with the measured error, {} random point sets for {} "
                                 "(wincnn scaling; {} Gaussian tiles x {} channels, seed {}; overflow ranks last; 'scaled': each set with the proxy's power-of-two scaling)\n",
                                 o.count, tile.to_string(), tr.tiles_for(tile), tr.channels, tr.seed);
  if (!around.empty()) text += fmt::format("points within +-{} of {{{}}}\n", o.spread, o.around);
  text += fmt::format("{:<14} {:>11} {:>11} {:>11} {:>7} | {:>13} {:>7}\n", "preset", "stage proxy", "P", "kappa_2(V)",
                      "usable", "proxy, scaled", "usable");
  for (const auto& p : presets) {
    const auto s = proxy_correlation(tile, p, o.count, o.seed, tr, o.spread, true, around);
    text += fmt::format("{:<14} {:>11.3f} {:>11.3f} {:>11.3f} {:>7} | {:>13.3f} {:>7}\n", p, s.rho_proxy, s.rho_p,
                        s.rho_kappa, s.usable, s.rho_proxy_scaled, s.usable_scaled);
    a.push_back(to_json(s));
  }
  emit(o.output, format == OutputFormat::kJson ? json_text(a, 2) + "\n" : text);
}

const CommandRegistration catalogue_registration("catalogue", 50, [](CLI::App& app) {
  auto o = std::make_shared<CatalogueOptions>();
  CLI::App* cat = app.add_subcommand("catalogue", "The catalogue of best transforms per tile and precision; "
                                                  "error-driven search; the error tables");
  cat->require_subcommand(1);
  auto common = [o](CLI::App* s, bool entry, const char* formats = "Output: text or json") {
    s->add_option("--catalogue", o->catalogue, "Catalogue file (default: $NOVA_CATALOGUE, else the shipped one)");
    s->add_option("--format,-f", o->format, formats)->capture_default_str();
    s->add_option("--output,-o", o->output, "Write to this file instead of stdout")->check(writable_output());
    if (entry) {
      s->add_option("--tile,-t", o->tile, "Tile, e.g. 6,3")->required();
      s->add_option("--precision,-p", o->preset, "Precision preset, e.g. fp16-storage")->required();
    }
  };
  CLI::App* list = cat->add_subcommand("list", "List the entries");
  common(list, false);
  list->callback([o] { run_list(*o); });
  CLI::App* show = cat->add_subcommand("show", "Show one entry: points, errors, provenance, matrices");
  common(show, true);
  show->callback([o] { run_show(*o); });
  CLI::App* exp = cat->add_subcommand("export", "Export one entry's transform (text, json or cpp)");
  common(exp, true, "Output: text, json or cpp");
  exp->callback([o] { run_export(*o); });

  CLI::App* search = cat->add_subcommand("search", "Run discovery with an error objective (points and power-of-two "
                                                   "scalings together)");
  search->add_option("--tile,-t", o->tile, "Tile, e.g. 6,3")->required();
  search->add_option("--precision,-p", o->preset, "Precision preset or model JSON (objective stage-proxy:<it>)");
  search->add_option("--objective", o->objective, error_objective_help());
  search->add_option("--dtype", o->dtype, "Point lattice: any, fp16, bf16, int8")->capture_default_str();
  search->add_option("--max-den", o->max_den, "Largest denominator of the lattice")->capture_default_str();
  search->add_option("--seed", o->seed, "Random seed")->capture_default_str()->check(non_negative_integer());
  auto measured_option = [o](const char* name) {
    return note_first_given(o, &CatalogueOptions::measured_option_given, name);
  };
  search
      ->add_option("--refine-window", o->refine_window,
                   "measured-error: powers of two tried around the proxy's scaling")
      ->capture_default_str()
      ->each(measured_option("--refine-window"));
  search
      ->add_option("--train-tiles", o->train_tiles,
                   "measured-error: training tiles (at least 16384/m^2 are used)")
      ->capture_default_str()
      ->each(measured_option("--train-tiles"));
  search->add_option("--train-channels", o->train_channels, "measured-error: training channels")
      ->capture_default_str()
      ->each(measured_option("--train-channels"));
  search->add_option("--format,-f", o->format, "Output: text or json")->capture_default_str();
  search->add_option("--output,-o", o->output, "Write to this file instead of stdout")
      ->check(writable_output());
  search->callback([o] { run_search(*o); });

  CLI::App* gen = cat->add_subcommand("generate", "Regenerate the catalogue (deterministic; one thread)");
  gen->add_option("--output,-o", o->output, "Catalogue file to write")->required()->check(writable_output());
  gen->add_option("--seed", o->seed, "Random seed")->capture_default_str()->check(non_negative_integer());
  gen->add_option("--tiles", o->tiles, "Tiles separated by ';' (default: all eight)")
      ->each([o](const std::string&) { o->tiles_given = true; });
  gen->add_option("--presets", o->presets, "Presets separated by ',' (default: the seven catalogue presets)")
      ->each([o](const std::string&) { o->presets_given = true; });
  gen->add_option("--train-tiles", o->train_tiles, "Training tiles (at least 16384/m^2 are used)")
      ->capture_default_str();
  gen->add_option("--train-channels", o->train_channels, "Training channels")->capture_default_str();
  gen->callback([o] { run_generate(*o); });

  CLI::App* rep = cat->add_subcommand("report", "Error tables: published point sets vs the catalogue, and the seed "
                                                "paper's Tables 9, 10, 18, 20, 34");
  common(rep, false);
  rep->add_option("--presets", o->presets, "Presets separated by ','")->each([o](const std::string&) {
    o->presets_given = true;
  });
  rep->callback([o] { run_catalogue_report(*o); });

  CLI::App* eng = cat->add_subcommand("engine-defaults", "The convolution engine's default-transform table (the "
                                                         "catalogue's fp32 entries), as src/conv/default_points_table.hpp");
  eng->add_option("--catalogue", o->catalogue, "Catalogue file (default: $NOVA_CATALOGUE, else the shipped one)");
  eng->add_option("--output,-o", o->output, "Write to this file instead of stdout")->check(writable_output());
  eng->callback([o] { run_engine_defaults(*o); });

  CLI::App* cor = cat->add_subcommand("correlation", "Spearman rank correlation of the stage proxy (and of P and "
                                                     "kappa_2(V)) with the measured error on random point sets");
  cor->add_option("--tile,-t", o->tile, "Tile (default 6,3)");
  cor->add_option("--precision,-p", o->preset, "Precision preset (default fp16-storage)");
  cor->add_option("--presets", o->presets, "Several presets separated by ','")->each([o](const std::string&) {
    o->presets_given = true;
  });
  cor->add_option("--count", o->count, "Random point sets")->capture_default_str();
  cor->add_option("--seed", o->seed, "Random seed")->capture_default_str()->check(non_negative_integer());
  cor->add_option("--spread", o->spread,
                  "Points uniform in [-spread, spread] on a 1/64 grid, at least 0.05 apart (with --around: "
                  "within spread of each); at least 1/64")
      ->capture_default_str();
  cor->add_option("--around", o->around, "Random sets near these points (n-1 finite ones, e.g. a catalogue entry's)");
  cor->add_option("--train-tiles", o->train_tiles, "Tiles of the measurement (at least 16384/m^2 are used)")
      ->capture_default_str();
  cor->add_option("--train-channels", o->train_channels, "Channels of the measurement")->capture_default_str();
  cor->add_option("--format,-f", o->format, "Output: text or json")->capture_default_str();
  cor->add_option("--output,-o", o->output, "Write to this file instead of stdout")->check(writable_output());
  cor->callback([o] { run_correlation(*o); });
});

}  // namespace
}  // namespace nova::cli
