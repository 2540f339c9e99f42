// Waker: blocking reads over an engine instance's idle workers' streams, on bounded channels.
#include "waker.h"

#include <algorithm>
#include <string>
#include <utility>

#include "retry.h"

namespace seqby {

Waker::Waker(const EngineEnv& env) : env_(env) {
  channels_.push_back(std::make_unique<Channel>());
  channels_[0]->started = true;  // its loop is the engine's task "waker"
}

void Waker::stop() {
  stopping_ = true;
  for (const std::unique_ptr<Channel>& channel : channels_) channel->alarm.ring();
}

Task<void> Waker::ring_all() {
  // Channel 0 always (its read may be in flight for all the engine knows); the others while
  // they read. Nothing registers once stopping, so no channel is added meanwhile.
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (i > 0 && !channels_[i]->reading) continue;
    const Status rung =
        co_await env_.broker.ring_wake(env_.unit_category, env_.options.owner_id, i);
    (void)rung;  // a lost ring only delays the stop to the read's block time
  }
}

Waker::Channel& Waker::channel_for(std::size_t streams) {
  const std::size_t room = env_.options.wake_read_partitions_max;
  for (const std::unique_ptr<Channel>& channel : channels_) {
    if (channel->streams == 0 || channel->streams + streams <= room) return *channel;
  }
  if (channels_.size() < std::max<std::size_t>(env_.broker.wake_channels(), 1)) {
    channels_.push_back(std::make_unique<Channel>());
    channels_.back()->index = channels_.size() - 1;
    return *channels_.back();
  }
  Channel* least = channels_[0].get();
  for (const std::unique_ptr<Channel>& channel : channels_) {
    if (channel->streams < least->streams) least = channel.get();
  }
  return *least;
}

void Waker::leave(Channel& channel, std::uint64_t id) {
  auto it = channel.waiters.find(id);
  if (it == channel.waiters.end()) return;
  channel.streams -= it->second.streams->size();
  channel.waiters.erase(it);
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
  Channel& channel = channel_for(streams.size());
  const std::uint64_t id = next_id_++;
  channel.waiters.emplace(id, Waiter{&streams, &alarm});
  channel.streams += streams.size();
  const std::shared_ptr<bool> alive = alive_;
  if (!channel.started) {
    channel.started = true;
    ++loops_alive_;
    env_.runtime.spawn("waker#" + std::to_string(channel.index), channel_loop(channel));
  }
  if (!channel.reading) {
    channel.alarm.ring();
  } else if (!channel.rang) {
    // The read in flight does not watch these streams: end it, so that it is sent again.
    channel.rang = true;
    const Status rung =
        co_await env_.broker.ring_wake(env_.unit_category, env_.options.owner_id, channel.index);
    (void)rung;  // a lost ring only delays this wake-up to the read's block time
  }
  const bool woken = co_await env_.runtime.wait_alarm(alarm, timeout_ms);
  (void)woken;
  if (*alive) leave(channel, id);
}

Task<void> Waker::loop() {
  co_await channel_loop(*channels_[0]);
  // The other channels' loops end at their reads' block time at the latest.
  while (loops_alive_ > 0) co_await env_.runtime.sleep_ms(env_.options.poll_interval_ms);
}

Task<void> Waker::channel_loop(Channel& channel) {
  std::uint32_t failures = 0;
  while (!stopping_ && !unsupported_) {
    if (channel.waiters.empty()) {
      const bool rung = co_await env_.runtime.wait_alarm(channel.alarm, kBlockMs);
      (void)rung;
      continue;
    }
    (void)channel.alarm.take();
    std::vector<WatchedStream> watched;
    watched.reserve(channel.streams);
    std::vector<std::uint64_t> owner_of;  // per watched stream: its waiter
    owner_of.reserve(channel.streams);
    for (const auto& [id, waiter] : channel.waiters) {
      for (const WatchedStream& stream : *waiter.streams) {
        watched.push_back(stream);
        owner_of.push_back(id);
      }
    }
    channel.reading = true;
    channel.rang = false;
    Result<std::vector<std::size_t>> woken = co_await env_.broker.wait_for_entries(
        env_.unit_category, env_.options.owner_id, channel.index, watched, kBlockMs);
    channel.reading = false;
    if (!woken.ok()) {
      if (woken.code() == Errc::unsupported) {
        // Every wait polls from now on; the waiting ones go back to their reads.
        unsupported_ = true;
        for (const std::unique_ptr<Channel>& each : channels_) {
          for (auto& [id, waiter] : each->waiters) waiter.alarm->ring();
          each->waiters.clear();
          each->streams = 0;
          each->alarm.ring();
        }
        break;
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
      auto it = channel.waiters.find(owner_of[at]);
      if (it == channel.waiters.end()) continue;  // it left, or was woken by an earlier stream
      it->second.alarm->ring();
      channel.streams -= it->second.streams->size();
      channel.waiters.erase(it);
    }
  }
  // Stopping: every worker ends its wait (each was asked to stop and rang its own alarm).
  if (channel.index > 0) {
    SEQBY_CHECK(loops_alive_ > 0);
    --loops_alive_;
  }
}

}  // namespace seqby
