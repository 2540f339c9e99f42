#include "seqby/sim/test_handler.h"

#include "seqby/core/check.h"
#include "seqby/core/json_flat.h"

namespace seqby::sim {

std::string event_data_json(const std::string& key, std::int64_t seq) {
  JsonObject object;
  object["client_id"] = key;
  object["seq"] = seq;
  return encode_json_object(object);
}

HandlerPlan::HandlerPlan(const SimCase& c, FaultObserver* observer, bool beside)
    : observer_(observer),
      process_manager_(is_process_manager(c)),
      beside_(beside),
      commit_with_step_(c.commit_with_step) {
  SEQBY_CHECK(!beside || !c.beside_group.empty());
  for (const CaseEvent& e : c.events) {
    events_[EventKey{e.seq, e.key, category_of(c, e)}].behaviour = e.behaviour;
  }
}

HandlerPlan::EventState& HandlerPlan::state_of(const std::string& category, const std::string& key,
                                               std::int64_t seq) {
  auto it = events_.find(EventView{seq, key, category});
  if (it != events_.end()) return it->second;
  return events_.emplace(EventKey{seq, key, category}, EventState{default_}).first->second;
}

void HandlerPlan::on_first_call(EventState& state, const std::string& node,
                                const std::string& category, const std::string& key,
                                std::int64_t seq) {
  if (state.seen) return;
  state.seen = true;
  if (observer_ == nullptr) return;
  const EventBehaviour& b = state.behaviour;
  const std::string where = (process_manager_ ? "category=" + category + " " : std::string()) +
                            "key=" + key + " seq=" + std::to_string(seq);
  if (b.transient_failures > 0) {
    observer_->on_fault(FaultKind::handler_transient, node,
                        where + " failures=" + std::to_string(b.transient_failures));
  }
  if (b.poison) observer_->on_fault(FaultKind::handler_poison, node, where);
  if (b.slow_ms > 0) {
    observer_->on_fault(FaultKind::slow_handler, node,
                        where + " slow_ms=" + std::to_string(b.slow_ms));
  }
}

TestHandler::TestHandler(Runtime& runtime, HandlerPlan& plan, std::string node)
    : runtime_(runtime), plan_(plan), node_(std::move(node)) {}

Task<HandlerResult> TestHandler::handle(const Event& event, HandlerContext& context) {
  ++calls_open_;
  HandlerResult result = co_await handle_call(event, context);
  SEQBY_CHECK(calls_open_ > 0);
  --calls_open_;
  co_return result;
}

Task<HandlerResult> TestHandler::handle_call(const Event& event, HandlerContext& context) {
  Result<JsonObject> data = decode_json_object(event.data);
  if (!data.ok()) co_return HandlerResult::failed("bad event data: " + data.error().message);
  auto field = data.value().find("seq");
  if (field == data.value().end() || !std::holds_alternative<std::int64_t>(field->second)) {
    co_return HandlerResult::failed("event data has no integer seq");
  }
  const std::int64_t seq = std::get<std::int64_t>(field->second);
  ++plan_.calls_;
  HandlerPlan::EventState& state = plan_.state_of(event.category, event.key, seq);
  plan_.on_first_call(state, node_, event.category, event.key, seq);
  const EventBehaviour b = state.behaviour;
  plan_.inside_[node_] = HandlerPlan::Inside{event.category, event.key, seq};
  co_await runtime_.sleep_ms(b.duration_ms + b.slow_ms + (plan_.beside_ ? b.beside_slow_ms : 0));
  plan_.inside_.erase(node_);
  if (b.poison) co_return HandlerResult::failed("poison");
  // Transient failures are counted per event across retries and instances.
  if (state.failures < b.transient_failures) {
    ++state.failures;
    co_return HandlerResult::failed("transient");
  }
  if (plan_.commit_with_step_) co_return HandlerResult::commit_with_step(seq, event.id);
  Result<CommitReply> committed = co_await context.commit(seq, event.id);
  if (!committed.ok()) co_return HandlerResult::failed(committed.error().message);
  switch (committed.value().outcome) {
    case CommitOutcome::accepted:
    case CommitOutcome::duplicate:
      co_return HandlerResult::success();
    case CommitOutcome::fenced:
      co_return HandlerResult::failed("commit fenced");
    case CommitOutcome::out_of_order:
      co_return HandlerResult::failed("commit out of order");
  }
  co_return HandlerResult::failed("unknown commit outcome");
}

}  // namespace seqby::sim
