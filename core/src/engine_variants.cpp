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
  auto slot = std::make_shared<Slot>();
  slot->lease = Lease{PartitionRef{options_.category, key}, "", options_.owner_id, 0};
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
Task<void> Engine::process_message_lock(Slot& slot) {
  const Lease consumer = slot.lease;  // generation 0: this instance's consumer "O:0"
  const std::string scope = options_.lease_per_group ? options_.group : std::string();
  ReadFrom from = ReadFrom::pending;
  std::string failing_id;
  std::uint32_t failures = 0;
  while (active(slot)) {
    if (slot.halted) {  // as in process(): the key stays where it halted
      co_await runtime_.sleep_ms(options_.poll_interval_ms);
      continue;
    }
    Result<std::optional<Lease>> locked = co_await broker_.acquire(
        consumer.partition, scope, options_.owner_id, options_.lease_ttl_ms);
    if (!locked.ok() || !locked.value().has_value()) {
      co_await runtime_.sleep_ms(options_.poll_interval_ms);
      continue;
    }
    slot.lease = std::move(*locked.value());  // reads, commits and acks are recorded under it
    record(HistoryOp::acquire, &slot.lease, "", "message lock");
    Result<std::optional<StreamEntry>> read =
        co_await broker_.fenced_read(consumer, options_.group, from);
    Step step = Step::done;
    bool idle = false;
    std::string failure;
    if (!read.ok()) {
      from = ReadFrom::pending;  // a lost reply may have left the entry pending for us
      idle = true;
    } else if (!read.value().has_value()) {
      idle = from == ReadFrom::new_entries;
      from = ReadFrom::new_entries;
    } else {
      const StreamEntry entry = std::move(*read.value());
      record(HistoryOp::read, &slot.lease, entry.id,
             "delivery=" + std::to_string(entry.delivery_count));
      step = co_await run_one(slot, entry, &failure);
      if (step == Step::failed) {
        failures = entry.id == failing_id ? failures + 1 : 1;
        failing_id = entry.id;
        from = ReadFrom::pending;
        if (failures > options_.retry_count_max) {
          slot.halted = true;
          slot.halt_id = entry.id;
          record(HistoryOp::halt, &slot.lease, entry.id, "failed: " + failure);
        }
      } else {
        failing_id.clear();
        failures = 0;
      }
    }
    Result<bool> released = co_await broker_.release(slot.lease);
    if (released.ok() && released.value()) record(HistoryOp::release, &slot.lease, "", "");
    slot.lease = consumer;
    if (step == Step::lost || step == Step::gave_up) co_return;
    if (idle || step == Step::failed) co_await runtime_.sleep_ms(options_.poll_interval_ms);
  }
}

// batch_unfenced (ADR decision 5, "the stale owner never reaches the next event"): after a
// fenced read of a new entry, the rest of the batch is read at once, so the whole batch rides
// on one lease check; process() then enters the handler for each of them without checking the
// lease again.
Task<void> Engine::read_batch_rest(Slot& slot, std::deque<StreamEntry>* batch) {
  while (batch->size() + 1 < kBatchEntryCount) {
    Result<std::optional<StreamEntry>> read =
        co_await broker_.fenced_read(slot.lease, options_.group, ReadFrom::new_entries);
    if (!read.ok() || !read.value().has_value()) co_return;
    StreamEntry entry = std::move(*read.value());
    record(HistoryOp::read, &slot.lease, entry.id,
           "delivery=" + std::to_string(entry.delivery_count));
    batch->push_back(std::move(entry));
  }
}

}  // namespace seqby
