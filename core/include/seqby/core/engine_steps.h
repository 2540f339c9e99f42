// EngineSteps: the engine's extension seam (LevelDB EnvWrapper style). An Engine asks its
// EngineSteps, given once to its constructor, for the worker of each unit it serves and for how
// it takes its share of the discovered units. This base class is the design: a fair share of
// leases, each unit run by a PartitionWorker (partition_worker.h). A derived class overrides only
// the step it changes. seqby's own harness derives its KNOWN-BROKEN variants from it
// (seqby/testing/variant.h, outside the installed library); the engine's code never names one.
//
// What a step may use is this header, partition_worker.h and engine_env.h, nothing of the
// engine's private parts: take_share sees the instance's units through UnitShare only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seqby/core/engine_env.h"
#include "seqby/core/lease.h"
#include "seqby/core/partition_worker.h"
#include "seqby/core/task.h"

namespace seqby {

// The units one instance serves, as EngineSteps::take_share sees them (the engine's membership
// implements it): which units have a worker, starting a worker for one, and the design's fair
// share of leases. Valid only during the take_share call it is handed to.
class UnitShare {
 public:
  // The instance's dependencies and options.
  virtual const EngineEnv& env() const = 0;
  // The instance is stopping: nothing more may be launched.
  virtual bool stopping() const = 0;
  // A worker for unit `key` runs, or is still releasing its lease.
  virtual bool serves(const std::string& key) const = 0;
  // Starts the task "worker" running `worker` until it ends.
  // REQUIRES: !stopping(); !serves(the worker's unit key).
  virtual void launch(std::shared_ptr<PartitionWorker> worker) = 0;
  // The design's share of `keys` (sorted, unique, valid): acquires the leases of its fair share
  // (ceil(P / N), at most partitions_max), releasing the least preferred extras over it, and
  // launches EngineSteps::make_worker for each lease acquired. REQUIRES: `keys` outlives the Task.
  virtual Task<void> take_fair_share(const std::vector<std::string>& keys) = 0;

 protected:
  ~UnitShare() = default;
};

class EngineSteps {
 public:
  EngineSteps() = default;
  virtual ~EngineSteps() = default;
  EngineSteps(const EngineSteps&) = delete;
  EngineSteps& operator=(const EngineSteps&) = delete;

  // The worker that serves the unit of `lease`. REQUIRES: env outlives the worker.
  virtual std::shared_ptr<PartitionWorker> make_worker(const EngineEnv& env, Lease lease) const;

  // Whether the heartbeat renews every held lease in one batched step (Broker::renew_many) and
  // take_fair_share acquires by the batch (Broker::acquire_many): the design. false renews and
  // acquires one lease at a time (the previous release's protocol, a test fixture).
  virtual bool leases_by_batch() const { return true; }

  // Takes this instance's share of the units a discovery found (`keys`: sorted, unique, valid):
  // the design takes its fair share of their leases (UnitShare::take_fair_share).
  // REQUIRES: `share` and `keys` outlive the returned Task.
  virtual Task<void> take_share(UnitShare& share, const std::vector<std::string>& keys) const;
};

}  // namespace seqby
