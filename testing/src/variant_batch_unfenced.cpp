// KNOWN-BROKEN batch_unfenced (seqby/testing/variant.h). ADR decision 5, "the stale owner never
// reaches the next event", and DESIGN section 4: one lease check covers a whole batch of reads; the
// handler is entered for each entry of the batch without checking the lease again. Rejected: a
// stale owner reaches the next event.
#include <deque>

#include "variants.h"

namespace seqby::testing::variants {
namespace {

// How many entries one lease-checked read hands out (the first included).
constexpr std::size_t kBatchEntryCount = 8;

// After a fenced read of a new entry, the rest of the batch is read at once, so the whole batch
// rides on one lease check; each later turn then takes the next entry of the batch into the
// handler without checking the lease again. Like the shared process_batch loop (ADR Context), a
// failed entry stays pending and the batch goes on with its next entry.
class BatchUnfencedWorker final : public PartitionWorker {
 public:
  BatchUnfencedWorker(const EngineEnv& env, Lease lease)
      : PartitionWorker(env, std::move(lease)), batches_(lanes_.size()) {}

 protected:
  Task<Next> next_entry(Lane& lane) override {
    std::deque<StreamEntry>& batch = batch_of(lane);
    if (!batch.empty()) {
      // The entry handled before is acknowledged by itself (no read carries its ack).
      const bool acked = co_await ack_handled(lane);
      if (!acked) co_return Turn::ended;
      // Read with its batch, long before: it enters the handler with no lease check since.
      StreamEntry entry = std::move(batch.front());
      batch.pop_front();
      co_return std::move(entry);
    }
    // The first entry through the design's one-entry read (its lease check): the rest of the
    // batch is this variant's own reads, with no check before entering any of them.
    Next next = co_await next_entry_of(lane, 1);
    if (next.entry.has_value() && lane.from == ReadFrom::new_entries) {
      co_await read_batch_rest(lane, batch);
    }
    co_return std::move(next);
  }

 private:
  std::deque<StreamEntry>& batch_of(const Lane& lane) {
    const auto at = static_cast<std::size_t>(&lane - lanes_.data());
    SEQBY_CHECK(at < batches_.size());
    return batches_[at];
  }

  Task<void> read_batch_rest(Lane& lane, std::deque<StreamEntry>& batch) {
    while (batch.size() + 1 < kBatchEntryCount) {
      Result<std::optional<StreamEntry>> read =
          co_await env_.broker.fenced_read(lane.lease, env_.options.group, ReadFrom::new_entries);
      if (!read.ok() || !read.value().has_value()) co_return;
      StreamEntry entry = std::move(*read.value());
      env_.record(HistoryOp::read, &lane.lease, entry.id,
                  "delivery=" + std::to_string(entry.delivery_count));
      batch.push_back(std::move(entry));
    }
  }

  std::vector<std::deque<StreamEntry>> batches_;  // per lane: read, not yet handled
};

}  // namespace

std::unique_ptr<EngineSteps> batch_unfenced_steps() {
  return std::make_unique<WorkerSteps<BatchUnfencedWorker>>();
}

}  // namespace seqby::testing::variants
