// nova report: the main job. Prints the verified transforms of the common tiles.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova::cli {
namespace {

void run_report() {
  std::string out = "nova report: verified Winograd transforms (exact rational arithmetic)\n\n";
  const std::pair<TileSize, const char*> tiles[] = {
      {{2, 3}, "0, 1, -1, inf"}, {{4, 3}, "0, 1, -1, 2, -2, inf"}, {{6, 3}, "0, 1, -1, 1/2, -1/2, 2, -2, inf"}};
  for (const auto& [tile, points] : tiles) {
    const Transform t = Transform::construct(tile, parse_points(points));
    out += to_text(t) + "\n";
  }
  emit("", out);
}

const CommandRegistration registration("report", 5, [](CLI::App& app) {
  CLI::App* sub = app.add_subcommand("report", "The main report: verified transforms of F(2,3), F(4,3), F(6,3)");
  sub->callback([] { run_report(); });
});

}  // namespace
}  // namespace nova::cli
