// RealRuntime without a server: timers in deadline order, tasks, run_blocking on the pool while
// the loop keeps serving, post() from other threads, stop() tearing tasks down. Blocking work is
// awaited through a named Task: g++ 12 may destroy temporaries inside a co_await expression twice.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

// A one-shot flag another thread can wait for, with a bound so a bug fails instead of hanging.
class Flag {
 public:
  void set() {
    std::lock_guard<std::mutex> lock(mutex_);
    set_ = true;
    changed_.notify_all();
  }
  bool wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [this] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool set_ = false;
};

TEST(RealRuntime, TimersFireByDeadlineThenInsertionOrder) {
  RealRuntime runtime;
  std::vector<int> fired;
  runtime.add_timer(300, [&] { fired.push_back(0); });
  runtime.add_timer(0, [&] { fired.push_back(1); });
  runtime.add_timer(150, [&] { fired.push_back(2); });
  runtime.add_timer(0, [&] { fired.push_back(3); });
  const RealRuntime::TimerId cancelled = runtime.add_timer(0, [&] { fired.push_back(4); });
  runtime.cancel_timer(cancelled);
  runtime.block_on(runtime.sleep_ms(400));
  EXPECT_EQ(fired, (std::vector<int>{1, 3, 2, 0}));
}

Task<int> add_after_sleep(Runtime& runtime, int a, int b) {
  co_await runtime.sleep_ms(1);
  co_return a + b;
}

TEST(RealRuntime, BlockOnReturnsTheTaskValueAndSpawnedTasksRunAlongside) {
  RealRuntime runtime;
  std::vector<std::string> steps;
  runtime.spawn("side", [](Runtime& rt, std::vector<std::string>* out) -> Task<void> {
    out->push_back("side started");
    co_await rt.sleep_ms(0);
    out->push_back("side done");
  }(runtime, &steps));
  EXPECT_EQ(runtime.block_on(add_after_sleep(runtime, 2, 3)), 5);
  EXPECT_EQ(steps, (std::vector<std::string>{"side started", "side done"}));
  EXPECT_EQ(runtime.task_count(), 0u);
}

TEST(RealRuntime, BlockingWorkRunsOnThePoolWhileTheLoopServesTimers) {
  RealRuntime runtime;
  Flag ticked_three_times;
  bool released_by_ticks = false;
  std::thread::id work_thread;
  runtime.spawn("ticker", [](Runtime& rt, Flag* done) -> Task<void> {
    for (int i = 0; i < 3; ++i) co_await rt.sleep_ms(1);
    done->set();
  }(runtime, &ticked_three_times));
  runtime.block_on(runtime.run_blocking([&] {
    work_thread = std::this_thread::get_id();
    released_by_ticks = ticked_three_times.wait();  // only the loop's timers can release it
  }));
  EXPECT_TRUE(released_by_ticks);
  EXPECT_NE(work_thread, std::this_thread::get_id());
}

TEST(RealRuntime, BlockingWorkOfDifferentTasksOverlaps) {
  RealRuntime runtime(RealRuntimeOptions{.worker_count = 2});
  Flag a_started, b_started;
  bool a_saw_b = false, b_saw_a = false;
  int finished = 0;
  auto body = [](Runtime& rt, Flag* mine, Flag* other, bool* saw, int* count) -> Task<void> {
    Task<void> blocking = rt.run_blocking([=] {
      mine->set();
      *saw = other->wait();
    });
    co_await blocking;
    ++*count;
  };
  runtime.spawn("a", body(runtime, &a_started, &b_started, &a_saw_b, &finished));
  runtime.spawn("b", body(runtime, &b_started, &a_started, &b_saw_a, &finished));
  runtime.block_on([](Runtime& rt, int* count) -> Task<void> {
    while (*count < 2) co_await rt.sleep_ms(1);
  }(runtime, &finished));
  EXPECT_TRUE(a_saw_b);
  EXPECT_TRUE(b_saw_a);
}

