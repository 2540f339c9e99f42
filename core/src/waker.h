// Waker: how an engine instance's idle workers wait for new entries (docs/ARCHITECTURE.md "Idle
// partitions are woken"). A worker with nothing to read registers the streams it waits on, each
// with the last entry id its fenced read saw, and waits on its own Alarm; the task "waker" keeps
// ONE blocking read (Broker::wait_for_entries) in flight over every registered stream and rings
// the workers whose streams got an entry. A wake-up is not a decision: the woken worker's next
// step is its fenced read. A worker that registers while a read is in flight rings the
// instance's doorbell (Broker::ring_wake, at most once per read), so the read is sent again with
// it. When the broker cannot wait (Errc::unsupported), every wait is a poll_interval_ms sleep.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "seqby/core/broker.h"
#include "seqby/core/engine_env.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby {

class Waker {
 public:
  // REQUIRES: env outlives the waker and its task.
  explicit Waker(const EngineEnv& env) : env_(env) {}
  ~Waker() { *alive_ = false; }
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;

  // The task "waker": keeps the blocking read in flight until stop().
  Task<void> loop();
  // The instance stops: the loop ends after its read (ring the doorbell to end that one now).
  void stop();
  bool stopping() const { return stopping_; }

  // Waits, in the calling worker's task, until a stream of `streams` may hold an entry after its
  // after_id, `alarm` rings, or `timeout_ms` passed. REQUIRES: `streams` is not empty; `streams`
  // and `alarm` outlive the call.
  Task<void> wait(const std::vector<WatchedStream>& streams, Alarm& alarm,
                  std::uint64_t timeout_ms);

  // The longest one blocking read waits: a read that outlives its connection is noticed then.
  static constexpr std::uint64_t kBlockMs = kWakeBlockMsMax;

 private:
  struct Waiter {
    const std::vector<WatchedStream>* streams;
    Alarm* alarm;
  };
  // Removes waiter `id` if it is still registered (a waiter the loop woke is removed already).
  void leave(std::uint64_t id) { waiters_.erase(id); }

  const EngineEnv& env_;
  std::map<std::uint64_t, Waiter> waiters_;  // by registration number: a deterministic order
  std::uint64_t next_id_ = 0;
  Alarm loop_alarm_;          // rung when a waiter registers while the loop has no read out
  bool reading_ = false;      // a blocking read is in flight
  bool rang_ = false;         // the doorbell rang for the read in flight
  bool unsupported_ = false;  // the broker cannot wait: waits are sleeps
  bool stopping_ = false;
  // False once the waker is gone: a worker task torn down after it does not touch it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace seqby
