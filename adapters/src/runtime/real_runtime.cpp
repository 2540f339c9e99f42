#include "seqby/runtime/real_runtime.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "seqby/core/check.h"
#include "seqby/runtime/sigpipe_block.h"

namespace seqby::redis {

// One run_blocking() call. `state` moves parked -> queued -> running -> finished, or to
// cancelled from parked/queued when the waiting task is destroyed first.
struct RealRuntime::BlockingJob {
  enum class State { parked, queued, running, finished, cancelled };

  std::function<void()> work;
  RealRuntime* runtime = nullptr;
  std::coroutine_handle<> waiter;  // loop thread only; cleared when the waiting task goes away
  std::mutex mutex;
  std::condition_variable changed;
  State state = State::parked;  // guarded by mutex
};

struct RealRuntime::SleepAwaiter {
  RealRuntime* runtime;
  std::uint64_t duration_ms;
  TimerId timer = 0;

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    timer = runtime->add_timer(duration_ms, [this, h] {
      timer = 0;
      h.resume();
    });
  }
  void await_resume() const noexcept {}
  ~SleepAwaiter() {
    if (timer != 0) runtime->cancel_timer(timer);
  }
};

// Resumed by whichever comes first, the timer or the ring (posted to the loop, never inline in
// the ringing task); the other is cancelled or finds the wait over.
struct RealRuntime::AlarmAwaiter {
  AlarmAwaiter(RealRuntime* runtime, Alarm* alarm, std::uint64_t timeout_ms)
      : runtime(runtime), alarm(alarm), timeout_ms(timeout_ms) {}
  RealRuntime* runtime;
  Alarm* alarm;
  std::uint64_t timeout_ms;
  TimerId timer = 0;
  std::shared_ptr<bool> over = std::make_shared<bool>(false);

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    timer = runtime->add_timer(timeout_ms, [this, h] {
      timer = 0;
      *over = true;
      h.resume();
    });
    alarm->arm([this, h, over = over] {
      runtime->defer([this, h, over] {
        if (*over) return;
        *over = true;
        if (timer != 0) runtime->cancel_timer(timer);
        timer = 0;
        h.resume();
      });
    });
  }
  void await_resume() const noexcept {}
  ~AlarmAwaiter() {
    *over = true;
    alarm->disarm();
    if (timer != 0) runtime->cancel_timer(timer);
  }
};

struct RealRuntime::BlockingAwaiter {
  RealRuntime* runtime;
  std::shared_ptr<BlockingJob> job;

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    job->waiter = h;
    runtime->submit_blocking(job);
  }
  void await_resume() const noexcept {}
  ~BlockingAwaiter() { runtime->abandon_blocking(job); }
};

RealRuntime::RealRuntime(RealRuntimeOptions options) : options_(options), pool_(options.pool) {
  if (pool_ == nullptr) {
    own_pool_ = std::make_unique<WorkerPool>(options_.worker_count, options_.worker_queue_limit);
    pool_ = own_pool_.get();
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  SEQBY_CHECK(wake_fd_ >= 0);
}

RealRuntime::~RealRuntime() {
  SEQBY_CHECK(!running_);
  destroy_tasks();
  ready_.clear();
  timers_.clear();
  own_pool_.reset();  // joins; no job of ours is queued or running once the tasks are gone
  ::close(wake_fd_);
}

bool RealRuntime::on_loop() const {
  const std::thread::id loop = loop_thread_.load();
  return loop == std::thread::id{} || loop == std::this_thread::get_id();
}

// The awaiters below are named locals, not temporaries inside co_await: g++ 12 mishandles the
// lifetime of braced temporaries with destructors in co_await expressions.
Task<void> RealRuntime::sleep_ms(std::uint64_t duration_ms) {
  SleepAwaiter awaiter{this, duration_ms};
  co_await awaiter;
}

Task<bool> RealRuntime::wait_alarm(Alarm& alarm, std::uint64_t timeout_ms) {
  if (alarm.take()) co_return true;
  {
    AlarmAwaiter awaiter(this, &alarm, timeout_ms);
    co_await awaiter;
  }
  co_return alarm.take();
}

Task<void> RealRuntime::run_blocking(std::function<void()> work) {
  auto job = std::make_shared<BlockingJob>();
  job->work = std::move(work);
  job->runtime = this;
  BlockingAwaiter awaiter{this, std::move(job)};
  co_await awaiter;
}

void RealRuntime::spawn(std::string name, Task<void> task) {
  SEQBY_CHECK(on_loop());
  SEQBY_CHECK(task.valid());
  const std::uint64_t id = ++next_seq_;
  Task<void> body = run_spawned(std::move(task), id);
  tasks_.emplace(id, Spawned{std::move(name), body.release()});
  defer([this, id] {
    auto it = tasks_.find(id);
    if (it != tasks_.end()) it->second.handle.resume();
  });
}

Task<void> RealRuntime::run_spawned(Task<void> task, std::uint64_t id) {
  co_await task;
  finished_.push_back(id);
}

void RealRuntime::run() {
  run_until([this] { return stop_requested_.load(); });
  stop_requested_.store(false);
  destroy_tasks();
}

void RealRuntime::stop() {
  stop_requested_.store(true);
  wake();
}

void RealRuntime::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(post_mutex_);
    posted_.push_back(std::move(fn));
  }
  wake();
}

