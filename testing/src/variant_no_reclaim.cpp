// KNOWN-BROKEN no_reclaim (seqby/testing/variant.h). ADR decision 5, "Crash reclaim": a new owner
// does not take over the dead owner's pending entries. Rejected: the events in flight at the crash
// are lost or skipped.
#include "variants.h"

namespace seqby::testing::variants {
namespace {

// The dead owner's pending entries stay where they are.
class NoReclaimWorker final : public PartitionWorker {
 public:
  using PartitionWorker::PartitionWorker;

 protected:
  Task<bool> reclaim(std::span<Lane>) override { co_return true; }
};

}  // namespace

std::unique_ptr<EngineSteps> no_reclaim_steps() {
  return std::make_unique<WorkerSteps<NoReclaimWorker>>();
}

}  // namespace seqby::testing::variants
