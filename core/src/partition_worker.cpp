// The partition worker (DESIGN section 4), step by step; partition_worker.h says what it does.
#include "seqby/core/partition_worker.h"

#include <algorithm>
#include <utility>

#include "commit_outcome.h"
#include "retry.h"
#include "step_batcher.h"
#include "waker.h"

namespace seqby {

PartitionWorker::PartitionWorker(const EngineEnv& env, Lease lease) : env_(env) {
  SEQBY_CHECK(lease.process_manager.empty());  // the worker names its process manager itself
  SEQBY_CHECK(lease.partition.category == env_.unit_category);
  if (env_.process_manager()) {
    lease.process_manager = env_.options.group;
    for (const std::string& category : env_.options.pm_categories) {
      lanes_.emplace_back().lease = lease.on(category);
    }
  } else {
    lanes_.emplace_back().lease = lease;
  }
  lease_ = std::move(lease);
  SEQBY_CHECK(!lanes_.empty());
  const std::uint64_t now_ms = env_.runtime.clock().now_ms();
  for (Lane& lane : lanes_) {
    lane.failovers_seen = env_.broker.failovers_seen();
    lane.failovers_reclaimed = lane.failovers_seen;
    lane.pending_read_ms = now_ms;
  }
}

void PartitionWorker::acquired_at(std::uint64_t sent_ms) {
  SEQBY_CHECK(leased());
  last_renew_ok_ms_ = sent_ms;
  active_ms_ = sent_ms;
}

PartitionStatus PartitionWorker::status() const {
  PartitionStatus status{lease_.partition.key, lease_.generation, false, ""};
  for (const Lane& lane : lanes_) {
    if (lane.halted && !status.halted) {
      status.halted = true;
      status.halt_id = lane.halt_id;
    }
  }
  return status;
}

void PartitionWorker::lose(std::string detail) {
  if (lost_) return;
  lost_ = true;
  idle_alarm_.ring();
  env_.record(HistoryOp::lose, &lease_, "", std::move(detail));
}

void PartitionWorker::fenced(std::string detail) {
  fenced_ = true;
  lose(std::move(detail));
  SEQBY_CHECK(lost_ && !active());
}

void PartitionWorker::check_may_send() const { SEQBY_CHECK(!fenced_); }

bool PartitionWorker::any_lane_halted() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return lane.halted; });
}

Task<void> PartitionWorker::run() {
  // g++ 12 miscompiles a co_await inside an if condition: await into a named value first.
  const bool prepared = co_await prepare();
  if (prepared) co_await process();
  co_await finish();
  SEQBY_CHECK(!fenced_ || lost_);  // a FENCED reply ended the worker without a release
  SEQBY_CHECK(!in_handler_);
}

Task<bool> PartitionWorker::prepare() {
  const TransportRetry retry = engine_transport_retry(env_);
  for (Lane& lane : lanes_) {
    if (!active()) co_return false;
    auto send = [&] {
      check_may_send();
      return env_.broker.ensure_group(lane.lease.partition, env_.options.group);
    };
    auto go_on = [this] { return active(); };
    const Status created = co_await retry_transport(retry, is_any_error, send, go_on);
    if (!created.ok()) co_return false;
  }
  const bool reclaimed = co_await reclaim(lanes_);
  co_return reclaimed;
}

// A process manager reclaims on every stream of its correlation value: a crashed owner of X may
// have left an entry pending on any of them.
Task<bool> PartitionWorker::reclaim(std::span<Lane> lanes) {
  const TransportRetry retry = engine_transport_retry(env_);
  for (Lane& lane : lanes) {
    if (!active()) co_return false;
    auto send = [&] {
      check_may_send();
      return env_.broker.reclaim(lane.lease, env_.options.group);
    };
    auto go_on = [this] { return active(); };
    const Result<std::uint64_t> moved = co_await retry_transport(retry, is_any_error, send, go_on);
    if (!moved.ok()) {
      if (moved.code() == Errc::fenced) fenced("reclaim fenced");
      co_return false;
    }
    env_.record(HistoryOp::reclaim, &lane.lease, "", "count=" + std::to_string(moved.value()));
    // Best effort: an old consumer still holding entries is kept; a later acquire retries.
    check_may_send();
    Result<std::uint64_t> dropped =
        co_await env_.broker.drop_stale_consumers(lane.lease, env_.options.group);
    if (!dropped.ok() && dropped.code() == Errc::fenced) {
      fenced("drop_stale_consumers fenced");
      co_return false;
    }
  }
  co_return true;
}

