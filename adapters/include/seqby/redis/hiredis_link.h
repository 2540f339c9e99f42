// HiredisLink: the RedisLink to a real redis-server, over one hiredis 0.14 async connection
// driven by a RealRuntime loop. Commands from all of an instance's tasks are pipelined on that
// connection and the loop never waits for a round trip. Every command has a deadline
// (command_timeout_ms, connection wait included): a command that misses it returns
// Errc::timeout and the connection is recycled, since later replies could no longer be paired
// with their commands. A command that failed on the wire is never retried here (it may have
// run); the next command reconnects, AUTHs and SELECTs again. Failed connects back off
// exponentially (reconnect_backoff_min_ms doubling to _max_ms); meanwhile commands fail fast
// with Errc::closed. REQUIRES: every call, the destructor included, on the runtime's loop thread
// (or while no loop runs). hiredis 0.14 has no TLS and resolves host names synchronously.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "seqby/core/result.h"
#include "seqby/core/task.h"
#include "seqby/redis/real_runtime.h"
#include "seqby/redis/redis_link.h"
#include "seqby/redis/redis_url.h"

namespace seqby::redis {

class HiredisLink final : public RedisLink {
 public:
  struct Stats {
    std::uint64_t connect_attempts = 0;
    std::uint64_t connects = 0;         // handshakes completed
    std::uint64_t commands_sent = 0;
    std::uint64_t timeouts = 0;         // commands that missed their deadline after being sent
    std::uint64_t in_flight_max = 0;    // most commands ever awaiting replies at once
  };

  // Connects lazily, on the first command.
  HiredisLink(RealRuntime& runtime, RedisConfig config);
  // Commands still queued or in flight return Errc::closed.
  ~HiredisLink() override;

  static Result<RedisConfig> parse_redis_url(std::string_view url) {
    return redis::parse_redis_url(url);
  }

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

}  // namespace seqby::redis
