// nova analyze: conditioning, norms, cost and representability of a transform, from points or a file.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/analysis/analysis.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"

namespace nova::cli {
namespace {

struct AnalyzeOptions {
  std::string file;
  std::string tile;
  std::string points;
  std::string scaling = "wincnn";
  std::string format = "text";
  std::string output;
  bool no_2d = false;
  bool scaling_given = false;  // a file carries its own scaling: --scaling beside it would be ignored
};

void run_analyze(const AnalyzeOptions& o) {
  const OutputFormat format = parse_format(o.format, /*allow_cpp=*/false);
  Transform t;
  if (!o.file.empty()) {
    if (!o.tile.empty() || !o.points.empty() || o.scaling_given)
      throw Error("give either FILE or --tile/--points/--scaling, not both (the file has its own)");
    t = load_verified_transform(o.file);
  } else {
    if (o.tile.empty()) throw Error("nothing to analyze: give a transform FILE or --tile (and --points)");
    const TileSize tile = parse_tile(o.tile);
    PointList points = o.points.empty() ? standard_points(tile.n() - 1, true) : parse_points(o.points);
    t = Transform::construct(tile, std::move(points), ScalingSpec::parse(o.scaling));
  }
  AnalysisOptions options;
  options.two_d = !o.no_2d;
  const TransformAnalysis a = analyze(t, options);
  if (format == OutputFormat::kJson) {
    emit(o.output, json_text(to_json(a), 2));
  } else {
    emit(o.output, to_text(a));
  }
  // Files are verified on loading and constructions always verify; kept in case a construction ever fails.
  if (!a.verified) command_exit_status() = 1;
}

const CommandRegistration analyze_registration("analyze", 20, [](CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* sub = app.add_subcommand(
      "analyze", "Conditioning (kappa_1,2,inf,F of V, A^T, B^T, G in 1D and 2D), norms, cost, representability");
  sub->add_option("file", options->file, "A transform JSON file (as written by `nova transform --format json`)");
  sub->add_option("--tile,-t", options->tile, "Tile F(m,r), written 6,3 or F(6,3)");
  sub->add_option("--points,-p", options->points,
                  "Points, e.g. \"0,±3/5,±1,±7/6,inf\" (default: the standard 0, ±1, ±2, ... with inf)");
  sub->add_option("--scaling,-s", options->scaling,
                  "Diagonal scaling: wincnn (default), lagrange, or d1=...;d2=...")
      ->each([options](const std::string&) { options->scaling_given = true; });
  sub->add_option("--format,-f", options->format, "Output: text or json")->capture_default_str();
  sub->add_option("--output,-o", options->output, "Write to this file instead of stdout")
      ->check(writable_output());
  sub->add_flag("--no-2d", options->no_2d, "Skip the 2D (Kronecker) analysis, which is slow for very large tiles");
  sub->callback([options] { run_analyze(*options); });
});

}  // namespace
}  // namespace nova::cli
