// seqby hunt: find, shrink and save a counterexample for a known-broken variant (DESIGN.md
// sections 7, 8). Options only, so far: the hunter replaces this body.
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"

namespace seqby::apps {
namespace {

struct HuntOptions {
  std::string variant;
  std::string seeds;  // A..B
  bool json = false;
};

}  // namespace

void add_hunt_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<HuntOptions>();
  CLI::App* cmd = app.add_subcommand(
      "hunt", "Find, shrink and save a counterexample that a variant violates a property");
  cmd->add_option("--variant", options->variant, "The engine variant to hunt (required)")
      ->type_name("NAME")
      ->required();
  cmd->add_option("--seeds", options->seeds, "Search seeds A..B (inclusive)")
      ->type_name("A..B")
      ->check(seed_range_validator());
  cmd->add_flag("--json", options->json, "Print one JSON summary object on stdout");
  cmd->callback([&exit_code, options] { exit_code = not_built_yet("hunt"); });
}

}  // namespace seqby::apps
