// RedisLink: the seam between RedisBroker and a Redis server. One command in, one reply out
// (or several in order, execute_many).
// HiredisLink talks to a real redis-server; SimRedisLink to the simulated one; FaultyLink wraps
// either and injects lost requests, lost replies, latency and resets. An error *reply* from the
// server (WRONGTYPE, NOGROUP, FENCED, ...) is a successful Result holding Reply::Kind::error;
// only transport failures (timeout, closed) are Result errors.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"
#include "seqby/core/task.h"

namespace seqby::redis {

// Runs `send(item)` for each of `items` in order, each after the reply to the one before, and
// returns one result each. After a transport failure (a Result error) the items not yet sent are
// not sent and answer that same error: execute_many's rule for a link that does not pipeline,
// shared by the broker's scripts run one after another (RedisBroker::run_scripts). `send` takes
// an Item and returns Task<Result<Reply>>; it is kept in the coroutine's frame.
template <typename Item, typename Send>
Task<std::vector<Result<Reply>>> one_after_another(std::vector<Item> items, Send send) {
  std::vector<Result<Reply>> out;
  out.reserve(items.size());
  std::optional<Error> failed;
  for (Item& item : items) {
    if (failed) {
      out.emplace_back(*failed);
      continue;
    }
    Result<Reply> reply = co_await send(std::move(item));
    if (!reply.ok()) failed = reply.error();
    out.push_back(std::move(reply));
  }
  co_return out;
}

// A command's reply and what the WAIT sent right after it on the same connection answered.
struct ReplicatedReply {
  Reply reply;
  // Replicas that acknowledged every write of the connection up to the command (WAIT's integer);
  // -1 when the WAIT got no reply (the connection was lost after the command's reply).
  std::int64_t replicas = -1;
  std::string wait_error;  // why replicas is -1, or WAIT's error reply
};

// Commands made once and sent as often as their maker likes (the heartbeat's renewals of a set
// of leases that did not change since the last round): a pipelining link writes each in its
// wire form, made on the first send and kept, instead of formatting it again.
class PreparedCommands {
 public:
  explicit PreparedCommands(std::vector<Command> commands) : commands_(std::move(commands)) {}
  const std::vector<Command>& commands() const { return commands_; }
  // Command `i` as the Redis protocol (RESP) sends it: "*N\r\n" then "$len\r\narg\r\n" per
  // argument. Made on the first call for `i`, then kept. REQUIRES: i < commands().size();
  // one thread.
  const std::string& wire(std::size_t i) const;

 private:
  std::vector<Command> commands_;
  mutable std::vector<std::string> wire_;  // filled by wire(), "" until made
};

class RedisLink {
 public:
  virtual ~RedisLink() = default;
  RedisLink() = default;
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  // Sends `command` (argv form, e.g. {"SET", "k", "v", "NX"}) and returns the server's reply,
  // or Errc::timeout / Errc::closed when no reply came back (the command may or may not have run).
  virtual Task<Result<Reply>> execute(Command command) = 0;

  // Sends `commands` in order on one connection and returns one result per command, in order.
  // A link that pipelines (HiredisLink) sends them all before the first reply is back, so the
  // server runs them back to back; this default sends each after the reply to the one before
  // (the simulated links: the server sees the same commands in the same order). After a
  // transport failure (timeout, closed) the commands not yet sent are not sent and answer that
  // same error; a pipelining link may have sent them (each may or may not have run).
  virtual Task<std::vector<Result<Reply>>> execute_many(std::vector<Command> commands);

  // execute_many of `prepared`'s commands, which the link may send in their kept wire form
  // (HiredisLink does). This default sends a copy through execute_many.
  virtual Task<std::vector<Result<Reply>>> execute_prepared(
      std::shared_ptr<const PreparedCommands> prepared);

  // Sends `command`, then `WAIT replicas timeout_ms` on the same connection with nothing awaited
  // between them, so that WAIT counts the replicas that have the command's writes (WAIT counts
  // only its own connection's writes: sent on another connection, or after a reconnect, it says
  // nothing of them). The durability option (RedisBrokerOptions::wait_replicas) runs its writes
  // through this. A link that cannot keep the two on one connection answers Errc::unsupported,
  // as this default does (the simulated links: the simulator models no replicas).
  virtual Task<Result<ReplicatedReply>> execute_replicated(Command command, std::uint32_t replicas,
                                                           std::uint64_t timeout_ms);
};

}  // namespace seqby::redis
