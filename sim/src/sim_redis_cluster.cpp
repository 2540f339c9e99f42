// SimRedis's cluster mode (SimRedis::enable_cluster_mode): the key positions of every command of
// the table (Redis 7.0's key specs, for the commands SimRedis has) and the hash-slot rules of
// Redis 7.0 cluster.c getNodeByQuery (CROSSSLOT) and script.c scriptVerifyClusterState (a
// script's command on a key of another node), with every slot on a node of its own.
#include <optional>
#include <string_view>
#include <vector>

#include "seqby/core/keyspace.h"
#include "sim_redis_engine.h"

namespace seqby::sim {

namespace {

constexpr std::string_view kCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot";
constexpr std::string_view kNonLocal =
    "ERR Script attempted to access a non local key in a cluster node";

// Commands whose only key is their first argument.
constexpr std::string_view kFirstKey[] = {
    "type",      "expire",   "pexpire", "expireat",  "pexpireat",     "ttl",
    "pttl",      "persist",  "get",     "set",       "getdel",        "incr",
    "decr",      "incrby",   "decrby",  "sadd",      "srem",          "smembers",
    "sismember", "scard",    "hset",    "hget",      "hmget",         "hdel",
    "hgetall",   "hincrby",  "hexists", "hlen",      "zadd",          "zrem",
    "zscore",    "zcard",    "zcount",  "zrange",    "zrangebyscore", "zremrangebyscore",
    "xadd",      "xlen",     "xrange",  "xrevrange", "xdel",          "xtrim",
    "xack",      "xpending", "xclaim",  "xautoclaim"};
// Commands whose every argument is a key.
constexpr std::string_view kAllKeys[] = {"del", "unlink", "exists", "mget", "sunion"};

template <std::size_t N>
bool among(const std::string_view (&names)[N], std::string_view name) {
  for (const std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

// The keys of `a` (table name `name`), in argument order.
std::vector<std::string_view> command_keys(std::string_view name, const Command& a) {
  std::vector<std::string_view> keys;
  if (among(kFirstKey, name)) {
    keys.push_back(a[1]);
  } else if (among(kAllKeys, name)) {
    for (std::size_t i = 1; i < a.size(); i++) keys.push_back(a[i]);
  } else if (name == "smove") {
    keys.push_back(a[1]);
    keys.push_back(a[2]);
  } else if (name.starts_with("xgroup|") || name.starts_with("xinfo|")) {
    if (a.size() > 2) keys.push_back(a[2]);
  } else if (name == "xread" || name == "xreadgroup") {
    for (std::size_t i = 1; i < a.size(); i++) {
      if (!parse::iequals(a[i], "streams")) continue;
      const std::size_t rest = a.size() - i - 1;
      for (std::size_t k = 0; k < rest / 2; k++) keys.push_back(a[i + 1 + k]);
      break;
    }
  } else if (name == "eval" || name == "evalsha") {
    std::int64_t numkeys = 0;
    if (parse::to_int64(a[2], numkeys) && numkeys > 0 &&
        numkeys <= static_cast<std::int64_t>(a.size()) - 3) {
      for (std::int64_t k = 0; k < numkeys; k++) keys.push_back(a[3 + static_cast<std::size_t>(k)]);
    }
  }
  return keys;
}

}  // namespace

std::optional<Reply> SimRedisEngine::cluster_refusal(std::string_view name, const Command& a,
                                                     bool from_script) {
  const std::vector<std::string_view> keys = command_keys(name, a);
  const bool script = name == "eval" || name == "evalsha";
  if (keys.empty()) {
    if (script) script_slot_ = -1;
    return std::nullopt;
  }
  const std::int32_t slot = key_hash_slot(keys.front());
  bool one_slot = true;
  for (const std::string_view key : keys) one_slot = one_slot && key_hash_slot(key) == slot;
  if (!from_script) {
    if (!one_slot) return Reply::error(std::string(kCrossSlot));
    if (script) script_slot_ = slot;
    return std::nullopt;
  }
  // Inside a script every slot but the script's is on another node.
  if (!one_slot) return Reply::error(std::string(kNonLocal));
  if (script_slot_ == -1) script_slot_ = slot;
  if (script_slot_ != slot) return Reply::error(std::string(kNonLocal));
  return std::nullopt;
}

}  // namespace seqby::sim
