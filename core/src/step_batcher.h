// StepBatcher: the steps of an instance's workers sent together (docs/ARCHITECTURE.md "Steps of
// many partitions in one script"). A worker hands its step (what it would send as fenced_next)
// to the batcher and waits. The batcher's task sends every step handed to it since its last call
// as one Broker::fenced_steps, at most `max` steps a call and one call in flight, and resumes each
// waiting worker with its own result right where the reply came, one after the other, before
// anything else of the instance runs: as when a worker awaits its own call, nothing is awaited
// between a step's reply and its handler. A step handed while a call is in flight goes with the
// next call, so under load the calls fill up and a lone step goes at once. The task runs while
// steps wait, under the name "worker" (a stall of the workers stalls it too), and ends when none
// is left: nothing to stop.
#pragma once

#include <coroutine>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>

#include "seqby/core/broker.h"
#include "seqby/core/engine_env.h"
#include "seqby/core/task.h"

namespace seqby {

class StepBatcher {
 public:
  // REQUIRES: max >= 2 and max <= env.broker.steps_per_call_max(); env outlives the batcher.
  StepBatcher(const EngineEnv& env, std::size_t max);
  StepBatcher(const StepBatcher&) = delete;
  StepBatcher& operator=(const StepBatcher&) = delete;

  // Broker::fenced_next's step, sent with the others handed in the meantime. The arguments
  // outlive the call.
  Task<Result<NextReply>> step(const Lease& lease, std::string_view group, ReadFrom from,
                               std::string_view ack_id, NextAsk ask);

 private:
  struct Slot {
    StepCall call;
    std::optional<Result<NextReply>> result;
    std::coroutine_handle<> waiter;  // the step() waiting for `result`
  };
  // Suspends step() until the task set its slot's result (at once when it is set already).
  struct Answer {
    Slot* slot;
    bool await_ready() const noexcept { return slot->result.has_value(); }
    void await_suspend(std::coroutine_handle<> h) noexcept { slot->waiter = h; }
    void await_resume() const noexcept {}
  };
  // The task: calls until no step waits.
  Task<void> send_all();

  const EngineEnv& env_;
  const std::size_t max_;
  std::deque<std::shared_ptr<Slot>> waiting_;  // handed, not yet sent; in the order handed
  bool sending_ = false;                       // the task runs
};

}  // namespace seqby
