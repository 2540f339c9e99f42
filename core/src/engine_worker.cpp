// The partition worker (DESIGN section 4): on acquire it creates the group at id 0, reclaims the
// older consumers' pending entries, drops empty old consumers, then processes its own pending
// entries in id order before new ones, ONE event in flight: fenced read (the lease check), handler,
// fenced ack. A FENCED reply anywhere ends it at once; a head that fails past the retry budget
// halts the partition (decision 6).
#include "seqby/core/engine.h"

namespace seqby {
namespace {

bool is_transport(Errc code) { return code == Errc::timeout || code == Errc::closed; }

}  // namespace

Task<void> Engine::worker(SlotPtr slot) {
  // g++ 12 miscompiles a co_await inside an if condition: await into a named value first.
  const bool prepared = co_await prepare(*slot);
  if (prepared && options_.variant == Variant::message_lock) {
    co_await process_message_lock(*slot);
  } else if (prepared) {
    co_await process(*slot);
  }
  co_await finish(slot);
  --workers_alive_;
  --tasks_alive_;
}

Task<bool> Engine::prepare(Slot& slot) {
  const std::uint32_t attempts_max = options_.transport_retry_count_max;
  for (std::uint32_t attempt = 1;; ++attempt) {
    if (!active(slot)) co_return false;
    Status created = co_await broker_.ensure_group(slot.lease.partition, options_.group);
    if (created.ok()) break;
    if (attempt >= attempts_max) co_return false;
    co_await transport_backoff(attempt);
  }
  // KNOWN-BROKEN no_reclaim (ADR decision 5, "Crash reclaim"): the dead owner's pending entries
  // stay where they are. Without a lease (shared_group, message_lock) there is nothing to
  // reclaim under: the shared group has no notion of a dead owner.
  if (options_.variant == Variant::no_reclaim || lease_free()) co_return true;
  for (std::uint32_t attempt = 1;; ++attempt) {
    if (!active(slot)) co_return false;
    Result<std::uint64_t> moved = co_await broker_.reclaim(slot.lease, options_.group);
    if (moved.ok()) {
      record(HistoryOp::reclaim, &slot.lease, "", "count=" + std::to_string(moved.value()));
      break;
    }
    if (moved.code() == Errc::fenced) {
      lose(slot, "reclaim fenced");
      co_return false;
    }
    if (attempt >= attempts_max) co_return false;
    co_await transport_backoff(attempt);
  }
  // Best effort: an old consumer still holding entries is kept; a later acquire retries.
  Result<std::uint64_t> dropped = co_await broker_.drop_stale_consumers(slot.lease, options_.group);
  if (!dropped.ok() && dropped.code() == Errc::fenced) {
    lose(slot, "drop_stale_consumers fenced");
    co_return false;
  }
  co_return true;
}

Task<void> Engine::process(Slot& slot) {
  ReadFrom from = ReadFrom::pending;
  std::string failing_id;
  std::uint32_t failures = 0;
  std::uint32_t transport_failures = 0;
  std::deque<StreamEntry> batch;  // KNOWN-BROKEN batch_unfenced only: read, not yet handled
  while (active(slot)) {
    if (slot.halted) {
      // Halted: keep the lease (the heartbeat renews it) but do not advance, until an operator
      // resolves the head (seqby admin skip | dlq); then go on with the next event, in order.
      co_await runtime_.sleep_ms(options_.heartbeat_interval_ms);
      const bool resolved = co_await head_resolved(slot);
      if (resolved) {
        failing_id.clear();
        failures = 0;
        from = ReadFrom::pending;
      }
      continue;
    }
    StreamEntry entry;
    if (!batch.empty()) {
      // KNOWN-BROKEN batch_unfenced: this entry was read with its batch, long before, and it
      // enters the handler with no lease check since.
      entry = std::move(batch.front());
      batch.pop_front();
    } else {
      Result<std::optional<StreamEntry>> read =
          co_await broker_.fenced_read(slot.lease, options_.group, from);
      if (!read.ok()) {
        if (read.code() == Errc::fenced) {
          record(HistoryOp::read_fenced, &slot.lease, "", read.error().message);
          lose(slot, "read fenced");
          co_return;
        }
        if (read.code() == Errc::no_group) {
          (void)co_await broker_.ensure_group(slot.lease.partition, options_.group);
        }
        // A read whose reply was lost left its entry pending for us: read from pending first.
        from = ReadFrom::pending;
        if (++transport_failures > options_.transport_retry_count_max) co_return;
        co_await transport_backoff(transport_failures);
        continue;
      }
      transport_failures = 0;
      if (!read.value().has_value()) {
        if (from == ReadFrom::pending) {
          from = ReadFrom::new_entries;
          continue;
        }
        const bool ended = co_await reap_if_cold(slot);
        if (ended) co_return;
        co_await runtime_.sleep_ms(options_.poll_interval_ms);
        continue;
      }
      entry = std::move(*read.value());
      slot.active_ms = runtime_.clock().now_ms();
      record(HistoryOp::read, &slot.lease, entry.id,
             "delivery=" + std::to_string(entry.delivery_count));
      if (options_.variant == Variant::batch_unfenced && from == ReadFrom::new_entries) {
        co_await read_batch_rest(slot, &batch);
      }
    }
    std::string failure;
    const Step step = co_await run_one(slot, entry, &failure);
    if (step == Step::lost || step == Step::gave_up) co_return;
    if (step == Step::done) {
      failing_id.clear();
      failures = 0;
      continue;
    }
    // KNOWN-BROKEN batch_unfenced: like the shared process_batch loop (ADR Context), a failed
    // entry stays pending and the batch goes on with its next entry.
    failures = entry.id == failing_id ? failures + 1 : 1;
    failing_id = entry.id;
    if (failures > options_.retry_count_max) {
      if (options_.variant == Variant::dlq_continue) {
        // KNOWN-BROKEN variant dlq_continue (ADR decision 6 rejects it): the exhausted head is
        // acked and recorded as moved to the DLQ by the engine, and the partition goes on with
        // the next event, which may depend on it. The Broker seam has no DLQ append, so only
        // the ack reaches the broker.
        const Step moved = co_await ack(slot, entry);
        if (moved != Step::done) co_return;
        record(HistoryOp::dlq, &slot.lease, entry.id, "engine");
        failing_id.clear();
        failures = 0;
        continue;
      }
      const bool kept = co_await halt(slot, entry, failure, failures);
      if (!kept) co_return;
      continue;
    }
    // The entry stays pending; it is read again from the pending list (its delivery count rises).
    co_await runtime_.sleep_ms(
        backoff_ms(options_.retry_backoff_ms, options_.retry_backoff_max_ms, failures));
    from = ReadFrom::pending;
  }
}

Task<Engine::Step> Engine::run_one(Slot& slot, const StreamEntry& entry, std::string* failure) {
  // The lease check right before entering (DESIGN section 4) is the fenced read that returned
  // `entry`: it reads ONE entry, and nothing is awaited between its reply and the handler, so a
  // stale owner never reaches a next event (KNOWN-BROKEN batch_unfenced breaks exactly this).
  if (slot.lost) co_return Step::lost;
  const Event event{
      slot.lease.partition.category, slot.lease.partition.key, entry.id, entry.type, entry.data,
      entry.delivery_count};
  HandlerContext context(runtime_, broker_, history_, slot.lease, options_.group, entry.id,
                         options_.transport_retry_count_max, options_.retry_backoff_ms,
                         &slot.commit_recorded_seq);
  record(HistoryOp::enter, &slot.lease, entry.id, "");
  HandlerResult result = co_await handler_.handle(event, context);
  record(HistoryOp::exit, &slot.lease, entry.id, result.ok ? "ok" : "failed: " + result.reason);
  if (!result.ok) {
    *failure = std::move(result.reason);
    co_return Step::failed;
  }
  if (slot.lost) co_return Step::lost;
  co_return co_await ack(slot, entry);
}

// XACK is idempotent, so an ack whose reply was lost is simply sent again.
Task<Engine::Step> Engine::ack(Slot& slot, const StreamEntry& entry) {
  for (std::uint32_t attempt = 1;; ++attempt) {
    Status acked = co_await broker_.fenced_ack(slot.lease, options_.group, entry.id);
    if (acked.ok()) {
      record(HistoryOp::ack, &slot.lease, entry.id, "");
      co_return Step::done;
    }
    if (acked.code() == Errc::fenced) {
      record(HistoryOp::ack_fenced, &slot.lease, entry.id, acked.error().message);
      lose(slot, "ack fenced");
      co_return Step::lost;
    }
    if (!is_transport(acked.code()) || attempt >= options_.transport_retry_count_max) {
      co_return Step::gave_up;
    }
    co_await transport_backoff(attempt);
  }
}

// Releases the lease unless it was lost; the slot leaves the map only after the release, so
// discovery never takes the partition again while this worker still acts for it.
Task<void> Engine::finish(const SlotPtr& slot) {
  // Nothing to release when the lease is lost, already gone with a reap, or never existed
  // (generation 0: a broken variant without a lease).
  if (!slot->lost && !slot->released && slot->lease.generation > 0) {
    slot->released = true;
    for (std::uint32_t attempt = 1;; ++attempt) {
      Result<bool> released = co_await broker_.release(slot->lease);
      if (released.ok()) {
        if (released.value()) {
          record(HistoryOp::release, &slot->lease, "", slot->halted ? "halted" : "");
        } else {
          record(HistoryOp::lose, &slot->lease, "", "lease gone at release");
        }
        break;
      }
      if (attempt >= options_.transport_retry_count_max) break;
      co_await transport_backoff(attempt);
    }
  }
  auto it = slots_.find(slot->lease.partition.key);
  if (it != slots_.end() && it->second == slot) slots_.erase(it);
}

// Halts the partition on `entry` (decision 6) and records why and since when in Redis, where
// `seqby admin` shows it. Returns false when the lease turned out to be gone.
Task<bool> Engine::halt(Slot& slot, const StreamEntry& entry, const std::string& failure,
                        std::uint32_t failures) {
  slot.halted = true;
  slot.halt_id = entry.id;
  record(HistoryOp::halt, &slot.lease, entry.id,
         "failed " + std::to_string(failures) + " times: " + failure);
  for (std::uint32_t attempt = 1;; ++attempt) {
    Status noted = co_await broker_.record_halt(slot.lease, options_.group, entry.id, failure,
                                                entry.delivery_count);
    if (noted.ok()) co_return true;
    if (noted.code() == Errc::fenced) {
      lose(slot, "record_halt fenced");
      co_return false;
    }
    // Best effort: the halt stays in the history and the head stays pending either way.
    if (!is_transport(noted.code()) || attempt >= options_.transport_retry_count_max) {
      co_return true;
    }
    co_await transport_backoff(attempt);
  }
}

// Whether the halted head is no longer the group's first pending entry: an operator acked it
// (skip) or moved it to C:K:dlq. Nothing else acks a halted head.
Task<bool> Engine::head_resolved(Slot& slot) {
  Result<std::optional<std::string>> head =
      co_await broker_.pending_head(slot.lease.partition, options_.group);
  if (!head.ok()) co_return false;
  if (head.value().has_value() && *head.value() == slot.halt_id) co_return false;
  record(HistoryOp::resume, &slot.lease, slot.halt_id, "head resolved by an operator");
  slot.halted = false;
  slot.halt_id.clear();
  co_return true;
}

// Reaps the partition once it has been idle here for reap_idle_ms (the broker's script judges
// emptiness and idleness on the server, atomically with publishes). Returns true when the
// worker must end: the partition was reaped (its lease with it) or the lease is gone.
Task<bool> Engine::reap_if_cold(Slot& slot) {
  if (options_.reap_idle_ms == 0) co_return false;
  const std::uint64_t now_ms = runtime_.clock().now_ms();
  if (now_ms - slot.active_ms < options_.reap_idle_ms) co_return false;
  slot.active_ms = now_ms;  // not cold on the server: ask again one idle period later
  Result<bool> reaped = co_await broker_.reap(slot.lease, options_.reap_idle_ms);
  if (!reaped.ok()) {
    if (reaped.code() != Errc::fenced) co_return false;
    lose(slot, "reap fenced");
    co_return true;
  }
  if (!reaped.value()) co_return false;
  slot.released = true;  // the reap deleted the lease
  record(HistoryOp::reap, &slot.lease, "", "idle_ms=" + std::to_string(options_.reap_idle_ms));
  co_return true;
}

}  // namespace seqby
