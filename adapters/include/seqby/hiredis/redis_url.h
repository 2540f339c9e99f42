// Where and how to reach a Redis server: host, port, optional ACL user and password, database,
// and the link's time limits. parse_redis_url() reads `redis://[user:password@]host[:port][/db]`
// strictly and names the offending part of a bad URL; it never contacts a server. Passwords are
// never echoed: messages and redacted_url() show them as "***".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seqby/core/result.h"

namespace seqby::redis {

struct RedisConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string user;      // ACL user; "" means AUTH with the password alone (requirepass)
  std::string password;  // "" means no AUTH
  std::uint32_t db = 0;  // SELECTed after every connect when not 0

  std::uint64_t connect_timeout_ms = 1000;  // TCP connect plus AUTH/SELECT/PING handshake
  std::uint64_t command_timeout_ms = 2000;  // from execute() to the reply, connect wait included
  std::uint64_t reconnect_backoff_min_ms = 20;    // after the first failed connect attempt
  std::uint64_t reconnect_backoff_max_ms = 2000;  // the doubling stops here
  std::uint32_t pending_commands_max = 65536;     // commands queued or in flight on one link
};

// Parses `redis://[user:password@]host[:port][/db]`. The user part may be empty
// (`redis://:password@host`); user and password may use %XX escapes; host may be a bracketed
// IPv6 literal; port defaults to 6379 and db to 0. Time limits keep their defaults.
// Errors are Errc::invalid with a message that quotes the (redacted) URL and names the part.
Result<RedisConfig> parse_redis_url(std::string_view url);

// The URL of `config`, password shown as "***" (for logs and messages).
std::string redacted_url(const RedisConfig& config);

}  // namespace seqby::redis
