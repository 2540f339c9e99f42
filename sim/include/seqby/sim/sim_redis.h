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
#include <string>

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

 private:
  std::unique_ptr<SimRedisEngine> engine_;
};

}  // namespace seqby::sim
