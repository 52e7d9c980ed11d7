// nova: exact, low-precision-stable Winograd convolution. Each subcommand lives in cmd_<name>.cpp.
#include <algorithm>
#include <iostream>
#include <string>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/error.hpp"

namespace nova::cli {

std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> entries;
  return entries;
}

int& command_exit_status() {
  static int status = 0;
  return status;
}

}  // namespace nova::cli

int main(int argc, char** argv) {
  CLI::App app{"nova: exact Winograd (Cook-Toom) transforms, their analysis, and Winograd convolution "
               "that stays accurate in FP16, BF16 and INT8."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nova 0.1.0");
  app.footer("Run `nova <command> --help` for a command's options.");

  auto& entries = nova::cli::command_registry();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& entry : entries) entry.setup(app);
  nova::cli::read_integers_in_decimal(app);
  nova::cli::refuse_empty_values(app);

  // A first word that names no command: CLI11 would take it for an extra argument and answer only "A
  // subcommand is required"; say which word, and the commands there are.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(entries.begin(), entries.end(), [&](const auto& e) { return e.name == argv[1]; })) {
    std::string names;
    for (const auto& entry : entries) names += (names.empty() ? "" : ", ") + entry.name;
    std::cerr << "nova: error: unknown command '" << argv[1] << "' (commands: " << names
              << "; nova --help lists them)\n";
    return 2;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version arrive as "errors" with exit code 0: CLI11 prints them. Real parse errors
    // follow nova's convention (one line, status 2), not CLI11's codes 105-114 and its two lines.
    if (e.get_exit_code() == 0) {
      const int status = app.exit(e);
      if (!std::cout.flush()) {  // `nova --help > /dev/full`
        std::cerr << "nova: error: cannot write to stdout\n";
        return 2;
      }
      return status;
    }
    std::cerr << "nova: error: " << nova::cli::parse_error_message(app, e) << '\n';
    return 2;
  } catch (const nova::Error& e) {
    std::cerr << "nova: error: " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "nova: error: out of memory\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "nova: internal error: " << e.what() << '\n';
    return 4;
  }
  // Output written outside emit() (progress, help) must not be lost silently either.
  if (!std::cout.flush()) {
    std::cerr << "nova: error: cannot write to stdout\n";
    return 2;
  }
  return nova::cli::command_exit_status();
}