// Turns on the lanes, round robin, one event at a time: a process manager's streams share the
// one worker, so no two of its events for one correlation value ever run at once. When every
// lane in a row found nothing, the worker may reap, then waits until it is woken.
Task<void> PartitionWorker::process() {
  std::size_t at = 0;
  std::size_t idle_in_a_row = 0;
  while (active()) {
    const Turn turn = co_await take_turn(lanes_[at]);
    if (turn == Turn::ended) co_return;
    at = (at + 1) % lanes_.size();
    idle_in_a_row = turn == Turn::idle ? idle_in_a_row + 1 : 0;
    if (idle_in_a_row < lanes_.size()) continue;
    idle_in_a_row = 0;
    // A halted stream is not cold: it waits for an operator (and records its resume first).
    if (!any_lane_halted()) {
      const bool ended = co_await reap_if_cold();
      if (ended) co_return;
    }
    if (!active()) co_return;
    co_await idle_wait();
  }
}

Task<void> PartitionWorker::idle_wait() {
  const std::uint64_t now_ms = env_.runtime.clock().now_ms();
  std::uint64_t timeout_ms = env_.options.idle_recheck_ms;
  std::vector<WatchedStream> streams;
  bool polls = env_.waker == nullptr;
  for (const Lane& lane : lanes_) {
    if (lane.halted) {
      timeout_ms = std::min(
          timeout_ms, lane.head_check_ms > now_ms ? lane.head_check_ms - now_ms : std::uint64_t{0});
    } else if (lane.watch_id.empty()) {
      polls = true;  // the broker did not say after which entry to wait
    } else {
      streams.push_back(WatchedStream{lane.lease.partition, lane.watch_id});
    }
  }
  if (env_.options.reap_idle_ms > 0 && !any_lane_halted()) {
    const std::uint64_t due_ms = active_ms_ + env_.options.reap_idle_ms;
    timeout_ms = std::min(timeout_ms, due_ms > now_ms ? due_ms - now_ms : std::uint64_t{0});
  }
  if (polls || streams.empty()) {
    const bool rung = co_await env_.runtime.wait_alarm(
        idle_alarm_, std::min(timeout_ms, env_.options.poll_interval_ms));
    (void)rung;
    co_return;
  }
  co_await env_.waker->wait(streams, idle_alarm_, timeout_ms);
}

// A failover may take back acknowledgements and commits the lane made (docs/ARCHITECTURE.md
// "What a failover keeps"): their entries are pending again for this consumer, and a read of
// new entries would never give them back. So a lane reads its pending list again once the
// broker has seen a failover since its last such read, and at least every idle_recheck_ms.
void PartitionWorker::reread_pending_if_due(Lane& lane) {
  if (lane.from != ReadFrom::new_entries || !lane.held.empty()) return;
  const std::uint64_t failovers = env_.broker.failovers_seen();
  const std::uint64_t now_ms = env_.runtime.clock().now_ms();
  if (failovers == lane.failovers_seen &&
      now_ms - lane.pending_read_ms < env_.options.idle_recheck_ms) {
    return;
  }
  lane.from = ReadFrom::pending;
}

