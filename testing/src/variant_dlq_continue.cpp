// KNOWN-BROKEN dlq_continue (seqby/testing/variant.h). ADR decision 6: a poison head halts its
// partition; moving it to the DLQ automatically and continuing was rejected, since the events after
// it depend on it.
#include "variants.h"

namespace seqby::testing::variants {
namespace {

// The exhausted head is acked and recorded as moved to the DLQ by the engine, and the partition
// goes on with the next event, which may depend on it. The Broker seam has no DLQ append, so only
// the ack reaches the broker.
class DlqContinueWorker final : public PartitionWorker {
 public:
  using PartitionWorker::PartitionWorker;

 protected:
  Task<Turn> exhausted(Lane& lane, const StreamEntry& entry, const std::string&) override {
    const Step moved = co_await ack(lane, entry.id);
    if (moved != Step::done) co_return Turn::ended;
    env_.record(HistoryOp::dlq, &lane.lease, entry.id, "engine");
    lane.failing_id.clear();
    lane.failures = 0;
    co_return Turn::worked;
  }
};

}  // namespace

std::unique_ptr<EngineSteps> dlq_continue_steps() {
  return std::make_unique<WorkerSteps<DlqContinueWorker>>();
}

}  // namespace seqby::testing::variants
