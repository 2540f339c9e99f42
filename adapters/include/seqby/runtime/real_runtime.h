// RealRuntime: seqby::Runtime in real time. The thread that calls run() (or block_on()) is the
// instance's event loop: it resumes tasks, fires timers (by deadline, then insertion sequence),
// polls the descriptors adapters register and runs work posted from other threads; blocking work
// runs on a bounded WorkerPool and resumes its caller on the loop. Only post() and stop() may be
// called from other threads; destroying a task cancels what it waits for.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "seqby/core/clock.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby::redis {

// The process's monotonic clock (std::chrono::steady_clock) in milliseconds.
class SteadyClock final : public Clock {
 public:
  std::uint64_t now_ms() override;
};

// A fixed set of threads running queued jobs in FIFO order. At most `queue_limit` jobs wait;
// try_submit() refuses more. One pool may serve several RealRuntimes; it must outlive them.
class WorkerPool {
 public:
  WorkerPool(std::size_t thread_count, std::size_t queue_limit);
  ~WorkerPool();  // joins the threads; jobs still queued are dropped
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `job`; returns false (and drops nothing) when queue_limit jobs already wait.
  bool try_submit(std::function<void()> job);
  std::size_t thread_count() const { return threads_.size(); }

 private:
  void work();

  const std::size_t queue_limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

struct RealRuntimeOptions {
  std::size_t worker_count = 4;          // threads of the runtime's own pool (when pool is null)
  std::size_t worker_queue_limit = 256;  // jobs waiting in the own pool beyond the busy threads
  WorkerPool* pool = nullptr;            // a shared pool instead of an own one (not owned)
  std::size_t parked_jobs_max = 65536;   // run_blocking() calls waiting for a full pool's queue
  std::uint64_t parked_retry_ms = 2;     // how often parked jobs retry a full shared pool
};

class RealRuntime final : public Runtime {
 public:
  using TimerId = std::uint64_t;
  using WatchId = std::uint64_t;
  // Called on the loop when a watched descriptor is ready (errors and hang-ups count as ready
  // for the directions asked for).
  using IoHandler = std::function<void(bool readable, bool writable)>;

  explicit RealRuntime(RealRuntimeOptions options = {});
  // Destroys the tasks still alive. REQUIRES: no loop is running.
  ~RealRuntime() override;
  RealRuntime(const RealRuntime&) = delete;
  RealRuntime& operator=(const RealRuntime&) = delete;

  // seqby::Runtime. A run_blocking() job that is running when its task is destroyed is waited
  // for (its captures must stay valid); a queued one is dropped. When the pool's queue is full
  // the job parks on the loop (at most parked_jobs_max). Jobs reach the pool in call order: a
  // freed slot goes to the oldest parked job, and a new job parks behind any parked one.
  Clock& clock() override { return clock_; }
  Task<void> sleep_ms(std::uint64_t duration_ms) override;
  Task<bool> wait_alarm(Alarm& alarm, std::uint64_t timeout_ms) override;
  void spawn(std::string name, Task<void> task) override;
  Task<void> run_blocking(std::function<void()> work) override;

  // Runs the loop on the calling thread until stop(), then destroys every task still alive.
  // A stop() that comes before run() makes it return at once. REQUIRES: no loop is running.
  void run();
  // Asks the running (or next) run() to return. Any thread.
  void stop();
  // Runs `fn` on the loop thread soon. Any thread.
  void post(std::function<void()> fn);

  // Runs the loop on the calling thread until `task` finishes and returns its value. Other
  // tasks keep running meanwhile and stay alive afterwards. For tests and command-line tools.
  // REQUIRES: no loop is running.
  template <typename T>
  T block_on(Task<T> task);

  // Loop-thread facilities for adapters.
  // Runs `fn` on the loop after the work at hand (never inside the caller).
  void defer(std::function<void()> fn);
  // Calls `fn` on the loop once `delay_ms` have passed. Cancelling a fired timer is a no-op.
  TimerId add_timer(std::uint64_t delay_ms, std::function<void()> fn);
  void cancel_timer(TimerId id);
  // Polls `fd` for the directions set by set_interest() (none at first).
  WatchId watch_fd(int fd, IoHandler handler);
  void set_interest(WatchId id, bool read, bool write);
  void unwatch(WatchId id);

  // Spawned tasks that have not finished yet.
  std::size_t task_count() const { return tasks_.size(); }
  // True on the loop thread, and on any thread while no loop runs.
  bool on_loop() const;

 private:
  struct BlockingJob;
  struct SleepAwaiter;
  struct AlarmAwaiter;
  struct BlockingAwaiter;
  struct Spawned {
    std::string name;
    std::coroutine_handle<> handle;
  };
  struct Watch {
    int fd;
    bool read;
    bool write;
    IoHandler handler;
  };

  Task<void> run_spawned(Task<void> task, std::uint64_t id);
  void run_until(const std::function<bool()>& done);
  void run_ready();
  void run_posted();
  void fire_due_timers();
  void reap_finished();
  void destroy_tasks();
  int poll_timeout_ms();
  void wake();
  void submit_blocking(const std::shared_ptr<BlockingJob>& job);
  bool hand_to_pool(const std::shared_ptr<BlockingJob>& job);
  void retry_parked();
  void arm_parked_retry();
  void abandon_blocking(const std::shared_ptr<BlockingJob>& job);

  const RealRuntimeOptions options_;
  SteadyClock clock_;
  std::unique_ptr<WorkerPool> own_pool_;
  WorkerPool* pool_;
  int wake_fd_ = -1;

  std::mutex post_mutex_;
  std::vector<std::function<void()>> posted_;  // guarded by post_mutex_
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::thread::id> loop_thread_{};
  bool running_ = false;

  std::deque<std::function<void()>> ready_;
  std::uint64_t next_seq_ = 0;
  std::map<std::pair<std::uint64_t, TimerId>, std::function<void()>> timers_;  // (deadline, seq)
  std::map<TimerId, std::uint64_t> timer_deadlines_;
  std::map<WatchId, Watch> watches_;
  std::map<std::uint64_t, Spawned> tasks_;
  std::vector<std::uint64_t> finished_;
  std::deque<std::shared_ptr<BlockingJob>> parked_;
  TimerId parked_timer_ = 0;
};

template <typename T>
T RealRuntime::block_on(Task<T> task) {
  bool done = false;
  if constexpr (std::is_void_v<T>) {
    spawn("block_on", [](Task<void> t, bool* d) -> Task<void> {
      co_await t;
      *d = true;
    }(std::move(task), &done));
    run_until([&done] { return done; });
  } else {
    std::optional<T> out;
    spawn("block_on", [](Task<T> t, std::optional<T>* o, bool* d) -> Task<void> {
      o->emplace(co_await t);
      *d = true;
    }(std::move(task), &out, &done));
    run_until([&done] { return done; });
    return std::move(*out);
  }
}

}  // namespace seqby::redis
