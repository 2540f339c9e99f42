// The partition worker (DESIGN section 4): on acquire it creates the group at id 0, reclaims the
// older consumers' pending entries, drops empty old consumers, then processes its own pending
// entries in id order before new ones, ONE event in flight: fenced read (the lease check), handler,
// fenced ack. A FENCED reply anywhere ends it at once; a head that fails past the retry budget
// halts its stream (decision 6). A process manager's worker does this on each of its correlation
// value's streams (lanes), taking turns, still one event in flight.
#include <algorithm>

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
  for (Lane& lane : slot.lanes) {
    for (std::uint32_t attempt = 1;; ++attempt) {
      if (!active(slot)) co_return false;
      Status created = co_await broker_.ensure_group(lane.lease.partition, options_.group);
      if (created.ok()) break;
      if (attempt >= attempts_max) co_return false;
      co_await transport_backoff(attempt);
    }
  }
  // KNOWN-BROKEN no_reclaim (ADR decision 5, "Crash reclaim"): the dead owner's pending entries
  // stay where they are. Without a lease (shared_group, message_lock) there is nothing to
  // reclaim under: the shared group has no notion of a dead owner.
  if (options_.variant == Variant::no_reclaim || lease_free()) co_return true;
  // A process manager reclaims on every stream of its correlation value: a crashed owner of X
  // may have left an entry pending on any of them.
  for (Lane& lane : slot.lanes) {
    for (std::uint32_t attempt = 1;; ++attempt) {
      if (!active(slot)) co_return false;
      Result<std::uint64_t> moved = co_await broker_.reclaim(lane.lease, options_.group);
      if (moved.ok()) {
        record(HistoryOp::reclaim, &lane.lease, "", "count=" + std::to_string(moved.value()));
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
    Result<std::uint64_t> dropped =
        co_await broker_.drop_stale_consumers(lane.lease, options_.group);
    if (!dropped.ok() && dropped.code() == Errc::fenced) {
      lose(slot, "drop_stale_consumers fenced");
      co_return false;
    }
  }
  co_return true;
}

// Turns on the slot's lanes, round robin, one event at a time: a process manager's streams
// share the one worker, so no two of its events for one correlation value ever run at once.
// When every lane in a row found nothing, the worker may reap, then waits a poll interval.
Task<void> Engine::process(Slot& slot) {
  std::size_t at = 0;
  std::size_t idle_in_a_row = 0;
  while (active(slot)) {
    const Turn turn = co_await take_turn(slot, slot.lanes[at]);
    if (turn == Turn::ended) co_return;
    at = (at + 1) % slot.lanes.size();
    idle_in_a_row = turn == Turn::idle ? idle_in_a_row + 1 : 0;
    if (idle_in_a_row < slot.lanes.size()) continue;
    idle_in_a_row = 0;
    // A halted stream is not cold: it waits for an operator (and records its resume first).
    const bool halted = std::any_of(slot.lanes.begin(), slot.lanes.end(),
                                    [](const Lane& lane) { return lane.halted; });
    if (!halted) {
      const bool ended = co_await reap_if_cold(slot);
      if (ended) co_return;
    }
    co_await runtime_.sleep_ms(options_.poll_interval_ms);
  }
}

// One step on one lane: at most one event read and handled.
Task<Engine::Turn> Engine::take_turn(Slot& slot, Lane& lane) {
  if (lane.halted) {
    // Halted: keep the lease (the heartbeat renews it) but do not advance this stream, until an
    // operator resolves the head (seqby admin skip | dlq); then go on with its next event.
    if (runtime_.clock().now_ms() < lane.head_check_ms) co_return Turn::idle;
    lane.head_check_ms = runtime_.clock().now_ms() + options_.heartbeat_interval_ms;
    const bool resolved = co_await head_resolved(lane);
    co_return resolved ? Turn::worked : Turn::idle;
  }
  StreamEntry entry;
  if (!lane.batch.empty()) {
    // KNOWN-BROKEN batch_unfenced: this entry was read with its batch, long before, and it
    // enters the handler with no lease check since.
    entry = std::move(lane.batch.front());
    lane.batch.pop_front();
  } else {
    Result<std::optional<StreamEntry>> read =
        co_await broker_.fenced_read(lane.lease, options_.group, lane.from);
    if (!read.ok()) {
      if (read.code() == Errc::fenced) {
        record(HistoryOp::read_fenced, &lane.lease, "", read.error().message);
        lose(slot, "read fenced");
        co_return Turn::ended;
      }
      if (read.code() == Errc::no_group) {
        (void)co_await broker_.ensure_group(lane.lease.partition, options_.group);
      }
      // A read whose reply was lost left its entry pending for us: read from pending first.
      lane.from = ReadFrom::pending;
      if (++lane.transport_failures > options_.transport_retry_count_max) co_return Turn::ended;
      co_await transport_backoff(lane.transport_failures);
      co_return Turn::worked;
    }
    lane.transport_failures = 0;
    if (!read.value().has_value()) {
      if (lane.from == ReadFrom::pending) {
        lane.from = ReadFrom::new_entries;
        co_return Turn::worked;
      }
      co_return Turn::idle;
    }
    entry = std::move(*read.value());
    slot.active_ms = runtime_.clock().now_ms();
    record(HistoryOp::read, &lane.lease, entry.id,
           "delivery=" + std::to_string(entry.delivery_count));
    if (options_.variant == Variant::batch_unfenced && lane.from == ReadFrom::new_entries) {
      co_await read_batch_rest(lane);
    }
  }
  std::string failure;
  const Step step = co_await run_one(slot, lane, entry, &failure);
  if (step == Step::lost || step == Step::gave_up) co_return Turn::ended;
  if (step == Step::done) {
    lane.failing_id.clear();
    lane.failures = 0;
    co_return Turn::worked;
  }
  // KNOWN-BROKEN batch_unfenced: like the shared process_batch loop (ADR Context), a failed
  // entry stays pending and the batch goes on with its next entry.
  lane.failures = entry.id == lane.failing_id ? lane.failures + 1 : 1;
  lane.failing_id = entry.id;
  if (lane.failures > options_.retry_count_max) {
    if (options_.variant == Variant::dlq_continue) {
      // KNOWN-BROKEN variant dlq_continue (ADR decision 6 rejects it): the exhausted head is
      // acked and recorded as moved to the DLQ by the engine, and the partition goes on with
      // the next event, which may depend on it. The Broker seam has no DLQ append, so only
      // the ack reaches the broker.
      const Step moved = co_await ack(slot, lane, entry);
      if (moved != Step::done) co_return Turn::ended;
      record(HistoryOp::dlq, &lane.lease, entry.id, "engine");
      lane.failing_id.clear();
      lane.failures = 0;
      co_return Turn::worked;
    }
    const bool kept = co_await halt(slot, lane, entry, failure);
    co_return kept ? Turn::worked : Turn::ended;
  }
  // The entry stays pending; it is read again from the pending list (its delivery count rises).
  co_await runtime_.sleep_ms(
      backoff_ms(options_.retry_backoff_ms, options_.retry_backoff_max_ms, lane.failures));
  lane.from = ReadFrom::pending;
  co_return Turn::worked;
}

Task<Engine::Step> Engine::run_one(Slot& slot, Lane& lane, const StreamEntry& entry,
                                   std::string* failure) {
  // The lease check right before entering (DESIGN section 4) is the fenced read that returned
  // `entry`: it reads ONE entry, and nothing is awaited between its reply and the handler, so a
  // stale owner never reaches a next event (KNOWN-BROKEN batch_unfenced breaks exactly this).
  if (slot.lost) co_return Step::lost;
  const Event event{
      lane.lease.partition.category, lane.lease.partition.key, entry.id, entry.type, entry.data,
      entry.delivery_count};
  HandlerContext context(runtime_, broker_, history_, lane.lease, options_.group, entry.id,
                         options_.transport_retry_count_max, options_.retry_backoff_ms,
                         &lane.commit_recorded_seq);
  record(HistoryOp::enter, &lane.lease, entry.id, "");
  HandlerResult result = co_await handler_.handle(event, context);
  record(HistoryOp::exit, &lane.lease, entry.id, result.ok ? "ok" : "failed: " + result.reason);
  if (!result.ok) {
    *failure = std::move(result.reason);
    co_return Step::failed;
  }
  if (slot.lost) co_return Step::lost;
  co_return co_await ack(slot, lane, entry);
}

// XACK is idempotent, so an ack whose reply was lost is simply sent again.
Task<Engine::Step> Engine::ack(Slot& slot, Lane& lane, const StreamEntry& entry) {
  for (std::uint32_t attempt = 1;; ++attempt) {
    Status acked = co_await broker_.fenced_ack(lane.lease, options_.group, entry.id);
    if (acked.ok()) {
      record(HistoryOp::ack, &lane.lease, entry.id, "");
      co_return Step::done;
    }
    if (acked.code() == Errc::fenced) {
      record(HistoryOp::ack_fenced, &lane.lease, entry.id, acked.error().message);
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
          const bool halted = std::any_of(slot->lanes.begin(), slot->lanes.end(),
                                          [](const Lane& lane) { return lane.halted; });
          record(HistoryOp::release, &slot->lease, "", halted ? "halted" : "");
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

// Halts the lane's stream on `entry` (decision 6) and records why and since when in Redis,
// where `seqby admin` shows it. Returns false when the lease turned out to be gone.
Task<bool> Engine::halt(Slot& slot, Lane& lane, const StreamEntry& entry,
                        const std::string& failure) {
  lane.halted = true;
  lane.halt_id = entry.id;
  lane.head_check_ms = runtime_.clock().now_ms() + options_.heartbeat_interval_ms;
  record(HistoryOp::halt, &lane.lease, entry.id,
         "failed " + std::to_string(lane.failures) + " times: " + failure);
  for (std::uint32_t attempt = 1;; ++attempt) {
    Status noted = co_await broker_.record_halt(lane.lease, options_.group, entry.id, failure,
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
// (skip) or moved it to C:K:dlq. Nothing else acks a halted head. Then the lane reads on from
// its pending entries, in order.
Task<bool> Engine::head_resolved(Lane& lane) {
  Result<std::optional<std::string>> head =
      co_await broker_.pending_head(lane.lease.partition, options_.group);
  if (!head.ok()) co_return false;
  if (head.value().has_value() && *head.value() == lane.halt_id) co_return false;
  record(HistoryOp::resume, &lane.lease, lane.halt_id, "head resolved by an operator");
  lane.halted = false;
  lane.halt_id.clear();
  lane.failing_id.clear();
  lane.failures = 0;
  lane.from = ReadFrom::pending;
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
