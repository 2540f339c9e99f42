// Scheduler: work runs in (due time, insertion sequence) order, time only moves forward, run
// limits stop where they say, and the same schedule gives the same trace hash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/sim/scheduler.h"

namespace seqby::sim {
namespace {

TEST(RuntimeScheduler, RunsByDueTimeThenInsertionOrder) {
  Scheduler s;
  std::vector<std::string> order;
  auto note = [&](std::string what) {
    return [&order, what, &s] { order.push_back(what + "@" + std::to_string(s.now_ms())); };
  };
  s.call_at(20, note("c"));
  s.call_at(10, note("a"));
  s.call_at(20, note("d"));
  s.call_at(10, note("b"));
  s.call_at(5, [&] { s.call_at(10, note("e")); });  // queued later than a and b: runs after them
  EXPECT_EQ(s.run_until(100), RunStop::reached);
  EXPECT_EQ(order, (std::vector<std::string>{"a@10", "b@10", "e@10", "c@20", "d@20"}));
  EXPECT_EQ(s.now_ms(), 100u);
  EXPECT_EQ(s.step_count(), 6u);
}

TEST(RuntimeScheduler, RunUntilPredicateStopsAtThePredicateOrTheLimit) {
  Scheduler s;
  int ticks = 0;
  for (int i = 1; i <= 10; i++) s.call_at(i * 10, [&] { ticks++; });
  EXPECT_EQ(s.run_until([&] { return ticks == 3; }, 1000), RunStop::predicate);
  EXPECT_EQ(s.now_ms(), 30u);
  EXPECT_EQ(s.run_until([] { return false; }, 55), RunStop::reached);
  EXPECT_EQ(s.now_ms(), 55u);
  EXPECT_EQ(ticks, 5);
  EXPECT_EQ(s.run_until([] { return false; }, 1000), RunStop::idle);
  EXPECT_EQ(ticks, 10);
}

TEST(RuntimeScheduler, StepCapStopsARunawayLoop) {
  Scheduler s(SchedulerOptions{.step_count_max = 50});
  std::function<void()> again = [&] { s.call_after(1, again); };
  s.call_at(0, again);
  EXPECT_EQ(s.run_until(1'000'000), RunStop::step_cap);
  EXPECT_EQ(s.step_count(), 50u);
  EXPECT_TRUE(s.step_cap_reached());
}

TEST(RuntimeScheduler, SameScheduleSameTraceHash) {
  auto run = [](int variant) {
    Scheduler s;
    for (int i = 0; i < 100; i++) s.call_at((i * 7919) % 97, [] {});
    if (variant == 1) s.call_at(50, [] {});
    s.run_until(1000);
    return s.trace_hash();
  };
  EXPECT_EQ(run(0), run(0));
  EXPECT_NE(run(0), run(1));
}

}  // namespace
}  // namespace seqby::sim
