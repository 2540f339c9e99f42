// SimRedis's front: the command table with Redis 7.0 arities, dispatch with Redis's rejection
// texts (unknown command, unknown subcommand, wrong arity, refused in scripts), and the keyspace
// with lazy expiry against the server clock.
#include "seqby/sim/sim_redis.h"

#include "seqby/sim/sha1.h"
#include "sim_redis_engine.h"
#include "sim_redis_lua.h"

namespace seqby::sim {

namespace {

// Container commands: their subcommands are looked up as "name|sub", each with its own arity.
bool is_container(std::string_view lower_name) {
  return lower_name == "xgroup" || lower_name == "xinfo" || lower_name == "script" ||
         lower_name == "cluster";
}

void sanitize(std::string& text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
}

// A command name lower-cased into a fixed buffer (dispatch allocates nothing). A name longer
// than any command's is marked too long: it is unknown.
class LowerName {
 public:
  void append(std::string_view s) {
    if (s.size() > sizeof(bytes_) - size_) {
      too_long_ = true;
      return;
    }
    for (const char c : s) {
      bytes_[size_++] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  bool too_long() const { return too_long_; }
  std::string_view view() const { return std::string_view(bytes_, size_); }

 private:
  char bytes_[64];
  std::size_t size_ = 0;
  bool too_long_ = false;
};

Reply unknown_command(const Command& a) {
  std::string args;
  for (std::size_t i = 1; i < a.size() && args.size() < 128; i++) {
    args += "'" + a[i].substr(0, 128 - args.size()) + "' ";
  }
  std::string text =
      "ERR unknown command '" + a[0].substr(0, 128) + "', with args beginning with: " + args;
  sanitize(text);
  return Reply::error(text);
}

}  // namespace

SimRedisEngine::SimRedisEngine(Clock& clock) : clock_(clock) {
  using E = SimRedisEngine;
  commands_ = {
      {"ping", {&E::cmd_ping, -1, false}},
      {"echo", {&E::cmd_echo, 2, false}},
      {"time", {&E::cmd_time, 1, false}},
      {"type", {&E::cmd_type, 2, false}},
      {"del", {&E::cmd_del, -2, false}},
      {"unlink", {&E::cmd_del, -2, false}},
      {"exists", {&E::cmd_exists, -2, false}},
      {"keys", {&E::cmd_keys, 2, false}},
      {"dbsize", {&E::cmd_dbsize, 1, false}},
      {"flushall", {&E::cmd_flushall, -1, false}},
      {"flushdb", {&E::cmd_flushall, -1, false}},
      {"expire", {&E::cmd_expire, -3, false}},
      {"pexpire", {&E::cmd_pexpire, -3, false}},
      {"expireat", {&E::cmd_expireat, -3, false}},
      {"pexpireat", {&E::cmd_pexpireat, -3, false}},
      {"ttl", {&E::cmd_ttl, 2, false}},
      {"pttl", {&E::cmd_pttl, 2, false}},
      {"persist", {&E::cmd_persist, 2, false}},
      {"get", {&E::cmd_get, 2, false}},
      {"set", {&E::cmd_set, -3, false}},
      {"mget", {&E::cmd_mget, -2, false}},
      {"getdel", {&E::cmd_getdel, 2, false}},
      {"incr", {&E::cmd_incr, 2, false}},
      {"decr", {&E::cmd_decr, 2, false}},
      {"incrby", {&E::cmd_incrby, 3, false}},
      {"decrby", {&E::cmd_decrby, 3, false}},
      {"sadd", {&E::cmd_sadd, -3, false}},
      {"srem", {&E::cmd_srem, -3, false}},
      {"smembers", {&E::cmd_smembers, 2, false}},
      {"smove", {&E::cmd_smove, 4, false}},
      {"sunion", {&E::cmd_sunion, -2, false}},
      {"sismember", {&E::cmd_sismember, 3, false}},
      {"scard", {&E::cmd_scard, 2, false}},
      {"hset", {&E::cmd_hset, -4, false}},
      {"hget", {&E::cmd_hget, 3, false}},
      {"hmget", {&E::cmd_hmget, -3, false}},
      {"hdel", {&E::cmd_hdel, -3, false}},
      {"hgetall", {&E::cmd_hgetall, 2, false}},
      {"hincrby", {&E::cmd_hincrby, 4, false}},
      {"hexists", {&E::cmd_hexists, 3, false}},
      {"hlen", {&E::cmd_hlen, 2, false}},
      {"zadd", {&E::cmd_zadd, -4, false}},
      {"zrem", {&E::cmd_zrem, -3, false}},
      {"zscore", {&E::cmd_zscore, 3, false}},
      {"zcard", {&E::cmd_zcard, 2, false}},
      {"zcount", {&E::cmd_zcount, 4, false}},
      {"zrange", {&E::cmd_zrange, -4, false}},
      {"zrangebyscore", {&E::cmd_zrangebyscore, -4, false}},
      {"zremrangebyscore", {&E::cmd_zremrangebyscore, 4, false}},
      {"xadd", {&E::cmd_xadd, -5, false}},
      {"xlen", {&E::cmd_xlen, 2, false}},
      {"xrange", {&E::cmd_xrange, -4, false}},
      {"xrevrange", {&E::cmd_xrevrange, -4, false}},
      {"xdel", {&E::cmd_xdel, -3, false}},
      {"xtrim", {&E::cmd_xtrim, -4, false}},
      {"xreadgroup", {&E::cmd_xreadgroup, -7, false}},
      {"xread", {&E::cmd_xread, -4, false}},
      {"xack", {&E::cmd_xack, -4, false}},
      {"xpending", {&E::cmd_xpending, -3, false}},
      {"xclaim", {&E::cmd_xclaim, -6, false}},
      {"xautoclaim", {&E::cmd_xautoclaim, -6, false}},
      {"xgroup", {&E::cmd_xgroup, -2, false}},
      {"xgroup|create", {&E::cmd_xgroup, -5, false}},
      {"xgroup|setid", {&E::cmd_xgroup, -5, false}},
      {"xgroup|destroy", {&E::cmd_xgroup, 4, false}},
      {"xgroup|createconsumer", {&E::cmd_xgroup, 5, false}},
      {"xgroup|delconsumer", {&E::cmd_xgroup, 5, false}},
      {"xinfo", {&E::cmd_xinfo, -2, false}},
      {"xinfo|groups", {&E::cmd_xinfo, 3, false}},
      {"xinfo|consumers", {&E::cmd_xinfo, 4, false}},
      {"xinfo|stream", {&E::cmd_xinfo, -3, false}},
      {"eval", {&E::cmd_eval, -3, true}},
      {"evalsha", {&E::cmd_evalsha, -3, true}},
      {"script", {&E::cmd_script, -2, true}},
      {"script|load", {&E::cmd_script, 3, true}},
      {"script|exists", {&E::cmd_script, -3, true}},
      {"script|flush", {&E::cmd_script, -2, true}},
      {"cluster", {&E::cmd_cluster, -2, true}},
      {"cluster|slots", {&E::cmd_cluster, 2, true}},
  };
  lua_ = std::make_unique<LuaScripting>(*this);
}

SimRedisEngine::~SimRedisEngine() = default;

Reply SimRedisEngine::execute(const Command& command) {
  now_ms_ = clock_.now_ms();
  Reply reply = dispatch(command, false);
  // Redis serves blocked clients after the whole command (or script) ran, before the next one.
  if (!ready_keys_.empty()) serve_blocked();
  return reply;
}

Reply SimRedisEngine::execute_from_script(const Command& command) {
  return dispatch(command, true);
}

bool SimRedisEngine::knows_command(const Command& a) const {
  if (a.empty()) return false;
  LowerName name;
  name.append(a[0]);
  if (a.size() >= 2 && is_container(name.view())) {
    name.append("|");
    name.append(a[1]);
  }
  return !name.too_long() && commands_.find(name.view()) != commands_.end();
}

Reply SimRedisEngine::dispatch(const Command& a, bool from_script) {
  if (a.empty()) return Reply::error("ERR unknown command '', with args beginning with: ");
  LowerName fullname;
  fullname.append(a[0]);
  auto it = commands_.end();
  if (a.size() >= 2 && is_container(fullname.view())) {
    fullname.append("|");
    fullname.append(a[1]);
    if (!fullname.too_long()) it = commands_.find(fullname.view());
    if (it == commands_.end()) {
      if (from_script) return Reply::error("ERR Unknown Redis command called from script");
      std::string text = "ERR unknown subcommand '" + a[1].substr(0, 128) + "'. Try " +
                         parse::upper(a[0]) + " HELP.";
      sanitize(text);
      return Reply::error(text);
    }
  } else {
    if (!fullname.too_long()) it = commands_.find(fullname.view());
    if (it == commands_.end()) {
      if (from_script) return Reply::error("ERR Unknown Redis command called from script");
      return unknown_command(a);
    }
  }
  const CommandSpec& spec = it->second;
  const auto argc = static_cast<int>(a.size());
  if ((spec.arity > 0 && argc != spec.arity) || argc < -spec.arity) {
    if (from_script) {
      return Reply::error("ERR Wrong number of args calling Redis command from script");
    }
    return arity_error(fullname.view());
  }
  if (from_script && spec.noscript) {
    return Reply::error("ERR This Redis command is not allowed from script");
  }
  if (cluster_) {
    std::optional<Reply> refused = cluster_refusal(fullname.view(), a, from_script);
    if (refused.has_value()) return std::move(*refused);
  }
  if (node_ < 0) return (this->*spec.handler)(a);
  // Sent to a cluster node: its own script cache, and the keys an importing node now has.
  const auto node = static_cast<std::size_t>(node_);
  if (!from_script && fullname.view() == "evalsha" &&
      node_scripts_[node].count(parse::lower(a[1])) == 0) {
    ++redirections_.noscript;
    return Reply::error("NOSCRIPT No matching script. Please use EVAL.");
  }
  Reply reply = (this->*spec.handler)(a);
  if (!from_script && !reply.is_error()) {
    if (fullname.view() == "eval") node_scripts_[node].insert(sha1_hex_memo(a[1]));
    if (fullname.view() == "script|load") node_scripts_[node].insert(reply.str);
  }
  if (migration_ && shards_[migration_->to].master == node) note_imported(fullname.view(), a);
  return reply;
}

bool SimRedisEngine::expired(const Value& value) const {
  return value.expire_at_ms >= 0 && static_cast<std::int64_t>(now_ms_) > value.expire_at_ms;
}

Value* SimRedisEngine::lookup(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return nullptr;
  if (expired(it->second)) {
    keys_.erase(it);
    return nullptr;
  }
  return &it->second;
}

std::size_t SimRedisEngine::key_count() {
  const std::uint64_t saved = now_ms_;
  now_ms_ = clock_.now_ms();
  std::size_t n = 0;
  for (const auto& [key, value] : keys_) {
    if (!expired(value)) n++;
  }
  now_ms_ = saved;
  return n;
}

bool SimRedisEngine::key_exists(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return false;
  const std::uint64_t saved = now_ms_;
  now_ms_ = clock_.now_ms();
  const bool live = !expired(it->second);
  now_ms_ = saved;
  return live;
}

std::size_t SimRedisEngine::active_expire() {
  if (in_script_) return 0;  // Redis never expires keys while a script runs
  now_ms_ = clock_.now_ms();
  std::size_t n = 0;
  for (auto it = keys_.begin(); it != keys_.end();) {
    if (expired(it->second)) {
      it = keys_.erase(it);
      n++;
    } else {
      ++it;
    }
  }
  return n;
}

std::size_t SimRedisEngine::script_count() { return lua_->script_count(); }

SimRedis::SimRedis(Clock& server_clock) : engine_(std::make_unique<SimRedisEngine>(server_clock)) {}
SimRedis::~SimRedis() = default;
redis::Reply SimRedis::execute(const redis::Command& command) { return engine_->execute(command); }
BlockResult SimRedis::execute_blocking(const redis::Command& command, BlockWake wake) {
  return engine_->execute_blocking(command, std::move(wake));
}
bool SimRedis::unblock(BlockId id) { return engine_->unblock(id); }
std::size_t SimRedis::blocked_count() const { return engine_->blocked_count(); }
std::size_t SimRedis::key_count() { return engine_->key_count(); }
bool SimRedis::key_exists(const std::string& key) { return engine_->key_exists(key); }
std::size_t SimRedis::active_expire() { return engine_->active_expire(); }
std::size_t SimRedis::script_count() { return engine_->script_count(); }
void SimRedis::enable_cluster_mode() { engine_->enable_cluster_mode(); }
void SimRedis::enable_cluster_nodes(std::uint32_t shards) { engine_->enable_cluster_nodes(shards); }
redis::Reply SimRedis::execute_on_node(std::uint32_t node, const redis::Command& command,
                                       bool asking) {
  return engine_->execute_on_node(node, command, asking);
}
std::uint32_t SimRedis::shard_count() const { return engine_->shard_count(); }
std::uint32_t SimRedis::shard_of_slot(std::uint16_t slot) const {
  return engine_->shard_of_slot(slot);
}
std::uint32_t SimRedis::master_of_shard(std::uint32_t shard) const {
  return engine_->master_of_shard(shard);
}
bool SimRedis::begin_slot_migration(std::uint16_t slot, std::uint32_t to_shard) {
  return engine_->begin_slot_migration(slot, to_shard);
}
bool SimRedis::migrate_one_key() { return engine_->migrate_one_key(); }
void SimRedis::end_slot_migration() { engine_->end_slot_migration(); }
void SimRedis::promote_replica(std::uint32_t shard) { engine_->promote_replica(shard); }
void SimRedis::begin_replica_lag(std::uint32_t shard) { engine_->begin_replica_lag(shard); }
void SimRedis::lose_lagged_writes(std::uint32_t shard) { engine_->lose_lagged_writes(shard); }
bool SimRedis::replica_lagging() const { return engine_->replica_lagging(); }
SimRedis::Redirections SimRedis::redirections() const { return engine_->redirections(); }

}  // namespace seqby::sim
