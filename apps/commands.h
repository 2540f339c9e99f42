// The subcommands of the `seqby` command (DESIGN.md section 8), one registration function each,
// defined in apps/cmd_<name>.cpp so each body can be replaced file by file. A registration adds
// the subcommand, its options and its --help text to `app`; when the subcommand is chosen, its
// callback runs after parsing and stores the process exit status in `exit_code`:
// 0 every property held, 1 a property (or a scenario assertion) failed, 2 bad usage or bad input.
#pragma once

#include <CLI/CLI.hpp>

namespace seqby::apps {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

void add_sim_command(CLI::App& app, int& exit_code);
void add_hunt_command(CLI::App& app, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_scenario_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);
void add_publish_command(CLI::App& app, int& exit_code);
void add_admin_command(CLI::App& app, int& exit_code);
void add_chaos_command(CLI::App& app, int& exit_code);
void add_timeline_command(CLI::App& app, int& exit_code);

}  // namespace seqby::apps
