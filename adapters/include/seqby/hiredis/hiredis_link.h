// HiredisLink: the RedisLink to a real redis-server, over one pipelined hiredis 0.14 async
// connection driven by a RealRuntime loop, so many tasks share it and the loop never waits for a
// round trip. Every command gets a reply, Errc::timeout (no reply by its deadline; the
// connection is then recycled, since later replies could no longer be paired) or Errc::closed;
// a failed command is never retried here (it may have run). It does not do TLS (hiredis 0.14
// has none) and resolves host names synchronously; it is used on the loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "seqby/broker/redis_link.h"
#include "seqby/core/result.h"
#include "seqby/core/task.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {

class HiredisLink final : public RedisLink {
 public:
  struct Stats {
    std::uint64_t connect_attempts = 0;
    std::uint64_t connects = 0;  // handshakes completed
    std::uint64_t commands_sent = 0;
    std::uint64_t timeouts = 0;       // commands that missed their deadline after being sent
    std::uint64_t in_flight_max = 0;  // most commands ever awaiting replies at once
  };

  // Connects lazily, on the first command, then AUTHs, SELECTs and PINGs within
  // connect_timeout_ms. After a drop the next command reconnects at once; after failed connects
  // attempts back off (reconnect_backoff_min_ms doubling up to _max_ms) and commands meanwhile
  // fail fast with Errc::closed. REQUIRES: `runtime` outlives the link; every call, the
  // destructor included, on the runtime's loop thread (or while no loop runs).
  HiredisLink(RealRuntime& runtime, RedisConfig config);
  // Commands still queued or in flight return Errc::closed.
  ~HiredisLink() override;

  static Result<RedisConfig> parse_redis_url(std::string_view url) {
    return redis::parse_redis_url(url);
  }

  // The deadline (command_timeout_ms) counts from this call, connection wait included.
  Task<Result<Reply>> execute(Command command) override;

  // Drops the connection now: in-flight commands return Errc::closed; the next one reconnects.
  void disconnect();
  // True when a connection has completed its handshake and not failed since.
  bool connected() const;
  Stats stats() const;
  const RedisConfig& config() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The connections of a broker's wake channels (RedisBroker's WakeLinks): one HiredisLink per
// channel, made when the broker first asks for it, each with command_timeout_ms lengthened by
// kWakeBlockMsMax (its blocking read holds the command that long). REQUIRES: as HiredisLink's;
// outlives the broker it serves.
class HiredisWakeLinks {
 public:
  HiredisWakeLinks(RealRuntime& runtime, RedisConfig config);
  HiredisWakeLinks(const HiredisWakeLinks&) = delete;
  HiredisWakeLinks& operator=(const HiredisWakeLinks&) = delete;

  // What RedisBroker takes as its WakeLinks: the link of channel N, made on first use.
  std::function<RedisLink*(std::size_t channel)> source();
  // The links made so far, and the commands they sent together.
  std::size_t size() const { return links_.size(); }
  std::uint64_t commands_sent() const;

 private:
  RealRuntime& runtime_;
  RedisConfig config_;
  std::vector<std::unique_ptr<HiredisLink>> links_;
};

}  // namespace seqby::redis
