// SimRuntime: tasks wake in virtual-time order, deep await chains do not grow the stack, a crash
// destroys every frame and nothing touches them afterwards, stalls defer wake-ups (for the whole
// instance or for the heartbeat only), and a skewed clock is honoured by sleeps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

using Log = std::vector<std::string>;

Task<void> sleeper(Runtime& rt, Log& log, std::string name, std::uint64_t ms) {
  co_await rt.sleep_ms(ms);
  log.push_back(name + "@" + std::to_string(rt.clock().now_ms()));
}

TEST(RuntimeSimRuntime, SleepersWakeInTimeOrderThenSpawnOrder) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  rt.spawn("w", sleeper(rt, log, "slow", 30));
  rt.spawn("w", sleeper(rt, log, "fast", 10));
  rt.spawn("w", sleeper(rt, log, "tie1", 20));
  rt.spawn("w", sleeper(rt, log, "tie2", 20));
  rt.spawn("w", sleeper(rt, log, "zero", 0));
  EXPECT_EQ(rt.task_count(), 5u);
  s.run_until(100);
  EXPECT_EQ(log, (Log{"zero@0", "fast@10", "tie1@20", "tie2@20", "slow@30"}));
  EXPECT_EQ(rt.task_count(), 0u);  // finished roots are destroyed and forgotten
}

Task<std::uint64_t> descend(Runtime& rt, int depth) {
  if (depth == 0) {
    co_await rt.sleep_ms(5);  // the whole chain is suspended here, then unwinds
    co_return 0;
  }
  const std::uint64_t below = co_await descend(rt, depth - 1);
  co_return below + 1;
}

TEST(RuntimeSimRuntime, DeepAwaitChainDoesNotGrowTheStack) {
  Scheduler s;
  SimRuntime rt(s, "a");
  std::uint64_t result = 0;
  auto top = [](Runtime& rt, std::uint64_t& out) -> Task<void> {
    out = co_await descend(rt, 10000);
  };
  rt.spawn("deep", top(rt, result));
  s.run_until(10);
  EXPECT_EQ(result, 10000u);
}

// Counts destructions of frames that hold one.
struct Tracker {
  int* destroyed;
  explicit Tracker(int* d) : destroyed(d) {}
  Tracker(const Tracker&) = delete;
  ~Tracker() { (*destroyed)++; }
};

Task<void> hold_and_sleep(Runtime& rt, int* destroyed, int* woke, int depth) {
  Tracker tracker(destroyed);
  if (depth > 0) {
    co_await hold_and_sleep(rt, destroyed, woke, depth - 1);
  } else {
    co_await rt.sleep_ms(100);
  }
  (*woke)++;
}

TEST(RuntimeSimRuntime, CrashDestroysEveryFrameAndNothingResumesThem) {
  Scheduler s;
  SimRuntime victim(s, "victim");
  SimRuntime bystander(s, "bystander");
  int destroyed = 0, woke = 0, other_destroyed = 0, other_woke = 0;
  victim.spawn("worker", hold_and_sleep(victim, &destroyed, &woke, 3));
  victim.spawn("heartbeat", hold_and_sleep(victim, &destroyed, &woke, 0));
  bystander.spawn("worker", hold_and_sleep(bystander, &other_destroyed, &other_woke, 2));
  s.run_until(50);
  EXPECT_EQ(destroyed, 0);

  victim.crash();
  EXPECT_EQ(destroyed, 5);  // 4 frames of the chain + 1 heartbeat frame
  EXPECT_EQ(victim.task_count(), 0u);
  s.run_until(500);  // the queued wake-ups of the dead frames come due and are dropped
  EXPECT_EQ(woke, 0);
  EXPECT_EQ(destroyed, 5);
  EXPECT_EQ(other_woke, 3);
  EXPECT_EQ(other_destroyed, 3);

  // The same runtime hosts a fresh instance.
  victim.spawn("worker", hold_and_sleep(victim, &destroyed, &woke, 0));
  s.run_until(1000);
  EXPECT_EQ(woke, 1);
  EXPECT_EQ(victim.crash_count(), 1u);
}

TEST(RuntimeSimRuntime, CrashBeforeATaskStartsDestroysItUnstarted) {
  Scheduler s;
  SimRuntime rt(s, "a");
  int destroyed = 0, woke = 0;
  rt.spawn("worker", hold_and_sleep(rt, &destroyed, &woke, 0));
  rt.crash();
  s.run_until(1000);
  EXPECT_EQ(woke, 0);
  EXPECT_EQ(destroyed, 0);  // never started: the Tracker was never constructed
}

Task<void> ticker(Runtime& rt, Log& log, std::string name, std::uint64_t period_ms, int count) {
  for (int i = 0; i < count; i++) {
    co_await rt.sleep_ms(period_ms);
    log.push_back(name + "@" + std::to_string(rt.clock().now_ms()));
  }
}

