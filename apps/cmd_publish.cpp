// seqby publish: append an event to a partition stream and index the partition, atomically
// (DESIGN.md sections 3, 8). Options only, so far: the publisher replaces this body.
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"

namespace seqby::apps {
namespace {

struct PublishOptions {
  std::string redis_url;
  std::string category;
  std::string key;
  std::string type;
  std::string data;
};

}  // namespace

void add_publish_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PublishOptions>();
  CLI::App* cmd = app.add_subcommand(
      "publish", "Publish one event to partition C:K and add K to C:__partitions__");
  cmd->add_option("--redis", options->redis_url, "The Redis server")
      ->type_name("URL")
      ->required()
      ->check(redis_url_validator());
  cmd->add_option("--category", options->category, "The stream category C")
      ->type_name("C")
      ->required();
  cmd->add_option("--key", options->key, "The partition key K")->type_name("K")->required();
  cmd->add_option("--type", options->type, "The event type name (the entry's type field)")
      ->type_name("TYPE");
  cmd->add_option("--data", options->data, "The event's fields as a JSON object (the data field)")
      ->type_name("JSON");
  cmd->callback([&exit_code, options] { exit_code = not_built_yet("publish"); });
}

}  // namespace seqby::apps
