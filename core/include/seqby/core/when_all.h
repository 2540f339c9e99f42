// when_all: awaits several Tasks at once and gives their results in the order given. Each task
// starts when the when_all is awaited (all of them, one after the other, each running until it
// first suspends) and the awaiter resumes once the last has finished, by symmetric transfer.
// Structured: the tasks' frames belong to the awaiting frame, so destroying it (a crash tearing
// an instance down) destroys every one of them, finished or not, as a single awaited Task would
// be. The tasks inherit the awaiter's context (seqby/core/task.h), so a runtime that tells tasks
// apart by it sees them as the awaiter's.
//
//   std::vector<Task<Result<Reply>>> calls = ...;
//   std::vector<Result<Reply>> replies = co_await when_all(std::move(calls));
//
// For work that must not wait on each other: one node's timeout does not hold another node's
// commands back (redis::ClusterLink::execute_many). Not for work that must keep an order.
#pragma once

#include <coroutine>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "seqby/core/check.h"
#include "seqby/core/task.h"

namespace seqby {

namespace detail {

// What the tasks of one when_all share: how many have not finished (plus one while they are
// being started, so that none resumes the awaiter before the last has started) and who awaits.
struct JoinCount {
  std::size_t pending = 0;
  std::coroutine_handle<> awaiter;
};

// Suspends a finished task's join frame for good (its owner destroys it) and resumes the awaiter
// when it was the last to finish.
struct JoinArrive {
  JoinCount* count;
  explicit JoinArrive(JoinCount* c) : count(c) {}
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<>) const noexcept {
    SEQBY_CHECK(count->pending > 0);
    return --count->pending == 0 ? count->awaiter : std::noop_coroutine();
  }
  void await_resume() const noexcept {}
};

template <typename T>
Task<void> join_one(Task<T> task, std::optional<T>* out, JoinCount* count) {
  out->emplace(co_await task);
  co_await JoinArrive(count);
}

inline Task<void> join_one_void(Task<void> task, JoinCount* count) {
  co_await task;
  co_await JoinArrive(count);
}

template <typename T>
class WhenAll {
 public:
  explicit WhenAll(std::vector<Task<T>> tasks) {
    if constexpr (!std::is_void_v<T>) results_.resize(tasks.size());
    joins_.reserve(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if constexpr (std::is_void_v<T>) {
        joins_.push_back(join_one_void(std::move(tasks[i]), &count_).release());
      } else {
        joins_.push_back(join_one(std::move(tasks[i]), &results_[i], &count_).release());
      }
    }
  }
  WhenAll(WhenAll&&) = delete;  // the joins point at count_ and results_
  WhenAll& operator=(WhenAll&&) = delete;

  bool await_ready() const noexcept { return joins_.empty(); }
  template <typename P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> awaiter) {
    count_.awaiter = awaiter;
    count_.pending = joins_.size() + 1;
    for (auto join : joins_) {
      join.promise().context = detail::context_of(awaiter);
      join.resume();
    }
    // Every task has started; the last to finish resumes the awaiter (now, if all have).
    return --count_.pending == 0 ? std::coroutine_handle<>(awaiter) : std::noop_coroutine();
  }
  auto await_resume() {
    SEQBY_CHECK(count_.pending == 0);
    if constexpr (!std::is_void_v<T>) {
      std::vector<T> out;
      out.reserve(results_.size());
      for (std::optional<T>& result : results_) {
        SEQBY_CHECK(result.has_value());
        out.push_back(std::move(*result));
      }
      return out;
    }
  }

  // Every join frame, started or not, finished or suspended (a crash mid-wait).
  ~WhenAll() {
    for (auto join : joins_) join.destroy();
  }

 private:
  using Results = std::conditional_t<std::is_void_v<T>, char, std::vector<std::optional<T>>>;
  std::vector<Task<void>::Handle> joins_;  // owned: each destroyed with this awaitable
  JoinCount count_;
  Results results_{};
};

}  // namespace detail

// The awaitable of `tasks` at once; co_await gives std::vector<T> (void: nothing). Await it
// where it is made: `co_await when_all(std::move(tasks))`.
template <typename T>
detail::WhenAll<T> when_all(std::vector<Task<T>> tasks) {
  return detail::WhenAll<T>(std::move(tasks));
}

}  // namespace seqby
