// HandlerContext: the fenced commit a handler makes under its partition's current lease.
#include "commit_outcome.h"
#include "retry.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/handler.h"

namespace seqby {

HandlerContext::HandlerContext(Runtime& runtime, Broker& broker, HistorySink& history,
                               const Lease& lease, std::string group, std::string event_id,
                               std::uint32_t transport_retry_count_max,
                               std::uint64_t transport_backoff_ms, std::int64_t* recorded_seq_max)
    : runtime_(runtime),
      broker_(broker),
      history_(history),
      lease_(lease),
      group_(std::move(group)),
      event_id_(std::move(event_id)),
      transport_retry_count_max_(transport_retry_count_max),
      transport_backoff_ms_(transport_backoff_ms),
      recorded_seq_max_(recorded_seq_max) {}

void HandlerContext::record(HistoryOp op, std::int64_t seq, std::string detail) {
  HistoryRecord r;
  r.time_ms = runtime_.clock().now_ms();
  r.node = lease_.owner_id;
  r.op = op;
  r.category = lease_.partition.category;
  r.key = lease_.partition.key;
  r.group = group_;
  r.generation = lease_.generation;
  r.event_id = event_id_;
  r.seq = seq;
  r.detail = std::move(detail);
  history_.record(std::move(r));
}

Task<Result<CommitReply>> HandlerContext::commit(std::int64_t seq, std::string effect) {
  std::uint32_t attempts = 0;
  auto send = [&] {
    ++attempts;
    return broker_.fenced_commit(lease_, group_, seq, effect);
  };
  const TransportRetry retry(runtime_, transport_retry_count_max_, transport_backoff_ms_,
                             8 * transport_backoff_ms_);
  Result<CommitReply> reply = co_await retry_transport(retry, is_transport_error, send);
  if (!reply.ok()) {
    const Errc code = reply.code();
    record(HistoryOp::commit_rejected, seq,
           std::string("error ") + errc_name(code) + ": " + reply.error().message);
    co_return reply;
  }
  const bool earlier_reply_lost = attempts > 1;  // only a reply that never came is sent again
  CommitReply out =
      settle_commit(lease_, seq, std::move(reply).value(), earlier_reply_lost, recorded_seq_max_,
                    [&](HistoryOp op, std::string detail) { record(op, seq, std::move(detail)); });
  co_return out;
}

CommitReply settle_commit(const Lease& lease, std::int64_t seq, CommitReply out,
                          bool earlier_reply_lost, std::int64_t* recorded_seq_max,
                          const std::function<void(HistoryOp, std::string)>& record) {
  // The reply's shape, as the sink's script decides it.
  switch (out.outcome) {
    case CommitOutcome::accepted:
      SEQBY_CHECK(out.last_seq == seq && out.committed_by == lease.token());
      break;
    case CommitOutcome::duplicate:
      SEQBY_CHECK(out.last_seq >= seq);
      break;
    case CommitOutcome::out_of_order:
      SEQBY_CHECK(out.last_seq + 1 < seq);
      break;
    case CommitOutcome::fenced:
      break;
  }
  const bool own_lost_commit =
      out.outcome == CommitOutcome::duplicate && out.last_seq == seq &&
      out.committed_by == lease.token() &&
      (recorded_seq_max != nullptr ? *recorded_seq_max < seq : earlier_reply_lost);
  if (own_lost_commit) {
    out.outcome = CommitOutcome::accepted;
    if (recorded_seq_max != nullptr) *recorded_seq_max = seq;
    record(HistoryOp::commit, "accepted after a lost reply");
    return out;
  }
  if (out.outcome == CommitOutcome::accepted && recorded_seq_max != nullptr) {
    *recorded_seq_max = seq;
  }
  switch (out.outcome) {
    case CommitOutcome::accepted:
      record(HistoryOp::commit, "");
      break;
    case CommitOutcome::fenced:
      record(HistoryOp::commit_fenced, "");
      break;
    case CommitOutcome::duplicate:
    case CommitOutcome::out_of_order:
      record(HistoryOp::commit_rejected, std::string(commit_outcome_name(out.outcome)) +
                                             " last=" + std::to_string(out.last_seq));
      break;
  }
  return out;
}

}  // namespace seqby
