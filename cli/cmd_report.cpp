// nova report: the main job. The seed paper's conditioning tables regenerated, nova's numbers beside
// the seed's printed ones (library: nova/discover/report.hpp), plus the verified common transforms.
#include <iostream>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/catalogue/error_tables.hpp"
#include "nova/discover/report.hpp"
#include "nova/error.hpp"

namespace nova::cli {
namespace {

struct ReportCliOptions {
  std::string output;
  int threads = 0;
  uint64_t seed = 0;
  bool errors = true;
};

void run_report(const ReportCliOptions& o) {
  if (o.threads < 0) throw Error("--threads must be 0 (all cores) or more, got " + std::to_string(o.threads));
  ReportOptions r;
  r.threads = o.threads;
  r.seed = o.seed;
  if (stderr_is_terminal()) r.progress = [](const std::string& s) { std::cerr << "\r\033[Kreport: " << s << std::flush; };
  std::string text = seed_report(r);
  if (o.errors) {
    // Measured errors under each precision model (issue 4): published point sets vs nova's catalogue.
    if (r.progress) r.progress("error tables");
    text += "\n" + error_tables().markdown;
  }
  if (r.progress) std::cerr << "\r\033[K" << std::flush;
  emit(o.output, text);
}

const CommandRegistration report_registration("report", 5, [](CLI::App& app) {
  auto o = std::make_shared<ReportCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "The main report: the seed's conditioning tables regenerated, with nova's numbers beside them");
  sub->add_option("--output,-o", o->output, "Write the Markdown report to this file instead of stdout")
      ->check(writable_output());
  sub->add_option("--threads", o->threads, "Discovery threads (0, the default: all cores; runtimes use one)");
  sub->add_option("--seed", o->seed, "Seed of the discovery runs")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_flag("!--no-errors", o->errors, "Leave out the measured-error tables (nova catalogue report)");
  sub->callback([o] { run_report(*o); });
});

}  // namespace
}  // namespace nova::cli
