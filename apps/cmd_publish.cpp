// seqby publish: append events to a partition stream and index the partition, atomically
// (DESIGN.md sections 3, 8). The key is validated first (exit 2 naming the rule, nothing
// written). The payload is --data (any JSON object: nested objects, arrays and floats are carried
// verbatim) plus --field name=value pairs (integers, true/false and null keep their JSON type;
// anything else is a string). The key is --key, or with --key-field F the data's top-level
// attribute F (a string or an integer, ADR decision 2; both given, they must agree). With --count N
// it publishes N events, adding "seq": 1..N unless the payload has a seq (then seq, seq+1, ...).
// With --history-stream it also appends each publish record to that stream, in the same script.
// Prints each entry id on its own line.
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/json_flat.h"
#include "seqby/core/keys.h"
#include "seqby/core/outbox.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::apps {
namespace {

struct PublishOptions {
  std::string redis_url;
  std::string category;
  std::string key;
  bool key_given = false;  // --key was on the command line
  std::string key_field;   // non-empty: the key is this top-level attribute of the payload
  std::string type = "event";
  std::string data;
  std::vector<std::string> fields;
  std::uint32_t count = 1;
  std::string history_stream;
  std::uint64_t journal_maxlen = 0;  // > 0: the publish script journals each publish
  std::string key_layout = "flat";   // flat | cluster (RedisBrokerOptions::key_layout)
  Durability durability;             // --wait-replicas, --wait-timeout-ms
  bool cluster = false;              // --cluster: --redis is a seed node of a Redis Cluster
};

JsonValue field_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  if (text == "null") return nullptr;
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc{} && end == text.data() + text.size() && !text.empty()) return n;
  return text;
}

int run_publish(PublishOptions o) {
  if (!o.key_given && o.key_field.empty()) {
    std::fprintf(stderr, "seqby publish: give --key K or --key-field FIELD\n");
    return kExitUsage;
  }
  if (o.key_given) {
    if (Status key = validate_partition_key(o.key); !key.ok()) {
      std::fprintf(stderr, "seqby publish: --key: %s\n", key.error().message.c_str());
      return kExitUsage;
    }
  }
  if (Status category = validate_category_name(o.category); !category.ok()) {
    std::fprintf(stderr, "seqby publish: --category: %s\n", category.error().message.c_str());
    return kExitUsage;
  }
  JsonObject payload;
  if (!o.data.empty()) {
    Result<JsonObject> data = decode_json_object(o.data);
    if (!data.ok()) {
      std::fprintf(stderr, "seqby publish: --data: %s\n", data.error().message.c_str());
      return kExitUsage;
    }
    payload = std::move(data.value());
  }
  for (const std::string& field : o.fields) {
    const std::size_t eq = field.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "seqby publish: --field: expected name=value, got '%s'\n",
                   field.c_str());
      return kExitUsage;
    }
    payload[field.substr(0, eq)] = field_value(field.substr(eq + 1));
  }
  if (!o.key_field.empty()) {
    const std::string where = "seqby publish: --key-field " + o.key_field + ": ";
    Result<std::optional<std::string>> value = extract_key_value(payload, o.key_field);
    if (!value.ok()) {
      std::fprintf(stderr, "%s%s\n", where.c_str(), value.error().message.c_str());
      return kExitUsage;
    }
    const std::optional<std::string>& key = value.value();
    Status valid =
        validate_partition_key(key ? std::optional<std::string_view>(*key) : std::nullopt);
    if (!valid.ok()) {
      std::fprintf(stderr, "%s%s\n", where.c_str(), valid.error().message.c_str());
      return kExitUsage;
    }
    if (o.key_given && o.key != *key) {
      std::fprintf(stderr, "%sthe data's key \"%s\" is not --key \"%s\"\n", where.c_str(),
                   key->c_str(), o.key.c_str());
      return kExitUsage;
    }
    o.key = *key;
  }
  std::int64_t first_seq = 1;
  if (!o.history_stream.empty() && o.journal_maxlen > 0) {
    std::fprintf(stderr,
                 "seqby publish: --history-stream and --journal-maxlen: give one of them (the "
                 "old history stream, or the decision journal)\n");
    return kExitUsage;
  }
  if (!o.history_stream.empty() && o.durability.wait_replicas > 0) {
    // The history stream's publish is one EVAL of its own, not the broker's publish.
    std::fprintf(stderr,
                 "seqby publish: --history-stream and --wait-replicas: the durability option "
                 "waits after the broker's publish, which --history-stream does not use\n");
    return kExitUsage;
  }
  const std::optional<KeyLayout> key_layout =
      key_layout_option("seqby publish", o.key_layout, o.cluster);
  if (!key_layout.has_value()) return kExitUsage;
  if (*key_layout == KeyLayout::cluster && !o.history_stream.empty()) {
    // The history stream's publish is one script over the stream and the history stream.
    std::fprintf(stderr,
                 "seqby publish: --key-layout cluster: --history-stream is not supported with "
                 "the cluster layout (use --journal-maxlen)\n");
    return kExitUsage;
  }
  bool numbered = o.count > 1 || !o.history_stream.empty() || o.journal_maxlen > 0;
  if (auto seq = payload.find("seq"); seq != payload.end()) {
    if (!std::holds_alternative<std::int64_t>(seq->second)) {
      std::fprintf(stderr, "seqby publish: field seq: expected an integer\n");
      return kExitUsage;
    }
    first_seq = std::get<std::int64_t>(seq->second);
    numbered = true;
  }
  Result<redis::RedisConfig> config = redis::parse_redis_url(o.redis_url);
  if (!config.ok()) {
    std::fprintf(stderr, "seqby publish: --redis: %s\n", config.error().message.c_str());
    return kExitUsage;
  }
  if (!cluster_database_fits("seqby publish", o.cluster, config.value().db)) return kExitUsage;

  redis::RealRuntime runtime;
  std::unique_ptr<redis::RedisLink> owned_link;
  if (o.cluster) {
    owned_link = std::make_unique<redis::HiredisClusterLink>(runtime, config.value());
  } else {
    owned_link = std::make_unique<redis::HiredisLink>(runtime, config.value());
  }
  redis::RedisLink& link = *owned_link;
  redis::RedisBrokerOptions broker_options;
  broker_options.key_layout = *key_layout;
  broker_options.wait_replicas = o.durability.wait_replicas;
  broker_options.wait_timeout_ms = o.durability.wait_timeout_ms;
  redis::RedisBroker broker(link, broker_options);
  const PartitionRef partition{o.category, o.key, *key_layout};
  for (std::uint32_t i = 0; i < o.count; ++i) {
    const std::int64_t seq = first_seq + i;
    if (numbered) payload["seq"] = seq;
    const std::string data = encode_json_object(payload);
    auto poison = payload.find("poison");
    const bool is_poison = poison != payload.end() && poison->second == JsonValue(true);
    const char* detail = is_poison ? "poison" : "";
    Result<std::string> id =
        o.journal_maxlen > 0
            ? runtime.block_on(redis::publish_journaled(broker, partition, o.type, data,
                                                        o.journal_maxlen, "publisher", seq, detail))
        : o.history_stream.empty()
            ? runtime.block_on(broker.publish(partition, o.type, data))
            : runtime.block_on(redis::publish_recorded(link, partition, o.type, data,
                                                       o.history_stream, "publisher", seq, detail));
    if (!id.ok()) {
      std::fprintf(stderr, "seqby publish: %s: %s\n", errc_name(id.error().code),
                   id.error().message.c_str());
      return kExitFailed;
    }
    std::printf("%s\n", id.value().c_str());
  }
  return kExitOk;
}

}  // namespace