TEST(RuntimeSimRuntime, StallDefersEveryTaskUntilItEnds) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  rt.spawn("heartbeat", ticker(rt, log, "hb", 10, 3));
  rt.spawn("worker", ticker(rt, log, "w", 15, 2));
  s.call_at(12, [&] { rt.stall_until(40); });
  s.run_until(200);
  // hb@20 and w@15 came due during the stall: both run at 40, in their original order.
  EXPECT_EQ(log, (Log{"hb@10", "w@40", "hb@40", "hb@50", "w@55"}));
}

TEST(RuntimeSimRuntime, HeartbeatStallFreezesOnlyTheHeartbeat) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  rt.spawn(std::string(kHeartbeatTaskName), ticker(rt, log, "hb", 10, 2));
  rt.spawn("worker", ticker(rt, log, "w", 10, 3));
  s.call_at(5, [&] { rt.stall_tasks_until(kHeartbeatTaskName, 35); });
  s.run_until(200);
  EXPECT_EQ(log, (Log{"w@10", "w@20", "w@30", "hb@35", "hb@45"}));
}

TEST(RuntimeSimRuntime, SkewedClockRunsAtItsRateAndNeverGoesBack) {
  Scheduler s;
  SimRuntime fast(s, "fast");
  SimRuntime jumpy(s, "jumpy");
  fast.set_clock_rate(2'000'000);  // two local ms per global ms
  Log log;
  fast.spawn("w", sleeper(fast, log, "fast", 100));
  s.run_until(49);
  EXPECT_TRUE(log.empty());
  s.run_until(50);
  EXPECT_EQ(log, (Log{"fast@100"}));

  jumpy.jump_clock(1000);
  EXPECT_EQ(jumpy.clock().now_ms(), 1050u);
  jumpy.jump_clock(-500);  // backwards: the clock holds still until it catches up
  EXPECT_EQ(jumpy.clock().now_ms(), 1050u);
  log.clear();
  jumpy.spawn("w", sleeper(jumpy, log, "jumpy", 10));  // wakes at local 1060 = global 560
  s.run_until(549);
  EXPECT_EQ(jumpy.clock().now_ms(), 1050u);  // held still since global 50
  s.run_until(559);
  EXPECT_EQ(jumpy.clock().now_ms(), 1059u);
  EXPECT_TRUE(log.empty());
  s.run_until(560);
  EXPECT_EQ(log, (Log{"jumpy@1060"}));
}

TEST(RuntimeSimRuntime, SlowingTheClockDuringASleepExtendsIt) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  rt.spawn("w", sleeper(rt, log, "w", 100));
  s.call_at(50, [&] { rt.set_clock_rate(500'000); });  // half speed from 50: 50 local ms left
  s.run_until(149);
  EXPECT_TRUE(log.empty());
  s.run_until(150);
  EXPECT_EQ(log, (Log{"w@100"}));
}

Task<void> spawner(Runtime& rt, Log& log) {
  rt.spawn("child", sleeper(rt, log, "child", 5));
  log.push_back("parent-after-spawn");
  co_return;
}

TEST(RuntimeSimRuntime, SpawnNeverRunsTheChildInline) {
  Scheduler s;
  SimRuntime rt(s, "a");
  Log log;
  rt.spawn("parent", spawner(rt, log));
  s.run_until(10);
  EXPECT_EQ(log, (Log{"parent-after-spawn", "child@5"}));
}

std::uint64_t random_world_trace(std::uint64_t seed) {
  Scheduler s;
  SimRuntime a(s, "a"), b(s, "b");
  Rng rng = Rng(seed).derive("test");
  Log log;
  auto worker = [](Runtime& rt, Rng rng, Log& log, std::string name) -> Task<void> {
    for (int i = 0; i < 50; i++) {
      co_await rt.sleep_ms(rng.uniform(0, 20));
      log.push_back(name);
    }
  };
  for (int i = 0; i < 5; i++) {
    a.spawn("w", worker(a, rng.derive("a" + std::to_string(i)), log, "a"));
    b.spawn("w", worker(b, rng.derive("b" + std::to_string(i)), log, "b"));
  }
  s.call_at(rng.uniform(0, 300), [&] { a.stall_until(s.now_ms() + 100); });
  s.call_at(rng.uniform(0, 300), [&] { b.crash(); });
  s.run_until(10'000);
  return s.trace_hash();
}

TEST(RuntimeSimRuntime, SameSeedSameTrace) {
  EXPECT_EQ(random_world_trace(11), random_world_trace(11));
  EXPECT_NE(random_world_trace(11), random_world_trace(12));
}

}  // namespace
}  // namespace seqby::sim
