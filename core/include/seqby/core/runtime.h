// Runtime: how engine code waits and starts concurrent work. The simulator implements it over
// one thread and virtual time (a queue ordered by due time, then insertion sequence); the real
// runtime over one event-loop thread per engine instance plus a bounded pool for blocking work.
// Engine code is the same against both and never learns which one it runs on.
//
// One Runtime object serves one engine instance: a crash destroys every task spawned through it,
// a stall freezes them. Tasks are named so that a fault can single some out (a heartbeat stall
// freezes only tasks named "heartbeat").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "seqby/core/clock.h"
#include "seqby/core/task.h"

namespace seqby {

// A wake-up that one task of an instance waits on (Runtime::wait_alarm) and another task of the
// same instance rings. A ring while nobody waits is kept: the next wait returns at once. Not
// thread-safe: every call on the instance's own loop (or its simulated domain).
class Alarm {
 public:
  Alarm() = default;
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  // Wakes the waiting task (soon, from the runtime's queue: never inline), or the next one.
  void ring() {
    rung_ = true;
    if (on_ring_) {
      std::function<void()> on_ring = std::move(on_ring_);
      on_ring_ = nullptr;
      on_ring();
    }
  }
  bool rung() const { return rung_; }

  // For Runtime implementations: `on_ring` is called (once) by the next ring() while a task
  // waits; disarm() forgets it; take() reads and clears the rung flag.
  void arm(std::function<void()> on_ring) { on_ring_ = std::move(on_ring); }
  void disarm() { on_ring_ = nullptr; }
  bool take() {
    const bool rung = rung_;
    rung_ = false;
    return rung;
  }

 private:
  bool rung_ = false;
  std::function<void()> on_ring_;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  // This instance's clock (in the simulator it may be skewed relative to other instances').
  virtual Clock& clock() = 0;

  // Suspends the calling task for at least `duration_ms` of this instance's clock.
  virtual Task<void> sleep_ms(std::uint64_t duration_ms) = 0;

  // Suspends the calling task until `alarm` rings or `timeout_ms` of this instance's clock
  // passed, whichever comes first. Returns whether it rang (a ring before the call counts).
  // REQUIRES: one task waits on an alarm at a time; the alarm outlives the wait.
  virtual Task<bool> wait_alarm(Alarm& alarm, std::uint64_t timeout_ms) = 0;

  // Starts `task` detached. It runs until it returns or the instance is torn down. The task
  // starts later, from the runtime's queue, never inline inside the caller.
  // REQUIRES: `name` is a short stable label ("heartbeat", "discovery", "worker", ...).
  virtual void spawn(std::string name, Task<void> task) = 0;

  // Runs blocking `work` where it cannot hold up the instance's other tasks (a worker pool in
  // the real runtime, inline in the simulator) and resumes the caller when it is done.
  virtual Task<void> run_blocking(std::function<void()> work) = 0;
};

}  // namespace seqby
