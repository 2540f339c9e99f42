// Blocking reads as the simulator models them: the one place that says which command may block on
// the server (XREAD and XREADGROUP with BLOCK ms), how long a client waits for its reply, and the
// handle by which the server keeps a blocked client. It decides nothing about what wakes a block
// (that is SimRedis, sim_redis.h) nor how a connection holds the commands behind one
// (SimRedisLink).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "seqby/broker/reply.h"

namespace seqby::sim {

// BLOCK 0 blocks until woken: a client waits for its reply this long (about 100 years).
inline constexpr std::uint64_t kWaitForeverMs = std::uint64_t{1} << 41;

// block_ms_of past its inline check of the name.
std::optional<std::uint64_t> block_ms_of_read(const redis::Command& command);

// The BLOCK argument of a well-formed XREAD or XREADGROUP (case-insensitive), in ms (0: forever);
// nullopt for any other command, or when BLOCK is missing or malformed (the server replies with
// an error then, at once). Asked of every command a link sends: other names are turned away
// inline, by length and first letter.
inline std::optional<std::uint64_t> block_ms_of(const redis::Command& command) {
  if (command.empty()) return std::nullopt;
  const std::string& name = command.front();
  if ((name.size() != 5 && name.size() != 10) || (name[0] != 'x' && name[0] != 'X')) {
    return std::nullopt;
  }
  return block_ms_of_read(command);
}

// How long a client with a per-command timeout of `timeout_ms` waits for `command`'s reply: a
// blocking read may be answered `block_ms` late by design, so its wait is timeout_ms + block_ms
// (kWaitForeverMs for BLOCK 0); any other command's is timeout_ms.
std::uint64_t reply_wait_ms(const redis::Command& command, std::uint64_t timeout_ms);

// A client blocked on the server, from the moment it blocked to the reply that ends the block.
using BlockId = std::uint64_t;
// Called once with the reply that serves a block (the entries a write made readable), from inside
// the server call that ran the write. It must not call into the server (schedule work instead).
using BlockWake = std::function<void(redis::Reply)>;

// What a server call that may block did: replied (`reply` set), or blocked under `block`.
struct BlockResult {
  std::optional<redis::Reply> reply;
  BlockId block = 0;
};

}  // namespace seqby::sim
