// seqby replay: re-run a saved case file exactly (DESIGN.md sections 2, 8). The replay itself is
// scenarios::replay_main.
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "commands.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::apps {

void add_replay_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<scenarios::ReplayArgs>();
  auto server = std::make_shared<std::pair<std::string, std::uint32_t>>("flat", 0);
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a saved failing case (its seed, scenario, faults, variant and server)");
  cmd->add_option("CASE.json", options->case_path, "The case file a failing run saved")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--history", options->history_out_path,
                  "Write the run's history (JSON lines) to FILE")
      ->type_name("FILE");
  auto* key_layout =
      cmd->add_option("--key-layout", server->first,
                      "Replay on another simulated server than the case file's: flat (one "
                      "server) or cluster (hash-tagged names)")
          ->type_name("LAYOUT");
  auto* cluster_shards =
      cmd->add_option("--cluster-shards", server->second,
                      "Replay on a simulated cluster of N shards instead of the case file's server")
          ->type_name("N");
  cmd->callback([&exit_code, options, server, key_layout, cluster_shards] {
    if (key_layout->count() > 0) options->key_layout = server->first;
    if (cluster_shards->count() > 0) options->cluster_shards = server->second;
    exit_code = scenarios::replay_main(*options, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
