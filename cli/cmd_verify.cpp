// nova verify: re-verify a transform file exactly (also one edited by hand or made by another tool).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova::cli {
namespace {

struct VerifyOptions {
  std::vector<std::string> files;
  std::string format = "text";
};

// Exit status: 0 when every file verifies, 1 when some transform is wrong; unreadable or malformed
// files are input errors (status 2, via nova::Error).
void run_verify(const VerifyOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  nlohmann::json results = nlohmann::json::array();
  std::string text;
  bool all_ok = true;
  for (const std::string& file : o.files) {
    const Transform t = load_transform(file);
    const Verification v = verify_with_points(t);
    const std::string points_note =
        v && !t.points().empty() ? " (matrices match points {" + to_string(t.points()) + "})" : "";
    all_ok = all_ok && v.ok;
    results.push_back({{"file", file}, {"tile", t.tile().to_string()}, {"verified", v.ok}, {"reason", v.reason}});
    text += v ? fmt::format("{}: OK: {} verified exactly (1D and 2D){}\n", file, t.tile().to_string(), points_note)
              : fmt::format("{}: FAILED: {}\n", file, v.reason);
  }
  emit("", format == OutputFormat::kJson ? results.dump(2) : text);
  if (!all_ok) command_exit_status() = 1;
}

const CommandRegistration verify_registration("verify", 11, [](CLI::App& app) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* sub = app.add_subcommand("verify", "Verify transform JSON files exactly (exit 1 if any is wrong)");
  sub->add_option("files", options->files, "Transform JSON files")->required()->check(CLI::ExistingFile);
  sub->add_option("--format,-f", options->format, "Output: text or json")->capture_default_str();
  sub->callback([options] { run_verify(*options); });
});

}  // namespace
}  // namespace nova::cli
