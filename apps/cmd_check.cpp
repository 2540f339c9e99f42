// seqby check: judge a history file against the properties of DESIGN.md section 6. The checking
// itself is scenarios::check_main over the properties library.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::apps {
namespace {

struct CheckOptions {
  std::string history_file;
  bool json = false;
};

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd =
      app.add_subcommand("check", "Check a history (JSON lines) and report each violated property");
  cmd->add_option("HISTORY.jsonl", options->history_file, "The history to check")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", options->json, "Print one JSON summary object on stdout");
  cmd->callback([&exit_code, options] {
    exit_code = scenarios::check_main(options->history_file, options->json, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
