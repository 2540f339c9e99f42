// SimRedis: a deterministic in-process Redis 7.0 for the simulator. It executes one command at a
// time, synchronously, and returns the reply real Redis 7.0.15 gives for the same sequence of
// commands (argument validation and error texts included), running Lua scripts on embedded Lua 5.1
// with Redis's reply conversions. It models one database, RESP2 replies, blocking XREAD, no
// pub/sub, no persistence.
//
// Blocking XREAD (execute_blocking): an XREAD ... BLOCK ms with nothing newer than its ids stays
// blocked until a command of any client (XADD, or a script that XADDs) adds an entry to one of its
// streams; right after that command it is served, as Redis 7.0 serves it, with the entries of that
// one stream. Blocked readers are served in a fixed order (streams in the order they got entries,
// each stream's readers in the order they blocked). SimRedis keeps no time for them: the caller
// ends a block by unblock() (its timeout, its connection gone). A stream deleted, or replaced by a
// value of another type, leaves its XREAD readers blocked, as in Redis 7.0.
//
// Known deviations, which a differential test against real Redis must allow for:
// - KEYS, SMEMBERS and SUNION return sorted results (real Redis: hash-table order; compare as
// sets).
//   Sets of integers come in numeric order, as from Redis's intset. Hashes keep insertion order
//   at any size (real Redis only up to 128 fields).
// - DBSIZE counts only keys not past their expiry (real Redis may still count expired keys that
//   its active expiry has not reached yet).
// - Stream listpack nodes are modelled by entry count (100) only, not by their 4096-byte limit:
//   MAXLEN/MINID ~ trimming and XINFO STREAM radix-tree-keys can differ for large entries, and
//   radix-tree-nodes is an estimate (keys + 1).
// - XINFO STREAM FULL, ZRANGE BYLEX and the HELP subcommands are not implemented; any command not
//   in the table of sim_redis.cpp is an unknown command.
// - Blocking: only XREAD blocks, and only through execute_blocking; execute() answers a blocking
//   XREAD at once as on a timeout (nil), and XREADGROUP ... BLOCK never blocks (it replies at once
//   as on a timeout). Blocking inside MULTI is not modelled (no MULTI).
// - Scripts: no cjson, bit, struct or cmsgpack libraries; existing fields of the library tables
//   are not write-protected; tostring() of a table shows a pointer, so a script must not use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "seqby/broker/reply.h"
#include "seqby/core/clock.h"
#include "seqby/sim/blocking.h"

namespace seqby::sim {

class SimRedisEngine;

class SimRedis {
 public:
  // Key expiry, TIME, stream ids and pending-entry times follow `server_clock` (milliseconds).
  // The clock may jump forward. `server_clock` must outlive this object.
  explicit SimRedis(Clock& server_clock);
  ~SimRedis();
  SimRedis(const SimRedis&) = delete;
  SimRedis& operator=(const SimRedis&) = delete;

  // Executes one command synchronously and deterministically and returns Redis 7.0's reply.
  // The clock is read once per command; a script sees that one time for its whole run.
  redis::Reply execute(const redis::Command& command);
  // As execute(), for a client that can wait: a blocking XREAD with nothing to read blocks and
  // returns its BlockId; `wake` is called once, later, with its reply (from inside the execute()
  // or execute_blocking() of the command whose write served it), unless unblock() ends it first.
  // REQUIRES: `wake` does not call into this SimRedis (it schedules work).
  BlockResult execute_blocking(const redis::Command& command, BlockWake wake);
  // Ends block `id` without a reply (its timeout passed, its connection closed): true if it was
  // still blocked, false if it was served (or ended) already.
  bool unblock(BlockId id);
  // Clients blocked now.
  std::size_t blocked_count() const;

  // Introspection for tests and checkers (no side effects): number of keys not past their
  // expiry, and whether `key` exists and is not past its expiry.
  std::size_t key_count();
  bool key_exists(const std::string& key);

  // Deletes every key past its expiry, as Redis's active expiry cycle eventually does.
  // Returns the number of keys deleted. Replies never depend on it: an expired key is never
  // visible to any command, whether or not it has been deleted yet.
  std::size_t active_expire();

