#include "step_batcher.h"

#include <utility>
#include <vector>

namespace seqby {

StepBatcher::StepBatcher(const EngineEnv& env, std::size_t max) : env_(env), max_(max) {
  SEQBY_CHECK(max_ >= 2 && max_ <= env_.broker.steps_per_call_max());
}

Task<Result<NextReply>> StepBatcher::step(const Lease& lease, std::string_view group, ReadFrom from,
                                          std::string_view ack_id, NextAsk ask) {
  auto slot = std::make_shared<Slot>();
  slot->call = StepCall{&lease, group, from, ack_id, ask};
  waiting_.push_back(slot);
  if (!sending_) {
    sending_ = true;
    // Starts from the runtime's queue: the steps handed in this turn go together.
    env_.runtime.spawn("worker", send_all());
  }
  co_await Answer{slot.get()};
  co_return std::move(*slot->result);
}

Task<void> StepBatcher::send_all() {
  while (!waiting_.empty()) {
    std::vector<std::shared_ptr<Slot>> sent;
    std::vector<StepCall> calls;
    const std::size_t n = std::min(max_, waiting_.size());
    sent.reserve(n);
    calls.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      calls.push_back(waiting_.front()->call);
      sent.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
    std::vector<Result<NextReply>> results = co_await env_.broker.fenced_steps(calls);
    SEQBY_CHECK(results.size() == sent.size());
    // Each worker goes on now, inline, until its next wait (its next step joins waiting_).
    for (std::size_t i = 0; i < sent.size(); ++i) {
      Slot& slot = *sent[i];
      slot.result = std::move(results[i]);
      if (std::coroutine_handle<> waiter = std::exchange(slot.waiter, nullptr)) waiter.resume();
    }
  }
  sending_ = false;
}

}  // namespace seqby
