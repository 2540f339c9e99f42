// SimRedisLink: the RedisLink of one simulated engine instance to the simulated server. A command
// travels like a packet on one TCP connection: a drawn request latency, execution on the server
// at that virtual time (server-side: it happens even if the client crashed meanwhile), a drawn
// reply latency, then the caller resumes (unless its instance crashed). Commands of one link
// reach the server and come back in the order they were sent. No reply within timeout_ms of the
// client's clock => Errc::timeout (the command may still run later). It injects no faults itself:
// wrap it in a FaultyLink. Attached to a ServerGate (server_gate.h), it is one connection the
// server can pause, refuse or close (the server faults): then Errc::closed, or a late reply.
//
// A blocking read (XREAD ... BLOCK ms, blocking.h) that blocks on the server holds the connection
// as in Redis: its reply goes out when a write of any client serves it, or as nil when BLOCK ms
// have passed since it blocked (virtual time on the server, also during a pause); the link's
// commands sent after it run only once it ended, in order. Its caller waits timeout_ms + BLOCK ms
// (BLOCK 0: until the reply). The server closing the connection (CLIENT KILL, a restart) ends the
// block without a reply: Errc::closed, as for any command it held; the client gone (a crash)
// frees it. The server clock's jumps (redis_clock_jump) do not shorten a block.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "seqby/broker/redis_link.h"
#include "seqby/core/clock.h"
#include "seqby/sim/blocking.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {

// The server a SimRedisLink talks to. SimRedis (sim_redis.h) is adapted to it by the integrator
// (a one-line forwarding class); tests use small fakes.
class SimServer {
 public:
  virtual ~SimServer() = default;
  // Executes `command` at the current virtual time and returns its reply (errors as replies).
  virtual redis::Reply execute(const redis::Command& command) = 0;
  // `command` reached the server but never ran (its connection was closed, or the server was
  // down); it takes the place it would have had among the link's commands.
  virtual void refused(const redis::Command& command) { (void)command; }
  // As execute(), for a command that may block (block_ms_of(command) is set): a blocking read
  // with nothing to read returns its BlockId and calls `wake` later, once, with its reply,
  // unless unblock() ended the block first. A server that never blocks answers at once (this
  // default); ServerAdapter<SimRedis> blocks.
  virtual BlockResult execute_blocking(const redis::Command& command, BlockWake wake) {
    (void)wake;
    return BlockResult{execute(command), 0};
  }
  // Ends block `id` without a reply (its timeout, its connection closed): true if it was still
  // blocked.
  virtual bool unblock(BlockId id) {
    (void)id;
    return false;
  }
};

class ServerGate;
using ConnectionId = std::uint32_t;
// A link's connection through a ServerGate; a null gate: the server never faults.
struct GateConnection {
  ServerGate* gate = nullptr;
  ConnectionId id = 0;
};

// Adapts any class with `redis::Reply execute(const redis::Command&)` (SimRedis) to SimServer:
//   SimRedis redis(server_clock);  ServerAdapter<SimRedis> server(redis);
template <typename Server>
class ServerAdapter final : public SimServer {
 public:
  explicit ServerAdapter(Server& server) : server_(server) {}
  redis::Reply execute(const redis::Command& command) override { return server_.execute(command); }
  BlockResult execute_blocking(const redis::Command& command, BlockWake wake) override {
    if constexpr (requires { server_.execute_blocking(command, std::move(wake)); }) {
      return server_.execute_blocking(command, std::move(wake));
    } else {
      return SimServer::execute_blocking(command, std::move(wake));
    }
  }
  bool unblock(BlockId id) override {
    if constexpr (requires { server_.unblock(id); }) {
      return server_.unblock(id);
    } else {
      return SimServer::unblock(id);
    }
  }

 private:
  Server& server_;
};

// The server's clock: global virtual time plus a forward offset (redis_clock_jump: leases expire
// early). Never goes back.
class ServerClock final : public Clock {
 public:
  explicit ServerClock(Scheduler& scheduler) : scheduler_(scheduler) {}
  std::uint64_t now_ms() override { return scheduler_.now_ms() + offset_ms_; }
  void jump_forward(std::uint64_t delta_ms) { offset_ms_ += delta_ms; }
  std::uint64_t offset_ms() const { return offset_ms_; }

 private:
  Scheduler& scheduler_;
  std::uint64_t offset_ms_ = 0;
};

struct SimLinkOptions {
  std::uint64_t request_latency_min_ms = 0;  // each way, drawn uniformly per command
  std::uint64_t request_latency_max_ms = 2;
  std::uint64_t reply_latency_min_ms = 0;
  std::uint64_t reply_latency_max_ms = 2;
  std::uint64_t timeout_ms = 1000;  // per command, on the client's clock (+ BLOCK ms: blocking.h)
};

class SimRedisLink final : public redis::RedisLink {
 public:
  // REQUIRES: `client` and `server` outlive the link; the link may die before its commands
  // arrive (a crash drops the engine's objects): queued deliveries do not refer to it.
  SimRedisLink(SimRuntime& client, SimServer& server, Rng rng, SimLinkOptions options = {},
               GateConnection connection = {});

  // REQUIRES: awaited from a task spawned on `client`.
  Task<Result<redis::Reply>> execute(redis::Command command) override;

  const SimLinkOptions& options() const { return options_; }
  std::uint64_t sent_count() const { return sent_count_; }

 private:
  struct Exchange;
  struct Wire;

  SimRuntime& client_;
  SimServer& server_;
  Rng rng_;
  SimLinkOptions options_;
  GateConnection connection_;
  std::uint64_t sent_count_ = 0;
  std::uint64_t last_arrival_ms_ = 0;  // FIFO: a command never overtakes an earlier one
  std::shared_ptr<Wire> wire_;         // the server's side of the connection; outlives the link
};

}  // namespace seqby::sim
