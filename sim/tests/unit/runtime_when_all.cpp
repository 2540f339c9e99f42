// WhenAll: the tasks it awaits run at once (the wait is the longest, not the sum), results come
// back in the order given whatever order they finish in, tasks that finish inline do not
// suspend the awaiter, the tasks belong to the awaiter's instance (a heartbeat stall holds them,
// a crash destroys every frame and nothing resumes them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/when_all.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

using Log = std::vector<std::string>;

Task<std::string> after(Runtime& rt, Log& log, std::string name, std::uint64_t ms) {
  co_await rt.sleep_ms(ms);
  log.push_back(name + "@" + std::to_string(rt.clock().now_ms()));
  co_return name;
}

Task<std::string> at_once(std::string name) { co_return name; }

Task<void> join(Runtime& rt, Log& log, std::vector<Task<std::string>> tasks,
                std::vector<std::string>& out) {
  WhenAll<std::string> all(std::move(tasks));
  std::vector<std::string> results = co_await all;
  out = std::move(results);
  log.push_back("joined@" + std::to_string(rt.clock().now_ms()));
}

TEST(RuntimeWhenAll, TasksRunTogetherAndResultsKeepTheGivenOrder) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  std::vector<std::string> out;
  std::vector<Task<std::string>> tasks;
  tasks.push_back(after(rt, log, "slow", 30));
  tasks.push_back(after(rt, log, "fast", 10));
  tasks.push_back(after(rt, log, "mid", 20));
  rt.spawn("worker", join(rt, log, std::move(tasks), out));
  s.run_until(100);
  EXPECT_EQ(log, (Log{"fast@10", "mid@20", "slow@30", "joined@30"}));
  EXPECT_EQ(out, (std::vector<std::string>{"slow", "fast", "mid"}));
  EXPECT_EQ(rt.task_count(), 0u);
}

TEST(RuntimeWhenAll, TasksThatFinishInlineAndNoTasksJoinAtOnce) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  std::vector<std::string> inline_out;
  std::vector<Task<std::string>> tasks;
  tasks.push_back(at_once("x"));
  tasks.push_back(at_once("y"));
  rt.spawn("worker", join(rt, log, std::move(tasks), inline_out));
  std::vector<std::string> empty_out{"stale"};
  rt.spawn("worker", join(rt, log, {}, empty_out));
  std::vector<std::string> mixed_out;
  std::vector<Task<std::string>> mixed;
  mixed.push_back(at_once("first"));
  mixed.push_back(after(rt, log, "later", 5));
  rt.spawn("worker", join(rt, log, std::move(mixed), mixed_out));
  s.run_until(100);
  EXPECT_EQ(log, (Log{"joined@0", "joined@0", "later@5", "joined@5"}));
  EXPECT_EQ(inline_out, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(empty_out.empty());
  EXPECT_EQ(mixed_out, (std::vector<std::string>{"first", "later"}));
}

TEST(RuntimeWhenAll, AHeartbeatStallHoldsTheTasksAHeartbeatJoins) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  std::vector<std::string> out;
  std::vector<Task<std::string>> tasks;
  tasks.push_back(after(rt, log, "renew1", 10));
  tasks.push_back(after(rt, log, "renew2", 10));
  rt.spawn(std::string(kHeartbeatTaskName), join(rt, log, std::move(tasks), out));
  std::vector<std::string> worker_out;
  std::vector<Task<std::string>> worker_tasks;
  worker_tasks.push_back(after(rt, log, "read", 10));
  rt.spawn("worker", join(rt, log, std::move(worker_tasks), worker_out));
  s.call_at(5, [&] { rt.stall_tasks_until(kHeartbeatTaskName, 40); });
  s.run_until(100);
  EXPECT_EQ(log, (Log{"read@10", "joined@10", "renew1@40", "renew2@40", "joined@40"}));
}

// Counts destructions of the frames that hold one.
struct Tracker {
  int* destroyed;
  explicit Tracker(int* d) : destroyed(d) {}
  Tracker(const Tracker&) = delete;
  ~Tracker() { (*destroyed)++; }
};

Task<std::string> tracked(Runtime& rt, int* destroyed, int* woke, std::uint64_t ms) {
  Tracker tracker(destroyed);
  co_await rt.sleep_ms(ms);
  (*woke)++;
  co_return "";
}

Task<void> tracked_join(Runtime& rt, int* destroyed, int* woke) {
  Tracker tracker(destroyed);
  std::vector<Task<std::string>> tasks;
  tasks.push_back(tracked(rt, destroyed, woke, 10));
  tasks.push_back(tracked(rt, destroyed, woke, 100));
  WhenAll<std::string> all(std::move(tasks));
  std::vector<std::string> results = co_await all;
  (*woke)++;
}

TEST(RuntimeWhenAll, ACrashDestroysEveryTaskItStartedAndNothingResumesThem) {
  Scheduler s;
  SimRuntime rt(s, "victim");
  int destroyed = 0, woke = 0;
  rt.spawn("worker", tracked_join(rt, &destroyed, &woke));
  s.run_until(50);
  EXPECT_EQ(woke, 1);       // the 10 ms task finished
  EXPECT_EQ(destroyed, 1);  // and its frame ended; the joiner and the 100 ms task wait
  rt.crash();
  EXPECT_EQ(destroyed, 3);
  EXPECT_EQ(rt.task_count(), 0u);
  s.run_until(500);  // the dead task's wake-up comes due and is dropped
  EXPECT_EQ(woke, 1);
  EXPECT_EQ(destroyed, 3);
}

}  // namespace
}  // namespace seqby::sim
