// seqby admin: operator tooling on a live category (ADR decision 6; DESIGN.md sections 3, 4, 8):
// list the partitions, inspect a partition's head, skip a halted head or move it to C:K:dlq,
// list the halted partitions, and list, show, purge (and explicitly replay) a partition's DLQ.
// Readable tables by default; with --json one JSON object on stdout (on failure too:
// {"error": {"code", "message"}}). Exit 0 done; 1 the action was refused (the id is not the
// head), nothing changed; 2 bad usage or bad input (unknown category, key, group or id, a Redis
// that cannot be reached), nothing changed. The library under it is seqby/hiredis/admin.h.
// --key-layout cluster reads and writes the cluster layout's names (C:{K}, ...); --cluster adds
// that --redis is one node of a Redis Cluster, and every command then goes through a ClusterLink
// to the master of its keys' slot (dlq-replay then goes in three steps, as a publish does).
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "seqby/core/keyspace.h"
#include "seqby/core/naming.h"
#include "seqby/hiredis/admin.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::apps {
namespace {

using json = nlohmann::ordered_json;
using redis::GroupView;
using redis::HaltView;
using redis::LeaseView;

struct AdminOptions {
  std::string redis_url;
  bool json = false;
  std::string key_layout = "flat";  // flat | cluster (the names Admin reads and writes)
  bool cluster = false;             // --cluster: --redis is a seed node of a Redis Cluster
  std::string category;
  std::string key;
  std::string id;
  std::string group;
  std::uint64_t warn_threshold = 1000;
  std::uint64_t count_max = 100;    // dlq-list --count
  std::string before_id;            // dlq-purge --before
  bool after_later_events = false;  // dlq-replay: the operator accepts the order change
};

int exit_for(Errc code) {
  switch (code) {
    case Errc::refused:
    case Errc::fenced:
    case Errc::protocol:
    case Errc::unsupported:
      return kExitFailed;
    case Errc::invalid:
    case Errc::not_found:
    case Errc::no_group:
    case Errc::closed:
    case Errc::timeout:
      return kExitUsage;
  }
  return kExitFailed;
}

int report_error(const AdminOptions& o, const char* action, const Error& error) {
  std::string message = error.message;
  if (error.code == Errc::closed || error.code == Errc::timeout) {
    message = "Redis unreachable: " + message;
  } else if (error.code == Errc::refused) {
    message += "; nothing changed";
  }
  std::fprintf(stderr, "seqby admin %s: %s\n", action, message.c_str());
  if (o.json) {
    json out = {{"error", {{"code", errc_name(error.code)}, {"message", message}}}};
    std::printf("%s\n", out.dump().c_str());
  }
  return exit_for(error.code);
}

// `ms` since the epoch as 2026-11-30T21:40:05.123Z.
std::string utc_text(std::int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[96];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return text;
}

json lease_json(const std::optional<LeaseView>& lease) {
  if (!lease.has_value()) return nullptr;
  return {{"owner", lease->owner}, {"generation", lease->generation}, {"ttl_ms", lease->ttl_ms}};
}

json halt_json(const std::optional<HaltView>& halt, std::int64_t now_ms) {
  if (!halt.has_value()) return nullptr;
  return {{"id", halt->id},
          {"reason", halt->reason},
          {"since_ms", halt->since_ms},
          {"halted_for_ms", now_ms - halt->since_ms},
          {"owner", halt->owner},
          {"delivery_count", halt->delivery_count}};
}

json group_json(const GroupView& g, std::int64_t now_ms) {
  json head = nullptr;
  if (g.head.has_value()) {
    head = {{"id", g.head->id},
            {"consumer", g.head->consumer},
            {"idle_ms", g.head->idle_ms},
            {"delivery_count", g.head->delivery_count}};
  }
  json lag = nullptr;
  if (g.lag.has_value()) lag = *g.lag;
  return {{"group", g.name},
          {"pending", g.pending},
          {"lag", lag},
          {"lease", lease_json(g.lease)},
          {"head", head},
          {"halted", g.halt.has_value()},
          {"halt", halt_json(g.halt, now_ms)}};
}

std::string lease_text(const std::optional<LeaseView>& lease) {
  if (!lease.has_value()) return "-";
  return lease->owner + ":" + std::to_string(lease->generation);
}

std::string ttl_text(const std::optional<LeaseView>& lease) {
  return lease.has_value() ? std::to_string(lease->ttl_ms) : "-";
}

std::string halt_line(const HaltView& halt, std::int64_t now_ms) {
  return "halted on " + halt.id + " since " + utc_text(halt.since_ms) + " (" +
         std::to_string((now_ms - halt.since_ms) / 1000) + " s) by " + halt.owner + " after " +
         std::to_string(halt.delivery_count) + " deliveries: " + halt.reason;
}

int run_partitions(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::CategoryView> view = admin.partitions(o.category);
  if (!view.ok()) return report_error(o, "partitions", view.error());
  const redis::CategoryView& v = view.value();
  const std::uint64_t count = v.partitions.size();
  std::string warning;
  if (count > o.warn_threshold) {
    warning = "category " + v.category + " has " + std::to_string(count) +
              " live partitions, more than the warn threshold " + std::to_string(o.warn_threshold);
  }
  if (o.json) {
    json partitions = json::array();
    for (const redis::PartitionView& p : v.partitions) {
      json groups = json::array();
      for (const GroupView& g : p.groups) groups.push_back(group_json(g, v.server_time_ms));
      partitions.push_back({{"key", p.key},
                            {"stream_exists", p.stream_exists},
                            {"length", p.length},
                            {"lease", lease_json(p.lease)},
                            {"groups", groups}});
    }
    json out = {{"category", v.category},
                {"server_time_ms", v.server_time_ms},
                {"partition_count", count},
                {"warn_threshold", o.warn_threshold},
                {"warning", warning.empty() ? json(nullptr) : json(warning)},
                {"partitions", partitions}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("category %s: %llu partitions (server time %s)\n", v.category.c_str(),
              static_cast<unsigned long long>(count), utc_text(v.server_time_ms).c_str());
  std::printf("%-16s %-24s %8s %7s %-12s %7s %5s %-17s %5s %s\n", "KEY", "OWNER:GEN", "LEASE_MS",
              "LENGTH", "GROUP", "PENDING", "LAG", "HEAD", "DELIV", "HALTED");
  std::string halts;
  for (const redis::PartitionView& p : v.partitions) {
    if (p.groups.empty()) {
      std::printf("%-16s %-24s %8s %7llu %-12s\n", p.key.c_str(), lease_text(p.lease).c_str(),
                  ttl_text(p.lease).c_str(), static_cast<unsigned long long>(p.length),
                  p.stream_exists ? "-" : "(no stream)");
    }
    for (const GroupView& g : p.groups) {
      const std::optional<LeaseView>& lease = g.lease.has_value() ? g.lease : p.lease;
      std::printf("%-16s %-24s %8s %7llu %-12s %7llu %5s %-17s %5s %s\n", p.key.c_str(),
                  lease_text(lease).c_str(), ttl_text(lease).c_str(),
                  static_cast<unsigned long long>(p.length), g.name.c_str(),
                  static_cast<unsigned long long>(g.pending),
                  g.lag.has_value() ? std::to_string(*g.lag).c_str() : "?",
                  g.head.has_value() ? g.head->id.c_str() : "-",
                  g.head.has_value() ? std::to_string(g.head->delivery_count).c_str() : "-",
                  g.halt.has_value() ? "yes" : "no");
      if (g.halt.has_value()) {
        halts += "  " + p.key + " / " + g.name + ": " + halt_line(*g.halt, v.server_time_ms) + "\n";
      }
    }
  }
  if (!halts.empty()) std::printf("halted:\n%s", halts.c_str());
  if (!warning.empty()) std::printf("warning: %s\n", warning.c_str());
  return kExitOk;
}

int run_inspect(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::InspectView> view = admin.inspect(o.category, o.key, o.group);
  if (!view.ok()) return report_error(o, "inspect", view.error());
  const redis::InspectView& v = view.value();
  const GroupView& g = v.status;
  std::string type;
  std::string data;
  for (const auto& [name, value] : v.fields) {
    if (name == "type") type = value;
    if (name == "data") data = value;
  }
  if (o.json) {
    json head = nullptr;
    if (g.head.has_value()) {
      json fields = json::object();
      for (const auto& [name, value] : v.fields) fields[name] = value;
      json data_value = json::parse(data, nullptr, false);
      if (data_value.is_discarded()) data_value = data.empty() ? json(nullptr) : json(data);
      head = {{"id", g.head->id},           {"consumer", g.head->consumer},
              {"idle_ms", g.head->idle_ms}, {"delivery_count", g.head->delivery_count},
              {"deleted", v.head_deleted},  {"type", type.empty() ? json(nullptr) : json(type)},
              {"data", data_value},         {"fields", fields}};
    }
    json lag = nullptr;
    if (g.lag.has_value()) lag = *g.lag;
    json out = {{"category", v.category},
                {"key", v.key},
                {"group", v.group},
                {"server_time_ms", v.server_time_ms},
                {"length", v.length},
                {"pending", g.pending},
                {"lag", lag},
                {"lease", lease_json(v.lease)},
                {"head", head},
                {"halted", g.halt.has_value()},
                {"halt", halt_json(g.halt, v.server_time_ms)},
                {"last_error", g.halt.has_value() ? json(g.halt->reason) : json(nullptr)}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("partition %s group %s\n", admin.partition_of(v.category, v.key).stream().c_str(),
              v.group.c_str());
  std::printf("  lease       %s (%s ms left)\n", lease_text(v.lease).c_str(),
              ttl_text(v.lease).c_str());
  std::printf("  length      %llu, pending %llu, lag %s\n",
              static_cast<unsigned long long>(v.length), static_cast<unsigned long long>(g.pending),
              g.lag.has_value() ? std::to_string(*g.lag).c_str() : "?");
  if (!g.head.has_value()) {
    std::printf("  head        none: nothing pending\n");
  } else {
    std::printf("  head        %s, delivered %llu times, held by %s (idle %lld ms)\n",
                g.head->id.c_str(), static_cast<unsigned long long>(g.head->delivery_count),
                g.head->consumer.c_str(), static_cast<long long>(g.head->idle_ms));
    if (v.head_deleted) std::printf("  fields      none: the entry was deleted from the stream\n");
    for (const auto& [name, value] : v.fields) {
      std::printf("  %-11s %s\n", name.c_str(), value.c_str());
    }
  }
  std::printf("  halted      %s\n",
              g.halt.has_value() ? halt_line(*g.halt, v.server_time_ms).c_str() : "no");
  std::printf("  last error  %s\n", g.halt.has_value() ? g.halt->reason.c_str() : "none recorded");
  return kExitOk;
}

int run_skip(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::SkipOutcome> done = admin.skip(o.category, o.key, o.group, o.id);
  if (!done.ok()) return report_error(o, "skip", done.error());
  const redis::SkipOutcome& d = done.value();
  const std::string stream = admin.partition_of(o.category, o.key).stream();
  if (o.json) {
    json out = {{"action", "skip"},
                {"category", o.category},
                {"key", o.key},
                {"group", d.group},
                {"id", d.id},
                {"acknowledged", true},
                {"halt_cleared", d.halted}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("skipped %s on %s for group %s: acknowledged without processing%s\n", d.id.c_str(),
              stream.c_str(), d.group.c_str(),
              d.halted ? "; halt cleared, the owner goes on with the next event" : "");
  return kExitOk;
}

int run_dlq(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::DlqOutcome> done = admin.dlq(o.category, o.key, o.group, o.id);
  if (!done.ok()) return report_error(o, "dlq", done.error());
  const redis::DlqOutcome& d = done.value();
  const std::string stream = admin.partition_of(o.category, o.key).stream();
  if (o.json) {
    json out = {{"action", "dlq"},
                {"category", o.category},
                {"key", o.key},
                {"group", d.group},
                {"id", d.id},
                {"dlq", d.dlq},
                {"dlq_id", d.dlq_id},
                {"acknowledged", true},
                {"halt_cleared", d.halted}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("moved %s on %s for group %s to %s as %s and acknowledged it%s\n", d.id.c_str(),
              stream.c_str(), d.group.c_str(), d.dlq.c_str(), d.dlq_id.c_str(),
              d.halted ? "; halt cleared, the owner goes on with the next event" : "");
  return kExitOk;
}

// "1 entry", "2 entries".
std::string counted(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

json fields_json(const std::vector<std::pair<std::string, std::string>>& fields) {
  json out = json::object();
  for (const auto& [name, value] : fields) out[name] = value;
  return out;
}

std::string field_of(const redis::DlqEntryView& entry, std::string_view name) {
  for (const auto& [field, value] : entry.fields) {
    if (field == name) return value;
  }
  return "-";
}

int run_halted(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::CategoryView> view = admin.partitions(o.category);
  if (!view.ok()) return report_error(o, "halted", view.error());
  const redis::CategoryView& v = view.value();
  struct Halted {
    const redis::PartitionView* partition;
    const GroupView* group;
  };
  std::vector<Halted> halted;
  for (const redis::PartitionView& p : v.partitions) {
    for (const GroupView& g : p.groups) {
      if (g.halt.has_value()) halted.push_back({&p, &g});
    }
  }
  if (o.json) {
    json list = json::array();
    for (const Halted& h : halted) {
      json entry = {{"key", h.partition->key}, {"group", h.group->name}};
      entry.update(halt_json(h.group->halt, v.server_time_ms));
      entry["pending"] = h.group->pending;
      list.push_back(entry);
    }
    json out = {{"category", v.category},
                {"server_time_ms", v.server_time_ms},
                {"partition_count", v.partitions.size()},
                {"halted_count", halted.size()},
                {"halted", list}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("category %s: %zu halted of %s (server time %s)\n", v.category.c_str(), halted.size(),
              counted(v.partitions.size(), "partition", "partitions").c_str(),
              utc_text(v.server_time_ms).c_str());
  if (halted.empty()) return kExitOk;
  std::printf("%-16s %-12s %-17s %7s %5s %-24s %s\n", "KEY", "GROUP", "HEAD", "AGE_S", "DELIV",
              "OWNER:GEN", "REASON");
  for (const Halted& h : halted) {
    const HaltView& halt = *h.group->halt;
    std::printf("%-16s %-12s %-17s %7lld %5llu %-24s %s\n", h.partition->key.c_str(),
                h.group->name.c_str(), halt.id.c_str(),
                static_cast<long long>((v.server_time_ms - halt.since_ms) / 1000),
                static_cast<unsigned long long>(halt.delivery_count), halt.owner.c_str(),
                halt.reason.c_str());
  }
  return kExitOk;
}

int run_dlq_list(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::DlqListView> view = admin.dlq_list(o.category, o.key, o.count_max);
  if (!view.ok()) return report_error(o, "dlq-list", view.error());
  const redis::DlqListView& v = view.value();
  if (o.json) {
    json entries = json::array();
    for (const redis::DlqEntryView& e : v.entries) {
      entries.push_back({{"id", e.id}, {"fields", fields_json(e.fields)}});
    }
    json out = {{"category", o.category},
                {"key", o.key},
                {"dlq", v.dlq},
                {"length", v.length},
                {"entries", entries}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("%s: %s", v.dlq.c_str(), counted(v.length, "entry", "entries").c_str());
  if (v.entries.size() < v.length) std::printf(" (the first %zu shown)", v.entries.size());
  std::printf("\n");
  if (v.entries.empty()) return kExitOk;
  std::printf("%-17s %-17s %-12s %5s %-12s %s\n", "ID", "SOURCE_ID", "GROUP", "DELIV", "TYPE",
              "REASON");
  for (const redis::DlqEntryView& e : v.entries) {
    std::printf("%-17s %-17s %-12s %5s %-12s %s\n", e.id.c_str(), field_of(e, "source_id").c_str(),
                field_of(e, "group").c_str(), field_of(e, "delivery_count").c_str(),
                field_of(e, "type").c_str(), field_of(e, "reason").c_str());
  }
  return kExitOk;
}

int run_dlq_show(const AdminOptions& o, redis::Admin& admin) {
  Result<redis::DlqEntryView> entry = admin.dlq_show(o.category, o.key, o.id);
  if (!entry.ok()) return report_error(o, "dlq-show", entry.error());
  const redis::DlqEntryView& e = entry.value();
  const std::string dlq = admin.partition_of(o.category, o.key).dlq();
  if (o.json) {
    const std::string data = field_of(e, "data");
    json data_value = json::parse(data, nullptr, false);
    if (data_value.is_discarded()) data_value = data == "-" ? json(nullptr) : json(data);
    json out = {{"category", o.category},
                {"key", o.key},
                {"dlq", dlq},
                {"id", e.id},
                {"data", data_value},
                {"fields", fields_json(e.fields)}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("entry %s of %s\n", e.id.c_str(), dlq.c_str());
  for (const auto& [name, value] : e.fields) {
    std::printf("  %-15s %s\n", name.c_str(), value.c_str());
  }
  return kExitOk;
}

int run_dlq_purge(const AdminOptions& o, redis::Admin& admin) {
  std::optional<std::string_view> before;
  if (!o.before_id.empty()) before = o.before_id;
  Result<redis::DlqPurgeOutcome> done = admin.dlq_purge(o.category, o.key, before);
  if (!done.ok()) return report_error(o, "dlq-purge", done.error());
  const redis::DlqPurgeOutcome& d = done.value();
  if (o.json) {
    json out = {{"action", "dlq-purge"},
                {"category", o.category},
                {"key", o.key},
                {"dlq", d.dlq},
                {"before", before ? json(o.before_id) : json(nullptr)},
                {"purged", d.purged},
                {"left", d.left}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("purged %s from %s%s; %llu left\n", counted(d.purged, "entry", "entries").c_str(),
              d.dlq.c_str(), before ? (" with an id before " + o.before_id).c_str() : "",
              static_cast<unsigned long long>(d.left));
  return kExitOk;
}

int run_dlq_replay(const AdminOptions& o, redis::Admin& admin) {
  if (!o.after_later_events) {
    return report_error(
        o, "dlq-replay",
        make_error(Errc::invalid,
                   "a replayed entry is appended to the tail of " +
                       admin.partition_of(o.category, o.key).stream() +
                       ", after every event published since it was moved, so it is applied "
                       "out of its original order: give --after-later-events to do that"));
  }
  Result<redis::DlqReplayOutcome> done = admin.dlq_replay(o.category, o.key, o.id);
  if (!done.ok()) return report_error(o, "dlq-replay", done.error());
  const redis::DlqReplayOutcome& d = done.value();
  if (o.json) {
    json out = {{"action", "dlq-replay"},    {"category", o.category}, {"key", o.key},
                {"dlq_id", d.dlq_id},        {"stream", d.stream},     {"id", d.stream_id},
                {"after_later_events", true}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf(
      "replayed %s of %s to the tail of %s as %s, after every later event; deleted it "
      "from the DLQ\n",
      d.dlq_id.c_str(), admin.partition_of(o.category, o.key).dlq().c_str(), d.stream.c_str(),
      d.stream_id.c_str());
  return kExitOk;
}

int run_admin(const AdminOptions& o, int (*action)(const AdminOptions&, redis::Admin&)) {
  const std::optional<KeyLayout> layout = key_layout_option("seqby admin", o.key_layout, o.cluster);
  if (!layout.has_value()) return kExitUsage;
  Result<redis::RedisConfig> config = redis::parse_redis_url(o.redis_url);
  if (!config.ok()) {
    std::fprintf(stderr, "seqby admin: --redis: %s\n", config.error().message.c_str());
    return kExitUsage;
  }
  if (!cluster_database_fits("seqby admin", o.cluster, config.value().db)) return kExitUsage;
  if (o.cluster) {
    // The cluster link follows MOVED and ASK (a bounded number of times) and refuses, unsent, a
    // command whose keys span slots: the routing worker and publish use, not a second one.
    redis::RealRuntime runtime;
    redis::HiredisClusterLink link(runtime, config.value());
    redis::Admin admin(runtime, link, *layout);
    return action(o, admin);
  }
  redis::BlockingRedis connection(config.value());
  redis::Admin admin(connection, *layout);
  return action(o, admin);
}

// Adds `name` under admin with the arguments every action shares: the category, and the key
// (and entry id) when it acts on one partition, as positional arguments.
CLI::App* add_action(CLI::App& admin, AdminOptions& options, const char* name, const char* about,
                     int arity, bool with_group = true,
                     const char* id_about = "The head entry id (as inspect shows it)") {
  CLI::App* action = admin.add_subcommand(name, about);
  action->add_option("category", options.category, "The stream category C")
      ->type_name("C")
      ->required();
  if (arity >= 2) {
    action->add_option("key", options.key, "The partition key K")->type_name("K")->required();
  }
  if (arity >= 3) {
    action->add_option("id", options.id, id_about)->type_name("ID")->required();
  }
  if (arity >= 2 && with_group) {
    action
        ->add_option("--group", options.group,
                     "The handler group G (may be left out when C:K has exactly one group)")
        ->type_name("G");
  }
  return action;
}

}  // namespace

void add_admin_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AdminOptions>();
  CLI::App* cmd = app.add_subcommand("admin", "Operator tooling on a live category");
  add_redis_option(cmd, options->redis_url);
  cmd->add_flag("--json", options->json, "Print one JSON object on stdout");
  add_cluster_option(cmd, options->cluster);
  cmd->add_option("--key-layout", options->key_layout,
                  "Key names: flat (the ADR's C:K, default) or cluster (C:{K}, as the workers "
                  "and publishers of the category use them)")
      ->type_name("LAYOUT");
  cmd->require_subcommand(1);
  cmd->fallthrough();  // --redis, --json and the layout options may also follow the action
  CLI::App* partitions = add_action(
      *cmd, *options, "partitions",
      "List the partitions: owner, lease, length; per group pending, lag, head, halt", 1);
  partitions
      ->add_option("--warn-threshold", options->warn_threshold,
                   "Warn when the category has more live partitions than N")
      ->type_name("N")
      ->default_val(1000);
  CLI::App* inspect = add_action(
      *cmd, *options, "inspect",
      "Show a partition's head event, its delivery count, its holder and the last error", 2);
  CLI::App* skip =
      add_action(*cmd, *options, "skip",
                 "Acknowledge head ID without processing it, only while ID is still the head", 3);
  CLI::App* dlq = add_action(*cmd, *options, "dlq",
                             "Move head ID to C:K:dlq and acknowledge it, only while ID is still "
                             "the head",
                             3);
  CLI::App* halted =
      add_action(*cmd, *options, "halted",
                 "List the halted partitions: key, group, head, how long ago, owner, reason", 1);
  CLI::App* dlq_list =
      add_action(*cmd, *options, "dlq-list", "List the entries of C:K:dlq, oldest first", 2, false);
  dlq_list->add_option("--count", options->count_max, "Show at most N entries")
      ->type_name("N")
      ->default_val(100)
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000}));
  CLI::App* dlq_show =
      add_action(*cmd, *options, "dlq-show", "Show every field of entry ID of C:K:dlq", 3, false,
                 "The DLQ entry id (as dlq-list shows it)");
  CLI::App* dlq_purge = add_action(
      *cmd, *options, "dlq-purge",
      "Delete every entry of C:K:dlq (with --before ID, those with a lower id), atomically", 2,
      false);
  dlq_purge
      ->add_option("--before", options->before_id,
                   "Delete only the entries whose id is lower than ID")
      ->type_name("ID");
  CLI::App* dlq_replay = add_action(
      *cmd, *options, "dlq-replay",
      "Append a copy of DLQ entry ID to the tail of C:K and delete it from the DLQ: it is applied "
      "AFTER every later event of the partition, out of its original order (only with "
      "--after-later-events)",
      3, false, "The DLQ entry id (as dlq-list shows it)");
  dlq_replay->add_flag("--after-later-events", options->after_later_events,
                       "Required: accept that the entry is applied after the events published "
                       "since it was moved to the DLQ");
  partitions->callback([&exit_code, options] { exit_code = run_admin(*options, run_partitions); });
  dlq_replay->callback([&exit_code, options] { exit_code = run_admin(*options, run_dlq_replay); });
  halted->callback([&exit_code, options] { exit_code = run_admin(*options, run_halted); });
  dlq_list->callback([&exit_code, options] { exit_code = run_admin(*options, run_dlq_list); });
  dlq_show->callback([&exit_code, options] { exit_code = run_admin(*options, run_dlq_show); });
  dlq_purge->callback([&exit_code, options] { exit_code = run_admin(*options, run_dlq_purge); });
  inspect->callback([&exit_code, options] { exit_code = run_admin(*options, run_inspect); });
  skip->callback([&exit_code, options] { exit_code = run_admin(*options, run_skip); });
  dlq->callback([&exit_code, options] { exit_code = run_admin(*options, run_dlq); });
}

}  // namespace seqby::apps
