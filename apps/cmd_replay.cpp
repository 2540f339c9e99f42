// seqby replay: re-run a saved case file exactly (DESIGN.md sections 2, 8). The replay itself is
// scenarios::replay_main.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::apps {

void add_replay_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<scenarios::ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a saved failing case (its seed, scenario, faults and variant)");
  cmd->add_option("CASE.json", options->case_path, "The case file a failing run saved")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--history", options->history_out_path,
                  "Write the run's history (JSON lines) to FILE")
      ->type_name("FILE");
  cmd->add_option("--key-layout", options->key_layout,
                  "The key names the case ran with: flat (default) or cluster (what its replay "
                  "line says)")
      ->type_name("LAYOUT");
  cmd->add_option("--cluster-shards", options->cluster_shards,
                  "With --key-layout cluster: the simulated cluster of N shards the case ran on")
      ->type_name("N");
  cmd->callback([&exit_code, options] {
    exit_code = scenarios::replay_main(*options, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
