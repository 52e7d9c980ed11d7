// nova transform: build a tile's exact transform from points and export it.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova::cli {
namespace {

struct TransformOptions {
  std::string tile;
  std::string points;
  std::string format = "text";
  std::string scaling = "wincnn";
  std::string output;
  std::string name;
  bool no_infinity = false;
};

void run_transform(const TransformOptions& o) {
  const TileSize tile = parse_tile(o.tile);
  const OutputFormat format = parse_format(o.format, /*allow_cpp=*/true);
  PointList points = o.points.empty() ? standard_points(o.no_infinity ? tile.n() : tile.n() - 1, !o.no_infinity)
                                      : parse_points(o.points);
  const Transform t = Transform::construct(tile, std::move(points), ScalingSpec::parse(o.scaling));
  if (const Verification v = verify(t); !v) throw Error("internal: constructed transform failed verification: " + v.reason);
  switch (format) {
    case OutputFormat::kJson: emit(o.output, to_json(t).dump(2)); break;
    case OutputFormat::kCpp: emit(o.output, to_cpp_header(t, o.name)); break;
    case OutputFormat::kText: emit(o.output, to_text(t)); break;
  }
}

const CommandRegistration transform_registration("transform", 10, [](CLI::App& app) {
  auto options = std::make_shared<TransformOptions>();
  CLI::App* sub = app.add_subcommand("transform", "Build the exact Winograd transform (AT, G, BT) of a tile from points");
  sub->add_option("--tile,-t", options->tile, "Tile F(m,r), written 6,3 or F(6,3)")->required();
  sub->add_option("--points,-p", options->points,
                  "Points, e.g. \"0,±1,±2,±1/2,inf\" (±x or +-x for pairs; decimals are exact; inf optional). "
                  "Default: the standard 0, ±1, ±2, ... with inf");
  sub->add_flag("--no-infinity", options->no_infinity, "With default points: use n finite points and no infinity");
  sub->add_option("--scaling,-s", options->scaling,
                  "Diagonal scaling: wincnn (1/N_p factors in G, default), lagrange (factors in BT), or "
                  "d1=a,b,...;d2=c,d,... relative to lagrange");
  sub->add_option("--format,-f", options->format, "Output: text, json or cpp")->capture_default_str();
  sub->add_option("--output,-o", options->output, "Write to this file instead of stdout");
  sub->add_option("--name", options->name, "Namespace name for --format cpp (default: a stable id)");
  sub->callback([options] { run_transform(*options); });
});

}  // namespace
}  // namespace nova::cli
