// SimRedis's cluster mode (SimRedis::enable_cluster_mode): the key positions of every command of
// the table (Redis 7.0's key specs, for the commands SimRedis has) and the hash-slot rules of
// Redis 7.0 cluster.c getNodeByQuery (CROSSSLOT) and script.c scriptVerifyClusterState (a
// script's command on a key of another node), with every slot on a node of its own. With cluster
// nodes (SimRedis::enable_cluster_nodes) also getNodeByQuery's routing of a command sent to one
// node: MOVED, ASK and TRYAGAIN while a slot migrates, ASKING, CLUSTER SLOTS, and a script cache
// per node.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "seqby/core/check.h"
#include "seqby/core/keyspace.h"
#include "seqby/sim/sha1.h"
#include "seqby/sim/sim_redis.h"
#include "sim_redis_engine.h"

namespace seqby::sim {

namespace {

constexpr std::string_view kCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot";
constexpr std::string_view kNonLocal =
    "ERR Script attempted to access a non local key in a cluster node";
constexpr std::string_view kTryAgain = "TRYAGAIN Multiple keys request during rehashing of slot";
constexpr std::uint16_t kSlotCount = 16384;

std::string node_address(std::uint32_t node) { return SimRedis::node_address(node); }
// A node id as CLUSTER SLOTS shows it: 40 hex digits.
std::string node_id(std::uint32_t node) {
  std::string digits = std::to_string(node);
  return std::string(40 - digits.size(), '0') + digits;
}

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

std::string SimRedis::node_host(std::uint32_t node) { return "sim-node-" + std::to_string(node); }
std::uint16_t SimRedis::node_port(std::uint32_t node) {
  SEQBY_CHECK(node < 1000);
  return static_cast<std::uint16_t>(7000 + node);
}
std::string SimRedis::node_address(std::uint32_t node) {
  return node_host(node) + ":" + std::to_string(node_port(node));
}
std::optional<std::uint32_t> SimRedis::node_of_address(std::string_view host, std::uint16_t port) {
  const std::string_view prefix = "sim-node-";
  if (!host.starts_with(prefix) || port < 7000) return std::nullopt;
  const std::uint32_t node = port - 7000u;
  if (node_host(node) != host) return std::nullopt;
  return node;
}

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
    if (node_ >= 0) return node_refusal(slot, keys, false);
    return std::nullopt;
  }
  // Inside a script every slot but the script's is on another node.
  if (!one_slot) return Reply::error(std::string(kNonLocal));
  if (script_slot_ == -1) script_slot_ = slot;
  if (script_slot_ != slot) return Reply::error(std::string(kNonLocal));
  if (node_ >= 0) return node_refusal(slot, keys, true);
  return std::nullopt;
}

void SimRedisEngine::enable_cluster_nodes(std::uint32_t shards) {
  SEQBY_CHECK(shards >= 1 && shards <= 64);
  cluster_ = true;
  shards_.clear();
  for (std::uint32_t s = 0; s < shards; s++) shards_.push_back(ClusterShard{s, shards + s});
  // Contiguous ranges, as `redis-cli --cluster create` splits them (redis-cli.c
  // clusterManagerCommandCreate: 0-5460, 5461-10922, 10923-16383 for three).
  slot_shard_.assign(kSlotCount, 0);
  const float per_shard = static_cast<float>(kSlotCount) / static_cast<float>(shards);
  float cursor = 0.0f;
  long first = 0;
  for (std::uint32_t s = 0; s < shards; s++) {
    long last = std::lround(cursor + per_shard - 1);
    if (last > kSlotCount || s == shards - 1) last = kSlotCount - 1;
    if (last < first) last = first;
    for (long slot = first; slot <= last; slot++) slot_shard_[static_cast<std::size_t>(slot)] = s;
    first = last + 1;
    cursor += per_shard;
  }
  node_scripts_.assign(2 * std::size_t{shards}, {});
  migration_.reset();
}

std::uint32_t SimRedisEngine::shard_of_node(std::uint32_t node) const {
  for (std::uint32_t s = 0; s < shards_.size(); s++) {
    if (shards_[s].master == node || shards_[s].replica == node) return s;
  }
  SEQBY_CHECK(false);
  return 0;
}

Reply SimRedisEngine::execute_on_node(std::uint32_t node, const Command& command, bool asking) {
  SEQBY_CHECK(!shards_.empty() && node < node_scripts_.size());
  node_ = static_cast<std::int32_t>(node);
  asking_ = asking;
  Reply reply = execute(command);
  node_ = -1;
  asking_ = false;
  return reply;
}

bool SimRedisEngine::key_on_shard(const std::string& key, std::uint32_t shard) {
  if (lookup(key) == nullptr) return false;
  const bool moved = migration_->moved.count(key) > 0;
  return shard == (moved ? migration_->to : migration_->from);
}