void RealRuntime::wake() {
  const std::uint64_t one = 1;
  const ssize_t written = ::write(wake_fd_, &one, sizeof one);
  (void)written;  // EAGAIN means the counter is already non-zero: the loop wakes anyway
}

void RealRuntime::defer(std::function<void()> fn) {
  SEQBY_CHECK(on_loop());
  ready_.push_back(std::move(fn));
}

RealRuntime::TimerId RealRuntime::add_timer(std::uint64_t delay_ms, std::function<void()> fn) {
  SEQBY_CHECK(on_loop());
  const TimerId id = ++next_seq_;
  const std::uint64_t deadline_ms = clock_.now_ms() + delay_ms;
  timers_.emplace(std::make_pair(deadline_ms, id), std::move(fn));
  timer_deadlines_.emplace(id, deadline_ms);
  return id;
}

void RealRuntime::cancel_timer(TimerId id) {
  SEQBY_CHECK(on_loop());
  auto it = timer_deadlines_.find(id);
  if (it == timer_deadlines_.end()) return;
  timers_.erase(std::make_pair(it->second, id));
  timer_deadlines_.erase(it);
}

RealRuntime::WatchId RealRuntime::watch_fd(int fd, IoHandler handler) {
  SEQBY_CHECK(on_loop());
  SEQBY_CHECK(fd >= 0);
  const WatchId id = ++next_seq_;
  watches_.emplace(id, Watch{fd, false, false, std::move(handler)});
  return id;
}

void RealRuntime::set_interest(WatchId id, bool read, bool write) {
  SEQBY_CHECK(on_loop());
  auto it = watches_.find(id);
  SEQBY_CHECK(it != watches_.end());
  it->second.read = read;
  it->second.write = write;
}

void RealRuntime::unwatch(WatchId id) {
  SEQBY_CHECK(on_loop());
  watches_.erase(id);
}

