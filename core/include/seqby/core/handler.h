// The handler API of the ownership engine. A Handler is called with one event at a time per
// partition, in stream order, only while its engine instance holds that partition's lease (the
// lease is checked right before the call). It is not called again for that partition until it
// returns. The engine does not un-run a handler whose lease lapsed mid-call: effects must go
// through a fenced commit (HandlerContext::commit, or HandlerResult::commit_with_step, which the
// engine commits in the step after the call) or be idempotent (ADR decision 5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "seqby/core/broker.h"
#include "seqby/core/history.h"
#include "seqby/core/lease.h"
#include "seqby/core/result.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby {

struct Event {
  std::string category;
  std::string key;                   // the partition key
  std::string id;                    // stream entry id
  std::string type;                  // event type name
  std::string data;                  // JSON text
  std::uint64_t delivery_count = 0;  // 1 on a first delivery; more after retries or failover
};

struct HandlerResult {
  bool ok = true;
  std::string reason;  // why it failed ("" when ok)
  // Succeeded, and its effect is committed by the engine to the fenced effect sink as the key's
  // commit number seq (what HandlerContext::commit does), in the step after the handler returns:
  // under the lease check of the step that also acknowledges this event and reads the next
  // (fenced_commit_next: one script per event). Accepted or duplicate: the event is done.
  // Fenced: the worker ends, the event stays pending for the next owner. Out of order: the event
  // counts as failed and is retried. nullopt: nothing to commit (or the handler committed itself).
  std::optional<EffectCommit> commit;

  static HandlerResult success() { return HandlerResult{}; }
  static HandlerResult failed(std::string why) { return HandlerResult{false, std::move(why), {}}; }
  // Success whose effect the engine commits with the next step (see `commit`).
  static HandlerResult commit_with_step(std::int64_t seq, std::string effect) {
    return HandlerResult{true, "", EffectCommit{seq, std::move(effect)}};
  }
};

// What a handler may do for the partition it is called for. Valid for the duration of one
// handle() call.
class HandlerContext {
 public:
  // REQUIRES: every reference outlives this context.
  HandlerContext(Runtime& runtime, Broker& broker, HistorySink& history, const Lease& lease,
                 std::string group, std::string event_id, std::uint32_t transport_retry_count_max,
                 std::uint64_t transport_backoff_ms, std::int64_t* recorded_seq_max = nullptr);
  HandlerContext(const HandlerContext&) = delete;
  HandlerContext& operator=(const HandlerContext&) = delete;

  const PartitionRef& partition() const { return lease_.partition; }
  // What the lease is of: the partition, or for a process manager {__pm__:G, correlation value}
  // (where a cross-instance marker of the unit belongs).
  PartitionRef unit() const { return lease_.unit(); }
  const std::string& group() const { return group_; }
  const std::string& owner_id() const { return lease_.owner_id; }
  std::uint64_t generation() const { return lease_.generation; }
  const std::string& event_id() const { return event_id_; }

  // Commits `effect` as the key's commit number `seq` under the current lease (the fenced OCC
  // sink). Records commit / commit_fenced / commit_rejected with `seq`. Transport errors are
  // retried (bounded); a retry that finds its own earlier commit applied reports accepted.
  // Errc::timeout / Errc::closed only when every retry failed: the commit may have happened.
  // `recorded_seq_max` (optional, kept by the engine per lease generation) is the highest seq
  // recorded as committed under this lease: a duplicate of a higher seq committed by this very
  // token is then our own commit whose reply was lost in an earlier call, and is recorded once.
  Task<Result<CommitReply>> commit(std::int64_t seq, std::string effect);

 private:
  void record(HistoryOp op, std::int64_t seq, std::string detail);

  Runtime& runtime_;
  Broker& broker_;
  HistorySink& history_;
  const Lease& lease_;
  std::string group_;
  std::string event_id_;
  std::uint32_t transport_retry_count_max_;
  std::uint64_t transport_backoff_ms_;
  std::int64_t* recorded_seq_max_;
};

class Handler {
 public:
  virtual ~Handler() = default;
  // Handles one event. A failed result is retried (the event stays pending) until the engine's
  // retry budget is spent; then the partition halts on it.
  virtual Task<HandlerResult> handle(const Event& event, HandlerContext& context) = 0;
};

}  // namespace seqby
