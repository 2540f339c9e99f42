#include "options.h"

#include <charconv>
#include <cstdio>

#include "seqby/hiredis/redis_url.h"

namespace seqby::apps {
namespace {

bool parse_decimal(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

bool parse_seed_range(std::string_view text, SeedRange* out) {
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) return false;
  SeedRange range;
  if (!parse_decimal(text.substr(0, dots), &range.first)) return false;
  if (!parse_decimal(text.substr(dots + 2), &range.last)) return false;
  if (range.first > range.last) return false;
  *out = range;
  return true;
}

CLI::Validator seed_range_validator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        SeedRange range;
        if (parse_seed_range(value, &range)) return {};
        return "'" + value + "' is not a seed range A..B with A <= B";
      },
      "", "seed range");
}

CLI::Validator redis_url_validator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        auto config = redis::parse_redis_url(value);
        return config.ok() ? std::string() : config.error().message;
      },
      "", "redis url");
}

CLI::Option* add_redis_option(CLI::App* command, std::string& url) {
  return command->add_option("--redis", url, "The Redis server")
      ->type_name("URL")
      ->required()
      ->check(redis_url_validator());
}

CLI::Option* add_category_option(CLI::App* command, std::string& category) {
  return command->add_option("--category", category, "The stream category C")
      ->type_name("C")
      ->required();
}

void add_durability_options(CLI::App* command, Durability& durability) {
  command
      ->add_option("--wait-replicas", durability.wait_replicas,
                   "After every publish, lease acquire and commit, WAIT until N replicas have its "
                   "writes; one not acknowledged in time is reported as failed, since a failover "
                   "may lose it (docs/ARCHITECTURE.md \"What a failover keeps\"; 0, the "
                   "default: off)")
      ->type_name("N");
  command
      ->add_option("--wait-timeout-ms", durability.wait_timeout_ms,
                   "How long each WAIT of --wait-replicas waits (default 1000; at most 1500, "
                   "under the connection's 2 s command deadline, which would cut it short)")
      ->type_name("MS")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1500}));
}

void add_cluster_option(CLI::App* command, bool& cluster) {
  command->add_flag("--cluster", cluster,
                    "--redis is one node of a Redis Cluster: commands go to each slot's master "
                    "(MOVED and ASK followed; needs --key-layout cluster; docs/ARCHITECTURE.md "
                    "\"The cluster link\")");
}

std::optional<KeyLayout> key_layout_option(const char* command, const std::string& name,
                                           bool cluster) {
  const std::optional<KeyLayout> layout = parse_key_layout(name);
  if (!layout.has_value()) {
    std::fprintf(stderr, "%s: --key-layout: unknown layout '%s'; known: flat, cluster\n", command,
                 name.c_str());
    return std::nullopt;
  }
  if (cluster && *layout != KeyLayout::cluster) {
    std::fprintf(stderr,
                 "%s: --cluster needs --key-layout cluster (with the flat names a partition's "
                 "keys and its category's index are in different hash slots)\n",
                 command);
    return std::nullopt;
  }
  return layout;
}

bool cluster_database_fits(const char* command, bool cluster, std::uint32_t db) {
  if (!cluster || db == 0) return true;
  std::fprintf(stderr, "%s: --cluster: a Redis Cluster has only database 0, not %u\n", command, db);
  return false;
}

}  // namespace seqby::apps
