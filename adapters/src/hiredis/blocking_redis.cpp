#include "seqby/hiredis/blocking_redis.h"

#include <sys/time.h>

#include <cerrno>

#include "hiredis_common.h"
#include "seqby/runtime/sigpipe_block.h"

namespace seqby::redis {
namespace {

timeval to_timeval(std::uint64_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

}  // namespace

void BlockingRedis::ContextFree::operator()(redisContext* c) const { redisFree(c); }

BlockingRedis::BlockingRedis(RedisConfig config) : config_(std::move(config)) {}
BlockingRedis::~BlockingRedis() = default;
BlockingRedis::BlockingRedis(BlockingRedis&&) noexcept = default;
BlockingRedis& BlockingRedis::operator=(BlockingRedis&&) noexcept = default;

void BlockingRedis::disconnect() { context_.reset(); }

Status BlockingRedis::connect() {
  const std::string what = "connect to " + redacted_url(config_);
  // A fresh context each time rather than redisReconnect(), which would drop the read timeout.
  context_.reset(redisConnectWithTimeout(config_.host.c_str(), config_.port,
                                         to_timeval(config_.connect_timeout_ms)));
  if (context_ == nullptr) return make_error(Errc::closed, what + ": out of memory");
  if (context_->err != 0) {
    Error error = hiredis::error_from_hiredis(context_->err, context_->errstr, errno, what);
    context_.reset();
    return error;
  }
  if (redisSetTimeout(context_.get(), to_timeval(config_.command_timeout_ms)) != REDIS_OK) {
    Error error = hiredis::error_from_hiredis(context_->err, context_->errstr, errno, what);
    context_.reset();
    return error;
  }
  for (const Command& command : hiredis::handshake_commands(config_)) {
    Result<Reply> reply = execute(command);
    if (!reply.ok()) {
      context_.reset();
      return make_error(reply.code(), what + ": " + reply.error().message);
    }
    if (reply.value().is_error()) {
      context_.reset();
      return make_error(Errc::closed,
                        what + ": " + command.front() + " refused: " + reply.value().str);
    }
  }
  return Status::Ok();
}

Result<Reply> BlockingRedis::execute(const Command& command) {
  if (command.empty()) return make_error(Errc::invalid, "empty command");
  const SigpipeBlock sigpipe_block;
  if (context_ == nullptr) {
    Status connected = connect();
    if (!connected.ok()) return connected.error();
  }
  hiredis::Argv argv(command);
  errno = 0;
  hiredis::ReplyPtr reply(static_cast<redisReply*>(
      redisCommandArgv(context_.get(), argv.argc(), argv.pointers.data(), argv.lengths.data())));
  const int saved_errno = errno;
  if (reply == nullptr) {
    Error error = hiredis::error_from_hiredis(context_->err, context_->errstr, saved_errno,
                                              hiredis::describe(command));
    context_.reset();  // errors are sticky on a hiredis context: start over on the next call
    return error;
  }
  Result<Reply> converted = hiredis::convert_reply(reply.get());
  if (!converted.ok()) context_.reset();  // a reply we cannot read: do not trust the stream
  return converted;
}

Result<Reply> run_command_blocking(std::string_view url, const Command& command) {
  Result<RedisConfig> config = parse_redis_url(url);
  if (!config.ok()) return config.error();
  BlockingRedis redis(std::move(config).value());
  return redis.execute(command);
}

}  // namespace seqby::redis
