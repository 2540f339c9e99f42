// KNOWN-BROKEN shared_group (seqby/testing/variant.h). ADR Context, "A Redis consumer group
// load-balances by message, not by key": every instance reads every partition through the one
// shared group, no lease, no fence (the broker runs the unfenced scripts:
// redis_broker_options_for). Rejected: the group hands two events of one key to two instances,
// which run them at the same time.
#include "variants.h"

namespace seqby::testing::variants {

// Without a lease there is nothing to reclaim under: the shared group has no notion of a dead
// owner.
Task<bool> SharedGroupWorker::reclaim(std::span<Lane>) { co_return true; }

std::shared_ptr<PartitionWorker> SharedGroupSteps::make_worker(const EngineEnv& env,
                                                               Lease lease) const {
  return std::make_shared<SharedGroupWorker>(env, std::move(lease));
}

// The instance serves every partition of the index with no lease at all. Its worker reads as
// consumer "O:0" of the one shared group, so the group hands different entries of the key to
// different instances. Generation 0 marks the missing lease (the heartbeat and the release skip
// it).
Task<void> SharedGroupSteps::take_share(UnitShare& share,
                                        const std::vector<std::string>& keys) const {
  const EngineEnv& env = share.env();
  for (const auto& key : keys) {
    if (share.stopping() || share.serves(key)) continue;
    Lease lease{env.broker.laid_out(PartitionRef{env.unit_category, key}), "", env.options.owner_id,
                0, ""};
    share.launch(make_worker(env, std::move(lease)));
  }
  co_return;
}

std::unique_ptr<EngineSteps> shared_group_steps() { return std::make_unique<SharedGroupSteps>(); }

}  // namespace seqby::testing::variants
