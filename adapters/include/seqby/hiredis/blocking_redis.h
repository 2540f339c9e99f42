// BlockingRedis: one synchronous hiredis connection for command-line tools, test setup and
// admin paths, never for engine code on a RealRuntime loop (it blocks the calling thread for up
// to connect_timeout_ms + command_timeout_ms). It connects lazily, runs AUTH/SELECT after every
// connect, and drops the connection on any I/O error (hiredis errors are sticky): the failed
// command returns Errc::closed or Errc::timeout and is never retried, the next one reconnects.
// Like a hiredis context, an object serves one thread at a time.
#pragma once

#include <memory>
#include <string_view>

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"
#include "seqby/hiredis/redis_url.h"

struct redisContext;

namespace seqby::redis {

class BlockingRedis {
 public:
  explicit BlockingRedis(RedisConfig config);
  ~BlockingRedis();
  BlockingRedis(BlockingRedis&&) noexcept;
  BlockingRedis& operator=(BlockingRedis&&) noexcept;

  // Sends `command` and waits for its reply. An error reply is a successful Result.
  Result<Reply> execute(const Command& command);
  // Drops the connection; the next execute() reconnects.
  void disconnect();
  bool connected() const { return context_ != nullptr; }
  const RedisConfig& config() const { return config_; }

 private:
  struct ContextFree {
    void operator()(redisContext* c) const;
  };
  Status connect();

  RedisConfig config_;
  std::unique_ptr<redisContext, ContextFree> context_;
};

// Parses `url`, connects, runs `command`, disconnects.
Result<Reply> run_command_blocking(std::string_view url, const Command& command);

}  // namespace seqby::redis
