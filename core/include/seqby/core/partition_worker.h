// PartitionWorker: the worker of one unit this instance holds the lease of (DESIGN section 4).
// On acquire it creates the group at id 0, reclaims the older consumers' pending entries, drops
// empty old consumers, then processes its own pending entries in id order before new ones, ONE
// event in flight: fenced read (the lease check), handler, and the ack of that event together with
// the read of the next (fenced_next: one script per event). An idle worker waits to be woken
// (the engine's Waker) rather than polling. A FENCED reply to any of
// its calls ends it at once: it sends nothing more. A head that fails past the retry budget
// halts its stream (decision 6). A process manager's worker does this on each of its
// correlation value's streams (lanes), taking turns, still one event in flight.
//
// The steps are small and each is the design. A derived worker (handed out by an EngineSteps,
// engine_steps.h) overrides only the step it changes, LevelDB EnvWrapper style: the protected
// steps and state below are that seam. seqby's own KNOWN-BROKEN variants are such workers
// (seqby/testing/variant.h); the engine never tests a variant.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seqby/core/broker.h"
#include "seqby/core/engine_env.h"
#include "seqby/core/lease.h"
#include "seqby/core/task.h"

namespace seqby {

// What an instance holds for one partition, for tests, metrics and operators.
struct PartitionStatus {
  std::string key;  // the partition key, or a process manager's correlation value
  std::uint64_t generation = 0;
  bool halted = false;  // a stream of it halted
  std::string halt_id;  // the head entry the first halted stream halted on ("" unless halted)
};

// One partition stream a worker reads: the partition itself, or for a process manager the stream
// C:X of each subscribed category. Each keeps its own read position, retries and halt.
struct Lane {
  Lease lease;  // the worker's lease acting on this stream
  ReadFrom from = ReadFrom::pending;
  std::string failing_id;  // the entry that failed last, and how many times in a row
  std::uint32_t failures = 0;
  std::uint32_t transport_failures = 0;  // reads in a row that got no answer
  bool halted = false;
  std::string halt_id;
  std::uint64_t head_check_ms = 0;       // when a halted head is looked at next
  std::int64_t commit_recorded_seq = 0;  // highest seq recorded as committed (this lease)
  // Handled, not yet acknowledged: the next fenced_next acknowledges it ("" none).
  std::string unacked_id;
  // The handler of unacked_id returned an effect for the engine to commit
  // (HandlerResult::commit_with_step), not yet committed: the next fenced_next carries it, or it
  // is committed by itself before an ack alone (nullopt: none).
  struct StepCommit {
    EffectCommit commit;
    StreamEntry entry;  // the entry whose effect it is (for a retry when out of order)
  };
  std::optional<StepCommit> step_commit;
  // After the last read found nothing new: the stream's last entry id, after which the idle
  // worker waits for a new one ("" unknown: then it polls).
  std::string watch_id;
  // Delivered to this lane's consumer by a read of several new entries, not yet entered, in id
  // order: each is entered only after a fenced_next that names it (its own lease check).
  std::deque<StreamEntry> held;
  // Broker::failovers_seen when this lane last read its pending list (from = pending): when the
  // broker has seen a failover since, the lane reads it again before reading new entries.
  std::uint64_t failovers_seen = 0;
  // Broker::failovers_seen when this lane last reclaimed: a failover may have undone that
  // reclaim (the entries it moved are an older consumer's again), so the lane reclaims again.
  std::uint64_t failovers_reclaimed = 0;
  // When this lane last read its pending list (or the lease was taken): it does again at least
  // every idle_recheck_ms, the safety net for a failover the broker did not see.
  std::uint64_t pending_read_ms = 0;
};

class PartitionWorker {
 public:
  enum class Step : std::uint8_t { done, failed, lost, gave_up };
  // What one turn on a lane came to: it did something, found nothing to do, or the worker ends.
  enum class Turn : std::uint8_t { worked, idle, ended };

  // What reading a lane came to: an entry to handle, or (none) what the turn came to.
  struct Next {
    Next(Turn turn) : turn(turn) {}  // NOLINT: implicit, so that a step can co_return a Turn
    Next(StreamEntry entry) : entry(std::move(entry)) {}  // NOLINT: likewise an entry
    // The step's commit of `entry`'s effect was refused out of order: the entry failed.
    static Next failed(StreamEntry entry, std::string why) {
      Next next(Turn::worked);
      next.failed_entry = std::move(entry);
      next.failure = std::move(why);
      return next;
    }
    Turn turn = Turn::worked;
    std::optional<StreamEntry> entry;
    std::optional<StreamEntry> failed_entry;  // handled, but its effect was not committed
    std::string failure;                      // why (with failed_entry)
  };

  // A worker for the unit of `lease`, with one lane (or one per process-manager category).
  // REQUIRES: env outlives the worker.
  PartitionWorker(const EngineEnv& env, Lease lease);
  virtual ~PartitionWorker() = default;
  PartitionWorker(const PartitionWorker&) = delete;
  PartitionWorker& operator=(const PartitionWorker&) = delete;

  // The worker's whole life: prepare, process until it ends or is stopped, then release the
  // lease unless it is lost. REQUIRES: awaited once, by a task that keeps this worker alive.
  Task<void> run();

  const Lease& lease() const { return lease_; }
  // Generation 0: a unit served without a lease (only a KNOWN-BROKEN variant does that: nothing
  // to renew or release). Every lease the design acts under has generation >= 1.
  bool leased() const { return lease_.generation > 0; }
  // Neither lost nor released: the instance still holds the unit.
  bool holds() const { return !lost_ && !released_; }
  // Neither lost nor asked to stop: the worker goes on to a next event.
  bool active() const { return !lost_ && !stop_requested_; }
  PartitionStatus status() const;

