// seqby check: judge a history against the properties of DESIGN.md section 6: a history file
// (JSON lines), or with --redis the decision journal in Redis (seqby/hiredis/journal.h), which an
// operator can judge after an incident. The checking itself is scenarios::check_main and
// check_redis_main over the properties library.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::apps {
namespace {

struct CheckOptions {
  std::string history_file;
  scenarios::CheckRedisArgs redis;
  bool json = false;
};

// "" when the options fit, else the message.
std::string combination_error(const CheckOptions& o) {
  if (o.history_file.empty() == o.redis.url.empty()) {
    return "give either HISTORY.jsonl or --redis URL (with --category), not " +
           std::string(o.history_file.empty() ? "neither" : "both");
  }
  if (!o.redis.url.empty() && o.redis.categories.empty()) {
    return "--redis: --category C is required (the journal of which category to judge)";
  }
  if (o.redis.url.empty() && (!o.redis.categories.empty() || !o.redis.group.empty() ||
                              !o.redis.save_path.empty() || o.redis.cluster)) {
    return "--category, --group, --save and --cluster apply only with --redis";
  }
  return "";
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Check a history (JSON lines), or a decision journal in Redis, and report each violated "
      "property");
  cmd->add_option("HISTORY.jsonl", options->history_file, "The history to check")
      ->check(CLI::ExistingFile);
  cmd->add_option("--redis", options->redis.url,
                  "Judge the decision journal in this Redis (redis://HOST:PORT)")
      ->type_name("URL");
  cmd->add_option("--category", options->redis.categories,
                  "With --redis: the category whose journal is judged (repeat for a process "
                  "manager's categories)")
      ->type_name("C")
      ->take_all();
  cmd->add_option("--group", options->redis.group,
                  "With --redis: judge this handler group (or process manager) only")
      ->type_name("G");
  cmd->add_option("--save", options->redis.save_path,
                  "With --redis: also write the merged journal as JSON lines to FILE")
      ->type_name("FILE");
  cmd->add_flag("--cluster", options->redis.cluster,
                "With --redis: it is one node of a Redis Cluster whose workers ran with "
                "--key-layout cluster; the journals of every master are read and merged");
  cmd->add_flag("--json", options->json, "Print one JSON summary object on stdout");
  cmd->callback([&exit_code, options] {
    if (const std::string bad = combination_error(*options); !bad.empty()) {
      std::cerr << "seqby check: " << bad << "\n";
      exit_code = kExitUsage;
      return;
    }
    if (!options->redis.url.empty()) {
      options->redis.json = options->json;
      exit_code = scenarios::check_redis_main(options->redis, std::cout, std::cerr);
      return;
    }
    exit_code = scenarios::check_main(options->history_file, options->json, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
