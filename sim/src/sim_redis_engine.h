// The inside of SimRedis: its keyspace, value types and one handler per Redis command, split over
// sim/src/sim_redis_*.cpp by command family. Only SimRedis and its tests include this header; the
// data structures mirror Redis's (ordered stream entries, per-group and per-consumer pending lists)
// so that replies, including orderings, match Redis 7.0.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/clock.h"
#include "seqby/sim/blocking.h"
#include "seqby/sim/sim_redis.h"

namespace seqby::sim {

using redis::Command;
using redis::Reply;

inline constexpr char kErrWrongType[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kErrNotInteger[] = "ERR value is not an integer or out of range";
inline constexpr char kErrSyntax[] = "ERR syntax error";
inline constexpr char kErrNotFloat[] = "ERR value is not a valid float";
inline constexpr char kErrInvalidStreamId[] =
    "ERR Invalid stream ID specified as stream command argument";

struct StreamId {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;
  friend auto operator<=>(const StreamId&, const StreamId&) = default;
  bool is_zero() const { return ms == 0 && seq == 0; }
};
inline constexpr StreamId kMaxStreamId{UINT64_MAX, UINT64_MAX};

std::string format_stream_id(StreamId id);

struct StreamNack {
  std::string consumer;
  std::uint64_t delivery_time_ms = 0;
  std::uint64_t delivery_count = 1;
};

struct StreamConsumer {
  std::uint64_t seen_time_ms = 0;
  std::set<StreamId> pending;
};

struct StreamGroup {
  StreamId last_id;
  std::int64_t entries_read = -1;  // -1: unknown (Redis's SCG_INVALID_ENTRIES_READ)
  std::map<StreamId, StreamNack> pel;
  std::map<std::string, StreamConsumer> consumers;
};

// A listpack node of the stream's radix tree, modelled by entry count only: it decides what
// approximate trimming may remove and what XINFO STREAM reports as radix-tree-keys.
struct StreamNode {
  std::uint32_t live = 0;   // entries not deleted
  std::uint32_t total = 0;  // entries ever appended to this node
};

struct Stream {
  std::map<StreamId, std::vector<std::string>> entries;  // id -> field, value, field, value...
  std::map<StreamId, StreamNode> nodes;                  // keyed by the node's first id
  StreamId last_id;
  StreamId first_id;
  StreamId max_deleted_id;
  std::uint64_t entries_added = 0;
  std::map<std::string, StreamGroup> groups;
};

struct ZSet {
  std::map<std::string, double> scores;
  std::set<std::pair<double, std::string>> order;  // score, then member bytes, as Redis
};

// Small hashes in Redis keep insertion order (listpack); so does this one, at any size.
struct Hash {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::pair<std::string, std::string>>::iterator find(std::string_view field);
};

using Set = std::set<std::string>;

struct Value {
  std::variant<std::string, Set, Hash, ZSet, Stream> data;
  std::int64_t expire_at_ms = -1;  // -1: no expiry
};

class LuaScripting;

class SimRedisEngine {
 public:
  explicit SimRedisEngine(Clock& clock);
  ~SimRedisEngine();
  SimRedisEngine(const SimRedisEngine&) = delete;
  SimRedisEngine& operator=(const SimRedisEngine&) = delete;

  // A command from a client: reads the clock once, then dispatches.
  Reply execute(const Command& command);
  // A command issued by redis.call/redis.pcall inside a running script.
  Reply execute_from_script(const Command& command);
  // Whether `command` names a command (or a container's subcommand) this server knows, as
  // redis.acl_check_cmd looks it up; its arguments are not checked.
  bool knows_command(const Command& command) const;
  // A command from a client that can wait (sim_redis_blocking.cpp): as execute(), except that a
  // blocking XREAD with nothing to read blocks; `wake` is kept for it and its id returned.
  BlockResult execute_blocking(const Command& command, BlockWake wake);
  // Forgets a blocked read without serving it; false if it is not blocked (any more).
  bool unblock(BlockId id);
  std::size_t blocked_count() const { return blocked_.size(); }

  std::size_t key_count();
  bool key_exists(const std::string& key);
  std::size_t active_expire();
  std::size_t script_count();
  // Cluster mode (sim_redis_cluster.cpp): see SimRedis::enable_cluster_mode.
  void enable_cluster_mode() { cluster_ = true; }
  // Cluster nodes (sim_redis_cluster.cpp): see SimRedis::enable_cluster_nodes and the calls
  // after it.
  void enable_cluster_nodes(std::uint32_t shards);
  Reply execute_on_node(std::uint32_t node, const Command& command, bool asking);
  std::uint32_t shard_count() const { return static_cast<std::uint32_t>(shards_.size()); }
  std::uint32_t shard_of_slot(std::uint16_t slot) const { return slot_shard_.at(slot); }
  std::uint32_t master_of_shard(std::uint32_t shard) const { return shards_.at(shard).master; }
  bool begin_slot_migration(std::uint16_t slot, std::uint32_t to_shard);
  bool migrate_one_key();
  void end_slot_migration();
  void promote_replica(std::uint32_t shard);
  void begin_replica_lag(std::uint32_t shard);
  void lose_lagged_writes(std::uint32_t shard);
  bool replica_lagging() const { return lag_.has_value(); }
  SimRedis::Redirections redirections() const { return redirections_; }

  using Handler = Reply (SimRedisEngine::*)(const Command&);
  struct CommandSpec {
    Handler handler;
    int arity;      // Redis arity: n exact, -n at least n
    bool noscript;  // refused inside scripts
  };

 private:
  Reply dispatch(const Command& command, bool from_script);
  // In cluster mode, the refusal of a command whose keys are not all in one hash slot (for a
  // command of a script: in the script's slot); nullopt when it may run. `name` is the table's
  // name ("xgroup|create" for a container's subcommand).
  std::optional<Reply> cluster_refusal(std::string_view name, const Command& command,
                                       bool from_script);
  bool cluster_ = false;
  // Cluster nodes. A shard is a master and its replica, nodes 0..2n-1 (the masters first); the
  // data of every node is this one keyspace, each key on its slot's shard, except while a slot
  // migrates: then a key of it is on the importing shard once moved (migration_.moved).
  struct ClusterShard {
    std::uint32_t master = 0;
    std::uint32_t replica = 0;
  };
  struct SlotMigration {
    std::uint16_t slot = 0;
    std::uint32_t from = 0;  // shards
    std::uint32_t to = 0;
    std::set<std::string> moved;  // keys of the slot now on `to`
  };
  std::vector<ClusterShard> shards_;
  std::vector<std::uint32_t> slot_shard_;
  std::optional<SlotMigration> migration_;
  // A replica that stopped receiving its master's writes: the shard, and what the replica has
  // (every key then on the shard, in name order).
  struct ReplicaLag {
    std::uint32_t shard = 0;
    std::vector<std::pair<std::string, Value>> keys;
  };
  std::optional<ReplicaLag> lag_;
  // The keys on `shard` now (no slot migrating), in name order.
  std::vector<std::string> keys_on_shard(std::uint32_t shard);
  std::vector<std::set<std::string>> node_scripts_;  // per node: the shas it has seen
  std::int32_t node_ = -1;  // the node the running command was sent to; -1: not through a node
  bool asking_ = false;     // it came after ASKING
  SimRedis::Redirections redirections_;
  // The node routing of a command sent to node_ (Redis 7.0 cluster.c getNodeByQuery): nullopt
  // when node_ runs it, else MOVED, ASK or TRYAGAIN (inside a script: the non-local key error).
  std::optional<Reply> node_refusal(std::int32_t slot, const std::vector<std::string_view>& keys,
                                    bool from_script);
  // Whether `key` (of the migrating slot) is on shard `shard` now.
  bool key_on_shard(const std::string& key, std::uint32_t shard);
  // After a command ran on the importing shard: its keys that exist are on that shard.
  void note_imported(std::string_view name, const Command& command);
  Reply cmd_cluster(const Command& a);
  std::uint32_t shard_of_node(std::uint32_t node) const;
  // The hash slot the running script is bound to: its declared KEYS' slot, else the first key
  // it touched; -1 before either.
  std::int32_t script_slot_ = -1;

  // Keyspace. Every lookup hides keys past their expiry (and deletes them).
  Value* lookup(const std::string& key);
  bool expired(const Value& value) const;
  void remove_key(const std::string& key) { keys_.erase(key); }
  template <typename T>
  Value& create(const std::string& key) {
    Value& v = keys_[key];
    v.data = T{};
    v.expire_at_ms = -1;
    return v;
  }

  // Generic and strings (sim_redis_keys.cpp).
  Reply cmd_ping(const Command& a);
  Reply cmd_echo(const Command& a);
  Reply cmd_time(const Command& a);
  Reply cmd_type(const Command& a);
  Reply cmd_del(const Command& a);
  Reply cmd_exists(const Command& a);
  Reply cmd_keys(const Command& a);
  Reply cmd_dbsize(const Command& a);
  Reply cmd_flushall(const Command& a);
  Reply cmd_expire(const Command& a);
  Reply cmd_pexpire(const Command& a);
  Reply cmd_ttl(const Command& a);
  Reply cmd_pttl(const Command& a);
  Reply cmd_persist(const Command& a);
  Reply cmd_get(const Command& a);
  Reply cmd_set(const Command& a);
  Reply cmd_incr(const Command& a);
  Reply cmd_decr(const Command& a);
  Reply cmd_incrby(const Command& a);
  Reply cmd_decrby(const Command& a);
  Reply cmd_expireat(const Command& a);
  Reply cmd_pexpireat(const Command& a);
  Reply cmd_mget(const Command& a);
  Reply cmd_getdel(const Command& a);
  Reply expire_generic(const Command& a, std::int64_t unit_ms, bool absolute, const char* command);
  Reply ttl_generic(const Command& a, bool ms);
  Reply incr_generic(const std::string& key, std::int64_t by);

  // Sets, hashes, sorted sets (sim_redis_collections.cpp).
  Reply cmd_sadd(const Command& a);
  Reply cmd_srem(const Command& a);
  Reply cmd_smembers(const Command& a);
  Reply cmd_smove(const Command& a);
  Reply cmd_sunion(const Command& a);
  Reply cmd_sismember(const Command& a);
  Reply cmd_scard(const Command& a);
  Reply cmd_hset(const Command& a);
  Reply cmd_hget(const Command& a);
  Reply cmd_hmget(const Command& a);
  Reply cmd_hdel(const Command& a);
  Reply cmd_hgetall(const Command& a);
  Reply cmd_hincrby(const Command& a);
  Reply cmd_hexists(const Command& a);
  Reply cmd_hlen(const Command& a);
  Reply cmd_zadd(const Command& a);
  Reply cmd_zrem(const Command& a);
  Reply cmd_zscore(const Command& a);
  Reply cmd_zcard(const Command& a);
  Reply cmd_zcount(const Command& a);
  Reply cmd_zrange(const Command& a);
  Reply cmd_zrangebyscore(const Command& a);
  Reply cmd_zremrangebyscore(const Command& a);

  // Streams (sim_redis_streams.cpp).
  Reply cmd_xadd(const Command& a);
  Reply cmd_xlen(const Command& a);
  Reply cmd_xrange(const Command& a);
  Reply cmd_xrevrange(const Command& a);
  Reply cmd_xdel(const Command& a);
  Reply cmd_xtrim(const Command& a);
  Reply xrange_generic(const Command& a, bool rev);

  // Consumer groups (sim_redis_groups.cpp).
  Reply cmd_xreadgroup(const Command& a);
  Reply cmd_xread(const Command& a);
  Reply xread_generic(const Command& a, bool xreadgroup);
  Reply cmd_xack(const Command& a);
  Reply cmd_xpending(const Command& a);
  Reply cmd_xclaim(const Command& a);
  Reply cmd_xautoclaim(const Command& a);
  Reply cmd_xgroup(const Command& a);
  Reply cmd_xinfo(const Command& a);

  // Scripting (sim_redis_scripting.cpp).
  Reply cmd_eval(const Command& a);
  Reply cmd_evalsha(const Command& a);
  Reply cmd_script(const Command& a);
  Reply eval_generic(const Command& a, std::string_view sha, const std::string* body);

  // Blocked reads (sim_redis_blocking.cpp), as Redis 7.0's blocked.c keeps them.
  struct BlockedRead {
    std::vector<std::string> keys;  // each watched stream once
    std::int64_t count = 0;         // COUNT; 0: every entry
    BlockWake wake;
  };
  // The XREAD being run blocks on `streams` (key, the id it reads after; a repeated key keeps its
  // first id, as Redis's blockForKeys). REQUIRES: execute_blocking is running it.
  void block_current(const std::vector<std::pair<const std::string*, StreamId>>& streams,
                     std::int64_t count);
  // XADD added an entry to `key`: its readers are served once the client command has run.
  void signal_stream_ready(const std::string& key);
  // Serves the readers of the streams the command just run added entries to.
  void serve_blocked();

  Clock& clock_;
  std::uint64_t now_ms_ = 0;  // read once per client command; frozen while a script runs
  bool in_script_ = false;
  // Hashed: a lookup is one hash, not a string compare per tree level over keys that share long
  // prefixes. Nothing depends on its iteration order: counting and expiring visit every key,
  // and KEYS sorts what it returns.
  std::unordered_map<std::string, Value> keys_;
  // Looked up by a lower-cased std::string_view (no key string is built per command).
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>()(name);
    }
  };
  std::unordered_map<std::string, CommandSpec, NameHash, std::equal_to<>> commands_;
  std::unique_ptr<LuaScripting> lua_;
  BlockWake* block_wake_ = nullptr;  // set while execute_blocking runs its command
  BlockId blocked_now_ = 0;          // the id that command blocked under; 0: it did not
  BlockId block_next_ = 1;
  std::map<BlockId, BlockedRead> blocked_;  // by id, which is the order they blocked in
  // Stream key -> its readers (id, the id it reads after), in the order they blocked. Looked up
  // by key, never iterated: nothing depends on its order.
  std::unordered_map<std::string, std::vector<std::pair<BlockId, StreamId>>> blocked_on_;
  std::vector<std::string> ready_keys_;  // this command's streams with readers, in signal order
};

