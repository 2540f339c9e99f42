// What HiredisLink and BlockingRedis share: owning handles for hiredis objects, the one place
// where hiredis error codes become Errc values, the checked conversion of a redisReply into a
// Reply, and the handshake commands (AUTH, SELECT) a fresh connection needs.
#pragma once

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"
#include "seqby/hiredis/redis_url.h"

namespace seqby::redis::hiredis {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

// The transport error for hiredis error code `err` (REDIS_ERR_*) with hiredis's text `errstr`,
// `what` saying what was going on ("connect to redis://h:p", "command GET"). I/O errors caused
// by a read timeout (EAGAIN/EWOULDBLOCK/ETIMEDOUT in `saved_errno`) become Errc::timeout; every
// other failure of a connection becomes Errc::closed: the command may or may not have run.
Error error_from_hiredis(int err, const char* errstr, int saved_errno, const std::string& what);

// A Reply with the same content as `reply`, after checking its shape (known type, string
// present, elements present, nesting bounded); Errc::protocol otherwise.
Result<Reply> convert_reply(const redisReply* reply);

// The commands a new connection runs before any other: AUTH (with the user when there is one)
// and SELECT (when db is not 0). Empty when neither is needed.
std::vector<Command> handshake_commands(const RedisConfig& config);

// hiredis argv form of `command`: pointers and lengths into its strings.
struct Argv {
  explicit Argv(const Command& command);
  int argc() const { return static_cast<int>(pointers.size()); }
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
};

// The command as a log or error message may show it: the name, and for AUTH nothing else.
std::string describe(const Command& command);

}  // namespace seqby::redis::hiredis
