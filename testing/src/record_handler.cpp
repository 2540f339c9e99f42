// RecordHandler: the `record` test handler of `seqby worker` (a seqby::testing fixture).
#include "seqby/testing/record_handler.h"

#include <algorithm>

#include "seqby/core/json_flat.h"

namespace seqby::testing {

std::string inprogress_marker_value(std::string_view owner_id, std::string_view category,
                                    std::string_view event_id, bool process_manager) {
  std::string value(owner_id);
  value += ':';
  if (process_manager) {
    value += category;
    value += ':';
  }
  value += event_id;
  return value;
}

RecordHandler::RecordHandler(Runtime& runtime, redis::RedisBroker& broker, HistorySink& history,
                             std::string owner_id, std::uint64_t marker_ttl_ms,
                             std::uint64_t journal_maxlen)
    : runtime_(runtime),
      broker_(broker),
      history_(history),
      owner_id_(std::move(owner_id)),
      marker_ttl_ms_(marker_ttl_ms),
      journal_maxlen_(journal_maxlen) {}

redis::script::JournalTail RecordHandler::journal_of(const HandlerContext& context) const {
  redis::script::JournalTail tail;
  if (journal_maxlen_ == 0) return tail;
  tail.stream = journal_stream_name(context.unit());
  tail.maxlen = journal_maxlen_;
  tail.node = owner_id_;
  tail.category = context.partition().category;
  tail.key = context.partition().key;
  tail.group = std::string(context.group());
  tail.generation = context.generation();
  return tail;
}

Task<HandlerResult> RecordHandler::handle(const Event& event, HandlerContext& context) {
  Result<JsonObject> data = decode_json_object(event.data);
  if (!data.ok()) co_return HandlerResult::failed("bad event data: " + data.error().message);
  const JsonObject& object = data.value();
  auto seq_field = object.find("seq");
  if (seq_field == object.end() || !std::holds_alternative<std::int64_t>(seq_field->second)) {
    co_return HandlerResult::failed("event data has no integer seq");
  }
  const std::int64_t seq = std::get<std::int64_t>(seq_field->second);
  std::uint64_t delay_ms = 0;
  auto delay_field = object.find("delay_ms");
  if (delay_field != object.end() && std::holds_alternative<std::int64_t>(delay_field->second)) {
    const std::int64_t d = std::get<std::int64_t>(delay_field->second);
    delay_ms = d > 0 ? static_cast<std::uint64_t>(d) : 0;
  }
  std::uint64_t fail_deliveries = 0;
  auto fail_field = object.find("fail_deliveries");
  if (fail_field != object.end() && std::holds_alternative<std::int64_t>(fail_field->second)) {
    const std::int64_t n = std::get<std::int64_t>(fail_field->second);
    fail_deliveries = n > 0 ? static_cast<std::uint64_t>(n) : 0;
  }
  auto poison_field = object.find("poison");
  const bool poison = poison_field != object.end() &&
                      std::holds_alternative<bool>(poison_field->second) &&
                      std::get<bool>(poison_field->second);

  const std::string marker = inprogress_key_name(context.unit(), context.group());
  const bool process_manager = !(context.unit() == context.partition());
  const std::string token =
      inprogress_marker_value(owner_id_, event.category, event.id, process_manager);
  redis::script::HandlerEnter::Args enter_args{
      marker, token, owner_id_, marker_ttl_ms_ + delay_ms, event.id, journal_of(context)};
  redis::ScriptCall enter_call = redis::script::encode<redis::script::HandlerEnter>(enter_args);
  Result<redis::Reply> enter_reply =
      co_await broker_.run_script(redis::script::HandlerEnter::name, std::move(enter_call));
  Result<std::optional<std::string>> holder =
      redis::script::decode_reply<redis::script::HandlerEnter>(enter_reply);
  if (holder.ok() && holder.value().has_value() && journal_maxlen_ == 0) {
    // Without a journal the overlap goes to the engine's history (the script journals it else).
    HistoryRecord warn;
    warn.time_ms = runtime_.clock().now_ms();
    warn.node = owner_id_;
    warn.op = HistoryOp::warn;
    warn.category = context.partition().category;
    warn.key = context.partition().key;
    warn.group = context.group();
    warn.generation = context.generation();
    warn.event_id = event.id;
    warn.seq = seq;
    warn.detail = std::string(kInProgressOverlap) + " holder=" + *holder.value();
    history_.record(std::move(warn));
  }
  if (delay_ms > 0) co_await runtime_.sleep_ms(delay_ms);

  HandlerResult result = HandlerResult::success();
  if (poison) {
    result = HandlerResult::failed("poison");
  } else if (event.delivery_count <= fail_deliveries) {
    result =
        HandlerResult::failed("transient (delivery " + std::to_string(event.delivery_count) +
                              " of the first " + std::to_string(fail_deliveries) + " failing)");
  } else {
    Result<CommitReply> committed = co_await context.commit(seq, event.id);
    if (!committed.ok()) {
      result = HandlerResult::failed(committed.error().message);
    } else {
      switch (committed.value().outcome) {
        case CommitOutcome::accepted:
        case CommitOutcome::duplicate:
          break;
        case CommitOutcome::fenced:
          result = HandlerResult::failed("commit fenced");
          break;
        case CommitOutcome::out_of_order:
          result = HandlerResult::failed("commit out of order");
          break;
      }
    }
  }
  // Deletes only our own marker (a lapsed one may have been taken by another instance); the
  // outcome is the engine's exit detail.
  redis::script::HandlerExit::Args exit_args{
      marker, token, event.id, result.ok ? "ok" : "failed: " + result.reason, journal_of(context)};
  co_await exit_until_answered(exit_args);
  co_return result;
}

// The exit's journal record must be written before the engine goes on to the unit's next event,
// or the journal shows this execution still open beside the next one: a false exclusion (`seqby
// chaos --seed 1` once: redis-server was killed between a commit and its exit, the exit's
// command never ran, and the engine's next step went through after the restart). So an exit
// whose reply was lost to the transport is sent again. A second exit record, when the first did
// run, matches no open enter and the checker only notes it; a lost reply leaves at most our own
// marker, which the next enter replaces. After kExitAttemptsMax sends the outage has outlived
// the lease (any later step of this owner is fenced), and the exit is left unrecorded.
Task<void> RecordHandler::exit_until_answered(const redis::script::HandlerExit::Args& args) {
  std::uint64_t backoff_ms = kExitBackoffMs;
  for (std::uint32_t attempt = 1;; ++attempt) {
    Result<redis::Reply> reply = co_await broker_.run_script(
        redis::script::HandlerExit::name, redis::script::encode<redis::script::HandlerExit>(args));
    const bool lost =
        !reply.ok() && (reply.error().code == Errc::timeout || reply.error().code == Errc::closed);
    if (!lost || attempt == kExitAttemptsMax) co_return;
    co_await runtime_.sleep_ms(backoff_ms);
    backoff_ms = std::min(2 * backoff_ms, kExitBackoffMaxMs);
  }
}

}  // namespace seqby::testing
