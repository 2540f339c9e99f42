// Heartbeat: the lease renewal of one engine instance (ADR decision 5). Every
// heartbeat_interval_ms it announces the instance as a live member of its group and renews the
// lease of every unit it holds. A refused renew, or no renew confirmed within a whole
// lease_ttl_ms, loses the unit at once (its worker stops before its next step).
#pragma once

#include <memory>

#include "seqby/core/engine_env.h"
#include "seqby/core/partition_worker.h"
#include "seqby/core/task.h"
#include "worker_set.h"

namespace seqby {

class Heartbeat {
 public:
  // REQUIRES: every reference outlives the heartbeat and its task.
  Heartbeat(const EngineEnv& env, const WorkerSet& workers) : env_(env), workers_(workers) {}
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // Beats until the instance stops and its last worker has ended.
  Task<void> loop();

 private:
  Task<void> renew_one(const std::shared_ptr<PartitionWorker>& worker);

  const EngineEnv& env_;
  const WorkerSet& workers_;
};

}  // namespace seqby
