// Waker: one blocking read per engine instance over its idle workers' streams.
#include "waker.h"

#include <algorithm>
#include <string>
#include <utility>

#include "retry.h"

namespace seqby {

void Waker::stop() {
  stopping_ = true;
  loop_alarm_.ring();
}

Task<void> Waker::wait(const std::vector<WatchedStream>& streams, Alarm& alarm,
                       std::uint64_t timeout_ms) {
  SEQBY_CHECK(!streams.empty());
  if (unsupported_ || stopping_) {
    const bool rung = co_await env_.runtime.wait_alarm(
        alarm, std::min(timeout_ms, env_.options.poll_interval_ms));
    (void)rung;
    co_return;
  }
  const std::uint64_t id = next_id_++;
  waiters_.emplace(id, Waiter{&streams, &alarm});
  const std::shared_ptr<bool> alive = alive_;
  if (!reading_) {
    loop_alarm_.ring();
  } else if (!rang_) {
    // The read in flight does not watch these streams: end it, so that it is sent again.
    rang_ = true;
    const Status rung = co_await env_.broker.ring_wake(env_.unit_category, env_.options.owner_id);
    (void)rung;  // a lost ring only delays this wake-up to the read's block time
  }
  const bool woken = co_await env_.runtime.wait_alarm(alarm, timeout_ms);
  (void)woken;
  if (*alive) leave(id);
}

Task<void> Waker::loop() {
  std::uint32_t failures = 0;
  while (!stopping_) {
    if (waiters_.empty()) {
      const bool rung = co_await env_.runtime.wait_alarm(loop_alarm_, kBlockMs);
      (void)rung;
      continue;
    }
    (void)loop_alarm_.take();
    std::vector<WatchedStream> watched;
    std::vector<std::uint64_t> owner_of;  // per watched stream: its waiter
    for (const auto& [id, waiter] : waiters_) {
      for (const WatchedStream& stream : *waiter.streams) {
        watched.push_back(stream);
        owner_of.push_back(id);
      }
    }
    reading_ = true;
    rang_ = false;
    Result<std::vector<std::size_t>> woken = co_await env_.broker.wait_for_entries(
        env_.unit_category, env_.options.owner_id, watched, kBlockMs);
    reading_ = false;
    if (!woken.ok()) {
      if (woken.code() == Errc::unsupported) {
        // Every wait polls from now on; the waiting ones go back to their reads.
        unsupported_ = true;
        for (auto& [id, waiter] : waiters_) waiter.alarm->ring();
        waiters_.clear();
        co_return;
      }
      // No answer: send it again after a backoff. The ids are exact, so nothing is missed.
      ++failures;
      co_await env_.runtime.sleep_ms(
          backoff_ms(env_.options.retry_backoff_ms, env_.options.retry_backoff_max_ms, failures));
      continue;
    }
    failures = 0;
    for (const std::size_t at : woken.value()) {
      SEQBY_CHECK(at < owner_of.size());
      auto it = waiters_.find(owner_of[at]);
      if (it == waiters_.end()) continue;  // it left, or was woken by an earlier stream
      it->second.alarm->ring();
      waiters_.erase(it);
    }
  }
  // Stopping: every worker ends its wait (each was asked to stop and rang its own alarm).
}

}  // namespace seqby
