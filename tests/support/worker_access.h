// What the tests of the access to Redis of `seqby worker` and `seqby publish` share: their least
// privilege (README.md "The least privilege a worker needs") as the arguments of one ACL SETUSER,
// so that the README's lists and what those tests grant are spelled once; the worker's exit status
// for a refusal; its log lines.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "seqby/core/keyspace.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby/scenarios/redis_driver.h"

namespace seqby::testing {

// README "seqby worker": exit statuses. Redis refused the worker's credentials or permissions.
constexpr int kExitRedisRefused = 3;

// Waits (bounded) until worker `w` exits by itself; its status, or -100 when it did not.
inline int exit_status_of(scenarios::RedisScenarioDriver& d, scenarios::WorkerProcess* w) {
  int status = -100;
  d.wait_until([&] { return w->exited(&status); }, 15000);
  return status;
}

// The lines of `log` holding `needle`.
inline std::vector<std::string> lines_with(const std::string& log, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

// Every worker: what the scripts of adapters/lua it runs call, and its own commands.
inline const std::vector<std::string>& worker_acl_commands() {
  static const std::vector<std::string> commands = {"ping",
                                                    "eval",
                                                    "evalsha",
                                                    "script|load",
                                                    "del",
                                                    "exists",
                                                    "get",
                                                    "mget",
                                                    "set",
                                                    "incr",
                                                    "pexpire",
                                                    "type",
                                                    "time",
                                                    "hget",
                                                    "hset",
                                                    "sadd",
                                                    "srem",
                                                    "smembers",
                                                    "scard",
                                                    "xadd",
                                                    "xack",
                                                    "xautoclaim",
                                                    "xgroup|create",
                                                    "xgroup|delconsumer",
                                                    "xinfo|consumers",
                                                    "xinfo|groups",
                                                    "xinfo|stream",
                                                    "xlen",
                                                    "xpending",
                                                    "xrange",
                                                    "xrevrange",
                                                    "xread",
                                                    "xreadgroup"};
  return commands;
}

// Besides, a worker with the cluster layout (--cluster --key-layout cluster): the slot map, ASKING
// while a slot migrates, discovery's SUNION of the index and its reaping set, and the reap's two
// steps in the index's slot (reap_begin.lua, reap_end.lua).
inline const std::vector<std::string>& cluster_worker_acl_commands() {
  static const std::vector<std::string> commands = {"cluster|slots", "asking", "sunion", "smove",
                                                    "sismember"};
  return commands;
}

// What a worker with the cluster layout needs in all: both lists above.
inline std::vector<std::string> cluster_worker_acl_all_commands() {
  std::vector<std::string> all = worker_acl_commands();
  for (const std::string& command : cluster_worker_acl_commands()) all.push_back(command);
  return all;
}

// The keys of a worker with the cluster layout serving `category`: C:*, and the index's slot,
// where the reaping set and the publish intents lie ({C:__partitions__}:...).
inline std::vector<std::string> cluster_worker_acl_keys(const std::string& category) {
  return {category + ":*", "{" + partition_index_name(category) + "}:*"};
}

// `seqby publish` (publish.lua, the journal's XADD), and besides with the cluster layout the slot
// map and the publish intents in the index's slot (publish_intent.lua, publish_done.lua).
inline const std::vector<std::string>& publisher_acl_commands() {
  static const std::vector<std::string> commands = {"ping",        "eval", "evalsha",
                                                    "script|load", "xadd", "sadd"};
  return commands;
}
inline std::vector<std::string> cluster_publisher_acl_commands() {
  std::vector<std::string> all = publisher_acl_commands();
  for (const char* command : {"hincrby", "hdel", "cluster|slots", "asking"}) all.push_back(command);
  return all;
}

// ACL SETUSER `user` reset on >`password` -@all, +each of `commands` but `without` ("" for none),
// and a ~pattern each of `key_patterns`.
inline std::vector<std::string> acl_setuser(const std::string& user, const std::string& password,
                                            const std::vector<std::string>& commands,
                                            const std::vector<std::string>& key_patterns,
                                            const std::string& without = "") {
  std::vector<std::string> acl = {"ACL", "SETUSER", user, "reset", "on", ">" + password, "-@all"};
  for (const std::string& command : commands) {
    if (command != without) acl.push_back("+" + command);
  }
  for (const std::string& pattern : key_patterns) acl.push_back("~" + pattern);
  return acl;
}

// Runs `acl` (an ACL SETUSER: each node's ACL rules are its own) on every cluster node of `ports`:
// "" when each said OK, else the first node that did not and what it said.
inline std::string acl_on_every_node(const std::vector<std::uint16_t>& ports,
                                     const redis::Command& acl) {
  for (const std::uint16_t port : ports) {
    const Result<redis::Reply> made = scenarios::RedisCluster::run(port, acl);
    if (!made.ok()) return std::to_string(port) + ": " + made.error().message;
    if (made.value().str != "OK")
      return std::to_string(port) + ": " + redis::to_string(made.value());
  }
  return "";
}

// The ACL LOG entries (denials) of every node of `ports`, one line each: "PORT reason object".
inline std::vector<std::string> acl_denials(const std::vector<std::uint16_t>& ports) {
  std::vector<std::string> out;
  for (const std::uint16_t port : ports) {
    const Result<redis::Reply> log = scenarios::RedisCluster::run(port, {"ACL", "LOG"});
    if (!log.ok()) {
      out.push_back(std::to_string(port) + " ACL LOG: " + log.error().message);
      continue;
    }
    for (const redis::Reply& entry : log.value().elements) {
      std::string line = std::to_string(port);
      for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
        const std::string& field = entry.elements[i].str;
        if (field == "reason" || field == "object") line += " " + entry.elements[i + 1].str;
      }
      out.push_back(line);
    }
  }
  return out;
}

}  // namespace seqby::testing
