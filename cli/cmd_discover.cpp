// nova discover: find well-conditioned rational points for a tile (the seed's pipeline, section B.8).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/catalogue/catalogue.hpp"
#include "nova/catalogue/generate.hpp"
#include "nova/discover/discover.hpp"
#include "nova/discover/es.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"

namespace nova::cli {
namespace {

struct DiscoverCliOptions {
  std::string tile;
  std::string dtype = "any";
  std::string objective = "kappa-v";
  std::string scaling = "wincnn";
  std::string format = "text";
  std::string output;
  uint64_t seed = 0;
  int threads = 0;
  double budget = 0;
  bool budget_given = false;
  // The first of the error objectives' options given (--train-tiles, --train-channels, --top-k,
  // --refine-window), or "".
  std::string error_option_given;
  int max_denominator = 10;
  int max_ratio = 5;
  int population = 50, generations = 100, restarts = 3;
  bool population_given = false, generations_given = false, restarts_given = false, sigma0_given = false;
  bool dtype_given = false, lattice_given = false, scaling_given = false;
  double sigma0 = 0.5;
  int64_t train_tiles = 256, train_channels = 16;
  int top_k = 4, refine_window = 1;
  bool no_symmetric = false, no_es = false, no_polish = false, no_analysis = false;
};

// The ES settings, named as the options (the library's own check, "ES population must be at least 2",
// does not say which option). Both kinds of objective run the ES.
void check_es_options(const DiscoverCliOptions& o) {
  if (o.population < 2 || o.population > kMaxEsPopulation)
    throw Error(fmt::format("--population must be 2 to {}, got {}", kMaxEsPopulation, o.population));
  if (o.generations < 1) throw Error(fmt::format("--generations must be at least 1, got {}", o.generations));
  if (o.restarts < 0) throw Error(fmt::format("--restarts must be 0 or more, got {}", o.restarts));
  const EsParams bounds;
  if (!(o.sigma0 >= bounds.sigma_min && o.sigma0 <= bounds.sigma_max))
    throw Error(fmt::format("--sigma0 must be in [{}, {}] (the ES step-size bounds), got {}",
                            bounds.sigma_min, bounds.sigma_max, o.sigma0));
}

// measured-error:<model>, proxy:<model> (or stage-proxy:<model>): the catalogue generator's search for
// one tile and model, points and power-of-two scalings together; the winner is verified exactly and
// scored on the held-out sets. Returns false when `spec` is not such an objective.
bool run_error_discover(const DiscoverCliOptions& o, OutputFormat format) {
  const auto colon = o.objective.find(':');
  const std::string family = o.objective.substr(0, colon);
  if (family != "measured-error" && family != "proxy" && family != "stage-proxy") return false;
  if (colon == std::string::npos || colon + 1 >= o.objective.size())
    throw Error("objective '" + o.objective + "' needs a precision model: " + family + ":<preset or model.json>");
  const PrecisionModel model = load_precision_model(o.objective.substr(colon + 1));
  const SelectBy select = family == "measured-error" ? SelectBy::kMeasured : SelectBy::kProxy;
  if (o.threads < 0) throw Error(fmt::format("--threads must be 0 (all cores) or more, got {}", o.threads));
  if (o.budget_given)
    throw Error("--budget applies to the kappa-style objectives only (error objectives are deterministic)");
  // The error search has its own lattices, stages and power-of-two scaling: these options would be
  // ignored, and --dtype fp16 had returned points such as 9/14 and 23/15 (not fp16 values).
  struct Unused {
    bool given;
    const char* option;
    const char* instead;
  };
  const Unused unused[] = {
      {o.dtype_given && o.dtype != "any", "--dtype",
       "; nova catalogue search --dtype restricts an error search's points"},
      {o.lattice_given, "--max-denominator/--max-ratio", "; nova catalogue search has --max-den"},
      {o.scaling_given, "--scaling", "; the search chooses a power-of-two scaling itself"},
      {o.no_symmetric || o.no_es || o.no_polish, "--no-symmetric/--no-es/--no-polish", ""}};
  for (const auto& u : unused) {
    if (u.given)
      throw Error(fmt::format("{} applies to the kappa-style objectives only, not to {}{}", u.option,
                              o.objective, u.instead));
  }
  if (o.train_tiles < 1 || o.train_channels < 1) throw Error("--train-tiles and --train-channels must be positive");
  if (o.top_k < 1) throw Error("--top-k must be at least 1");
  if (o.refine_window < 0) throw Error("--refine-window must be 0 or more");
  const TileSize tile = parse_tile(o.tile);
  GenerateOptions g;
  g.seed = o.seed;
  g.objective.training.tiles = o.train_tiles;
  g.objective.training.channels = o.train_channels;
  g.top_k = o.top_k;
  g.refine_window = o.refine_window;
  if (o.population_given) g.es.population = o.population;
  if (o.generations_given) g.es.generations = o.generations;
  if (o.restarts_given) g.es.restarts = o.restarts;
  if (o.sigma0_given) g.es.sigma0 = o.sigma0;
  g.progress = [](const std::string& line) { std::cerr << line << '\n' << std::flush; };
  const CatalogueEntry e = search_entry(tile, model, g, select);
  // The shipped catalogue's entry for the same tile and preset, for comparison (same held-out sets).
  const CatalogueEntry* shipped = nullptr;
  try {
    shipped = shipped_catalogue().find(tile, model.name);
  } catch (const Error&) {
    shipped = nullptr;  // no readable catalogue: nothing to compare with
  }
  const auto& tr = g.objective.training;
  const std::string training = fmt::format("{} tiles x {} channels, {} data, seed {}", tr.tiles_for(tile), tr.channels,
                                           to_string(tr.kind), tr.seed);
  if (format == OutputFormat::kJson) {
    nlohmann::json j = to_json(e);
    j["objective"] = o.objective;
    j["training"] = {{"tiles", tr.tiles_for(tile)},
                     {"channels", tr.channels},
                     {"kind", std::string(to_string(tr.kind))},
                     {"seed", tr.seed}};
    j["verified"] = true;
    if (!std::isfinite(e.train_error)) j["train_error"] = nullptr;
    if (shipped) {
      nlohmann::json c = to_json(*shipped);
      c.erase("transform");
      j["catalogue_entry"] = c;
    }
    emit(o.output, json_text(j, 2) + "\n");
    return true;
  }
  std::string t = fmt::format("{} {}: points {{{}}}, kappa_2(V) = {:.4g}, verified exactly\n", tile.to_string(),
                              o.objective, to_string(e.transform.points()), e.kappa_v);
  t += fmt::format("training error {} ({}), proxy {}\n", format_error_value(e.train_error), training,
                   format_error_value(e.proxy));
  for (const auto& h : e.held_out) {
    const HeldOutError* c = shipped ? shipped->error(h.data) : nullptr;
    t += fmt::format("held-out {:<9} rel L2 {}  max abs {:.3e}  non-finite {}{}\n", h.data,
                     format_error_value(h.rel_l2), h.max_abs, h.nonfinite,
                     c ? "   (catalogue entry: " + format_error_value(c->rel_l2) + ")" : "");
  }
  if (shipped)
    t +=
        fmt::format("catalogue entry {} {}: points {{{}}}, training error {}\n", tile.to_string(), model.name,
                    to_string(shipped->transform.points()), format_error_value(shipped->train_error));
  t += "found: " + json_text(e.found, -1) + "\n\n" + to_text(e.transform);
  emit(o.output, t);
  return true;
}

void run_discover(const DiscoverCliOptions& o) {
  const OutputFormat format = parse_format(o.format, /*allow_cpp=*/false);
  check_es_options(o);
  if (run_error_discover(o, format)) return;
  DiscoverOptions d;
  d.tile = parse_tile(o.tile);
  d.lattice.dtype = parse_point_dtype(o.dtype);
  d.lattice.max_denominator = o.max_denominator;
  d.lattice.num_ratio = o.max_ratio;
  d.seed = o.seed;
  if (o.threads < 0) throw Error(fmt::format("--threads must be 0 (all cores) or more, got {}", o.threads));
  d.threads = o.threads;
  // The error objectives' own options: with a kappa-style objective they were ignored without a word.
  if (!o.error_option_given.empty())
    throw Error(o.error_option_given +
                " applies to the error objectives (measured-error:, proxy:) only, not to " + o.objective);
  if (o.budget_given && !(o.budget > 0 && std::isfinite(o.budget)))
    throw Error(fmt::format(
        "--budget must be a finite number of seconds > 0, got {} (leave it out for no budget)", o.budget));
  d.budget_s = o.budget_given ? o.budget : 0;
  d.es.population = o.population;
  d.es.generations = o.generations;
  d.es.restarts = o.restarts;
  d.es.sigma0 = o.sigma0;
  d.symmetric = !o.no_symmetric;
  d.es_stage = !o.no_es;
  d.polish = !o.no_polish;
  if (stderr_is_terminal()) {
    d.progress = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
  }
  const auto objective = make_objective(o.objective);
  const DiscoveryResult r = discover(d, *objective, ScalingSpec::parse(o.scaling));
  if (d.progress) std::cerr << "\r\033[K" << std::flush;
  if (format == OutputFormat::kJson) {
    emit(o.output, json_text(to_json(r, !o.no_analysis), 2));
  } else {
    emit(o.output, to_text(r));
  }
}

const CommandRegistration discover_registration("discover", 30, [](CLI::App& app) {
  auto o = std::make_shared<DiscoverCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "discover", "Find well-conditioned rational points: symmetric enumeration, ES, snap, neighbourhood search");
  sub->add_option("--tile,-t", o->tile, "Tile F(m,r), written 8,3 or F(8,3)")->required();
  sub->add_option("--dtype", o->dtype, "Allowed point values: any, fp16, bf16 (dyadic), int8 (integers)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->dtype_given = true; });
  sub->add_option("--objective", o->objective,
                  objective_help() +
                      "; or measured-error:<precision> (points and power-of-two scalings searched together, the "
                      "winner chosen on its measured error on a fixed Gaussian training set, verified exactly and "
                      "scored on held-out data) or proxy:<precision> (the same, chosen on the analytic stage proxy); "
                      "<precision> is a preset or a model JSON file")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "Random seed (the result is the same for any --threads)")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_option(
      "--threads", o->threads,
      "Worker threads (0, the default: all cores); the measured-error and proxy objectives run on one");
  sub->add_option("--budget", o->budget, "Stop the search stages after this many seconds (the result then depends on machine speed)")
      ->each([o](const std::string&) { o->budget_given = true; });
  sub->add_option("--max-denominator", o->max_denominator, "Snap denominators b <= this (d_max)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->lattice_given = true; });
  sub->add_option("--max-ratio", o->max_ratio, "Snap numerators |a| <= this * b")
      ->capture_default_str()
      ->each([o](const std::string&) { o->lattice_given = true; });
  sub->add_option("--population", o->population, "ES population (error objectives: 30 unless given)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->population_given = true; });
  sub->add_option("--generations", o->generations, "ES generations per restart (error objectives: 60 unless given)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->generations_given = true; });
  sub->add_option("--restarts", o->restarts, "ES restarts (error objectives: 2 unless given)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->restarts_given = true; });
  sub->add_option("--sigma0", o->sigma0, "ES initial step size, in [0.01, 2] (the step-size bounds)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->sigma0_given = true; });
  auto error_option = [o](const char* name) {
    return note_first_given(o, &DiscoverCliOptions::error_option_given, name);
  };
  sub->add_option("--train-tiles", o->train_tiles,
                  "Error objectives: training tiles (at least 16384/m^2 are used)")
      ->capture_default_str()
      ->each(error_option("--train-tiles"));
  sub->add_option("--train-channels", o->train_channels, "Error objectives: training channels")
      ->capture_default_str()
      ->each(error_option("--train-channels"));
  sub->add_option("--top-k", o->top_k, "measured-error: discovered candidates measured on the training set")
      ->capture_default_str()
      ->each(error_option("--top-k"));
  sub->add_option("--refine-window", o->refine_window,
                  "measured-error: powers of two tried around the proxy's scaling, on the measured error")
      ->capture_default_str()
      ->each(error_option("--refine-window"));
  sub->add_flag("--no-symmetric", o->no_symmetric, "Skip the symmetric stage");
  sub->add_flag("--no-es", o->no_es, "Skip the ES stage over R^(n-1)");
  sub->add_flag("--no-polish", o->no_polish, "Snap only (the seed's pipeline), no lattice descent afterwards");
  sub->add_option("--scaling,-s", o->scaling,
                  "Scaling of the output transform: wincnn, lagrange, d1=...;d2=...")
      ->capture_default_str()
      ->each([o](const std::string&) { o->scaling_given = true; });
  sub->add_option("--format,-f", o->format, "Output: text or json")->capture_default_str();
  sub->add_flag("--no-analysis", o->no_analysis, "JSON without the \"analysis\" object");
  sub->add_option("--output,-o", o->output, "Write to this file instead of stdout")->check(writable_output());
  sub->callback([o] { run_discover(*o); });
});

}  // namespace
}  // namespace nova::cli
