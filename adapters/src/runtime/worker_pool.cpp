#include <chrono>

#include "seqby/core/check.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {

std::uint64_t SteadyClock::now_ms() {
  const auto since_origin = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(since_origin).count());
}

WorkerPool::WorkerPool(std::size_t thread_count, std::size_t queue_limit)
    : queue_limit_(queue_limit) {
  SEQBY_CHECK(thread_count >= 1);
  SEQBY_CHECK(queue_limit >= 1);
  threads_.reserve(thread_count);
  for (std::size_t i = 0; i < thread_count; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

bool WorkerPool::try_submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SEQBY_CHECK(!stopping_);
    if (queue_.size() >= queue_limit_) return false;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

void WorkerPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace seqby::redis