void RealRuntime::run_until(const std::function<bool()>& done) {
  SEQBY_CHECK(!running_);
  running_ = true;
  loop_thread_.store(std::this_thread::get_id());
  const SigpipeBlock sigpipe_block;  // adapters write to sockets on this thread
  std::vector<pollfd> fds;
  std::vector<WatchId> ids;
  while (!done()) {
    run_ready();
    reap_finished();
    if (done()) break;

    fds.clear();
    ids.clear();
    fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    ids.push_back(0);
    for (const auto& [id, watch] : watches_) {
      if (!watch.read && !watch.write) continue;
      const short events =
          static_cast<short>((watch.read ? POLLIN : 0) | (watch.write ? POLLOUT : 0));
      fds.push_back(pollfd{watch.fd, events, 0});
      ids.push_back(id);
    }
    const int ready_count = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    SEQBY_CHECK(ready_count >= 0 || errno == EINTR);

    if (ready_count > 0 && fds[0].revents != 0) {
      std::uint64_t counter = 0;
      const ssize_t got = ::read(wake_fd_, &counter, sizeof counter);
      (void)got;
      run_posted();
    }
    for (std::size_t i = 1; ready_count > 0 && i < fds.size(); ++i) {
      const short revents = fds[i].revents;
      if (revents == 0) continue;
      auto it = watches_.find(ids[i]);  // an earlier handler may have removed it
      if (it == watches_.end()) continue;
      const bool failed = (revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
      const bool readable = (revents & POLLIN) != 0 || (failed && it->second.read);
      const bool writable = (revents & POLLOUT) != 0 || (failed && it->second.write);
      IoHandler handler = it->second.handler;  // a copy: the handler may unwatch itself
      handler(readable, writable);
    }
    fire_due_timers();
    reap_finished();
  }
  loop_thread_.store(std::thread::id{});
  running_ = false;
}

void RealRuntime::run_ready() {
  // Only what is queued now: work deferred meanwhile waits for the next turn, after a poll.
  for (std::size_t n = ready_.size(); n > 0 && !ready_.empty(); --n) {
    std::function<void()> fn = std::move(ready_.front());
    ready_.pop_front();
    fn();
  }
}

void RealRuntime::run_posted() {
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(post_mutex_);
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

void RealRuntime::fire_due_timers() {
  const std::uint64_t now_ms = clock_.now_ms();
  const std::uint64_t seq_limit = next_seq_;  // timers added by a firing timer wait a turn
  while (!timers_.empty()) {
    auto it = timers_.begin();
    if (it->first.first > now_ms || it->first.second > seq_limit) break;
    std::function<void()> fn = std::move(it->second);
    timer_deadlines_.erase(it->first.second);
    timers_.erase(it);
    fn();
  }
}

int RealRuntime::poll_timeout_ms() {
  if (!ready_.empty()) return 0;
  if (timers_.empty()) return -1;
  const std::uint64_t now_ms = clock_.now_ms();
  const std::uint64_t deadline_ms = timers_.begin()->first.first;
  if (deadline_ms <= now_ms) return 0;
  const std::uint64_t wait_ms = deadline_ms - now_ms;
  return wait_ms > static_cast<std::uint64_t>(INT_MAX) ? INT_MAX : static_cast<int>(wait_ms);
}

void RealRuntime::reap_finished() {
  for (std::uint64_t id : finished_) {
    auto it = tasks_.find(id);
    SEQBY_CHECK(it != tasks_.end());
    it->second.handle.destroy();
    tasks_.erase(it);
  }
  finished_.clear();
}

void RealRuntime::destroy_tasks() {
  // Destroying a frame runs its awaiters' destructors, which cancel timers and blocking jobs.
  while (!tasks_.empty()) {
    auto node = tasks_.extract(tasks_.begin());
    node.mapped().handle.destroy();
  }
  finished_.clear();
}

void RealRuntime::submit_blocking(const std::shared_ptr<BlockingJob>& job) {
  SEQBY_CHECK(on_loop());
  // FIFO hand-off: a slot that freed goes to the oldest parked job first, and while any job
  // still parks a new one parks behind it; a new job never overtakes a parked one.
  retry_parked();
  if (parked_.empty() && hand_to_pool(job)) return;
  SEQBY_CHECK(parked_.size() < options_.parked_jobs_max);
  parked_.push_back(job);
  arm_parked_retry();
}

bool RealRuntime::hand_to_pool(const std::shared_ptr<BlockingJob>& job) {
  {
    std::lock_guard<std::mutex> lock(job->mutex);
    SEQBY_CHECK(job->state == BlockingJob::State::parked);
    job->state = BlockingJob::State::queued;
  }
  const bool queued = pool_->try_submit([job] {
    {
      std::lock_guard<std::mutex> lock(job->mutex);
      if (job->state != BlockingJob::State::queued) return;  // cancelled
      job->state = BlockingJob::State::running;
    }
    job->work();
    // Post before finishing: a destroyed waiter waits for `finished`, so the runtime is alive.
    job->runtime->post([job] {
      RealRuntime* runtime = job->runtime;
      runtime->retry_parked();  // the freed slot goes to the oldest parked job
      if (job->waiter) std::exchange(job->waiter, {}).resume();
    });
    std::lock_guard<std::mutex> lock(job->mutex);
    job->state = BlockingJob::State::finished;
    job->changed.notify_all();
  });
  if (queued) return true;
  std::lock_guard<std::mutex> lock(job->mutex);
  SEQBY_CHECK(job->state == BlockingJob::State::queued);  // the pool refused it: nobody saw it
  job->state = BlockingJob::State::parked;
  return false;
}

void RealRuntime::retry_parked() {
  SEQBY_CHECK(on_loop());
  while (!parked_.empty()) {
    const std::shared_ptr<BlockingJob> job = parked_.front();
    bool abandoned = false;
    {
      std::lock_guard<std::mutex> lock(job->mutex);
      abandoned = job->state != BlockingJob::State::parked;
      SEQBY_CHECK(abandoned == (job->state == BlockingJob::State::cancelled));
    }
    if (!abandoned && !hand_to_pool(job)) break;  // still full: the oldest stays first
    parked_.pop_front();
  }
  if (!parked_.empty()) arm_parked_retry();  // a shared pool frees slots without telling us
}

void RealRuntime::arm_parked_retry() {
  if (parked_timer_ != 0) return;
  parked_timer_ = add_timer(options_.parked_retry_ms, [this] {
    parked_timer_ = 0;
    retry_parked();
  });
}

void RealRuntime::abandon_blocking(const std::shared_ptr<BlockingJob>& job) {
  job->waiter = {};
  std::unique_lock<std::mutex> lock(job->mutex);
  using State = BlockingJob::State;
  if (job->state == State::parked || job->state == State::queued) {
    job->state = State::cancelled;
    return;
  }
  // Running: its work may use the destroyed task's locals, so wait for it to finish.
  job->changed.wait(lock, [&] { return job->state != State::running; });
}

}  // namespace seqby::redis
