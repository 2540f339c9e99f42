// RedisBroker: the Broker over Redis 7 commands and the embedded Lua scripts of adapters/lua,
// sent through a RedisLink (a real server, the simulated one, or a fault-injecting wrapper).
// Every fenced call is one script that first checks `GET lease == O:N`; error replies are mapped
// to Errc in one place (FENCED -> fenced, NOGROUP -> no_group, anything else -> protocol).
// Scripts run by EVALSHA, loaded lazily with SCRIPT LOAD, falling back to EVAL on NOSCRIPT (and
// for good when the server refuses SCRIPT LOAD). Not thread-safe: one broker per link user.
//
// Every key name is built in seqby/core/keyspace.h; every script's KEYS, ARGV and reply are
// declared once in script_contracts.h, and every call here encodes and decodes through it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/redis_link.h"
#include "seqby/broker/script_contracts.h"
#include "seqby/core/broker.h"

namespace seqby::redis {

// The key names of the broker's own keys (built in seqby/core/keyspace.h; kept here for callers
// that name them redis::...).
using seqby::effects_hash_name;
using seqby::halt_key_name;
using seqby::member_key_name;
using seqby::members_set_name;
using seqby::sink_key_name;

struct RedisBrokerOptions {
  std::uint32_t reclaim_count_per_call = 100;   // XAUTOCLAIM COUNT
  std::uint32_t reclaim_calls_per_script = 10;  // XAUTOCLAIM calls inside one reclaim script
  std::uint32_t reclaim_scripts_max = 1000;     // reclaim scripts per reclaim() at most
  // KNOWN-BROKEN variants no_fence, shared_group, message_lock only (seqby/testing/variant.h,
  // redis_broker_options_for): read, ack and commit run the unfenced_* scripts (the fenced ones
  // with the lease check cut out by cmake/embed_scripts.cmake). Never by default.
  bool unfenced = false;
  // Where ensure_group creates the group: "0" (the design: the whole backlog is delivered).
  // "$" only for the KNOWN-BROKEN variant group_at_dollar (seqby/testing/variant.h).
  std::string group_start_id = "0";
  // The decision journal (docs/ARCHITECTURE.md "The decision journal"): with journal_maxlen > 0
  // every deciding script appends its decision to its lease unit's journal stream
  // (journal_stream_name), trimmed to about that many records (MAXLEN ~). Off (0) by default,
  // as in a production engine; on in every test, scenario and chaos run on real Redis.
  std::uint64_t journal_maxlen = 0;
  std::string journal_group;  // the group the journal's records name (the engine's group)
  // A process manager's categories (EngineOptions::pm_categories): acquire_many then takes a
  // correlation value X only while one of its streams C:X is a stream and none is a key of
  // another type. Empty: a process manager's units are taken whatever their keys hold. A
  // partition's own stream C:K is always looked at (docs/ARCHITECTURE.md "Index members that
  // are no partition").
  std::vector<std::string> pm_categories;
  // Told, once per unit for the broker's lifetime, why acquire_many did not take the lease of
  // an index member that is no partition ("no stream C:K", "C:K is a string, not a stream").
  std::function<void(const PartitionRef& unit, const std::string& why)> on_no_partition;
  // How key names are spelled (seqby/core/keyspace.h, docs/ARCHITECTURE.md "The cluster key
  // layout"): the ADR's flat names (the default), or the cluster layout's hash-tagged ones, where
  // every script touches one hash slot: publish and reap then run step by step across the index's
  // slot and the partition's, batches of leases are cut at slot boundaries, and the broker cannot
  // wait (a blocking read over many partitions spans slots: an engine on it polls). Every
  // partition the broker is given is spelled this way (the engine's leases come from acquire).
  KeyLayout key_layout = KeyLayout::flat;
  // The durability option (docs/ARCHITECTURE.md "What a failover keeps"): with wait_replicas > 0
  // every publish step, acquire, acquire_many, fenced_commit (also with the step) and a cluster
  // reap's stream delete (reap_stream, before its key leaves the index) is followed on its
  // connection by WAIT wait_replicas wait_timeout_ms (RedisLink::execute_replicated), and a
  // write fewer replicas acknowledged in time is answered Errc::timeout (it ran on the master
  // and may not outlive a failover: a publisher publishes again, an engine does not use the
  // lease, a handler's event fails and is retried, a reaped key goes back to the index). Off (0)
  // by default. The simulated links cannot wait (unsupported).
  std::uint32_t wait_replicas = 0;
  std::uint64_t wait_timeout_ms = 1000;
  // Broker::failovers_seen: what the link has seen (a ClusterLink's Stats::failovers_seen).
  // Empty: none seen (one server).
  std::function<std::uint64_t()> failovers_seen;
};

// The connections of a broker's wake channels (Broker::wake_channels): the link of channel N,
// asked for once, when channel N is first used (channel 0 first); nullptr when there is none.
// Each is a connection of its own: a blocking read holds its connection while it waits.
using WakeLinks = std::function<RedisLink*(std::size_t channel)>;

class RedisBroker final : public Broker {
 public:
  // The links a broker has at most for its blocking reads (see wake_channels).
  static constexpr std::size_t kWakeChannelsMax = 64;