std::optional<Reply> SimRedisEngine::node_refusal(std::int32_t slot,
                                                  const std::vector<std::string_view>& keys,
                                                  bool from_script) {
  const auto node = static_cast<std::uint32_t>(node_);
  const std::uint32_t shard = shard_of_node(node);
  const std::uint32_t owner = slot_shard_[static_cast<std::size_t>(slot)];
  const bool is_master = shards_[shard].master == node;
  const bool migrating = migration_ && migration_->slot == slot;
  const bool migrating_out = migrating && is_master && migration_->from == shard;
  const bool importing = migrating && is_master && migration_->to == shard;
  std::optional<Reply> refusal;
  std::size_t missing = 0;
  if (migrating_out || importing) {
    for (const std::string_view key : keys) {
      if (!key_on_shard(std::string(key), shard)) missing++;
    }
  }
  const std::string slot_text = std::to_string(slot);
  if (migrating_out && missing > 0) {
    // Redis 7.0: some keys here but not all: TRYAGAIN; none here: ASK the importing node.
    if (missing < keys.size()) {
      ++redirections_.tryagain;
      refusal = Reply::error(std::string(kTryAgain));
    } else {
      ++redirections_.ask;
      refusal =
          Reply::error("ASK " + slot_text + " " + node_address(shards_[migration_->to].master));
    }
  } else if (importing && asking_) {
    if (keys.size() > 1 && missing > 0) {
      ++redirections_.tryagain;
      refusal = Reply::error(std::string(kTryAgain));
    }
  } else if (owner != shard || !is_master) {
    // A replica (no READONLY) redirects like any node that does not serve the slot.
    ++redirections_.moved;
    refusal = Reply::error("MOVED " + slot_text + " " + node_address(shards_[owner].master));
  }
  // A script's own command that would be redirected fails the script (scriptVerifyClusterState).
  if (refusal && from_script) return Reply::error(std::string(kNonLocal));
  return refusal;
}

void SimRedisEngine::note_imported(std::string_view name, const Command& command) {
  for (const std::string_view key : command_keys(name, command)) {
    if (key_hash_slot(key) != migration_->slot) continue;
    std::string k(key);
    if (lookup(k) != nullptr) migration_->moved.insert(std::move(k));
  }
}

bool SimRedisEngine::begin_slot_migration(std::uint16_t slot, std::uint32_t to_shard) {
  SEQBY_CHECK(slot < kSlotCount && to_shard < shards_.size());
  if (migration_ || lag_ || slot_shard_[slot] == to_shard) return false;
  migration_ = SlotMigration{slot, slot_shard_[slot], to_shard, {}};
  return true;
}

bool SimRedisEngine::migrate_one_key() {
  SEQBY_CHECK(migration_.has_value());
  now_ms_ = clock_.now_ms();
  // The keys of the slot still on the source, in name order (CLUSTER GETKEYSINSLOT's order is
  // the slot's own; any fixed order serves).
  std::vector<std::string> left;
  for (const auto& [key, value] : keys_) {
    if (expired(value) || key_hash_slot(key) != migration_->slot) continue;
    if (migration_->moved.count(key) == 0) left.push_back(key);
  }
  if (left.empty()) return false;
  migration_->moved.insert(*std::min_element(left.begin(), left.end()));
  return true;
}

void SimRedisEngine::end_slot_migration() {
  SEQBY_CHECK(migration_.has_value());
  slot_shard_[migration_->slot] = migration_->to;
  migration_.reset();
}

void SimRedisEngine::promote_replica(std::uint32_t shard) {
  SEQBY_CHECK(shard < shards_.size());
  std::swap(shards_[shard].master, shards_[shard].replica);
  // A replica has no scripts of its own: the new master answers NOSCRIPT until they are loaded.
  node_scripts_[shards_[shard].master].clear();
}

std::vector<std::string> SimRedisEngine::keys_on_shard(std::uint32_t shard) {
  SEQBY_CHECK(!migration_.has_value());
  now_ms_ = clock_.now_ms();
  std::vector<std::string> keys;
  for (const auto& [key, value] : keys_) {
    if (!expired(value) && slot_shard_[key_hash_slot(key)] == shard) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

void SimRedisEngine::begin_replica_lag(std::uint32_t shard) {
  SEQBY_CHECK(shard < shards_.size() && !lag_.has_value());
  ReplicaLag lag{shard, {}};
  for (std::string& key : keys_on_shard(shard)) {
    Value copy = keys_.at(key);
    lag.keys.emplace_back(std::move(key), std::move(copy));
  }
  lag_ = std::move(lag);
}

void SimRedisEngine::lose_lagged_writes(std::uint32_t shard) {
  SEQBY_CHECK(lag_.has_value() && lag_->shard == shard);
  // The replica's data replaces the master's: every key of the shard is as it was at the lag's
  // start (expiry included: a lease that lapsed meanwhile is gone on the replica too).
  for (const std::string& key : keys_on_shard(shard)) keys_.erase(key);
  for (auto& [key, value] : lag_->keys) keys_[key] = std::move(value);
  lag_.reset();
}

Reply SimRedisEngine::cmd_cluster(const Command& a) {
  (void)a;
  if (shards_.empty()) return Reply::error("ERR This instance has cluster support disabled");
  auto endpoint = [](std::uint32_t node) {
    return Reply::array({Reply::bulk(SimRedis::node_host(node)),
                         Reply::of_int(SimRedis::node_port(node)), Reply::bulk(node_id(node))});
  };
  std::vector<Reply> ranges;
  for (std::uint32_t start = 0; start < kSlotCount;) {
    std::uint32_t end = start;
    while (end + 1 < kSlotCount && slot_shard_[end + 1] == slot_shard_[start]) end++;
    const ClusterShard& shard = shards_[slot_shard_[start]];
    ranges.push_back(Reply::array({Reply::of_int(start), Reply::of_int(end), endpoint(shard.master),
                                   endpoint(shard.replica)}));
    start = end + 1;
  }
  return Reply::array(std::move(ranges));
}

}  // namespace seqby::sim
