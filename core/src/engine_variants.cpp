// The KNOWN-BROKEN variants' own steps (variant.h): the designs the ADR rejects, kept so the
// harness proves it catches them. Nothing here runs unless EngineOptions::variant selects it,
// and nothing selects it outside a simulated run. The correct engine is engine.cpp and
// engine_worker.cpp; the single-line switches there point here.
#include "seqby/core/engine.h"

namespace seqby {
namespace {

// batch_unfenced: how many entries one lease-checked read hands out (the first included).
constexpr std::size_t kBatchEntryCount = 8;

}  // namespace

bool Engine::lease_free() const {
  return options_.variant == Variant::shared_group || options_.variant == Variant::message_lock;
}

// shared_group, message_lock (ADR Context, "A shared group cannot serialize a key"): the
// instance serves the partition with no lease at all. Its worker reads as consumer "O:0" of
// the one shared group, so the group hands different entries of the key to different
// instances. Generation 0 marks the missing lease (the heartbeat and finish() skip it).
void Engine::serve_without_lease(const std::string& key) {
  SlotPtr slot = make_slot(Lease{PartitionRef{unit_category_, key}, "", options_.owner_id, 0, ""});
  slots_[key] = slot;
  ++tasks_alive_;
  ++workers_alive_;
  runtime_.spawn("worker", worker(slot));
}

// message_lock (ADR decision 5, "We reject a per-message distributed lock"): around each event
// the instance takes the key's lock (the lease key, NX with a fresh generation and a TTL, never
// renewed), reads the next entry as its shared-group consumer, runs it, acks it and releases
// the lock. A handler slower than the lock's TTL lets another instance take the lock and run
// the key's next event while the first still runs the previous one.
// A process manager's lock is its correlation value's lease key, taken for one event of any of
// its streams, round robin.
Task<void> Engine::process_message_lock(Slot& slot) {
  const std::string scope = options_.lease_per_group ? options_.group : std::string();
  std::size_t at = 0;
  while (active(slot)) {
    Lane& lane = slot.lanes[at];
    at = (at + 1) % slot.lanes.size();
    if (lane.halted) {  // the stream stays where it halted (no operator resume in this variant)
      co_await runtime_.sleep_ms(options_.poll_interval_ms);
      continue;
    }
    const Lease consumer = lane.lease;  // generation 0: this instance's consumer "O:0"
    const PartitionRef lock_unit = consumer.unit();
    Result<std::optional<Lease>> locked =
        co_await broker_.acquire(lock_unit, scope, options_.owner_id, options_.lease_ttl_ms);
    if (!locked.ok() || !locked.value().has_value()) {
      co_await runtime_.sleep_ms(options_.poll_interval_ms);
      continue;
    }
    // Reads, commits and acks are recorded under the lock.
    lane.lease = std::move(*locked.value());
    lane.lease.process_manager = consumer.process_manager;
    lane.lease.partition = consumer.partition;
    record(HistoryOp::acquire, &lane.lease, "", "message lock");
    Result<std::optional<StreamEntry>> read =
        co_await broker_.fenced_read(consumer, options_.group, lane.from);
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
      record(HistoryOp::read, &lane.lease, entry.id,
             "delivery=" + std::to_string(entry.delivery_count));
      step = co_await run_one(slot, lane, entry, &failure);
      if (step == Step::failed) {
        lane.failures = entry.id == lane.failing_id ? lane.failures + 1 : 1;
        lane.failing_id = entry.id;
        lane.from = ReadFrom::pending;
        if (lane.failures > options_.retry_count_max) {
          lane.halted = true;
          lane.halt_id = entry.id;
          record(HistoryOp::halt, &lane.lease, entry.id, "failed: " + failure);
        }
      } else {
        lane.failing_id.clear();
        lane.failures = 0;
      }
    }
    Result<bool> released = co_await broker_.release(lane.lease);
    if (released.ok() && released.value()) record(HistoryOp::release, &lane.lease, "", "");
    lane.lease = consumer;
    if (step == Step::lost || step == Step::gave_up) co_return;
    if (idle || step == Step::failed) co_await runtime_.sleep_ms(options_.poll_interval_ms);
  }
}

// batch_unfenced (ADR decision 5, "the stale owner never reaches the next event"): after a
// fenced read of a new entry, the rest of the batch is read at once, so the whole batch rides
// on one lease check; take_turn() then enters the handler for each of them without checking the
// lease again.
Task<void> Engine::read_batch_rest(Lane& lane) {
  while (lane.batch.size() + 1 < kBatchEntryCount) {
    Result<std::optional<StreamEntry>> read =
        co_await broker_.fenced_read(lane.lease, options_.group, ReadFrom::new_entries);
    if (!read.ok() || !read.value().has_value()) co_return;
    StreamEntry entry = std::move(*read.value());
    record(HistoryOp::read, &lane.lease, entry.id,
           "delivery=" + std::to_string(entry.delivery_count));
    lane.batch.push_back(std::move(entry));
  }
}

}  // namespace seqby
