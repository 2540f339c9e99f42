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
//
// The Engine keeps the lifecycle and owns its parts, each in a file of its own: the membership
// (discovery and fair share, core/src/membership.cpp), the heartbeat (core/src/heartbeat.cpp),
// and one PartitionWorker per unit held (partition_worker.h). Which worker runs a unit and how
// the share is taken come from its EngineSteps (engine_steps.h): the design unless the caller
// hands it others (seqby's own harness does, for its KNOWN-BROKEN variants).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "seqby/core/broker.h"
#include "seqby/core/engine_env.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/engine_steps.h"
#include "seqby/core/handler.h"
#include "seqby/core/history.h"
#include "seqby/core/partition_worker.h"
#include "seqby/core/runtime.h"

namespace seqby {

class Waker;

class WorkerSet;
class Membership;
class Heartbeat;

class Engine {
 public:
  // `steps` null: the design's, the base EngineSteps. REQUIRES:
  // validate_engine_options(options).ok(); every reference outlives the engine and its tasks.
  Engine(Runtime& runtime, Broker& broker, HistorySink& history, Handler& handler,
         EngineOptions options, std::unique_ptr<EngineSteps> steps = nullptr);
  ~Engine();
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
  const EngineOptions& options() const { return env_.options; }
  // Tasks of this engine still running (0 after a completed stop).
  std::uint32_t tasks_alive() const;
  // Index members discovery skipped because they cannot be partition keys, once each (for the
  // metrics; each was warned of in the history).
  std::uint64_t index_members_skipped() const;
  // How long the heartbeat's last rounds took (the announce and the renewal of every held lease,
  // ms), oldest first, at most 64. A round near lease_ttl_ms - heartbeat_interval_ms puts every
  // lease at risk.
  std::vector<std::uint64_t> heartbeat_rounds_ms() const;

 private:
  // Runs one of the engine's loops (discovery, heartbeat, waker) and counts it while it runs.
  Task<void> run_loop(Task<void> loop);

  EngineEnv env_;  // const but for env_.waker, set once in the constructor
  const std::unique_ptr<EngineSteps> steps_;
  const std::unique_ptr<Waker> waker_;
  const std::unique_ptr<StepBatcher> batcher_;  // null: a script per step
  const std::unique_ptr<WorkerSet> workers_;
  const std::unique_ptr<Membership> membership_;
  const std::unique_ptr<Heartbeat> heartbeat_;
  bool started_ = false;
  std::uint32_t loops_alive_ = 0;
};

}  // namespace seqby
