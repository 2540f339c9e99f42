// seqby hunt: find, shrink and save a counterexample for a known-broken variant (DESIGN.md
// sections 7, 8). The options are parsed here; the hunt itself is scenarios::hunt_main
// (scenarios/src/hunt.cpp).
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"
#include "seqby/scenarios/hunt.h"

namespace seqby::apps {
namespace {

struct HuntOptions {
  std::string variant;
  std::string seeds;  // A..B
  std::string property;
  bool json = false;
  bool process_manager = false;
  std::string save_dir;
  std::string junit;
};

}  // namespace

void add_hunt_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<HuntOptions>();
  CLI::App* cmd = app.add_subcommand(
      "hunt", "Find, shrink and save a counterexample that a variant violates a property");
  cmd->add_option("--variant", options->variant, "The engine variant to hunt (required)")
      ->type_name("NAME")
      ->required();
  cmd->add_option("--seeds", options->seeds, "Search seeds A..B (inclusive; default 1..200)")
      ->type_name("A..B")
      ->check(seed_range_validator());
  cmd->add_option("--property", options->property,
                  "Only a violation of this property counts (default: any property)")
      ->type_name("NAME");
  cmd->add_flag("--process-manager", options->process_manager,
                "Hunt on process-manager cases (a process manager over order and payment)");
  cmd->add_flag("--json", options->json, "Print one JSON summary object on stdout");
  cmd->add_option("--save", options->save_dir,
                  "Save the shrunk case, its history and the original case in DIR "
                  "(default seqby-failures)")
      ->type_name("DIR");
  cmd->add_option("--junit", options->junit,
                  "Also write a JUnit XML report to FILE: one test case per searched seed")
      ->type_name("FILE");
  cmd->callback([&exit_code, options] {
    scenarios::HuntArgs args;
    args.variant = options->variant;
    args.seeds = options->seeds;
    args.property = options->property;
    args.json = options->json;
    args.process_manager = options->process_manager;
    args.save_dir = options->save_dir;
    args.junit_path = options->junit;
    args.progress = isatty(STDERR_FILENO) != 0;
    exit_code = scenarios::hunt_main(args, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
