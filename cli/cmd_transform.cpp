// nova transform: build a tile's exact transform from points and export it.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
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
  bool balance_rows = false;
};

// Entries whose nearest double is infinite (points such as 1e400): JSON has no inf, so the "float64"
// arrays hold null for them. The exact matrices, the file's point, are complete, so this only warns.
bool beyond_double(const Transform& t) {
  for (const RationalMatrix* x : {&t.AT(), &t.G(), &t.BT()})
    for (std::size_t i = 0; i < x->rows(); ++i)
      for (std::size_t j = 0; j < x->cols(); ++j)
        if (!std::isfinite(to_double((*x)(i, j)))) return true;
  return false;
}

void run_transform(const TransformOptions& o) {
  const TileSize tile = parse_tile(o.tile);
  const OutputFormat format = parse_format(o.format, /*allow_cpp=*/true);
  if (!o.name.empty() && !is_cpp_identifier(o.name))
    throw Error("--name '" + o.name +
                "' is not a C++ identifier (letters, digits and _, not starting with a digit) "
                "or is a keyword");
  if (o.no_infinity &&
      !o.points.empty())  // it would be ignored: the points say whether infinity is among them
    throw Error("--no-infinity is for the default points; with --points, leave inf out of them");
  PointList points = o.points.empty() ? standard_points(o.no_infinity ? tile.n() : tile.n() - 1, !o.no_infinity)
                                      : parse_points(o.points);
  Transform t = Transform::construct(tile, std::move(points), ScalingSpec::parse(o.scaling));
  if (o.balance_rows) t = balance_input_rows(t);
  const Verification verified = verify(t);  // once: the exporters are given it
  if (!verified) throw Error("internal: constructed transform failed verification: " + verified.reason);
  switch (format) {
    case OutputFormat::kJson:
      if (beyond_double(t))
        std::cerr
            << "nova: warning: some entries are beyond float64's range: the \"float64\" arrays hold null for "
               "them (the exact matrices are complete)\n";
      emit(o.output, json_text(to_json(t, verified), 2));
      break;
    case OutputFormat::kCpp:
      emit(o.output, to_cpp_header(t, o.name, verified));
      break;
    case OutputFormat::kText:
      emit(o.output, to_text(t, verified));
      break;
  }
}

const CommandRegistration transform_registration("transform", 10, [](CLI::App& app) {
  auto options = std::make_shared<TransformOptions>();
  CLI::App* sub = app.add_subcommand("transform", "Build the exact Winograd transform (AT, G, BT) of a tile from points");
  sub->add_option("--tile,-t", options->tile, "Tile F(m,r), written 6,3 or F(6,3)")->required();
  sub->add_option(
      "--points,-p", options->points,
      "Points, e.g. \"0,±1,±2,±1/2,inf\" (±x or +-x for pairs; decimals are exact; inf optional). "
      "Default: the standard 0, ±1, ±2, ... with inf");
  sub->add_flag("--no-infinity", options->no_infinity, "With default points: use n finite points and no infinity");
  sub->add_option("--scaling,-s", options->scaling,
                  "Diagonal scaling: wincnn (1/N_p factors in G, default), lagrange (factors in BT), or "
                  "d1=a,b,...;d2=c,d,... relative to lagrange");
  sub->add_flag(
      "--balance-rows", options->balance_rows,
      "Then multiply each row of BT by the power of two that brings its L1 norm into [2, 4), and the "
      "column of AT by its inverse (exact; the scaling nova's fp16 engines use on their default "
      "transforms, which keeps V = BT d B within 16 max|d| and none of it far below d)");
  sub->add_option("--format,-f", options->format, "Output: text, json or cpp")->capture_default_str();
  sub->add_option("--output,-o", options->output, "Write to this file instead of stdout")
      ->check(writable_output());
  sub->add_option("--name", options->name, "Namespace name for --format cpp (default: a stable id)");
  sub->callback([options] { run_transform(*options); });
});

}  // namespace
}  // namespace nova::cli