// Parsing helpers shared by the command families (sim_redis_parse.cpp), with Redis's rules.
namespace parse {
// Redis string2ll: optional '-', no leading zeros or '+', no spaces, fits in int64.
bool to_int64(std::string_view s, std::int64_t& out);
// Redis strtod-based float parsing (accepts inf/-inf, rejects nan and trailing garbage).
bool to_double(std::string_view s, double& out);
// Redis string2ull (string2ll, then strtoull as a fallback).
bool to_uint64(std::string_view s, std::uint64_t& out);
bool iequals(std::string_view a, std::string_view b);
std::string lower(std::string_view s);
std::string upper(std::string_view s);
// Formats a double as Redis does in RESP2 replies ("%.17g", inf, -inf).
std::string format_double(double d);
// Redis stringmatchlen: glob with * ? [...] and backslash escapes.
bool glob_match(std::string_view pattern, std::string_view text);
// Stream ids: strict (no - or +), with `missing_seq` when the seq is absent; `seq_given` is
// set false for the ms-* form when it is non-null.
bool stream_id(std::string_view s, StreamId& id, std::uint64_t missing_seq, bool strict,
               bool* seq_given);
// Interval ids: '-', '+', and an exclusive '(' prefix.
bool interval_id(std::string_view s, StreamId& id, bool& exclusive, std::uint64_t missing_seq);
bool incr_id(StreamId& id);
bool decr_id(StreamId& id);
}  // namespace parse

Reply arity_error(std::string_view name);
// An array reply of `elements`, moved in: Reply::array({...}) copies each element deeply.
template <typename... Replies>
Reply array_of(Replies&&... elements) {
  std::vector<Reply> out;
  out.reserve(sizeof...(Replies));
  (out.push_back(std::forward<Replies>(elements)), ...);
  return Reply::array(std::move(out));
}
// [id, [field, value, ...]] as XRANGE and friends reply one entry.
Reply stream_entry_reply(StreamId id, const std::vector<std::string>& fields);
// Redis's lag bookkeeping (t_stream.c): an estimate of the logical position of `id` in the
// stream's history, or -1 when unknown; and whether a tombstone lies in [start, end].
std::int64_t stream_estimate_distance(const Stream& s, StreamId id);
bool stream_range_has_tombstones(const Stream& s, StreamId start, StreamId end);
// Deletes one entry (XDEL semantics for nodes and length); false when it does not exist.
bool stream_delete_entry(Stream& s, StreamId id);
Reply id_reply(StreamId id);

}  // namespace seqby::sim