  // Number of scripts in the script cache (EVAL and SCRIPT LOAD add, SCRIPT FLUSH empties).
  std::size_t script_count();

  // Cluster mode: this server stands for a Redis Cluster in which every hash slot is on a node
  // of its own, the harshest placement a real cluster may have (sim_redis_cluster.cpp). A
  // command whose keys span hash slots, and an EVAL/EVALSHA whose KEYS do, are refused with
  // Redis 7.0's `CROSSSLOT Keys in request don't hash to the same slot`; a command a script runs
  // on a key outside the script's slot (its KEYS' slot, else the first key it touched) fails as
  // Redis 7.0 fails a script touching a key of another node: `ERR Script attempted to access a
  // non local key in a cluster node script: SHA, on @user_script:LINE.`. (Redis 7.0 lets a
  // shebang-less script touch an undeclared key of another slot that the same node serves; no
  // client can rely on that, so the simulator refuses it.) Off by default.
  void enable_cluster_mode();

  // Cluster nodes: this server stands for a Redis Cluster of `shards` shards, each a master and
  // a replica (nodes 0..shards-1 the masters, then their replicas, at node_address), the slots
  // split in contiguous ranges as `redis-cli --cluster create` splits them. Implies cluster mode.
  // A command sent to one node (execute_on_node) is answered as Redis 7.0 answers it there
  // (cluster.c getNodeByQuery): MOVED when the node does not serve the slot (a replica
  // redirects too: no READONLY), ASK or TRYAGAIN while the slot migrates, and with `asking`
  // (ASKING right before it on its connection) run on the importing node. CLUSTER SLOTS gives
  // the map. Each node has its own script cache: EVALSHA of a script the node has not seen
  // (EVAL or SCRIPT LOAD there) is NOSCRIPT. Every node's data is the one keyspace: a key is on
  // its slot's shard, and while the slot migrates, on the importing shard once moved
  // (migrate_one_key) or written there. execute() still answers as before (no node): the
  // world's own reads. Deviation: the keys of a migrating slot move in name order.
  void enable_cluster_nodes(std::uint32_t shards);
  redis::Reply execute_on_node(std::uint32_t node, const redis::Command& command, bool asking);
  std::uint32_t shard_count() const;
  std::uint32_t shard_of_slot(std::uint16_t slot) const;
  std::uint32_t master_of_shard(std::uint32_t shard) const;
  // "sim-node-N", 7000 + N, "sim-node-N:700N"; node_of_address reads them back.
  static std::string node_host(std::uint32_t node);
  static std::uint16_t node_port(std::uint32_t node);
  static std::string node_address(std::uint32_t node);
  static std::optional<std::uint32_t> node_of_address(std::string_view host, std::uint16_t port);
  // A slot migration, the steps `redis-cli --cluster reshard` takes: SETSLOT IMPORTING and
  // MIGRATING (false when a migration or a replica lag is running or `slot` is on `to_shard`
  // already), one MIGRATE per key (false when no key is left to move), SETSLOT NODE on every node.
  bool begin_slot_migration(std::uint16_t slot, std::uint32_t to_shard);
  bool migrate_one_key();
  void end_slot_migration();
  // The shard's replica becomes its master and the master its replica (CLUSTER FAILOVER); the
  // data is as it was (a lagging replica's loss is the caller's to model).
  void promote_replica(std::uint32_t shard);
  // A lagging replica (asynchronous replication behind): from begin_replica_lag the shard's
  // replica receives nothing more; lose_lagged_writes makes the shard's keys what the replica
  // has (its master died: promote_replica follows once the cluster elects it), so every write to
  // the shard in between is gone. One lag at a time, never during a slot migration.
  void begin_replica_lag(std::uint32_t shard);
  void lose_lagged_writes(std::uint32_t shard);
  // A lag began and its lose_lagged_writes has not come yet.
  bool replica_lagging() const;
  // What the nodes answered instead of running a command (a script's own command included).
  struct Redirections {
    std::uint64_t moved = 0;
    std::uint64_t ask = 0;
    std::uint64_t tryagain = 0;
    std::uint64_t noscript = 0;  // EVALSHA of a script the node had not seen
  };
  Redirections redirections() const;

 private:
  std::unique_ptr<SimRedisEngine> engine_;
};

}  // namespace seqby::sim