  // REQUIRES: `link` and `wake_link` outlive the broker. `wake_link` (optional) is a connection
  // of its own for wait_for_entries' blocking read, the one wake channel: without one the
  // broker cannot wait (Errc::unsupported) and an engine on it polls.
  explicit RedisBroker(RedisLink& link, RedisBrokerOptions options = {},
                       RedisLink* wake_link = nullptr);
  // Up to kWakeChannelsMax wake channels, their links made by `wake_links` when first used.
  // `lease_link` (optional) is a connection of its own for renew_many, whose batches it sends
  // pipelined (RedisLink::execute_many): a heartbeat round then holds no fenced step back on
  // `link` behind its batches (docs/ARCHITECTURE.md "Leases by the batch"). Without it renew_many
  // goes over `link`, its batches one after another as before.
  // REQUIRES: `link`, `lease_link` and every link `wake_links` gives outlive the broker.
  RedisBroker(RedisLink& link, RedisBrokerOptions options, WakeLinks wake_links,
              RedisLink* lease_link = nullptr);

  CapabilitySet capabilities() const override;
  Task<Result<std::string>> publish(const PartitionRef& partition, std::string_view type,
                                    std::string_view data_json) override;
  // publish(), journaled with the caller's own publisher fields when journal.maxlen > 0 (its
  // node, seq and detail: seqby publish --journal-maxlen, a scenario's publisher; the stream,
  // category and key are filled here), in either key layout. publish() is this with the
  // options' journal_maxlen and no publisher fields.
  Task<Result<std::string>> publish_with_journal(const PartitionRef& partition,
                                                 std::string_view type, std::string_view data_json,
                                                 script::JournalTail journal);
  Task<Result<std::vector<std::string>>> partitions(std::string_view category) override;
  Task<Result<std::uint64_t>> partition_count(std::string_view category) override;
  Task<Status> subscribe(std::string_view category, std::string_view group) override;
  Task<Status> announce_member(std::string_view category, std::string_view group,
                               std::string_view owner_id, std::uint64_t ttl_ms) override;
  Task<Result<std::vector<std::string>>> live_members(std::string_view category,
                                                      std::string_view group) override;
  Task<Status> leave_members(std::string_view category, std::string_view group,
                             std::string_view owner_id) override;
  Task<Result<std::optional<Lease>>> acquire(const PartitionRef& partition, std::string_view scope,
                                             std::string_view owner_id,
                                             std::uint64_t ttl_ms) override;
  Task<Status> renew(const Lease& lease, std::uint64_t ttl_ms) override;
  Task<Result<bool>> release(const Lease& lease) override;
  Task<Status> check_lease(const Lease& lease) override;
  Task<Status> ensure_group(const PartitionRef& partition, std::string_view group) override;
  Task<Result<std::uint64_t>> reclaim(const Lease& lease, std::string_view group) override;
  Task<Result<std::uint64_t>> drop_stale_consumers(const Lease& lease,
                                                   std::string_view group) override;
  Task<Result<std::optional<StreamEntry>>> fenced_read(const Lease& lease, std::string_view group,
                                                       ReadFrom from) override;
  Task<Status> fenced_ack(const Lease& lease, std::string_view group, std::string_view id) override;
  Task<Result<CommitReply>> fenced_commit(const Lease& lease, std::string_view group,
                                          std::int64_t seq, std::string_view effect) override;
  Task<Status> record_halt(const Lease& lease, std::string_view group, std::string_view id,
                           std::string_view reason, std::uint64_t delivery_count) override;
  Task<Result<std::optional<std::string>>> pending_head(const PartitionRef& partition,
                                                        std::string_view group) override;
  // One reindex.lua (lease, streams, indexes) on one server; under the cluster key layout
  // reindex.lua without the indexes in the unit's slot, then an SADD in each index's slot for
  // each stream it found.
  Task<Result<bool>> reindex(const Lease& lease) override;
  Task<Result<bool>> reap(const Lease& lease, std::uint64_t idle_ms) override;
  using Broker::fenced_next;
  Task<Result<NextReply>> fenced_next(const Lease& lease, std::string_view group, ReadFrom from,
                                      std::string_view ack_id, NextAsk ask) override;
  // fenced_steps.lua, one script for every step (durable like fenced_commit when one commits);
  // one step is fenced_next's own script.
  Task<std::vector<Result<NextReply>>> fenced_steps(const std::vector<StepCall>& steps) override;
  // kStepsPerCallMax on the flat layout; 1 where a script may not span partitions (the cluster
  // layout: each partition's keys hash to a slot of their own) and for the unfenced variants
  // (their steps are fenced_next's unfenced scripts).
  std::size_t steps_per_call_max() const override;
  Task<std::vector<Status>> renew_many(const std::vector<Lease>& leases,
                                       std::uint64_t ttl_ms) override;
  // renew_many, whose scripts (and their EVALSHA commands, formatted once) are kept while the
  // caller passes the same set and TTL.
  Task<std::vector<Status>> renew_kept(std::shared_ptr<const std::vector<Lease>> leases,
                                       std::uint64_t ttl_ms) override;
  Task<Result<std::vector<std::optional<Lease>>>> acquire_many(
      const std::vector<PartitionRef>& partitions, std::string_view scope,
      std::string_view owner_id, std::uint64_t ttl_ms, std::size_t want) override;
  // 1 with one wake link, kWakeChannelsMax with WakeLinks.
  std::uint64_t failovers_seen() const override;
  // `partition` spelled in this broker's key layout (options.key_layout).
  PartitionRef laid_out(const PartitionRef& partition) const override;
  std::size_t wake_channels() const override;
  // XREAD COUNT 1 BLOCK block_ms over the streams and the channel's doorbell
  // (wake_stream_name), on the channel's wake link.
  Task<Result<std::vector<std::size_t>>> wait_for_entries(std::string_view unit_category,
                                                          std::string_view owner_id,
                                                          std::size_t channel,
                                                          const std::vector<WatchedStream>& streams,
                                                          std::uint64_t block_ms) override;
  Task<Status> ring_wake(std::string_view unit_category, std::string_view owner_id,
                         std::size_t channel) override;

