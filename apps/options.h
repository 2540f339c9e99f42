// Option values shared by several subcommands, parsed and validated at the command line so that a
// bad value exits 2 with a message naming the option and the value, before any work starts.
// Parsing only: what a seed range or a URL means is up to the subcommand that takes it.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seqby/core/keyspace.h"

namespace seqby::apps {

// An inclusive seed range, written A..B on the command line (`--seeds 0..299` is 300 seeds).
struct SeedRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t count() const { return last - first + 1; }
};

// Parses "A..B" with A <= B, both decimal. Returns false (and leaves *out alone) otherwise.
bool parse_seed_range(std::string_view text, SeedRange* out);

// CLI11 validators: "A..B" seed ranges, and Redis URLs as seqby::redis::parse_redis_url reads them.
CLI::Validator seed_range_validator();
CLI::Validator redis_url_validator();

// The options several commands share, declared once: --redis URL (required, validated) and
// --category C (required).
CLI::Option* add_redis_option(CLI::App* command, std::string& url);
CLI::Option* add_category_option(CLI::App* command, std::string& category);

// The durability option (RedisBrokerOptions::wait_replicas, wait_timeout_ms): --wait-replicas N
// (0, the default: off) and --wait-timeout-ms T (1 to 1500: a WAIT holds its connection, and
// the link's 2 s command deadline would cut a longer one short), for worker and publish.
struct Durability {
  std::uint32_t wait_replicas = 0;
  std::uint64_t wait_timeout_ms = 1000;
};
void add_durability_options(CLI::App* command, Durability& durability);
// --cluster: --redis names one node of a Redis Cluster (a seed), for worker and publish.
void add_cluster_option(CLI::App* command, bool& cluster);
// --key-layout `name` and --cluster of `command` ("seqby worker", ...) taken together: the layout,
// or nullopt after saying on stderr what is wrong (an unknown layout, --cluster without the
// cluster layout); the caller exits 2.
std::optional<KeyLayout> key_layout_option(const char* command, const std::string& name,
                                           bool cluster);
// Whether --cluster fits the URL's database `db` (a cluster has only database 0); false after
// saying so on stderr.
bool cluster_database_fits(const char* command, bool cluster, std::uint32_t db);

}  // namespace seqby::apps