  // Stop after the current event, then release the lease.
  void request_stop() {
    stop_requested_ = true;
    idle_alarm_.ring();
  }
  // The lease is gone (renew refused or FENCED, or unconfirmed for a TTL): stop at once.
  // Recorded as `lose` once.
  void lose(std::string detail);

  // The heartbeat's clock: when the last renew (or the acquire) that was confirmed was sent.
  std::uint64_t last_renew_ok_ms() const { return last_renew_ok_ms_; }
  void renew_confirmed(std::uint64_t sent_ms) { last_renew_ok_ms_ = sent_ms; }
  // The acquire that granted the lease was sent at `sent_ms`.
  void acquired_at(std::uint64_t sent_ms);

 protected:
  // The steps a derived worker may replace; here each is the design.
  // Takes over the older consumers' pending entries on `lanes` (after the groups exist: every
  // lane; after a failover: the lane that meets it).
  virtual Task<bool> reclaim(std::span<Lane> lanes);
  // Turns on the lanes until the worker ends or is stopped.
  virtual Task<void> process();
  // The next entry of `lane` through the fenced step (the lease check before entering), which
  // also acknowledges the entry handled before it (fenced_next: one script per event); a read
  // delivers up to options.read_batch_max new entries, held until each one's own check.
  virtual Task<Next> next_entry(Lane& lane);
  // next_entry with reads of at most `count` new entries (1: nothing is ever held).
  Task<Next> next_entry_of(Lane& lane, std::uint32_t count);
  // What a fenced read of `lane` came to, for any read step: FENCED ends the worker; no answer
  // is read again from the pending list after a backoff (bounded); an ack it carried, an entry
  // or nothing is recorded and the lane's position and watch id follow.
  Task<Next> read_came_to(Lane& lane, Result<NextReply> read);
  // A read step that got no answer or an error (also one whose commit stood first,
  // NextReply::step_failed): FENCED ends the worker; otherwise the lane reads its pending list
  // again after a backoff, and the worker ends after too many in a row.
  Task<Next> read_failed(Lane& lane, const Error& error);
  // `entry` was handled: the design leaves its ack to the next fenced_next of its lane.
  virtual Task<Step> handled(Lane& lane, const StreamEntry& entry);
  // Whether a handler's HandlerResult::commit_with_step rides on the lane's next fenced_next (one
  // script per event). The design: with one lane. A process manager's lanes take turns, so its
  // commit is made right after the handler, by itself, as are those of a worker whose handled()
  // acknowledges at once.
  virtual bool commits_with_step() const { return lanes_.size() == 1; }
  // Every lane found nothing to do: wait for a new entry on a lane (the engine's Waker), a
  // halted head's next look, the reaper's next look, or a stop.
  virtual Task<void> idle_wait();
  // The head `entry` failed past the retry budget: halt its stream.
  virtual Task<Turn> exhausted(Lane& lane, const StreamEntry& entry, const std::string& failure);

  Task<bool> prepare();
  Task<Turn> take_turn(Lane& lane);
  void reread_pending_if_due(Lane& lane);
  Task<Step> run_one(Lane& lane, const StreamEntry& entry, std::string* failure);
  // `entry` failed (its handler, or the commit of its effect): it stays pending and is read
  // again after a backoff, or halts its stream past the retry budget.
  Task<Turn> entry_failed(Lane& lane, const StreamEntry& entry, const std::string& failure);
  // Commits the lane's step_commit by itself (HandlerContext::commit). true: accepted or a
  // duplicate; false: the entry stays pending (fenced: the worker ends).
  Task<bool> commit_alone(Lane& lane);
  // Records a commit decision about the lane's step_commit (seq and event named).
  void record_commit(const Lane& lane, HistoryOp op, std::string detail) const;
  Task<Step> ack(Lane& lane, const std::string& id);
  // Acknowledges the lane's handled entry now, by itself (before a release, or where a derived
  // worker reads without fenced_next), after committing its step_commit by itself. false when it
  // was not acknowledged (the worker must end).
  Task<bool> ack_handled(Lane& lane);
  Task<void> finish();

  // Operating partitions (decisions 6 and 7): the halt made visible in Redis, the halted head
  // watched for an operator's skip or dlq, and the reaping of a cold partition.
  Task<bool> halt(Lane& lane, const StreamEntry& entry, const std::string& failure);
  Task<bool> head_resolved(Lane& lane);
  Task<bool> reap_if_cold();

  // A FENCED reply to one of this worker's calls: lose the lease; the worker sends nothing more.
  void fenced(std::string detail);
  // Before each call the worker sends: no FENCED reply came before it.
  void check_may_send() const;
  bool any_lane_halted() const;

  const EngineEnv& env_;
  Lease lease_;                  // the unit's lease: the partition's, or a process manager's for X
  std::vector<Lane> lanes_;      // one per stream the lease covers, in category order
  bool lost_ = false;            // the lease is gone (fenced, renew refused): stop at once
  bool stop_requested_ = false;  // stop after the current event, then release
  bool released_ = false;        // the worker is releasing or has released the lease
  bool fenced_ = false;          // a call of this worker got a FENCED reply (then lost_)
  bool in_handler_ = false;      // an event of this unit is inside the handler
  std::uint64_t last_renew_ok_ms_ = 0;
  std::uint64_t active_ms_ = 0;  // last acquire or read of an entry (the reaper's idle clock)
  Alarm idle_alarm_;             // rung to end an idle wait: a new entry, a stop, a lost lease
};

}  // namespace seqby
