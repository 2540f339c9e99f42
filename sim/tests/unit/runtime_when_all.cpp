// when_all (seqby/core/when_all.h) on the simulated runtime: the tasks run at once (the awaiter
// waits as long as the slowest, not the sum), the results come in the order given, tasks that
// finish without waiting are fine, a crash destroys every task's frame with the awaiter's, and
// the tasks are the awaiter's for the runtime (a heartbeat stall freezes them too).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/when_all.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

Task<std::string> after(Runtime& rt, std::string name, std::uint64_t ms) {
  if (ms > 0) co_await rt.sleep_ms(ms);
  co_return name + "@" + std::to_string(rt.clock().now_ms());
}

TEST(RuntimeWhenAll, TasksRunAtOnceAndTheirResultsComeInTheOrderGiven) {
  Scheduler s;
  SimRuntime rt(s, "a");
  std::vector<std::string> got;
  std::uint64_t resumed_at = 0;
  auto top = [&]() -> Task<void> {
    std::vector<Task<std::string>> tasks;
    tasks.push_back(after(rt, "slow", 30));
    tasks.push_back(after(rt, "now", 0));
    tasks.push_back(after(rt, "fast", 10));
    std::vector<std::string> results = co_await when_all(std::move(tasks));
    got = std::move(results);
    resumed_at = rt.clock().now_ms();
  };
  rt.spawn("w", top());
  s.run_until(100);
  EXPECT_EQ(got, (std::vector<std::string>{"slow@30", "now@0", "fast@10"}));
  EXPECT_EQ(resumed_at, 30u);  // the slowest, not 30 + 10
}

TEST(RuntimeWhenAll, TasksThatNeverWaitAndNoTasksAtAllResumeTheAwaiter) {
  Scheduler s;
  SimRuntime rt(s, "a");
  std::vector<std::string> got;
  int empty_runs = 0;
  auto top = [&]() -> Task<void> {
    std::vector<Task<std::string>> tasks;
    tasks.push_back(after(rt, "x", 0));
    tasks.push_back(after(rt, "y", 0));
    std::vector<std::string> results = co_await when_all(std::move(tasks));
    got = std::move(results);
    std::vector<Task<void>> none;
    co_await when_all(std::move(none));
    ++empty_runs;
  };
  rt.spawn("w", top());
  s.run_until(10);
  EXPECT_EQ(got, (std::vector<std::string>{"x@0", "y@0"}));
  EXPECT_EQ(empty_runs, 1);
}

struct Tracker {
  int* destroyed;
  explicit Tracker(int* d) : destroyed(d) {}
  Tracker(const Tracker&) = delete;
  ~Tracker() { (*destroyed)++; }
};

Task<void> hold(Runtime& rt, int* destroyed, int* woke, std::uint64_t ms) {
  Tracker tracker(destroyed);
  co_await rt.sleep_ms(ms);
  (*woke)++;
}

TEST(RuntimeWhenAll, ACrashDestroysEveryTaskWithTheAwaiterAndNothingResumesThem) {
  Scheduler s;
  SimRuntime rt(s, "a");
  int destroyed = 0, woke = 0, awaiter_resumed = 0;
  auto top = [&]() -> Task<void> {
    std::vector<Task<void>> tasks;
    tasks.push_back(hold(rt, &destroyed, &woke, 10));  // finished before the crash
    tasks.push_back(hold(rt, &destroyed, &woke, 100));
    tasks.push_back(hold(rt, &destroyed, &woke, 200));
    co_await when_all(std::move(tasks));
    ++awaiter_resumed;
  };
  rt.spawn("w", top());
  s.run_until(50);
  EXPECT_EQ(woke, 1);
  EXPECT_EQ(destroyed, 1);
  rt.crash();
  EXPECT_EQ(destroyed, 3);
  s.run_until(500);
  EXPECT_EQ(woke, 1);
  EXPECT_EQ(awaiter_resumed, 0);
}

TEST(RuntimeWhenAll, TheTasksAreTheAwaitersForTheRuntime) {
  Scheduler s;
  SimRuntime rt(s, "a");
  std::vector<std::string> got;
  auto top = [&]() -> Task<void> {
    std::vector<Task<std::string>> tasks;
    tasks.push_back(after(rt, "a", 10));
    tasks.push_back(after(rt, "b", 20));
    std::vector<std::string> results = co_await when_all(std::move(tasks));
    got = std::move(results);
  };
  rt.spawn(std::string(kHeartbeatTaskName), top());
  s.call_at(5, [&] { rt.stall_tasks_until(kHeartbeatTaskName, 35); });
  s.run_until(100);
  // Both came due during the heartbeat's stall: each ran when it ended.
  EXPECT_EQ(got, (std::vector<std::string>{"a@35", "b@35"}));
}

}  // namespace
}  // namespace seqby::sim