// One step on one lane: at most one event read and handled.
Task<PartitionWorker::Turn> PartitionWorker::take_turn(Lane& lane) {
  if (lane.halted) {
    // Halted: keep the lease (the heartbeat renews it) but do not advance this stream, until an
    // operator resolves the head (seqby admin skip | dlq); then go on with its next event.
    if (env_.runtime.clock().now_ms() < lane.head_check_ms) co_return Turn::idle;
    lane.head_check_ms = env_.runtime.clock().now_ms() + env_.options.heartbeat_interval_ms;
    const bool resolved = co_await head_resolved(lane);
    co_return resolved ? Turn::worked : Turn::idle;
  }
  reread_pending_if_due(lane);
  if (env_.broker.failovers_seen() != lane.failovers_reclaimed) {
    // A lossy failover can undo the reclaim this lane made when it acquired (docs/ARCHITECTURE.md
    // "The simulated cluster"): the entries it moved are pending for the older consumer again,
    // where neither a read of new entries nor of this consumer's own pending list finds them.
    lane.failovers_reclaimed = env_.broker.failovers_seen();
    const bool reclaimed = co_await reclaim(std::span<Lane>(&lane, 1));
    if (!reclaimed) co_return Turn::ended;
  }
  Next next = co_await next_entry(lane);
  if (next.failed_entry.has_value()) {
    const Turn failed = co_await entry_failed(lane, *next.failed_entry, next.failure);
    co_return failed;
  }
  if (!next.entry.has_value()) co_return next.turn;
  const StreamEntry entry = std::move(*next.entry);
  std::string failure;
  const Step step = co_await run_one(lane, entry, &failure);
  if (step == Step::lost || step == Step::gave_up) co_return Turn::ended;
  if (step == Step::done) {
    lane.failing_id.clear();
    lane.failures = 0;
    co_return Turn::worked;
  }
  const Turn failed = co_await entry_failed(lane, entry, failure);
  co_return failed;
}

Task<PartitionWorker::Turn> PartitionWorker::entry_failed(Lane& lane, const StreamEntry& entry,
                                                          const std::string& failure) {
  // The entries held after it stay pending: they are read again from the pending list, in
  // order, after this one.
  lane.held.clear();
  lane.failures = entry.id == lane.failing_id ? lane.failures + 1 : 1;
  lane.failing_id = entry.id;
  if (lane.failures > env_.options.retry_count_max) {
    const Turn turn = co_await exhausted(lane, entry, failure);
    co_return turn;
  }
  // The entry stays pending; it is read again from the pending list (its delivery count rises).
  co_await env_.runtime.sleep_ms(
      backoff_ms(env_.options.retry_backoff_ms, env_.options.retry_backoff_max_ms, lane.failures));
  lane.from = ReadFrom::pending;
  co_return Turn::worked;
}

// The fenced read of ONE entry, which also acknowledges the lane's entry handled before it
// (fenced_next). A read whose reply was lost is retried on the next turn (bounded by
// transport_retry_count_max reads in a row), from the pending list: it may have left its entry
// pending for us; its ack is sent again with it (acknowledging twice is harmless).
Task<PartitionWorker::Next> PartitionWorker::next_entry(Lane& lane) {
  Next next = co_await next_entry_of(lane, env_.options.read_batch_max);
  co_return next;
}

// The next entry is the lane's first held one when it holds any (this step is then its lease
// check), else a read: up to `count` new entries, or one pending entry.
Task<PartitionWorker::Next> PartitionWorker::next_entry_of(Lane& lane, std::uint32_t count) {
  check_may_send();
  NextAsk ask;
  ask.count = lane.from == ReadFrom::new_entries ? std::max<std::uint32_t>(count, 1) : 1;
  if (!lane.held.empty()) ask.held_id = lane.held.front().id;
  if (lane.from == ReadFrom::pending && lane.held.empty()) {
    // Whatever failover the broker sees from now on, this read may predate.
    lane.failovers_seen = env_.broker.failovers_seen();
    lane.pending_read_ms = env_.runtime.clock().now_ms();
  }
  if (lane.step_commit.has_value()) {
    SEQBY_CHECK(lane.step_commit->entry.id == lane.unacked_id);
    ask.commit = &lane.step_commit->commit;
  }
  if (env_.batcher != nullptr) {
    Result<NextReply> read = co_await env_.batcher->step(lane.lease, env_.options.group, lane.from,
                                                         lane.unacked_id, ask);
    Next next = co_await read_came_to(lane, std::move(read));
    co_return next;
  }
  Result<NextReply> read = co_await env_.broker.fenced_next(lane.lease, env_.options.group,
                                                            lane.from, lane.unacked_id, ask);
  Next next = co_await read_came_to(lane, std::move(read));
  co_return next;
}

