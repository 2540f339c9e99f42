// seqby worker: one real engine instance against a redis-server (DESIGN.md sections 4, 7, 8).
// Options only, so far: the real runtime's worker replaces this body.
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"

namespace seqby::apps {
namespace {

struct WorkerOptions {
  std::string redis_url;
  std::string category;
  std::string group;
  std::string sequential_by;
  std::string handler;
};

}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<WorkerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "worker", "Run one real engine instance: own partitions of a category and process them");
  cmd->add_option("--redis", options->redis_url, "The Redis server")
      ->type_name("URL")
      ->required()
      ->check(redis_url_validator());
  cmd->add_option("--category", options->category, "The stream category C")
      ->type_name("C")
      ->required();
  cmd->add_option("--group", options->group, "The handler group G")->type_name("G")->required();
  cmd->add_option("--sequential-by", options->sequential_by,
                  "The event field holding the partition key")
      ->type_name("FIELD")
      ->required();
  cmd->add_option("--handler", options->handler, "A named test handler (its behaviour)")
      ->type_name("NAME");
  cmd->callback([&exit_code, options] { exit_code = not_built_yet("worker"); });
}

}  // namespace seqby::apps
