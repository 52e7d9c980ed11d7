// nova verify: re-verify a transform file exactly (also one edited by hand or made by another tool).
#include <fmt/format.h>

#include <iostream>
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

// Every file is reported. Exit status: the worst of 0 (verifies), 1 (a transform is wrong) and 2 (a file
// cannot be read or is malformed: one `nova: error:` line on stderr each, and in JSON an entry with "error").
void run_verify(const VerifyOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  nlohmann::json results = nlohmann::json::array();
  bool all_ok = true, all_read = true;
  for (const std::string& file : o.files) {
    Transform t;
    nlohmann::json document;
    try {
      t = load_transform(file, &document);
    } catch (const Error& e) {
      std::cerr << "nova: error: " << e.what() << '\n';
      results.push_back({{"file", file}, {"verified", false}, {"error", e.what()}});
      all_read = false;
      continue;
    }
    // Points, if named, were matched on reading; the derived "float64" arrays are what consumers without
    // rationals read, so a file whose arrays contradict its exact matrices fails too.
    Verification v = verify(t);
    if (v) v = verify_derived_fields(document, t);
    const std::string points_note =
        v && !t.points().empty() ? " (matrices match points {" + to_string(t.points()) + "})" : "";
    all_ok = all_ok && v.ok;
    results.push_back({{"file", file}, {"tile", t.tile().to_string()}, {"verified", v.ok}, {"reason", v.reason}});
    // Text: a line per file as it is verified, in order with the errors on stderr.
    if (format == OutputFormat::kText)
      emit("", v ? fmt::format("{}: OK: {} verified exactly (1D and 2D){}", file, t.tile().to_string(),
                               points_note)
                 : fmt::format("{}: FAILED: {}", file, v.reason));
  }
  if (format == OutputFormat::kJson) emit("", json_text(results, 2));
  command_exit_status() = !all_read ? 2 : !all_ok ? 1 : 0;
}

const CommandRegistration verify_registration("verify", 11, [](CLI::App& app) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* sub = app.add_subcommand("verify", "Verify transform JSON files exactly (exit 1 if any is wrong)");
  // No ExistingFile check: a missing file is reported beside the others, not instead of them.
  sub->add_option("files", options->files, "Transform JSON files")->required();
  sub->add_option("--format,-f", options->format, "Output: text or json")->capture_default_str();
  sub->callback([options] { run_verify(*options); });
});

}  // namespace
}  // namespace nova::cli