Task<PartitionWorker::Next> PartitionWorker::read_failed(Lane& lane, const Error& error) {
  // Held entries stay pending for this consumer: the pending read below gives them back, in
  // order, each with a lease check of its own.
  lane.held.clear();
  if (error.code == Errc::fenced && lane.step_commit.has_value()) {
    // The step's first decision, the commit, was refused (fenced_commit_next journals so).
    record_commit(lane, HistoryOp::commit_fenced, "");
    fenced("commit fenced");
    co_return Turn::ended;
  }
  if (error.code == Errc::fenced) {
    env_.record(HistoryOp::read_fenced, &lane.lease, "", error.message);
    fenced("read fenced");
    co_return Turn::ended;
  }
  if (error.code == Errc::no_group) {
    (void)co_await env_.broker.ensure_group(lane.lease.partition, env_.options.group);
  }
  lane.from = ReadFrom::pending;
  if (++lane.transport_failures > env_.options.transport_retry_count_max) co_return Turn::ended;
  co_await env_.runtime.sleep_ms(backoff_ms(
      env_.options.retry_backoff_ms, env_.options.retry_backoff_max_ms, lane.transport_failures));
  co_return Turn::worked;
}

Task<PartitionWorker::Next> PartitionWorker::read_came_to(Lane& lane, Result<NextReply> read) {
  if (!read.ok()) {
    Next failed = co_await read_failed(lane, read.error());
    co_return failed;
  }
  NextReply& next = read.value();
  if (!next.step_failed.has_value()) lane.transport_failures = 0;
  if (lane.step_commit.has_value()) {
    SEQBY_CHECK(next.commit.has_value());
    const CommitReply committed = settle_commit(
        lane.lease, lane.step_commit->commit.seq, std::move(*next.commit),
        /*earlier_reply_lost=*/false, &lane.commit_recorded_seq,
        [&](HistoryOp op, std::string detail) { record_commit(lane, op, std::move(detail)); });
    Lane::StepCommit made = std::move(*lane.step_commit);
    lane.step_commit.reset();
    if (committed.outcome == CommitOutcome::out_of_order) {
      // Nothing acknowledged or read: the entry is read again from the pending list.
      SEQBY_CHECK(!next.ack_asked);
      lane.unacked_id.clear();
      co_return Next::failed(std::move(made.entry), "commit out of order");
    }
    if (next.step_failed.has_value()) {
      // The commit stood; the entry's ack goes with the next step (unacked_id is kept).
      SEQBY_CHECK(!next.ack_asked);
      Next failed = co_await read_failed(lane, *next.step_failed);
      co_return failed;
    }
  }
  if (next.ack_asked) {
    SEQBY_CHECK(!lane.unacked_id.empty());
    env_.record(HistoryOp::ack, &lane.lease, lane.unacked_id, "");
    lane.unacked_id.clear();
  }
  if (next.held_checked) {
    SEQBY_CHECK(!lane.held.empty());
    StreamEntry entry = std::move(lane.held.front());
    lane.held.pop_front();
    active_ms_ = env_.runtime.clock().now_ms();
    env_.record(HistoryOp::read, &lane.lease, entry.id,
                "delivery=" + std::to_string(entry.delivery_count));
    co_return std::move(entry);
  }
  SEQBY_CHECK(lane.held.empty());  // a lane reads only when it holds nothing
  if (!next.entry.has_value()) {
    if (lane.from == ReadFrom::pending) {
      lane.from = ReadFrom::new_entries;
      co_return Turn::worked;
    }
    lane.watch_id = std::move(next.last_id);
    co_return Turn::idle;
  }
  StreamEntry entry = std::move(*next.entry);
  SEQBY_CHECK(!entry.id.empty());
  SEQBY_CHECK(entry.delivery_count >= 1);  // this read counts as a delivery
  for (StreamEntry& held : next.held) lane.held.push_back(std::move(held));
  active_ms_ = env_.runtime.clock().now_ms();
  env_.record(HistoryOp::read, &lane.lease, entry.id,
              "delivery=" + std::to_string(entry.delivery_count));
  co_return std::move(entry);
}

