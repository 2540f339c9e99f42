#include "seqby/sim/sim_runtime.h"

#include <algorithm>
#include <memory>

#include "seqby/core/check.h"

namespace seqby::sim {

namespace {
constexpr std::size_t kRootCountMax = std::size_t{1} << 20;
constexpr int kSleepRoundsMax = 1 << 16;  // a sleep re-arms only when the clock was re-skewed
constexpr std::uint64_t kPpm = 1'000'000;
}  // namespace

// Suspends the awaiting task and queues its resumption `delay_ms` of global time from now.
struct SimRuntime::Wake {
  SimRuntime* rt;
  std::uint64_t delay_ms;
  bool await_ready() const noexcept { return false; }
  template <typename P>
  void await_suspend(std::coroutine_handle<P> h) {
    const TaskBinding b = rt->binding_of(detail::context_of(h));
    rt->scheduler_.resume_at(rt->scheduler_.now_ms() + delay_ms, b.domain, b.tag, h);
  }
  void await_resume() const noexcept {}
};

// Resumes the waiting task once: at the ring or at the timeout, whichever is queued first (the
// other finds `resumed` set). Both are bound to the task, so a crash drops them and a stall
// defers them.
struct SimRuntime::AlarmWake {
  AlarmWake(SimRuntime* rt, Alarm* alarm, std::uint64_t delay_ms)
      : rt(rt), alarm(alarm), delay_ms(delay_ms) {}
  SimRuntime* rt;
  Alarm* alarm;
  std::uint64_t delay_ms;
  bool await_ready() const noexcept { return false; }
  template <typename P>
  void await_suspend(std::coroutine_handle<P> h) {
    const TaskBinding b = rt->binding_of(detail::context_of(h));
    Scheduler* scheduler = &rt->scheduler_;
    auto resumed = std::make_shared<bool>(false);
    auto resume = [resumed, h] {
      if (*resumed) return;
      *resumed = true;
      h.resume();
    };
    scheduler->call_bound_at(scheduler->now_ms() + delay_ms, b.domain, b.tag, resume);
    alarm->arm([scheduler, b, resume] {
      scheduler->call_bound_at(scheduler->now_ms(), b.domain, b.tag, resume);
    });
  }
  void await_resume() const noexcept {}
};

SimRuntime::SimRuntime(Scheduler& scheduler, std::string name)
    : scheduler_(scheduler), name_(std::move(name)) {
  domain_ = scheduler_.add_domain(this);
  anchor_global_ms_ = scheduler_.now_ms();
  anchor_local_ms_ = static_cast<std::int64_t>(anchor_global_ms_);
  last_reading_ms_ = anchor_global_ms_;
}

SimRuntime::~SimRuntime() {
  crash();
  scheduler_.remove_domain(domain_);
}

// --- the clock ---

std::int64_t SimRuntime::unclamped_local_ms(std::uint64_t global_ms) const {
  if (rate_ppm_ == kPpm)
    return anchor_local_ms_ + static_cast<std::int64_t>(global_ms - anchor_global_ms_);
  const auto elapsed = static_cast<unsigned __int128>(global_ms - anchor_global_ms_);
  return anchor_local_ms_ + static_cast<std::int64_t>(elapsed * rate_ppm_ / kPpm);
}

std::uint64_t SimRuntime::InstanceClock::now_ms() {
  const std::int64_t local = rt_->unclamped_local_ms(rt_->scheduler_.now_ms());
  const std::uint64_t reading = local < 0 ? 0 : static_cast<std::uint64_t>(local);
  rt_->last_reading_ms_ = std::max(rt_->last_reading_ms_, reading);
  return rt_->last_reading_ms_;
}

// The earliest global time at which the unclamped local clock reads at least `local_ms`.
std::uint64_t SimRuntime::global_time_for(std::uint64_t local_ms) const {
  const std::uint64_t now = scheduler_.now_ms();
  const auto target = static_cast<std::int64_t>(local_ms);
  if (unclamped_local_ms(now) >= target) return now;
  if (rate_ppm_ == kPpm)
    return anchor_global_ms_ + static_cast<std::uint64_t>(target - anchor_local_ms_);
  const auto needed = static_cast<unsigned __int128>(target - anchor_local_ms_);
  const auto global_elapsed =
      static_cast<std::uint64_t>((needed * kPpm + rate_ppm_ - 1) / rate_ppm_);
  return std::max(now, anchor_global_ms_ + global_elapsed);
}

std::uint64_t SimRuntime::global_delay_ms(std::uint64_t local_ms) const {
  if (rate_ppm_ == kPpm) return local_ms;
  const auto scaled = static_cast<unsigned __int128>(local_ms) * kPpm;
  return static_cast<std::uint64_t>((scaled + rate_ppm_ - 1) / rate_ppm_);
}

void SimRuntime::jump_clock(std::int64_t delta_ms) {
  const std::uint64_t now = scheduler_.now_ms();
  anchor_local_ms_ = unclamped_local_ms(now) + delta_ms;
  anchor_global_ms_ = now;
}

void SimRuntime::set_clock_rate(std::uint32_t rate_ppm) {
  SEQBY_CHECK(rate_ppm >= 1000);
  const std::uint64_t now = scheduler_.now_ms();
  anchor_local_ms_ = unclamped_local_ms(now);
  anchor_global_ms_ = now;
  rate_ppm_ = rate_ppm;
}

// --- tasks ---

Task<void> SimRuntime::sleep_ms(std::uint64_t duration_ms) {
  const std::uint64_t target = clock_.now_ms() + duration_ms;
  co_await Wake{this, global_time_for(target) - scheduler_.now_ms()};
  // Re-arm only if the clock was skewed backwards or slowed down during the sleep.
  for (int round = 0; clock_.now_ms() < target; round++) {
    SEQBY_CHECK(round < kSleepRoundsMax);
    co_await Wake{this, std::max<std::uint64_t>(1, global_time_for(target) - scheduler_.now_ms())};
  }
}

Task<bool> SimRuntime::wait_alarm(Alarm& alarm, std::uint64_t timeout_ms) {
  if (alarm.take()) co_return true;
  const std::uint64_t target = clock_.now_ms() + timeout_ms;
  AlarmWake wake(this, &alarm, global_time_for(target) - scheduler_.now_ms());
  co_await wake;
  alarm.disarm();
  co_return alarm.take();
}

Task<void> SimRuntime::run_blocking(std::function<void()> work) {
  work();
  co_return;
}

Task<void> SimRuntime::run_root(Task<void> body, Root* root) {
  co_await body;
  root->owner->finished_.push_back(root->slot);
}

void SimRuntime::spawn(std::string name, Task<void> task) {
  SEQBY_CHECK(task.valid() && !task.done());
  SEQBY_CHECK(!crashing_ && "spawn from a destructor run by crash()");
  std::uint32_t slot;
  if (!free_roots_.empty()) {
    slot = free_roots_.back();
    free_roots_.pop_back();
  } else {
    SEQBY_CHECK(roots_.size() < kRootCountMax);
    slot = static_cast<std::uint32_t>(roots_.size());
    roots_.push_back(std::make_unique<Root>());
    roots_.back()->owner = this;
    roots_.back()->slot = slot;
  }
  Root& root = *roots_[slot];
  SEQBY_CHECK(!root.live);
  root.live = true;
  root.name = std::move(name);
  auto frame = run_root(std::move(task), &root).release();
  frame.promise().context = &root;
  root.frame = frame;
  live_count_++;
  scheduler_.resume_at(scheduler_.now_ms(), domain_, tag_of(root), frame);
}

std::size_t SimRuntime::task_count(std::string_view task_name) const {
  std::size_t count = 0;
  for (const auto& root : roots_) {
    if (root->live && root->name == task_name) count++;
  }
  return count;
}

TaskBinding SimRuntime::binding_of(void* context) const {
  SEQBY_CHECK(context != nullptr && "a simulator wait outside a task spawned on a SimRuntime");
  const auto* root = static_cast<const Root*>(context);
  SEQBY_CHECK(root->owner == this && "a task waited on another instance's runtime");
  SEQBY_CHECK(root->live);
  return TaskBinding{domain_, tag_of(*root)};
}

std::uint64_t SimRuntime::stall_end_for(const Root& root) const {
  std::uint64_t end = stall_end_ms_;
  for (const auto& [task_name, until_ms] : name_stalls_) {
    if (until_ms > end && task_name == root.name) end = until_ms;
  }
  return end;
}

Dispatch SimRuntime::dispatch(std::uint64_t tag, Work& work) {
  const auto slot = static_cast<std::uint32_t>(tag >> 32);
  const auto generation = static_cast<std::uint32_t>(tag);
  if (slot >= roots_.size()) return Dispatch::dropped();
  Root& root = *roots_[slot];
  if (!root.live || root.generation != generation) return Dispatch::dropped();
  const std::uint64_t stall_end_ms = stall_end_for(root);
  if (stall_end_ms > scheduler_.now_ms()) return Dispatch::deferred(stall_end_ms);
  dispatching_ = true;
  work.run();
  dispatching_ = false;
  reap_finished();
  return Dispatch::ran();
}

void SimRuntime::retire(Root& root) {
  SEQBY_CHECK(root.live);
  root.live = false;
  root.generation++;
  auto frame = std::exchange(root.frame, {});
  free_roots_.push_back(root.slot);
  live_count_--;
  frame.destroy();  // last: destructors in the chain may look at this runtime
}

void SimRuntime::reap_finished() {
  for (std::size_t i = 0; i < finished_.size(); i++) {  // retire() may not add to finished_
    Root& root = *roots_[finished_[i]];
    if (root.live) retire(root);
  }
  finished_.clear();
}

void SimRuntime::crash() {
  SEQBY_CHECK(!dispatching_ && "an instance cannot crash itself from one of its tasks");
  finished_.clear();
  crashing_ = true;
  for (auto& root : roots_) {
    if (root->live) retire(*root);
  }
  crashing_ = false;
  // retire() pushed slots in index order; hand them out lowest first next time.
  std::sort(free_roots_.begin(), free_roots_.end(), std::greater<>());
  stall_end_ms_ = 0;
  name_stalls_.clear();
  crash_count_++;
}

void SimRuntime::stall_until(std::uint64_t until_ms) {
  stall_end_ms_ = std::max(stall_end_ms_, until_ms);
}

void SimRuntime::stall_tasks_until(std::string_view task_name, std::uint64_t until_ms) {
  const std::uint64_t now = scheduler_.now_ms();
  std::erase_if(name_stalls_, [now](const auto& s) { return s.second <= now; });
  for (auto& [name, end] : name_stalls_) {
    if (name == task_name) {
      end = std::max(end, until_ms);
      return;
    }
  }
  name_stalls_.emplace_back(std::string(task_name), until_ms);
}

}  // namespace seqby::sim
