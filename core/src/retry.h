// retry_transport: the one bounded retry of a broker call (engine steps and the handler's fenced
// commit). A call is sent again only after an error `retryable` accepts, never after a FENCED
// reply (the lease is gone: sending again cannot help), at most attempts_max times in all, with
// backoff_ms(backoff_ms, backoff_max_ms, attempt) of sleep between attempts. It returns the last
// reply; it never invents one.
//
// Every history depends on the exact sequence of calls and sleeps, so the helper does exactly
// this and nothing else: send, judge, sleep, (ask go_on), send again.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "seqby/core/engine_env.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/result.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby {

struct TransportRetry {
  TransportRetry(Runtime& runtime, std::uint32_t attempts_max, std::uint64_t backoff_ms,
                 std::uint64_t backoff_max_ms)
      : runtime(&runtime),
        attempts_max(attempts_max),
        backoff_ms(backoff_ms),
        backoff_max_ms(backoff_max_ms) {
    SEQBY_CHECK(backoff_max_ms >= backoff_ms);
  }

  Runtime* runtime;
  std::uint32_t attempts_max;  // sends in all, the first included
  std::uint64_t backoff_ms;    // sleep after the first failed attempt; doubles per attempt
  std::uint64_t backoff_max_ms;
};

// The engine's retry of its own broker calls: transport_retry_count_max attempts, the handler
// retry backoff between them.
inline TransportRetry engine_transport_retry(const EngineEnv& env) {
  return TransportRetry(env.runtime, env.options.transport_retry_count_max,
                        env.options.retry_backoff_ms, env.options.retry_backoff_max_ms);
}

// Which failed replies are sent again (FENCED never is).
// No reply (the call may or may not have run): for calls that are safe to send twice.
inline bool is_transport_error(Errc code) { return code == Errc::timeout || code == Errc::closed; }
// Any error: for calls that create-if-missing or compare-and-set, which no error can make
// harmful to send again (ensure_group, release, reclaim).
inline bool is_any_error(Errc) { return true; }

namespace detail {
template <typename T>
struct TaskValue;
template <typename T>
struct TaskValue<Task<T>> {
  using type = T;
};
}  // namespace detail

// Sends `send()` (a callable returning Task<Status> or Task<Result<T>>) until a reply is ok, is
// FENCED, fails with an error `retryable` rejects, or attempts_max attempts failed; returns that
// reply. Between two attempts it sleeps, then asks `go_on()`: false returns the last failure
// without sending again. REQUIRES: what `send` refers to outlives the returned Task.
template <typename Send, typename GoOn>
Task<typename detail::TaskValue<std::invoke_result_t<Send&>>::type> retry_transport(
    TransportRetry retry, bool (*retryable)(Errc), Send send, GoOn go_on) {
  using Reply = typename detail::TaskValue<std::invoke_result_t<Send&>>::type;
  for (std::uint32_t attempt = 1;; ++attempt) {
    Reply reply = co_await send();
    const bool again = !reply.ok() && reply.code() != Errc::fenced && retryable(reply.code()) &&
                       attempt < retry.attempts_max;
    if (!again) co_return std::move(reply);
    const std::uint64_t sleep_ms = backoff_ms(retry.backoff_ms, retry.backoff_max_ms, attempt);
    co_await retry.runtime->sleep_ms(sleep_ms);
    const bool going_on = go_on();
    if (!going_on) co_return std::move(reply);
  }
}

// retry_transport without a go_on condition: every attempt allowed is sent.
template <typename Send>
auto retry_transport(TransportRetry retry, bool (*retryable)(Errc), Send send) {
  return retry_transport(retry, retryable, std::move(send), [] { return true; });
}

}  // namespace seqby
