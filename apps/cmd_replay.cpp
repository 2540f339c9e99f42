// seqby replay: re-run a saved case file exactly (DESIGN.md sections 2, 8). The replay itself is
// scenarios::replay_main.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::apps {
namespace {

struct ReplayOptions {
  std::string case_file;
  std::string history_file;
};

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a saved failing case (its seed, scenario, faults and variant)");
  cmd->add_option("CASE.json", options->case_file, "The case file a failing run saved")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--history", options->history_file,
                  "Write the run's history (JSON lines) to FILE")
      ->type_name("FILE");
  cmd->callback([&exit_code, options] {
    exit_code =
        scenarios::replay_main(options->case_file, options->history_file, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
