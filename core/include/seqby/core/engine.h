// Engine: the ownership engine of one instance (ADR decisions 5, 6, 7; DESIGN section 4). It
// discovers the category's partitions from the maintained index, takes a fair share of their
// leases, renews them on a heartbeat, and runs one worker per owned partition with ONE event in
// flight: fenced read (the lease check before entering), handler, fenced ack. A FENCED reply or a
// refused renew ends that worker at once. A head that keeps failing halts its partition (nothing
// goes to a DLQ).
//
// It guarantees, through the broker's fence, that a stale instance never reads, acks or commits
// for a partition it lost, and never enters a next event of it. It does not un-run a handler
// already entered when the lease lapsed (the ADR's admitted residue). Nothing here knows whether
// it runs simulated or which broker it talks to.
//
// A process manager (EngineOptions::pm_categories) runs the same way with a correlation value X
// as its unit: X is discovered from the partition indexes of all its categories, one lease
// (__pm__:G:X:__lease__) covers the streams C:X of every category, and its worker takes ONE
// event at a time from them, round robin, each stream in order. A poison head halts its stream
// only; the process manager's other streams for X go on.
//
// Before it acquires anything, the engine subscribes its group to every category it serves
// (Broker::subscribe), so that no partition of them is reaped before the group has joined it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seqby/core/broker.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/handler.h"
#include "seqby/core/history.h"
#include "seqby/core/lease.h"
#include "seqby/core/runtime.h"

namespace seqby {

// What an instance holds for one partition, for tests, metrics and operators.
struct PartitionStatus {
  std::string key;  // the partition key, or a process manager's correlation value
  std::uint64_t generation = 0;
  bool halted = false;  // a stream of it halted
  std::string halt_id;  // the head entry the first halted stream halted on ("" unless halted)
};

class Engine {
 public:
  // REQUIRES: validate_engine_options(options).ok(); every reference outlives the engine and
  // its tasks.
  Engine(Runtime& runtime, Broker& broker, HistorySink& history, Handler& handler,
         EngineOptions options);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Spawns the tasks "discovery" and "heartbeat" on the runtime; workers ("worker") follow as
  // leases are taken. REQUIRES: not started before.
  void start();

  // Graceful stop: workers stop after their current event and release their leases (recorded
  // as `release`); then the instance leaves the membership. Returns when every task has ended,
  // or after options.stop_wait_max_ms.
  Task<void> stop();

  // The partitions this instance holds right now, sorted by key.
  std::vector<PartitionStatus> held() const;
  const EngineOptions& options() const { return options_; }
  // Tasks of this engine still running (0 after a completed stop).
  std::uint32_t tasks_alive() const { return tasks_alive_; }

 private:
  // One partition stream a slot reads: the partition itself, or for a process manager the
  // stream C:X of each subscribed category. Each keeps its own read position, retries and halt.
  struct Lane {
    Lease lease;  // the slot's lease acting on this stream
    ReadFrom from = ReadFrom::pending;
    std::string failing_id;  // the entry that failed last, and how many times in a row
    std::uint32_t failures = 0;
    std::uint32_t transport_failures = 0;  // broker calls in a row that got no answer
    bool halted = false;
    std::string halt_id;
    std::uint64_t head_check_ms = 0;       // when a halted head is looked at next
    std::int64_t commit_recorded_seq = 0;  // highest seq recorded as committed (this lease)
    std::deque<StreamEntry> batch;  // KNOWN-BROKEN batch_unfenced only: read, not yet handled
  };

  struct Slot {
    Lease lease;  // the unit's lease: the partition's, or a process manager's for a correlation
    std::vector<Lane> lanes;      // one per stream the lease covers, in category order
    bool lost = false;            // the lease is gone (fenced, renew refused): stop at once
    bool stop_requested = false;  // stop after the current event, then release
    bool released = false;        // the worker is releasing or has released the lease
    std::uint64_t last_renew_ok_ms = 0;
    std::uint64_t active_ms = 0;  // last acquire or read of an entry (the reaper's idle clock)
  };
  using SlotPtr = std::shared_ptr<Slot>;

  enum class Step : std::uint8_t { done, failed, lost, gave_up };
  // What one turn on a lane came to: it did something, found nothing to do, or the worker ends.
  enum class Turn : std::uint8_t { worked, idle, ended };

  // Tasks.
  Task<void> discovery_loop();
  Task<void> heartbeat_loop();
  Task<void> worker(SlotPtr slot);

  // Discovery (decision 7) and fair sharing.
  Task<void> discover_once();
  // Subscribes the group to each category it serves; true once every subscribe succeeded.
  Task<bool> subscribe_categories();
  Task<std::uint64_t> live_member_count();
  std::vector<std::string> acquire_order(std::vector<std::string> keys) const;
  Task<bool> try_acquire(const std::string& key);
  // A slot for `lease` with its lanes (one, or one per process-manager category).
  SlotPtr make_slot(Lease lease) const;
  bool process_manager() const { return !options_.pm_categories.empty(); }
  void warn_partition_count(std::size_t count);

  // Heartbeat (decision 5).
  Task<void> renew_one(const SlotPtr& slot);

  // Worker steps, each small and replaceable (variants swap single steps).
  Task<bool> prepare(Slot& slot);
  Task<void> process(Slot& slot);
  Task<Turn> take_turn(Slot& slot, Lane& lane);
  Task<Step> run_one(Slot& slot, Lane& lane, const StreamEntry& entry, std::string* failure);
  Task<Step> ack(Slot& slot, Lane& lane, const StreamEntry& entry);
  Task<void> finish(const SlotPtr& slot);

  // Operating partitions (decisions 6 and 7): the halt made visible in Redis, the halted head
  // watched for an operator's skip or dlq, and the reaping of a cold partition.
  Task<bool> halt(Slot& slot, Lane& lane, const StreamEntry& entry, const std::string& failure);
  Task<bool> head_resolved(Lane& lane);
  Task<bool> reap_if_cold(Slot& slot);

  // KNOWN-BROKEN variants (variant.h), in engine_variants.cpp: serving partitions without a
  // lease (shared_group, message_lock), the per-message lock loop, and the batch read.
  bool lease_free() const;
  void serve_without_lease(const std::string& key);
  Task<void> process_message_lock(Slot& slot);
  Task<void> read_batch_rest(Lane& lane);

  bool active(const Slot& slot) const { return !slot.lost && !slot.stop_requested; }
  void lose(Slot& slot, std::string detail);
  void record(HistoryOp op, const Lease* lease, std::string event_id, std::string detail);
  Task<void> transport_backoff(std::uint32_t attempt);

  Runtime& runtime_;
  Broker& broker_;
  HistorySink& history_;
  Handler& handler_;
  const EngineOptions options_;
  // Where leases and membership live: the category, or a process manager's __pm__:G.
  const std::string unit_category_;

  bool started_ = false;
  bool stopping_ = false;
  bool partitions_warned_ = false;  // the index is over partitions_warn_threshold (warned once)
  bool subscribed_ = false;         // the group is in every served category's subscriber set
  std::uint32_t tasks_alive_ = 0;
  std::uint32_t workers_alive_ = 0;
  std::map<std::string, SlotPtr> slots_;  // by partition key; ordered (determinism)
};

}  // namespace seqby