  // Leases per renew_many script and partitions per acquire_many script: a script holds the
  // server for its whole run, so a batch is bounded (about 2.5 ms of server time, 2-3 us per
  // lease: every other client's command, a woken worker's read too, may wait behind one batch;
  // bench/real_redis.md "Idle commands" measured a wake-up's p99 among 10,000 idle partitions
  // with it). 1,024 keeps an instance of 10,000 idle leases at 10 renew scripts a second.
  static constexpr std::size_t kLeaseBatchMax = 1024;
  // Steps per fenced_steps script: 32 steps hold the server about as long as 100 leases renewed
  // (bench/real_redis.md "Steps of many partitions in one script").
  static constexpr std::size_t kStepsPerCallMax = 32;
  // How long a doorbell outlives its last ring.
  static constexpr std::uint64_t kDoorbellTtlMs = 3'600'000;

  // Index members acquire_many found to be no partition, each counted once (for the metrics).
  std::uint64_t no_partition_units() const { return no_partition_seen_.size(); }
  // Distinct units remembered; beyond, one found to be no partition is not told of again.
  static constexpr std::size_t kNoPartitionUnitsMax = 10'000;

  // Runs the embedded script `name` with `call` (encoded by its contract, script_contracts.h):
  // EVALSHA, lazily loaded, EVAL on NOSCRIPT. The reply may be an error reply; only transport
  // failures are Result errors. REQUIRES: the script exists.
  Task<Result<Reply>> run_script(std::string_view name, ScriptCall call);

