// WhenAll<T>: awaits several Tasks at once and returns their results in the order given. Every
// task is started (in order) when the WhenAll is awaited, each inheriting the awaiter's context,
// so that what they send is in flight together (RedisBroker::renew_many sends its batches this
// way: one pipeline, not one round trip per batch). The awaiter resumes when the last of them
// finishes, from whichever resumed that one; when all finish before the last is started it does
// not suspend. Destroying a suspended awaiter (its instance torn down) destroys every task it
// started, as destroying any awaited Task does.
//
//   WhenAll<Result<Reply>> all(std::move(tasks));
//   std::vector<Result<Reply>> replies = co_await all;
//
// Await a WhenAll once, as a named local (g++ 12: see task.h).
#pragma once

#include <coroutine>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "seqby/core/check.h"
#include "seqby/core/task.h"

namespace seqby {

template <typename T>
class WhenAll {
 public:
  explicit WhenAll(std::vector<Task<T>> tasks) : tasks_(std::move(tasks)) {
    results_.resize(tasks_.size());
  }
  WhenAll(const WhenAll&) = delete;
  WhenAll& operator=(const WhenAll&) = delete;

  bool await_ready() const noexcept { return tasks_.empty(); }

  template <typename P>
  bool await_suspend(std::coroutine_handle<P> awaiter) noexcept {
    SEQBY_CHECK(started_.empty() && "a WhenAll is awaited once");
    awaiter_ = awaiter;
    // One count for this loop, so that no task finishing inline resumes the awaiter early.
    pending_ = tasks_.size() + 1;
    started_.reserve(tasks_.size());
    for (std::size_t i = 0; i < tasks_.size(); ++i) {
      typename Task<void>::Handle h = run(std::move(tasks_[i]), i).release();
      started_.push_back(h);
      h.promise().context = detail::context_of(awaiter);
      h.resume();
    }
    return --pending_ != 0;
  }

  std::vector<T> await_resume() {
    std::vector<T> out;
    out.reserve(results_.size());
    for (std::optional<T>& result : results_) {
      SEQBY_CHECK(result.has_value());
      out.push_back(std::move(*result));
    }
    return out;
  }

  ~WhenAll() {
    for (std::coroutine_handle<> h : started_) h.destroy();  // each destroys its task's frame
  }

 private:
  // Resumes the WhenAll's awaiter when the runner that awaits it is the last to finish.
  class LastOut {
   public:
    explicit LastOut(WhenAll* all) : all_(all) {}
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<>) noexcept {
      if (--all_->pending_ == 0) return all_->awaiter_;
      return std::noop_coroutine();
    }
    void await_resume() const noexcept {}

   private:
    WhenAll* all_;
  };

  // Runs task i (its frame now owned by the runner's) and keeps its result; stays suspended at
  // LastOut until the WhenAll destroys it.
  Task<void> run(Task<T> task, std::size_t i) {
    T result = co_await task;
    results_[i].emplace(std::move(result));
    co_await LastOut(this);
  }

  std::vector<Task<T>> tasks_;
  std::vector<std::optional<T>> results_;
  std::vector<std::coroutine_handle<>> started_;  // the runners' frames, owned here
  std::coroutine_handle<> awaiter_;
  std::size_t pending_ = 0;
};

}  // namespace seqby
