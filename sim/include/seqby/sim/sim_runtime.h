// SimRuntime: the Runtime of one simulated engine instance, over the Scheduler's virtual time.
// It owns the root frames of the tasks spawned through it; a root that returns is destroyed and
// forgotten. Faults act on the whole instance: crash() destroys every frame at once and no
// queued resumption ever touches them again; stalls freeze tasks (work that comes due while
// stalled runs when the stall ends); the clock can be skewed (jumps, rate) but never goes back.
// It does not model CPU time: code between two waits takes no virtual time.
//
// After crash() the same SimRuntime hosts a fresh instance: spawn into it again (its clock
// skew is kept, as the machine's clock would be; stalls are cleared with the dead process).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seqby/core/runtime.h"
#include "seqby/sim/scheduler.h"

namespace seqby::sim {

// The name of the tasks a heartbeat_stall freezes.
inline constexpr std::string_view kHeartbeatTaskName = "heartbeat";

// Where a suspended task's wake-up must be queued: its domain and its task tag.
struct TaskBinding {
  DomainId domain = 0;
  std::uint64_t tag = 0;
};

class SimRuntime final : public Runtime, private Domain {
 public:
  // `name` labels the instance in traces ("a", "instance-1", ...).
  SimRuntime(Scheduler& scheduler, std::string name);
  ~SimRuntime() override;  // crash()es, then leaves the scheduler
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  // --- Runtime ---
  Clock& clock() override { return clock_; }
  // Wakes when this instance's clock has advanced by `duration_ms` (a 0 ms sleep still yields
  // to work already due). REQUIRES: called from a task spawned through this runtime.
  Task<void> sleep_ms(std::uint64_t duration_ms) override;
  // Wakes at the ring (queued at the current virtual time, bound to the waiting task) or when
  // this instance's clock has advanced by `timeout_ms`.
  Task<bool> wait_alarm(Alarm& alarm, std::uint64_t timeout_ms) override;
  // Queues `task` to start at the current virtual time (never inline inside the caller).
  void spawn(std::string name, Task<void> task) override;
  // Runs `work` inline: simulated blocking work takes no virtual time.
  Task<void> run_blocking(std::function<void()> work) override;

  // --- faults (called by the world, never by a task of this instance) ---
  // Destroys every task frame of the instance, in spawn-slot order.
  void crash();
  // Freezes every task until global virtual time `until_ms` (extends, never shortens, a stall).
  void stall_until(std::uint64_t until_ms);
  // Freezes only the tasks spawned under `task_name` (also ones spawned during the stall).
  void stall_tasks_until(std::string_view task_name, std::uint64_t until_ms);
  // The clock jumps by `delta_ms` (forward, or backward: then it holds still until it catches up).
  void jump_clock(std::int64_t delta_ms);
  // From now on the clock advances rate_ppm/1e6 ms per global ms. REQUIRES: rate_ppm >= 1000.
  void set_clock_rate(std::uint32_t rate_ppm);

  // --- introspection ---
  const std::string& name() const { return name_; }
  Scheduler& scheduler() { return scheduler_; }
  std::size_t task_count() const { return live_count_; }
  std::size_t task_count(std::string_view task_name) const;
  std::uint64_t crash_count() const { return crash_count_; }
  bool stalled() const { return stall_end_ms_ > scheduler_.now_ms(); }
  std::uint32_t clock_rate_ppm() const { return rate_ppm_; }

  // --- for simulator awaiters (links) ---
  // The binding of the task whose frame carries `context` (from detail::context_of).
  // REQUIRES: that task was spawned through this runtime and is alive.
  TaskBinding binding_of(void* context) const;
  // Global ms after which this clock will have advanced by `local_ms` at the current rate.
  std::uint64_t global_delay_ms(std::uint64_t local_ms) const;

 private:
  struct Root {
    SimRuntime* owner = nullptr;
    std::uint32_t slot = 0;
    std::uint32_t generation = 0;
    bool live = false;
    std::string name;
    std::coroutine_handle<> frame;  // the wrapper frame, which owns the spawned Task
  };
  class InstanceClock final : public Clock {
   public:
    explicit InstanceClock(SimRuntime* rt) : rt_(rt) {}
    std::uint64_t now_ms() override;

   private:
    SimRuntime* rt_;
  };
  struct Wake;
  struct AlarmWake;

  static Task<void> run_root(Task<void> body, Root* root);
  Dispatch dispatch(std::uint64_t tag, Work& work) override;
  std::uint64_t tag_of(const Root& root) const {
    return (static_cast<std::uint64_t>(root.slot) << 32) | root.generation;
  }
  std::uint64_t stall_end_for(const Root& root) const;
  void reap_finished();
  void retire(Root& root);
  std::int64_t unclamped_local_ms(std::uint64_t global_ms) const;
  std::uint64_t global_time_for(std::uint64_t local_ms) const;

  Scheduler& scheduler_;
  std::string name_;
  DomainId domain_;
  std::vector<std::unique_ptr<Root>> roots_;  // stable addresses: frames point at their Root
  std::vector<std::uint32_t> free_roots_;
  std::vector<std::uint32_t> finished_;
  std::size_t live_count_ = 0;
  std::uint64_t crash_count_ = 0;
  bool dispatching_ = false;
  bool crashing_ = false;

  std::uint64_t stall_end_ms_ = 0;
  std::vector<std::pair<std::string, std::uint64_t>> name_stalls_;

  // Local clock = max(last reading, anchor_local + (global - anchor_global) * rate / 1e6).
  std::int64_t anchor_local_ms_ = 0;
  std::uint64_t anchor_global_ms_ = 0;
  std::uint32_t rate_ppm_ = 1'000'000;
  std::uint64_t last_reading_ms_ = 0;
  InstanceClock clock_{this};
};

}  // namespace seqby::sim
