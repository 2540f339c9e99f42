// HiredisLink: the RedisLink to a real redis-server, over one pipelined hiredis 0.14 async
// connection driven by a RealRuntime loop, so many tasks share it and the loop never waits for a
// round trip. Every command gets a reply, Errc::timeout (no reply by its deadline; the
// connection is then recycled, since later replies could no longer be paired) or Errc::closed;
// a failed command is never retried here (it may have run). It does not do TLS (hiredis 0.14
// has none) and resolves host names synchronously; it is used on the loop thread only.
// An observer, when set, hears of every failed connect attempt (with the backoff before the next
// one), of the first connection after failed ones, and of a lost connection, for the log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/cluster_link.h"
#include "seqby/broker/redis_link.h"
#include "seqby/core/result.h"
#include "seqby/core/task.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {

class HiredisLink final : public ClusterNodeLink {
 public:
  struct Stats {
    std::uint64_t connect_attempts = 0;
    std::uint64_t connects = 0;  // handshakes completed
    std::uint64_t commands_sent = 0;
    std::uint64_t timeouts = 0;       // commands that missed their deadline after being sent
    std::uint64_t in_flight_max = 0;  // most commands ever awaiting replies at once
  };

  // What happened to the connection, as the observer hears it.
  struct ConnectionEvent {
    enum class Kind : std::uint8_t {
      connect_failed,  // an attempt failed: unreachable, no handshake in time, or refused
      connected,       // a handshake completed after `failures_in_row` failed attempts (>= 1)
      lost,            // a ready connection failed or was dropped; the next command reconnects
    };
    Kind kind = Kind::connect_failed;
    std::string error;  // connect_failed, lost: what went wrong (no password in it)
    // connect_failed in the handshake: the command the server refused (AUTH, SELECT, PING) and
    // its error reply; "" when the server was not reached or did not answer.
    std::string refused_command;
    std::string refusal;
    // connect_failed: the refusal is one retrying cannot fix (refusal_is_final).
    bool final = false;
    std::uint64_t failures_in_row = 0;  // connect_failed: this one included
    std::uint64_t retry_in_ms = 0;      // connect_failed: the backoff before the next attempt
    bool backoff_at_max = false;        // connect_failed: retry_in_ms is reconnect_backoff_max_ms
  };
  // Called on the loop, never from inside hiredis and never after the link is destroyed.
  using ConnectionObserver = std::function<void(const ConnectionEvent&)>;

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
  // The same, with ASKING sent right before `command` on the same connection (nothing in
  // between): a Redis Cluster node then runs it on a slot it is importing (an ASK redirection).
  Task<Result<Reply>> execute_asking(Command command) override;
  // Every command queued in one turn (pipelined), then their replies awaited in order; each has
  // its own deadline, as execute's.
  Task<std::vector<Result<Reply>>> execute_many(std::vector<Command> commands) override;
  // Pipelined as execute_many, each command written in its kept wire form.
  Task<std::vector<Result<Reply>>> execute_prepared(
      std::shared_ptr<const PreparedCommands> prepared) override;
  // `command` then WAIT on this one connection, queued in one turn (RedisLink's contract).
  Task<Result<ReplicatedReply>> execute_replicated(Command command, std::uint32_t replicas,
                                                   std::uint64_t timeout_ms) override;
  // The same with ASKING before `command` (a Redis Cluster node's import, as execute_asking).
  Task<Result<ReplicatedReply>> execute_replicated(Command command, std::uint32_t replicas,
                                                   std::uint64_t timeout_ms, bool asking);
  Task<Result<ReplicatedReply>> execute_replicated_asking(Command command, std::uint32_t replicas,
                                                          std::uint64_t timeout_ms) override {
    return execute_replicated(std::move(command), replicas, timeout_ms, true);
  }

  // Drops the connection now: in-flight commands return Errc::closed; the next one reconnects.
  void disconnect();
  // True when a connection has completed its handshake and not failed since.
  bool connected() const;
  Stats stats() const;
  const RedisConfig& config() const;
  // Replaces the observer (none by default). REQUIRES: on the loop thread.
  void set_connection_observer(ConnectionObserver observer);

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

  // `config` as a wake link needs it: command_timeout_ms lengthened by kWakeBlockMsMax.
  static RedisConfig wake_config(RedisConfig config);

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

// True when the server's `refusal` (an error reply) of handshake command `command` (AUTH,
// SELECT, PING) cannot be cured by connecting again: a wrong or missing password or user
// (NOAUTH, WRONGPASS, an AUTH refused for its password), an ACL that refuses the command
// (NOPERM), a database index out of range; for a cluster link's CLUSTER|SLOTS, a server without
// cluster support. A busy, loading or full server is not final.
bool refusal_is_final(std::string_view command, std::string_view refusal);

}  // namespace seqby::redis
