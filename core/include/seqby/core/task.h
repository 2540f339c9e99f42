// Task<T>: a lazily started, awaitable C++20 coroutine that returns T. Engine code reads as
// straight-line code (`auto r = co_await broker.fenced_read(...)`). A Task starts when it is
// awaited (or when a Runtime spawns it) and resumes its awaiter by symmetric transfer when it
// finishes, so deep chains do not grow the stack. Destroying a Task destroys its frame and,
// through the frame's locals, every Task it is awaiting: this is how a crash tears an instance
// down. Exceptions are programming errors here: an exception escaping a Task aborts.
//
// Every frame carries an opaque `context` pointer that a Runtime sets on the root frames it
// spawns and that each awaited Task inherits from its awaiter. Engine code never touches it; the
// simulator uses it to tell which spawned task (and so which instance) a wait belongs to.
//
// g++ 12 coroutine bugs to steer clear of (both verified with AddressSanitizer):
// - `co_await Awaiter{a, b}` where Awaiter is an aggregate with a non-trivial member (a
//   shared_ptr, a vector, a std::function): the member is destroyed twice (use after free).
//   Give the awaiter a constructor and write `co_await Awaiter(a, b)`.
// - `co_await f({"GET", key})`: a braced list inside a co_await expression does not compile
//   ("array used as initializer"). Build the argument in a local first.
#pragma once

#include <coroutine>
#include <cstdlib>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "seqby/core/check.h"

namespace seqby {

template <typename T = void>
class Task;

namespace detail {

struct TaskPromiseBase {
  std::coroutine_handle<> continuation;
  void* context = nullptr;  // set by a Runtime on roots, inherited by awaited Tasks

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <typename P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      auto next = h.promise().continuation;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };

  std::suspend_always initial_suspend() noexcept { return {}; }
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { SEQBY_CHECK(false && "exception escaped a seqby::Task"); }
};

// The context of the coroutine suspended at `h` when it is a Task frame, else nullptr. For
// awaiters (runtimes, links) that need to know which task is waiting.
template <typename P>
void* context_of(std::coroutine_handle<P> h) noexcept {
  if constexpr (std::is_base_of_v<TaskPromiseBase, P>) {
    return h.promise().context;
  } else {
    return nullptr;
  }
}

template <typename T>
struct TaskPromise : TaskPromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  // By value (not a forwarding template) so that `co_return {};` and implicit conversions work.
  void return_value(T v) { value.emplace(std::move(v)); }
};

template <>
struct TaskPromise<void> : TaskPromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
};

}  // namespace detail

template <typename T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::TaskPromise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  bool valid() const { return static_cast<bool>(h_); }
  bool done() const { return h_ && h_.done(); }

  // Awaiting starts the task and suspends the awaiter until it finishes. The task inherits the
  // awaiter's context when the awaiter is itself a Task.
  bool await_ready() const noexcept { return false; }
  template <typename P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> awaiter) noexcept {
    SEQBY_CHECK(h_ && !h_.done());
    h_.promise().continuation = awaiter;
    h_.promise().context = detail::context_of(awaiter);
    return h_;
  }
  T await_resume() {
    SEQBY_CHECK(h_ && h_.done());
    if constexpr (!std::is_void_v<T>) {
      SEQBY_CHECK(h_.promise().value.has_value());
      return std::move(*h_.promise().value);
    }
  }

  // For runtimes: give up ownership of the frame (the runtime then owns and destroys it).
  Handle release() { return std::exchange(h_, {}); }

 private:
  void reset() {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle h_{};
};

namespace detail {
template <typename T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<TaskPromise<T>>::from_promise(*this));
}
inline Task<void> TaskPromise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<TaskPromise<void>>::from_promise(*this));
}
}  // namespace detail

}  // namespace seqby
