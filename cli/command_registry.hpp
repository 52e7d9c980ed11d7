// Commands register themselves: each cli/cmd_<name>.cpp defines a static CommandRegistration,
// so adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace nova::cli {

// Adds a subcommand to `app` and sets its callback. The callback throws nova::Error on bad input;
// main() turns that into a one-line message and exit status 2.
using CommandSetup = std::function<void(CLI::App& app)>;

struct CommandEntry {
  std::string name;
  int order;  // position in `nova --help`
  CommandSetup setup;
};

std::vector<CommandEntry>& command_registry();

struct CommandRegistration {
  CommandRegistration(std::string name, int order, CommandSetup setup) {
    command_registry().push_back({std::move(name), order, std::move(setup)});
  }
};

// Exit status of the command that ran (set by commands that report a negative result, such as a
// transform that fails verification).
int& command_exit_status();

}  // namespace nova::cli
