// Scheduler: the simulator's single-threaded virtual time. One queue of work ordered by (due
// time, insertion sequence): world-level callbacks (the simulated server, fault injection) and
// work bound to a task of a Domain (a SimRuntime), which the domain may run, drop (the task died
// in a crash) or defer (the task is stalled). Same inputs => same order of execution, every time;
// trace_hash() summarises that order. The queue and the number of steps are bounded; going past
// the queue bound is a programming error (a runaway loop), going past the step bound stops runs.
#pragma once

#include <coroutine>
#include <cstdint>
#include <functional>
#include <vector>

#include "seqby/core/clock.h"

namespace seqby::sim {

using Callback = std::function<void()>;
using DomainId = std::uint32_t;

// One piece of due work: a coroutine to resume, else a callback to call.
struct Work {
  std::coroutine_handle<> handle;
  Callback fn;
  void run() {
    if (handle) {
      handle.resume();
    } else {
      fn();
    }
  }
};

struct Dispatch {
  enum class Kind : std::uint8_t { ran, dropped, deferred };
  Kind kind = Kind::ran;
  std::uint64_t until_ms = 0;  // Kind::deferred: when to offer the work again
  static Dispatch ran() { return {Kind::ran, 0}; }
  static Dispatch dropped() { return {Kind::dropped, 0}; }
  static Dispatch deferred(std::uint64_t until_ms) { return {Kind::deferred, until_ms}; }
};

// A set of tasks that run, stall and die together (one engine instance). `tag` identifies the
// task the work is bound to, in the domain's own terms.
class Domain {
 public:
  virtual ~Domain() = default;
  // Work bound to `tag` is due: run it (inside the task's context), drop it, or defer it.
  // REQUIRES: a deferral is to a time later than now.
  virtual Dispatch dispatch(std::uint64_t tag, Work& work) = 0;
};

struct SchedulerOptions {
  std::uint64_t start_ms = 0;                    // virtual time at construction
  std::uint64_t step_count_max = 1'000'000'000;  // runs stop here (RunStop::step_cap)
  std::size_t queue_size_max = std::size_t{1} << 22;
  std::uint32_t domain_count_max = 1u << 16;  // domain ids are never reused
};

enum class RunStop : std::uint8_t {
  reached,    // virtual time reached the requested time
  predicate,  // the predicate became true
  idle,       // nothing left to run
  step_cap,   // step_count_max was reached
};
const char* run_stop_name(RunStop stop);

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  std::uint64_t now_ms() const { return now_ms_; }
  // Global virtual time as a Clock (for the world: history timestamps, the server).
  Clock& clock() { return clock_; }

  // World-level work: runs at `due_ms` whatever happens to any instance.
  // REQUIRES: due_ms >= now_ms().
  void call_at(std::uint64_t due_ms, Callback fn);
  void call_after(std::uint64_t delay_ms, Callback fn) {
    call_at(now_ms_ + delay_ms, std::move(fn));
  }

  // Domains. REQUIRES: `domain` outlives its registration (remove_domain before destroying it).
  DomainId add_domain(Domain* domain);
  // Work still queued for a removed domain is dropped when it comes due.
  void remove_domain(DomainId id);

  // Work bound to (domain, tag), offered to the domain when due. REQUIRES: due_ms >= now_ms().
  void resume_at(std::uint64_t due_ms, DomainId domain, std::uint64_t tag,
                 std::coroutine_handle<> handle);
  void call_bound_at(std::uint64_t due_ms, DomainId domain, std::uint64_t tag, Callback fn);

  // Runs the earliest queued work. Returns false when the queue is empty or the step cap is hit.
  bool step();
  // Runs everything due at or before `time_ms`, then sets the time to `time_ms`.
  RunStop run_until(std::uint64_t time_ms);
  // Runs until `done()` holds (checked before each step), the queue is empty, the next work is
  // later than `time_limit_ms` (time then advances to the limit), or the step cap.
  RunStop run_until(const std::function<bool()>& done, std::uint64_t time_limit_ms);

  std::uint64_t step_count() const { return step_count_; }
  std::size_t queue_size() const { return heap_.size(); }
  // Due time of the earliest queued work. REQUIRES: queue_size() > 0.
  std::uint64_t next_due_ms() const;
  bool step_cap_reached() const { return step_count_ >= options_.step_count_max; }
  // A hash of every step taken so far: time, sequence, domain, tag and what became of it.
  std::uint64_t trace_hash() const { return trace_hash_; }

 private:
  static constexpr DomainId kWorld = 0xffffffffu;

  struct Key {
    std::uint64_t due_ms;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Entry {
    DomainId domain = kWorld;
    std::uint64_t tag = 0;
    Work work;
  };
  class WorldClock final : public Clock {
   public:
    explicit WorldClock(const Scheduler* s) : s_(s) {}
    std::uint64_t now_ms() override { return s_->now_ms_; }

   private:
    const Scheduler* s_;
  };

  void push(std::uint64_t due_ms, DomainId domain, std::uint64_t tag, Work work);
  void push_key(std::uint64_t due_ms, std::uint32_t slot);
  void mix(std::uint64_t value);

  SchedulerOptions options_;
  std::uint64_t now_ms_;
  std::uint64_t seq_next_ = 0;
  std::uint64_t step_count_ = 0;
  std::uint64_t trace_hash_ = 0xcbf29ce484222325ULL;
  std::vector<Key> heap_;       // binary min-heap on (due_ms, seq)
  std::vector<Entry> entries_;  // payloads, indexed by Key::slot
  std::vector<std::uint32_t> free_slots_;
  std::vector<Domain*> domains_;  // nullptr once removed
  WorldClock clock_{this};
};

}  // namespace seqby::sim