 private:
  // fenced_next with ask.commit: fenced_commit_next.lua, durable like fenced_commit.
  Task<Result<NextReply>> fenced_commit_next(const Lease& lease, std::string_view group,
                                             ReadFrom from, std::string_view ack_id,
                                             const NextAsk& ask);
  // SCRIPT LOAD of scripts_[index] over `via`: its sha, kept for the next call; "" when the
  // server refuses SCRIPT LOAD (script_load_refused_ then: EVAL from now on); a transport
  // failure as it came. One load at a time per script: a call that needs the sha while a load
  // is in flight waits for that load's answer and shares it (an instance whose 10,000 workers
  // release at once sends one SCRIPT LOAD, not 10,000).
  // REQUIRES: the frames of calls waiting on one load are destroyed with the loader's, or not
  // before it answers (a crash tears down every task of the instance at once).
  Task<Result<std::string>> load_script(std::size_t index, RedisLink& via);
  // `durable`: the write is one the durability option waits for (wait_replicas).
  Task<Result<Reply>> run_script(std::string_view name, ScriptCall call, bool durable);
  // The same over `via` (link_ or the lease link).
  Task<Result<Reply>> run_script(std::string_view name, ScriptCall call, bool durable,
                                 RedisLink& via);
  // The calls of one script for run_scripts, and the EVALSHA commands it made of them for the
  // script's sha `sha` (kept: a caller that runs the same calls again, renew_kept, sends them as
  // they are).
  struct Scripts {
    std::vector<ScriptCall> calls;
    std::vector<std::size_t> leases_per_call;  // renew_many's: the leases each call renews
    std::string sha;
    std::shared_ptr<const PreparedCommands> commands;
  };
  // Runs `name` once per call of `scripts` over `via` (not durable), the calls pipelined when
  // there are several (RedisLink::execute_prepared: EVALSHA each, a NOSCRIPT one run again by
  // run_script); one call is run_script's. One result per call, in order.
  Task<std::vector<Result<Reply>>> run_scripts(std::string_view name,
                                               std::shared_ptr<Scripts> scripts, RedisLink& via);
  // renew_many's scripts for `leases` (batches of kLeaseBatchMax, by slot on a cluster), and
  // what their replies say of each lease.
  std::shared_ptr<Scripts> renewal_scripts(const std::vector<Lease>& leases,
                                           std::uint64_t ttl_ms) const;
  Task<std::vector<Status>> renew_by(std::shared_ptr<Scripts> scripts);
  Task<Result<Reply>> eval(const char* source, const ScriptCall& call, std::string_view sha,
                           std::string_view name, bool durable, RedisLink& via);
  // The link renew_many goes over: the lease link when there is one, else link_.
  RedisLink& lease_link() { return lease_link_ != nullptr ? *lease_link_ : link_; }
  // The journal tail of a step under `lease` (empty when the journal is off).
  script::JournalTail journal_of(const Lease& lease) const;

  RedisLink& link_;
  RedisLink* lease_link_ = nullptr;
  // renew_kept's last set of leases, its TTL and its scripts.
  struct KeptRenewal {
    std::shared_ptr<const std::vector<Lease>> leases;
    std::uint64_t ttl_ms = 0;
    std::shared_ptr<Scripts> scripts;
  };
  KeptRenewal kept_renewal_;
  RedisBrokerOptions options_;
  // The link of wake channel N (nullptr: none); filled from wake_links_source_ when first used.
  std::vector<RedisLink*> wake_links_;
  WakeLinks wake_links_source_;
  // Per doorbell: the id of its last ring this broker's wait saw ("0-0" before any), after which
  // the next wait watches it.
  std::map<std::string, std::string> doorbell_seen_;
  struct ScriptLoad;  // a SCRIPT LOAD in flight and the calls waiting for its answer
  struct LoadedScript {
    std::string_view name;  // the embedded script's name (static storage)
    const char* source = nullptr;
    std::string sha;                      // "" until SCRIPT LOAD answered (or after NOSCRIPT)
    std::shared_ptr<ScriptLoad> loading;  // the load in flight, if any
  };
  // Index into scripts_ of `name`, added on first use. A flat list: a broker runs about a dozen
  // scripts, and this is looked up on every call.
  std::size_t script_index(std::string_view name);
  std::vector<LoadedScript> scripts_;
  bool script_load_refused_ = false;
  // The server's ACL refused SCARD (a least privilege written before discovery counted the
  // index): partition_count asks no more, and discovery reads the whole index as before.
  bool partition_count_refused_ = false;
  // The categories of `unit`: its own C, or a process manager's pm_categories (none when they
  // are not given); and the streams acquire_many looks at for it, C:K of each.
  std::vector<std::string> unit_categories(const PartitionRef& unit) const;
  std::vector<std::string> unit_streams(const PartitionRef& unit) const;
  void no_partition(const PartitionRef& unit, const std::string& why);
  std::set<std::string> no_partition_seen_;  // "category\nkey" of units told of

  // The cluster layout's publish (P0, P1, P2) and reap (R1, R2, R3), each step one script in one
  // slot (redis_broker_cluster.cpp).
  Task<Result<std::string>> publish_across_slots(const PartitionRef& partition,
                                                 std::string_view type, std::string_view data_json,
                                                 script::JournalTail journal);
  Task<Result<bool>> reap_across_slots(const Lease& lease, std::uint64_t idle_ms);
  // The end of the batch of `keys` that starts at `begin`: at most kLeaseBatchMax keys, and
  // with the cluster layout all of them in the hash slot of keys[begin].
  std::size_t batch_end(const std::vector<std::string>& keys, std::size_t begin) const;
};

}  // namespace seqby::redis
