// Waker: how an engine instance's idle workers wait for new entries (docs/ARCHITECTURE.md "Idle
// partitions are woken"). A worker with nothing to read registers the streams it waits on, each
// with the last entry id its fenced read saw, and waits on its own Alarm. The waiters are spread
// over the broker's wake channels (Broker::wake_channels), at most wake_read_partitions_max
// streams per channel while a channel has room; each channel keeps ONE blocking read
// (Broker::wait_for_entries) in flight over its waiters' streams and rings the workers whose
// streams got an entry. A wake-up is not a decision: the woken worker's next step is its fenced
// read. A worker that registers on a channel while its read is in flight rings that channel's
// doorbell (Broker::ring_wake, at most once per read), so the read is sent again with it: the
// cost of a re-send is bounded by the channel's size, not by the instance's idle partitions.
// Channel 0's loop is the task "waker"; channel N > 0's is "waker#N", started when first used.
// When the broker cannot wait (Errc::unsupported), every wait is a poll_interval_ms sleep.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "seqby/core/broker.h"
#include "seqby/core/engine_env.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby {

class Waker {
 public:
  // REQUIRES: env outlives the waker and its tasks.
  explicit Waker(const EngineEnv& env);
  ~Waker() { *alive_ = false; }
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;

  // The task "waker": channel 0's read, until stop(); it ends after every other channel's loop.
  Task<void> loop();
  // The instance stops: each loop ends after its read; ring_all() ends those reads now.
  void stop();
  Task<void> ring_all();
  bool stopping() const { return stopping_; }

  // Waits, in the calling worker's task, until a stream of `streams` may hold an entry after its
  // after_id, `alarm` rings, or `timeout_ms` passed. REQUIRES: `streams` is not empty; `streams`
  // and `alarm` outlive the call.
  Task<void> wait(const std::vector<WatchedStream>& streams, Alarm& alarm,
                  std::uint64_t timeout_ms);

  // The longest one blocking read waits: a read that outlives its connection is noticed then.
  static constexpr std::uint64_t kBlockMs = kWakeBlockMsMax;

 private:
  struct Waiter {
    const std::vector<WatchedStream>* streams;
    Alarm* alarm;
  };
  struct Channel {
    std::size_t index = 0;
    std::map<std::uint64_t, Waiter> waiters;  // by registration number: a deterministic order
    std::size_t streams = 0;                  // the waiters' streams together
    Alarm alarm;           // rung when a waiter registers while the channel has no read out
    bool reading = false;  // a blocking read is in flight
    bool rang = false;     // the doorbell rang for the read in flight
    bool started = false;  // its loop runs (channel 0's from the engine's start)
  };
  // The channel a waiter of `streams` streams joins: the first with room, else the least full.
  Channel& channel_for(std::size_t streams);
  // Channel `channel`'s read loop.
  Task<void> channel_loop(Channel& channel);
  // Removes waiter `id` from `channel` if it is still there (a woken one is removed already).
  static void leave(Channel& channel, std::uint64_t id);

  const EngineEnv& env_;
  std::vector<std::unique_ptr<Channel>> channels_;  // made when first used; [0] always
  std::uint64_t next_id_ = 0;
  std::uint32_t loops_alive_ = 0;  // channel loops other than channel 0's
  bool unsupported_ = false;       // the broker cannot wait: waits are sleeps
  bool stopping_ = false;
  // False once the waker is gone: a worker task torn down after it does not touch it.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace seqby
