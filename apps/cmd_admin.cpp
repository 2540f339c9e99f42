// seqby admin: operator tooling on a live category (DESIGN.md sections 4, 8): list partitions,
// inspect one, skip a halted head, move a halted head to the DLQ. Options only, so far: the
// operator tooling replaces this body.
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"

namespace seqby::apps {
namespace {

struct AdminOptions {
  std::string redis_url;
  std::string category;
  std::string key;
  std::string group;
};

// Adds `name` under admin with the options every action shares (--category, and --key, --group
// when it acts on one partition's head).
CLI::App* add_action(CLI::App& admin, AdminOptions& options, const char* name, const char* about,
                     bool on_partition) {
  CLI::App* action = admin.add_subcommand(name, about);
  add_category_option(action, options.category);
  if (on_partition) {
    action->add_option("--key", options.key, "The partition key K")->type_name("K")->required();
    action->add_option("--group", options.group, "The handler group G")
        ->type_name("G")
        ->required();
  }
  return action;
}

}  // namespace

void add_admin_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AdminOptions>();
  CLI::App* cmd = app.add_subcommand("admin", "Operator tooling on a live category");
  add_redis_option(cmd, options->redis_url);
  cmd->require_subcommand(1);
  cmd->fallthrough();  // --redis may also follow the action
  add_action(*cmd, *options, "partitions", "List the category's partitions and their owners",
             false);
  CLI::App* inspect = add_action(*cmd, *options, "inspect",
                                 "Show one partition: lease, generation, pending head, halt",
                                 false);
  inspect->add_option("--key", options->key, "The partition key K")->type_name("K")->required();
  inspect->add_option("--group", options->group, "Only this handler group G")->type_name("G");
  add_action(*cmd, *options, "skip",
             "Acknowledge a halted partition's head without processing it", true);
  add_action(*cmd, *options, "dlq", "Move a halted partition's head to C:K:dlq", true);
  cmd->callback([&exit_code, options] { exit_code = not_built_yet("admin"); });
}

}  // namespace seqby::apps
