// KNOWN-BROKEN message_lock (seqby/testing/variant.h). ADR decision 5, "We reject a per-message
// distributed lock", and Alternatives Considered: each instance serves every partition (as
// shared_group does) and takes a per-key lock (TTL, never renewed) around each event. Rejected: a
// handler slower than the lock lets a second instance run the next event of the key while the first
// still runs the previous one.
#include "variants.h"

namespace seqby::testing::variants {
namespace {

// Around each event the instance takes the key's lock (the lease key, NX with a fresh generation
// and a TTL, never renewed), reads the next entry as its shared-group consumer, runs it, acks it
// and releases the lock. A process manager's lock is its correlation value's lease key, taken for
// one event of any of its streams, round robin.
class MessageLockWorker final : public SharedGroupWorker {
 public:
  using SharedGroupWorker::SharedGroupWorker;

 protected:
  Task<void> process() override;
  // Acknowledged at once, under the lock (the lock is released before the next read), so a
  // handler's commit_with_step is made right after the handler, before that ack.
  bool commits_with_step() const override { return false; }
  Task<Step> handled(Lane& lane, const StreamEntry& entry) override {
    const Step acked = co_await ack(lane, entry.id);
    co_return acked;
  }
};

Task<void> MessageLockWorker::process() {
  const std::string scope = env_.options.lease_per_group ? env_.options.group : std::string();
  std::size_t at = 0;
  while (active()) {
    Lane& lane = lanes_[at];
    at = (at + 1) % lanes_.size();
    if (lane.halted) {  // the stream stays where it halted (no operator resume in this variant)
      co_await env_.runtime.sleep_ms(env_.options.poll_interval_ms);
      continue;
    }
    const Lease consumer = lane.lease;  // generation 0: this instance's consumer "O:0"
    const PartitionRef lock_unit = consumer.unit();
    Result<std::optional<Lease>> locked = co_await env_.broker.acquire(
        lock_unit, scope, env_.options.owner_id, env_.options.lease_ttl_ms);
    if (!locked.ok() || !locked.value().has_value()) {
      co_await env_.runtime.sleep_ms(env_.options.poll_interval_ms);
      continue;
    }
    // Reads, commits and acks are recorded under the lock.
    lane.lease = std::move(*locked.value());
    lane.lease.process_manager = consumer.process_manager;
    lane.lease.partition = consumer.partition;
    env_.record(HistoryOp::acquire, &lane.lease, "", "message lock");
    Result<std::optional<StreamEntry>> read =
        co_await env_.broker.fenced_read(consumer, env_.options.group, lane.from);
    Step step = Step::done;
    bool idle = false;
    std::string failure;
    if (!read.ok()) {
      lane.from = ReadFrom::pending;  // a lost reply may have left the entry pending for us
      idle = true;
    } else if (!read.value().has_value()) {
      idle = lane.from == ReadFrom::new_entries;
      lane.from = ReadFrom::new_entries;
    } else {
      const StreamEntry entry = std::move(*read.value());
      env_.record(HistoryOp::read, &lane.lease, entry.id,
                  "delivery=" + std::to_string(entry.delivery_count));
      step = co_await run_one(lane, entry, &failure);
      if (step == Step::failed) {
        lane.failures = entry.id == lane.failing_id ? lane.failures + 1 : 1;
        lane.failing_id = entry.id;
        lane.from = ReadFrom::pending;
        if (lane.failures > env_.options.retry_count_max) {
          lane.halted = true;
          lane.halt_id = entry.id;
          env_.record(HistoryOp::halt, &lane.lease, entry.id, "failed: " + failure);
        }
      } else {
        lane.failing_id.clear();
        lane.failures = 0;
      }
    }
    Result<bool> released = co_await env_.broker.release(lane.lease);
    if (released.ok() && released.value()) env_.record(HistoryOp::release, &lane.lease, "", "");
    lane.lease = consumer;
    if (step == Step::lost || step == Step::gave_up) co_return;
    if (idle || step == Step::failed) co_await env_.runtime.sleep_ms(env_.options.poll_interval_ms);
  }
}

class MessageLockSteps final : public SharedGroupSteps {
 public:
  std::shared_ptr<PartitionWorker> make_worker(const EngineEnv& env, Lease lease) const override {
    return std::make_shared<MessageLockWorker>(env, std::move(lease));
  }
};

}  // namespace

std::unique_ptr<EngineSteps> message_lock_steps() { return std::make_unique<MessageLockSteps>(); }

}  // namespace seqby::testing::variants
