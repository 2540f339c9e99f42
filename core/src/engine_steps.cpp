// The design's steps: every unit under a lease, a fair share of them, each run by a
// PartitionWorker.
#include "seqby/core/engine_steps.h"

namespace seqby {

std::shared_ptr<PartitionWorker> EngineSteps::make_worker(const EngineEnv& env, Lease lease) const {
  return std::make_shared<PartitionWorker>(env, std::move(lease));
}

Task<void> EngineSteps::take_share(UnitShare& share, const std::vector<std::string>& keys) const {
  return share.take_fair_share(keys);
}

}  // namespace seqby
