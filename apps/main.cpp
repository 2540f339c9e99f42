// The seqby command: a simulation campaign runner, counterexample hunter, replayer, history
// checker, scenario runner, real engine worker, publisher and operator tool (DESIGN.md section 8).
// Parsing is CLI11's; every usage error exits 2 with a message naming the argument, --help exits 0.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "commands.h"

namespace seqby::apps {

namespace {

// CLI11 reports "A subcommand is required" when the word in a command's place is not one of its
// subcommands; say instead which word was not understood and what was expected.
bool report_unknown_subcommand(const CLI::App& app, const CLI::RequiredError& error) {
  if (std::string(error.what()).find("subcommand") == std::string::npos) return false;
  const CLI::App* command = &app;
  std::string path = app.get_name();
  while (!command->get_subcommands().empty()) {
    command = command->get_subcommands().front();
    path += " " + command->get_name();
  }
  const std::vector<std::string> extras = app.remaining(true);
  if (extras.empty()) return false;
  std::string expected;
  for (const CLI::App* sub : command->get_subcommands({})) {
    if (!expected.empty()) expected += ", ";
    expected += sub->get_name();
  }
  std::cerr << path << ": unknown command '" << extras.front() << "'; expected one of: " << expected
            << "\nRun with --help for more information.\n";
  return true;
}

}  // namespace
}  // namespace seqby::apps

int main(int argc, char** argv) {
  using namespace seqby::apps;

  CLI::App app{
      "seqby: partition-per-key sequential processing on Redis Streams, its deterministic "
      "simulator and its verification harness.\n"
      "Exit status: 0 every property held, 1 a property failed, 2 bad usage or bad input.",
      "seqby"};
  app.require_subcommand(1);

  int exit_code = kExitOk;
  add_sim_command(app, exit_code);
  add_hunt_command(app, exit_code);
  add_replay_command(app, exit_code);
  add_check_command(app, exit_code);
  add_scenario_command(app, exit_code);
  add_worker_command(app, exit_code);
  add_publish_command(app, exit_code);
  add_admin_command(app, exit_code);
  add_chaos_command(app, exit_code);
  add_timeline_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // 0, help printed on stdout
  } catch (const CLI::RequiredError& e) {
    if (!report_unknown_subcommand(app, e)) app.exit(e);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message naming the argument, on stderr
    return kExitUsage;
  }
  return exit_code;
}