void add_publish_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PublishOptions>();
  CLI::App* cmd = app.add_subcommand(
      "publish", "Publish events to partition C:K and add K to C:__partitions__");
  add_redis_option(cmd, options->redis_url);
  add_durability_options(cmd, options->durability);
  add_cluster_option(cmd, options->cluster);
  add_category_option(cmd, options->category);
  CLI::Option* key = cmd->add_option("--key", options->key, "The partition key K")->type_name("K");
  cmd->add_option("--key-field", options->key_field,
                  "Take K from this top-level attribute of the data (a string or an integer, as "
                  "the worker's --sequential-by); with --key, the two must agree")
      ->type_name("FIELD");
  cmd->add_option("--type", options->type, "The event type name (the entry's type field)")
      ->type_name("TYPE");
  cmd->add_option("--data", options->data,
                  "The event's fields: any JSON object (nested objects, arrays and floats are "
                  "carried verbatim)")
      ->type_name("JSON");
  cmd->add_option("--field", options->fields, "One more data field, name=value (repeatable)")
      ->type_name("NAME=VALUE");
  cmd->add_option("--count", options->count, "Publish N events, seq numbered")
      ->type_name("N")
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--history-stream", options->history_stream,
                  "Also append each publish record to this history stream")
      ->type_name("NAME");
  cmd->add_option("--journal-maxlen", options->journal_maxlen,
                  "Journal each publish in its partition's decision journal, kept to about N "
                  "records (as the workers' --journal-maxlen)")
      ->type_name("N");
  cmd->add_option("--key-layout", options->key_layout,
                  "Key names: flat (C:K, default) or cluster (C:{K}, the publish then runs in "
                  "three steps across hash slots; docs/ARCHITECTURE.md)")
      ->type_name("LAYOUT");
  cmd->callback([&exit_code, options, key] {
    options->key_given = key->count() > 0;
    exit_code = run_publish(*options);
  });
}

}  // namespace seqby::apps
