// RedisLink: the seam between RedisBroker and a Redis server. One command in, one reply out.
// HiredisLink talks to a real redis-server; SimRedisLink to the simulated one; FaultyLink wraps
// either and injects lost requests, lost replies, latency and resets. An error *reply* from the
// server (WRONGTYPE, NOGROUP, FENCED, ...) is a successful Result holding Reply::Kind::error;
// only transport failures (timeout, closed) are Result errors.
#pragma once

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"
#include "seqby/core/task.h"

namespace seqby::redis {

class RedisLink {
 public:
  virtual ~RedisLink() = default;
  RedisLink() = default;
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  // Sends `command` (argv form, e.g. {"SET", "k", "v", "NX"}) and returns the server's reply,
  // or Errc::timeout / Errc::closed when no reply came back (the command may or may not have run).
  virtual Task<Result<Reply>> execute(Command command) = 0;
};

}  // namespace seqby::redis