TEST(RealRuntime, JobsBeyondTheQueueLimitWaitAndRunInSubmissionOrder) {
  RealRuntime runtime(RealRuntimeOptions{.worker_count = 1, .worker_queue_limit = 1});
  std::vector<int> order;  // written by the single worker only
  int finished = 0;
  for (int i = 0; i < 6; ++i) {
    runtime.spawn("job", [](Runtime& rt, int id, std::vector<int>* out, int* count) -> Task<void> {
      Task<void> blocking = rt.run_blocking([=] { out->push_back(id); });
      co_await blocking;
      ++*count;
    }(runtime, i, &order, &finished));
  }
  runtime.block_on([](Runtime& rt, int* count) -> Task<void> {
    while (*count < 6) co_await rt.sleep_ms(1);
  }(runtime, &finished));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

Task<void> record_blocking(Runtime& rt, std::string name, std::vector<std::string>* out,
                           int* count) {
  Task<void> blocking = rt.run_blocking([=] { out->push_back(name); });
  co_await blocking;
  ++*count;
}

Task<void> nothing() { co_return; }

// The overtaking that made JobsBeyondTheQueueLimitWaitAndRunInSubmissionOrder flaky, made
// deterministic: a slot frees while a job is parked and, before any retry, a new job arrives.
// The freed slot goes to the parked job; the new one parks behind it.
TEST(RealRuntime, AJobSubmittedWhenASlotFreesQueuesBehindTheParkedOne) {
  Flag first_running, release_first, second_running, release_second;
  std::vector<std::string> order;  // written by the pool's single thread only
  int finished = 0;
  WorkerPool pool(1, 1);
  RealRuntime runtime(RealRuntimeOptions{.pool = &pool});
  // Fill the shared pool from outside: one job running, one waiting in its queue.
  ASSERT_TRUE(pool.try_submit([&] {
    first_running.set();
    release_first.wait();
  }));
  ASSERT_TRUE(first_running.wait());
  ASSERT_TRUE(pool.try_submit([&] {
    second_running.set();
    release_second.wait();
  }));
  runtime.spawn("parked", record_blocking(runtime, "parked", &order, &finished));
  runtime.block_on(nothing());  // "parked" found the queue full and parked; no retry ran yet
  release_first.set();
  ASSERT_TRUE(second_running.wait());  // the queue has a free slot now, unknown to the runtime
  // On the next turn "late" asks for the slot before any parked retry fires.
  runtime.spawn("late", record_blocking(runtime, "late", &order, &finished));
  runtime.block_on([](Runtime& rt, Flag* release, int* count) -> Task<void> {
    release->set();
    while (*count < 2) co_await rt.sleep_ms(1);
  }(runtime, &release_second, &finished));
  EXPECT_EQ(order, (std::vector<std::string>{"parked", "late"}));
}

TEST(RealRuntime, PostedWorkRunsOnTheLoopThread) {
  RealRuntime runtime;
  std::thread::id loop_thread, posted_thread;
  Flag loop_started;
  std::thread poster([&] {
    ASSERT_TRUE(loop_started.wait());
    runtime.post([&] { posted_thread = std::this_thread::get_id(); });
    runtime.post([&] { runtime.stop(); });
  });
  runtime.post([&] {
    loop_thread = std::this_thread::get_id();
    loop_started.set();
  });
  runtime.run();
  poster.join();
  EXPECT_EQ(posted_thread, loop_thread);
  EXPECT_EQ(loop_thread, std::this_thread::get_id());
}

struct DestroyMarker {
  bool* destroyed;
  ~DestroyMarker() { *destroyed = true; }
};

TEST(RealRuntime, StopEndsTheLoopAndDestroysRemainingTasks) {
  RealRuntime runtime;
  bool sleeper_destroyed = false, worker_destroyed = false;
  std::atomic<bool> work_finished{false};
  Flag work_started;
  runtime.spawn("sleeper", [](Runtime& rt, bool* destroyed) -> Task<void> {
    DestroyMarker marker{destroyed};
    co_await rt.sleep_ms(3600 * 1000);
  }(runtime, &sleeper_destroyed));
  runtime.spawn(
      "worker",
      [](Runtime& rt, bool* destroyed, Flag* started, std::atomic<bool>* finished) -> Task<void> {
        DestroyMarker marker{destroyed};
        Task<void> blocking = rt.run_blocking([=] {
          started->set();
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          finished->store(true);
        });
        co_await blocking;
      }(runtime, &worker_destroyed, &work_started, &work_finished));
  EXPECT_EQ(runtime.task_count(), 2u);
  std::thread stopper([&] {
    ASSERT_TRUE(work_started.wait());
    runtime.stop();
  });
  runtime.run();
  stopper.join();
  EXPECT_TRUE(sleeper_destroyed);
  EXPECT_TRUE(worker_destroyed);
  EXPECT_TRUE(work_finished.load());  // teardown waited for the running job it captured
  EXPECT_EQ(runtime.task_count(), 0u);
}

TEST(RealRuntime, StopBeforeRunMakesRunReturnAtOnce) {
  RealRuntime runtime;
  bool started = false;
  runtime.spawn("never", [](Runtime& rt, bool* s) -> Task<void> {
    *s = true;
    co_await rt.sleep_ms(1);
  }(runtime, &started));
  runtime.stop();
  runtime.run();
  EXPECT_FALSE(started);
  EXPECT_EQ(runtime.task_count(), 0u);
}

TEST(RealRuntime, SteadyClockNeverGoesBack) {
  RealRuntime runtime;
  std::uint64_t previous = runtime.clock().now_ms();
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t now = runtime.clock().now_ms();
    EXPECT_GE(now, previous);
    previous = now;
  }
}

}  // namespace
}  // namespace seqby::redis
