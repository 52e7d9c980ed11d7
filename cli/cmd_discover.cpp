// nova discover: find well-conditioned rational points for a tile (the seed's pipeline, section B.8).
#include <fmt/format.h>

#include <iostream>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/discover/discover.hpp"
#include "nova/error.hpp"

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
  int max_denominator = 10;
  int max_ratio = 5;
  int population = 50, generations = 100, restarts = 3;
  double sigma0 = 0.5;
  bool no_symmetric = false, no_es = false, no_polish = false, no_analysis = false;
};

void run_discover(const DiscoverCliOptions& o) {
  const OutputFormat format = parse_format(o.format, /*allow_cpp=*/false);
  DiscoverOptions d;
  d.tile = parse_tile(o.tile);
  d.lattice.dtype = parse_point_dtype(o.dtype);
  d.lattice.max_denominator = o.max_denominator;
  d.lattice.num_ratio = o.max_ratio;
  d.seed = o.seed;
  if (o.threads < 0) throw Error("--threads must be at least 1 (default: all cores)");
  d.threads = o.threads;
  if (o.budget_given && !(o.budget > 0)) throw Error("--budget must be a positive number of seconds");
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
    emit(o.output, to_json(r, !o.no_analysis).dump(2));
  } else {
    emit(o.output, to_text(r));
  }
}

const CommandRegistration registration("discover", 30, [](CLI::App& app) {
  auto o = std::make_shared<DiscoverCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "discover", "Find well-conditioned rational points: symmetric enumeration, ES, snap, neighbourhood search");
  sub->add_option("--tile,-t", o->tile, "Tile F(m,r), written 8,3 or F(8,3)")->required();
  sub->add_option("--dtype", o->dtype, "Allowed point values: any, fp16, bf16 (dyadic), int8 (integers)")
      ->capture_default_str();
  sub->add_option("--objective", o->objective, objective_help())->capture_default_str();
  sub->add_option("--seed", o->seed, "Random seed (the result is the same for any --threads)")->capture_default_str();
  sub->add_option("--threads", o->threads, "Worker threads (default: all cores)");
  sub->add_option("--budget", o->budget, "Stop the search stages after this many seconds (the result then depends on machine speed)")
      ->each([o](const std::string&) { o->budget_given = true; });
  sub->add_option("--max-denominator", o->max_denominator, "Snap denominators b <= this (d_max)")->capture_default_str();
  sub->add_option("--max-ratio", o->max_ratio, "Snap numerators |a| <= this * b")->capture_default_str();
  sub->add_option("--population", o->population, "ES population")->capture_default_str();
  sub->add_option("--generations", o->generations, "ES generations per restart")->capture_default_str();
  sub->add_option("--restarts", o->restarts, "ES restarts")->capture_default_str();
  sub->add_option("--sigma0", o->sigma0, "ES initial step size")->capture_default_str();
  sub->add_flag("--no-symmetric", o->no_symmetric, "Skip the symmetric stage");
  sub->add_flag("--no-es", o->no_es, "Skip the ES stage over R^(n-1)");
  sub->add_flag("--no-polish", o->no_polish, "Snap only (the seed's pipeline), no lattice descent afterwards");
  sub->add_option("--scaling,-s", o->scaling, "Scaling of the output transform: wincnn, lagrange, d1=...;d2=...")
      ->capture_default_str();
  sub->add_option("--format,-f", o->format, "Output: text or json")->capture_default_str();
  sub->add_flag("--no-analysis", o->no_analysis, "JSON without the \"analysis\" object");
  sub->add_option("--output,-o", o->output, "Write to this file instead of stdout");
  sub->callback([o] { run_discover(*o); });
});

}  // namespace
}  // namespace nova::cli