Task<PartitionWorker::Step> PartitionWorker::run_one(Lane& lane, const StreamEntry& entry,
                                                     std::string* failure) {
  // The lease check right before entering (DESIGN section 4) is the fenced read that returned
  // `entry`: it reads ONE entry, and nothing is awaited between its reply and the handler, so a
  // stale owner never reaches a next event.
  if (lost_) co_return Step::lost;
  const Event event{
      lane.lease.partition.category, lane.lease.partition.key, entry.id, entry.type, entry.data,
      entry.delivery_count};
  HandlerContext context(env_.runtime, env_.broker, env_.history, lane.lease, env_.options.group,
                         entry.id, env_.options.transport_retry_count_max,
                         env_.options.retry_backoff_ms, &lane.commit_recorded_seq);
  SEQBY_CHECK(!in_handler_);  // one event in flight per unit
  in_handler_ = true;
  env_.record(HistoryOp::enter, &lane.lease, entry.id, "");
  HandlerResult result = co_await env_.handler.handle(event, context);
  SEQBY_CHECK(in_handler_);
  in_handler_ = false;
  env_.record(HistoryOp::exit, &lane.lease, entry.id,
              result.ok ? "ok" : "failed: " + result.reason);
  if (!result.ok) {
    *failure = std::move(result.reason);
    co_return Step::failed;
  }
  if (lost_) co_return Step::lost;
  const bool with_step = result.commit.has_value() && commits_with_step();
  if (result.commit.has_value() && !with_step) {
    Result<CommitReply> committed =
        co_await context.commit(result.commit->seq, std::move(result.commit->effect));
    const CommitOutcome outcome =
        committed.ok() ? committed.value().outcome : CommitOutcome::out_of_order;
    if (outcome == CommitOutcome::fenced || outcome == CommitOutcome::out_of_order) {
      *failure = !committed.ok()                    ? committed.error().message
                 : outcome == CommitOutcome::fenced ? "commit fenced"
                                                    : "commit out of order";
      co_return Step::failed;
    }
  }
  const Step step = co_await handled(lane, entry);
  if (step == Step::done && with_step) {
    SEQBY_CHECK(lane.unacked_id == entry.id);  // its ack waits for the step that commits
    lane.step_commit = Lane::StepCommit{std::move(*result.commit), entry};
  }
  co_return step;
}

Task<bool> PartitionWorker::commit_alone(Lane& lane) {
  SEQBY_CHECK(lane.step_commit.has_value());
  Lane::StepCommit made = std::move(*lane.step_commit);
  lane.step_commit.reset();
  check_may_send();
  HandlerContext context(env_.runtime, env_.broker, env_.history, lane.lease, env_.options.group,
                         made.entry.id, env_.options.transport_retry_count_max,
                         env_.options.retry_backoff_ms, &lane.commit_recorded_seq);
  Result<CommitReply> committed =
      co_await context.commit(made.commit.seq, std::move(made.commit.effect));
  if (committed.ok() && (committed.value().outcome == CommitOutcome::accepted ||
                         committed.value().outcome == CommitOutcome::duplicate)) {
    co_return true;
  }
  if (committed.ok() && committed.value().outcome == CommitOutcome::fenced) fenced("commit fenced");
  co_return false;
}

void PartitionWorker::record_commit(const Lane& lane, HistoryOp op, std::string detail) const {
  SEQBY_CHECK(lane.step_commit.has_value());
  env_.record(op, &lane.lease, lane.step_commit->entry.id, std::move(detail),
              lane.step_commit->commit.seq);
}

Task<PartitionWorker::Step> PartitionWorker::handled(Lane& lane, const StreamEntry& entry) {
  SEQBY_CHECK(lane.unacked_id.empty());  // the read that returned `entry` acknowledged the last
  lane.unacked_id = entry.id;
  co_return Step::done;
}

Task<bool> PartitionWorker::ack_handled(Lane& lane) {
  if (lane.unacked_id.empty()) co_return true;
  if (lane.step_commit.has_value()) {
    const bool committed = co_await commit_alone(lane);
    if (!committed) {
      lane.unacked_id.clear();  // the entry stays pending: its next owner handles it again
      co_return false;
    }
  }
  const std::string id = std::move(lane.unacked_id);
  lane.unacked_id.clear();
  const Step step = co_await ack(lane, id);
  co_return step == Step::done;
}

// XACK is idempotent, so an ack whose reply was lost is simply sent again.
Task<PartitionWorker::Step> PartitionWorker::ack(Lane& lane, const std::string& id) {
  auto send = [&] {
    check_may_send();
    return env_.broker.fenced_ack(lane.lease, env_.options.group, id);
  };
  const Status acked =
      co_await retry_transport(engine_transport_retry(env_), is_transport_error, send);
  if (acked.ok()) {
    env_.record(HistoryOp::ack, &lane.lease, id, "");
    co_return Step::done;
  }
  if (acked.code() == Errc::fenced) {
    env_.record(HistoryOp::ack_fenced, &lane.lease, id, acked.error().message);
    fenced("ack fenced");
    co_return Step::lost;
  }
  co_return Step::gave_up;
}

