// EngineSteps: the one seam between the engine and the designs the ADR rejects. An Engine asks
// its EngineSteps, chosen once when it is built, for the worker of each unit it serves and for
// how it takes its share of the discovered units. This base class is the design: a fair share of
// leases, each unit run by a PartitionWorker. A KNOWN-BROKEN variant (variant.h) derives from it
// and overrides only what it breaks, in a file of its own (core/src/variant_*.cpp) citing the
// ADR paragraph that rejects it; the engine's code never names a variant.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seqby/core/engine_env.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/lease.h"
#include "seqby/core/partition_worker.h"
#include "seqby/core/task.h"
#include "seqby/core/variant.h"

namespace seqby {

class Membership;  // discovery and fair sharing (core/src/membership.h)

class EngineSteps {
 public:
  EngineSteps() = default;
  virtual ~EngineSteps() = default;
  EngineSteps(const EngineSteps&) = delete;
  EngineSteps& operator=(const EngineSteps&) = delete;

  // The worker that serves the unit of `lease`. REQUIRES: env outlives the worker.
  virtual std::shared_ptr<PartitionWorker> make_worker(const EngineEnv& env, Lease lease) const;

  // Takes this instance's share of the units a discovery found (`keys`: sorted, unique, valid):
  // the design takes its fair share of their leases (Membership::take_fair_share).
  // REQUIRES: `membership` and `keys` outlive the returned Task.
  virtual Task<void> take_share(Membership& membership, const std::vector<std::string>& keys) const;
};

// The steps of `variant`: the design for Variant::correct, and for the variants whose broken
// step is in the broker (no_fence, group_at_dollar: redis_broker_options_for).
std::unique_ptr<EngineSteps> make_engine_steps(Variant variant);
// The steps an Engine built without any runs: make_engine_steps(options.variant).
std::unique_ptr<EngineSteps> engine_steps_for(const EngineOptions& options);

}  // namespace seqby
