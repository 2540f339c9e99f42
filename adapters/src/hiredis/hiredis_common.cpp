#include "hiredis_common.h"

#include <cerrno>

namespace seqby::redis::hiredis {
namespace {

constexpr int kReplyDepthMax = 32;

Result<Reply> convert(const redisReply* reply, int depth) {
  if (reply == nullptr) return make_error(Errc::protocol, "missing reply");
  if (depth > kReplyDepthMax) {
    return make_error(Errc::protocol, "reply nested deeper than " + std::to_string(kReplyDepthMax));
  }
  auto text = [reply]() -> std::string { return std::string(reply->str, reply->len); };
  switch (reply->type) {
    case REDIS_REPLY_NIL:
      return Reply::nil();
    case REDIS_REPLY_INTEGER:
      return Reply::of_int(static_cast<std::int64_t>(reply->integer));
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
    case REDIS_REPLY_STRING: {
      if (reply->str == nullptr && reply->len != 0) {
        return make_error(Errc::protocol, "string reply without its text");
      }
      std::string s = reply->str == nullptr ? std::string() : text();
      if (reply->type == REDIS_REPLY_STATUS) return Reply::status(std::move(s));
      if (reply->type == REDIS_REPLY_ERROR) return Reply::error(std::move(s));
      return Reply::bulk(std::move(s));
    }
    case REDIS_REPLY_ARRAY: {
      if (reply->elements != 0 && reply->element == nullptr) {
        return make_error(Errc::protocol, "array reply without its elements");
      }
      std::vector<Reply> elements;
      elements.reserve(reply->elements);
      for (std::size_t i = 0; i < reply->elements; ++i) {
        Result<Reply> element = convert(reply->element[i], depth + 1);
        if (!element.ok()) return element.error();
        elements.push_back(std::move(element).value());
      }
      return Reply::array(std::move(elements));
    }
    default:
      return make_error(Errc::protocol, "reply of unknown type " + std::to_string(reply->type));
  }
}

}  // namespace

Error error_from_hiredis(int err, const char* errstr, int saved_errno, const std::string& what) {
  const std::string detail = (errstr != nullptr && errstr[0] != '\0') ? errstr : "no detail";
  switch (err) {
    case REDIS_ERR_IO:
      if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT) {
        return make_error(Errc::timeout, what + ": no reply in time (" + detail + ")");
      }
      return make_error(Errc::closed, what + ": I/O error (" + detail + ")");
    case REDIS_ERR_EOF:
      return make_error(Errc::closed, what + ": server closed the connection (" + detail + ")");
    case REDIS_ERR_PROTOCOL:
      // The byte stream can no longer be trusted: the connection is dropped like on I/O errors.
      return make_error(Errc::closed, what + ": protocol error (" + detail + ")");
    case REDIS_ERR_OOM:
      return make_error(Errc::closed, what + ": out of memory (" + detail + ")");
    case REDIS_ERR_OTHER:
    default:
      return make_error(Errc::closed, what + ": " + detail);
  }
}

Result<Reply> convert_reply(const redisReply* reply) { return convert(reply, 0); }

std::vector<Command> handshake_commands(const RedisConfig& config) {
  std::vector<Command> commands;
  if (!config.password.empty()) {
    if (config.user.empty()) {
      commands.push_back({"AUTH", config.password});
    } else {
      commands.push_back({"AUTH", config.user, config.password});
    }
  }
  if (config.db != 0) commands.push_back({"SELECT", std::to_string(config.db)});
  return commands;
}

Argv::Argv(const Command& command) {
  pointers.reserve(command.size());
  lengths.reserve(command.size());
  for (const auto& arg : command) {
    pointers.push_back(arg.data());
    lengths.push_back(arg.size());
  }
}

std::string describe(const Command& command) {
  if (command.empty()) return "empty command";
  return "command " + command.front();
}

}  // namespace seqby::redis::hiredis