Task<PartitionWorker::Turn> PartitionWorker::exhausted(Lane& lane, const StreamEntry& entry,
                                                       const std::string& failure) {
  const bool kept = co_await halt(lane, entry, failure);
  co_return kept ? Turn::worked : Turn::ended;
}

// Releases the lease unless it was lost, already gone with a reap, or never held.
Task<void> PartitionWorker::finish() {
  if (lost_ || released_ || !leased()) co_return;
  // The events handled last are acknowledged before the lease goes, so that the next owner
  // does not run them again.
  for (Lane& lane : lanes_) {
    if (lost_) co_return;
    const bool acked = co_await ack_handled(lane);
    if (!acked && lost_) co_return;
  }
  released_ = true;
  auto send = [&] {
    check_may_send();
    return env_.broker.release(lease_);
  };
  const Result<bool> released =
      co_await retry_transport(engine_transport_retry(env_), is_any_error, send);
  if (!released.ok()) co_return;
  if (released.value()) {
    env_.record(HistoryOp::release, &lease_, "", any_lane_halted() ? "halted" : "");
  } else {
    env_.record(HistoryOp::lose, &lease_, "", "lease gone at release");
  }
}

// Halts the lane's stream on `entry` (decision 6) and records why and since when in Redis,
// where `seqby admin` shows it. Returns false when the lease turned out to be gone.
Task<bool> PartitionWorker::halt(Lane& lane, const StreamEntry& entry, const std::string& failure) {
  lane.halted = true;
  lane.halt_id = entry.id;
  lane.head_check_ms = env_.runtime.clock().now_ms() + env_.options.heartbeat_interval_ms;
  env_.record(HistoryOp::halt, &lane.lease, entry.id,
              "failed " + std::to_string(lane.failures) + " times: " + failure);
  auto send = [&] {
    check_may_send();
    return env_.broker.record_halt(lane.lease, env_.options.group, entry.id, failure,
                                   entry.delivery_count);
  };
  const Status noted =
      co_await retry_transport(engine_transport_retry(env_), is_transport_error, send);
  if (!noted.ok() && noted.code() == Errc::fenced) {
    fenced("record_halt fenced");
    co_return false;
  }
  // Best effort: the halt stays in the history and the head stays pending either way.
  co_return true;
}

// Whether the halted head is no longer the group's first pending entry: an operator acked it
// (skip) or moved it to C:K:dlq. Nothing else acks a halted head. Then the lane reads on from
// its pending entries, in order.
Task<bool> PartitionWorker::head_resolved(Lane& lane) {
  check_may_send();
  Result<std::optional<std::string>> head =
      co_await env_.broker.pending_head(lane.lease.partition, env_.options.group);
  if (!head.ok()) co_return false;
  if (head.value().has_value()) SEQBY_CHECK(!head.value()->empty());
  if (head.value().has_value() && *head.value() == lane.halt_id) co_return false;
  env_.record(HistoryOp::resume, &lane.lease, lane.halt_id, "head resolved by an operator");
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
Task<bool> PartitionWorker::reap_if_cold() {
  if (env_.options.reap_idle_ms == 0) co_return false;
  const std::uint64_t now_ms = env_.runtime.clock().now_ms();
  if (now_ms - active_ms_ < env_.options.reap_idle_ms) co_return false;
  active_ms_ = now_ms;  // not cold on the server: ask again one idle period later
  check_may_send();
  Result<bool> reaped = co_await env_.broker.reap(lease_, env_.options.reap_idle_ms);
  if (!reaped.ok()) {
    if (reaped.code() != Errc::fenced) co_return false;
    fenced("reap fenced");
    co_return true;
  }
  if (!reaped.value()) co_return false;
  released_ = true;  // the reap deleted the lease
  env_.record(HistoryOp::reap, &lease_, "", "idle_ms=" + std::to_string(env_.options.reap_idle_ms));
  co_return true;
}

}  // namespace seqby
