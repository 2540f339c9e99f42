// Engine: the ownership engine of one instance (ADR decisions 5, 6, 7; DESIGN section 4). It
// discovers the category's partitions from the maintained index, takes a fair share of their
// leases, renews them on a heartbeat, and runs one worker per owned partition with ONE event in
// flight: fenced read (the lease check before entering), handler, fenced ack. A FENCED reply or a refused renew ends
// that worker at once. A head that keeps failing halts its partition (nothing goes to a DLQ).
//
// It guarantees, through the broker's fence, that a stale instance never reads, acks or commits
// for a partition it lost, and never enters a next event of it. It does not un-run a handler
// already entered when the lease lapsed (the ADR's admitted residue). Nothing here knows whether
// it runs simulated or which broker it talks to.
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
  std::string key;
  std::uint64_t generation = 0;
  bool halted = false;
  std::string halt_id;  // the head entry the partition halted on ("" unless halted)
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
  struct Slot {
    Lease lease;
    bool lost = false;            // the lease is gone (fenced, renew refused): stop at once
    bool stop_requested = false;  // stop after the current event, then release
    bool released = false;        // the worker is releasing or has released the lease
    bool halted = false;
    std::string halt_id;
    std::uint64_t last_renew_ok_ms = 0;
    std::uint64_t active_ms = 0;  // last acquire or read of an entry (the reaper's idle clock)
    std::int64_t commit_recorded_seq = 0;  // highest seq recorded as committed (this lease)
  };
  using SlotPtr = std::shared_ptr<Slot>;

  enum class Step : std::uint8_t { done, failed, lost, gave_up };

  // Tasks.
  Task<void> discovery_loop();
  Task<void> heartbeat_loop();
  Task<void> worker(SlotPtr slot);

  // Discovery (decision 7) and fair sharing.
  Task<void> discover_once();
  Task<std::uint64_t> live_member_count();
  std::vector<std::string> acquire_order(std::vector<std::string> keys) const;
  Task<bool> try_acquire(const std::string& key);
  void warn_partition_count(std::size_t count);

  // Heartbeat (decision 5).
  Task<void> renew_one(const SlotPtr& slot);

  // Worker steps, each small and replaceable (variants swap single steps).
  Task<bool> prepare(Slot& slot);
  Task<void> process(Slot& slot);
  Task<Step> run_one(Slot& slot, const StreamEntry& entry, std::string* failure);
  Task<Step> ack(Slot& slot, const StreamEntry& entry);
  Task<void> finish(const SlotPtr& slot);

  // Operating partitions (decisions 6 and 7): the halt made visible in Redis, the halted head
  // watched for an operator's skip or dlq, and the reaping of a cold partition.
  Task<bool> halt(Slot& slot, const StreamEntry& entry, const std::string& failure,
                  std::uint32_t failures);
  Task<bool> head_resolved(Slot& slot);
  Task<bool> reap_if_cold(Slot& slot);

  // KNOWN-BROKEN variants (variant.h), in engine_variants.cpp: serving partitions without a
  // lease (shared_group, message_lock), the per-message lock loop, and the batch read.
  bool lease_free() const;
  void serve_without_lease(const std::string& key);
  Task<void> process_message_lock(Slot& slot);
  Task<void> read_batch_rest(Slot& slot, std::deque<StreamEntry>* batch);

  bool active(const Slot& slot) const { return !slot.lost && !slot.stop_requested; }
  void lose(Slot& slot, std::string detail);
  void record(HistoryOp op, const Lease* lease, std::string event_id, std::string detail);
  Task<void> transport_backoff(std::uint32_t attempt);

  Runtime& runtime_;
  Broker& broker_;
  HistorySink& history_;
  Handler& handler_;
  const EngineOptions options_;

  bool started_ = false;
  bool stopping_ = false;
  bool partitions_warned_ = false;  // the index is over partitions_warn_threshold (warned once)
  std::uint32_t tasks_alive_ = 0;
  std::uint32_t workers_alive_ = 0;
  std::map<std::string, SlotPtr> slots_;  // by partition key; ordered (determinism)
};

}  // namespace seqby
