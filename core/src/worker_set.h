// WorkerSet: the units one engine instance serves right now, by key, each with its worker and
// the task "worker" that runs it. A unit stays in the set until its worker has released its
// lease, so discovery never takes it again while the worker still acts for it; the set holds at
// most one worker per unit. Ordered by key (std::map): every walk over it is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "seqby/core/engine_env.h"
#include "seqby/core/partition_worker.h"
#include "seqby/core/task.h"

namespace seqby {

class WorkerSet {
 public:
  using Map = std::map<std::string, std::shared_ptr<PartitionWorker>>;

  // REQUIRES: env outlives the set and its tasks.
  explicit WorkerSet(const EngineEnv& env) : env_(env) {}
  WorkerSet(const WorkerSet&) = delete;
  WorkerSet& operator=(const WorkerSet&) = delete;

  // Starts the task "worker" running `worker` for its unit until it ends. The task holds the
  // worker, so the worker outlives its task. REQUIRES: !serves(the worker's key).
  void launch(std::shared_ptr<PartitionWorker> worker);

  bool serves(const std::string& key) const { return workers_.count(key) != 0; }
  const Map& workers() const { return workers_; }
  // Counts every unit added to or removed from the set: while it stays the same, workers() holds
  // the very same workers in the same order.
  std::uint64_t changes() const { return changes_; }
  // Worker tasks still running.
  std::uint32_t alive() const { return alive_; }

  // The instance stops: every worker stops after its current event; discovery takes nothing more.
  void stop_all();
  bool stopping() const { return stopping_; }

 private:
  Task<void> run(std::shared_ptr<PartitionWorker> worker);

  const EngineEnv& env_;
  Map workers_;
  std::uint64_t changes_ = 0;
  std::uint32_t alive_ = 0;
  bool stopping_ = false;
};

}  // namespace seqby
